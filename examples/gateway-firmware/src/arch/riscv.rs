//! RISC-V rv32imc on QEMU's `virt` machine, machine mode: the CLINT's `mtime` for time, its
//! machine software interrupt for the second link, `minstret` for instruction counts, and
//! RISC-V semihosting.
//!
//! rv32imc has no atomic instructions at all: `critical-section` comes from the `riscv`
//! crate's single-hart implementation (mask `mstatus.MIE`), which also serves
//! `portable-atomic` (core's seal counter) and core's `SharedReplaySet`.

#![allow(unsafe_code)]

use core::ptr;

use riscv::interrupt::Interrupt;
use riscv::register::minstret;
use riscv_semihosting::{debug, nr, syscall};

use super::Cost;

/// The CLINT (core-local interruptor) of QEMU's `virt` machine.
const CLINT: usize = 0x0200_0000;
/// Hart 0's machine software interrupt pending bit.
const MSIP0: usize = CLINT;
/// Hart 0's timer compare register (64-bit).
const MTIMECMP0: usize = CLINT + 0x4000;
/// The machine timer (64-bit), counting at [`MTIME_HZ`].
const MTIME: usize = CLINT + 0xBFF8;
/// `virt`'s timebase frequency (its device tree's `timebase-frequency`).
const MTIME_HZ: u64 = 10_000_000;

/// Instructions of the calibration loop (`riscv::asm::delay`'s `addi`/`bne` loop run
/// 1,000,000 times): a check that `minstret` counts what was executed.
pub const CALIBRATION_INSTRUCTIONS: u32 = 2_000_000;

fn read_mtime() -> u64 {
    // SAFETY: MTIME is the CLINT's always-present, read-only-here timer register. The high
    // half is read twice so that a carry between the two halves is never mixed in.
    unsafe {
        loop {
            let hi = ptr::read_volatile((MTIME + 4) as *const u32);
            let lo = ptr::read_volatile(MTIME as *const u32);
            if ptr::read_volatile((MTIME + 4) as *const u32) == hi {
                return (u64::from(hi) << 32) | u64::from(lo);
            }
        }
    }
}

fn write_mtimecmp(value: u64) {
    // SAFETY: hart 0's MTIMECMP. Writing the high half to all ones first keeps the compare
    // value from passing through a smaller one meanwhile.
    unsafe {
        ptr::write_volatile((MTIMECMP0 + 4) as *mut u32, u32::MAX);
        ptr::write_volatile(MTIMECMP0 as *mut u32, value as u32);
        ptr::write_volatile((MTIMECMP0 + 4) as *mut u32, (value >> 32) as u32);
    }
}

/// Milliseconds since reset: the monotonic clock.
pub fn uptime_ms() -> u64 {
    read_mtime() / (MTIME_HZ / 1000)
}

/// Sleeps (`wfi`) until `ms` whole milliseconds have passed, plus up to one more.
pub fn wait_ms(ms: u64) {
    let until = (uptime_ms() + ms + 1) * (MTIME_HZ / 1000);
    critical_section::with(|_| {
        write_mtimecmp(until);
        // SAFETY: interrupts are masked globally (critical section): the timer interrupt only
        // wakes `wfi`, no handler runs. It is disabled again before the section ends.
        unsafe { riscv::interrupt::enable_interrupt(Interrupt::MachineTimer) };
        while read_mtime() < until {
            riscv::asm::wfi();
        }
        riscv::interrupt::disable_interrupt(Interrupt::MachineTimer);
        write_mtimecmp(u64::MAX);
    });
}

/// Measures with `minstret`; enables the second link's interrupt.
pub struct Timer {
    calibration: u32,
}

impl Timer {
    /// Enables the machine software interrupt (the second link) and checks the counter.
    pub fn start() -> Self {
        write_mtimecmp(u64::MAX);
        // SAFETY: the MachineSoft handler is defined by every full binary (`firmware!`).
        unsafe {
            riscv::interrupt::enable_interrupt(Interrupt::MachineSoft);
            riscv::interrupt::enable();
        }
        let mut timer = Self { calibration: 0 };
        let ((), cost) = timer.measure(|| riscv::asm::delay(CALIBRATION_INSTRUCTIONS - 2));
        timer.calibration = cost.map_or(0, |c| c.ticks);
        timer
    }

    /// Instructions `minstret` counted over the 2,000,000-instruction calibration loop.
    pub fn calibration(&self) -> u32 {
        self.calibration
    }

    /// Runs `f` with interrupts masked and returns its result with the instructions it
    /// retired.
    pub fn measure<R>(&mut self, f: impl FnOnce() -> R) -> (R, Option<Cost>) {
        riscv::interrupt::free(|| {
            let start = minstret::read() as u32;
            let r = f();
            let n = (minstret::read() as u32).wrapping_sub(start);
            (
                r,
                Some(Cost {
                    ticks: n,
                    instructions: n,
                }),
            )
        })
    }
}

/// Raises the second link's interrupt (machine software interrupt); its handler has run when
/// this returns, as interrupts are enabled in thread mode.
pub fn pend_second_link() {
    // SAFETY: hart 0's MSIP register; 1 raises the machine software interrupt.
    unsafe { ptr::write_volatile(MSIP0 as *mut u32, 1) };
    // The interrupt is taken before the next instruction; a fence orders the write first.
    riscv::asm::fence();
}

/// Clears the second link's interrupt: the first thing its handler does.
pub fn ack_second_link() {
    // SAFETY: hart 0's MSIP register; 0 clears the pending machine software interrupt.
    unsafe { ptr::write_volatile(MSIP0 as *mut u32, 0) };
}

/// The current stack pointer.
#[inline(always)]
pub fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: reads the stack pointer into a register; no memory is touched.
    unsafe { core::arch::asm!("mv {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    sp
}

unsafe extern "C" {
    /// Lowest address the stack may grow to (riscv-rt's linker script: start of `.stack`).
    static __estack: u32;
}

/// Lowest address the stack may grow to.
pub fn stack_floor() -> usize {
    (&raw const __estack) as usize
}

/// Opens the host's console for writing; `None` if the debugger refused.
pub fn host_open() -> Option<usize> {
    const NAME: &[u8] = b":tt\0";
    // SAFETY: SYS_OPEN reads the NUL-terminated name (its length excludes the NUL).
    let fd = unsafe { syscall!(OPEN, NAME.as_ptr(), nr::open::W_TRUNC, NAME.len() - 1) };
    (fd != usize::MAX).then_some(fd)
}

/// Writes `bytes` to the host file `fd`; false if the host did not take them all.
pub fn host_write(fd: usize, bytes: &[u8]) -> bool {
    // SAFETY: SYS_WRITE reads `len` bytes at `ptr`, which `bytes` owns for the call.
    unsafe { syscall!(WRITE, fd, bytes.as_ptr(), bytes.len()) == 0 }
}

/// Ends the QEMU run: exit status 0 if `ok`, else 1.
pub fn exit(ok: bool) -> ! {
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    #[allow(clippy::empty_loop)]
    loop {}
}
