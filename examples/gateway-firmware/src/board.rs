//! The QEMU machine this build runs on (chosen by build.rs from the target).

/// QEMU machine name, e.g. `mps2-an386`.
pub const MACHINE: &str = env!("GATEWAY_MACHINE");

/// Core clock in Hz, which drives SysTick (clock source: the processor clock). MPS2 FPGA
/// images clock the Cortex-M4 at 25 MHz.
#[cfg(machine = "mps2-an386")]
pub const CORE_CLOCK_HZ: u32 = 25_000_000;

/// Core clock in Hz, which drives SysTick (clock source: the processor clock). QEMU's
/// lm3s6965evb keeps the reset clock configuration; its rate was measured, not assumed:
/// under `-icount shift=0` (1 ns per instruction) SysTick counts 25,000 ticks over the
/// 2,000,000-instruction calibration loop of [`crate::measure`], i.e. 12.5 MHz.
#[cfg(machine = "lm3s6965evb")]
pub const CORE_CLOCK_HZ: u32 = 12_500_000;
