//! What differs between the families: time, the second link's interrupt, the stack pointer,
//! the host channel (semihosting) and counting instructions. One module per architecture, with
//! the same functions:
//!
//! | function | Cortex-M (M0, M3, M4F) | RISC-V rv32imc (`virt`) |
//! | --- | --- | --- |
//! | [`uptime_ms`] | SysTick exception every 1 ms | CLINT `mtime` (10 MHz) |
//! | [`wait_ms`] | `wfi` between SysTick ticks | `wfi` until `mtimecmp` |
//! | [`pend_second_link`] | PendSV | machine software interrupt (`msip`) |
//! | [`Timer::measure`] | SysTick ticks, calibrated to instructions | `minstret` |
//! | [`stack_pointer`], [`stack_floor`] | MSP, cortex-m-rt's `_stack_end` | `sp`, riscv-rt's `__estack` |
//! | [`host_write`], [`exit`] | Arm semihosting | RISC-V semihosting |

#[cfg(target_arch = "arm")]
mod cortex_m;
#[cfg(target_arch = "arm")]
pub use self::cortex_m::*;

#[cfg(target_arch = "riscv32")]
mod riscv;
#[cfg(target_arch = "riscv32")]
pub use self::riscv::*;

/// A measured call: its instruction count, and the raw counter reading it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub struct Cost {
    /// The counter's own units: SysTick ticks (Cortex-M) or retired instructions (RISC-V).
    pub ticks: u32,
    /// Instructions executed.
    pub instructions: u32,
}
