//! The QEMU machine this build runs on (chosen by build.rs from the target).

/// QEMU machine name, e.g. `mps2-an386`.
pub const MACHINE: &str = env!("GATEWAY_MACHINE");

/// The family, for the log: core and target triple.
#[cfg(machine = "microbit")]
pub const FAMILY: &str = "Cortex-M0 thumbv6m-none-eabi (micro:bit, nRF51822, 16 KiB RAM)";
/// The family, for the log: core and target triple.
#[cfg(machine = "lm3s6965evb")]
pub const FAMILY: &str = "Cortex-M3 thumbv7m-none-eabi (LM3S6965, 64 KiB RAM)";
/// The family, for the log: core and target triple.
#[cfg(machine = "mps2-an386")]
pub const FAMILY: &str = "Cortex-M4F thumbv7em-none-eabihf (MPS2 AN386)";
/// The family, for the log: core and target triple.
#[cfg(machine = "virt")]
pub const FAMILY: &str = "RISC-V riscv32imc-unknown-none-elf (QEMU virt, 64 KiB RAM)";

/// Core clock in Hz, which drives SysTick (clock source: the processor clock). The nRF51
/// runs at 16 MHz, and QEMU's microbit clocks SysTick from it.
#[cfg(machine = "microbit")]
pub const CORE_CLOCK_HZ: u32 = 16_000_000;

/// Core clock in Hz, which drives SysTick (clock source: the processor clock). QEMU's
/// lm3s6965evb keeps the reset clock configuration; its rate was measured, not assumed:
/// under `-icount shift=0` (1 ns per instruction) SysTick counts 25,000 ticks over the
/// 2,000,000-instruction calibration loop, i.e. 12.5 MHz.
#[cfg(machine = "lm3s6965evb")]
pub const CORE_CLOCK_HZ: u32 = 12_500_000;

/// Core clock in Hz, which drives SysTick (clock source: the processor clock). MPS2 FPGA
/// images clock the Cortex-M4 at 25 MHz.
#[cfg(machine = "mps2-an386")]
pub const CORE_CLOCK_HZ: u32 = 25_000_000;
