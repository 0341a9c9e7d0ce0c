//! Cortex-M: SysTick, PendSV, MSP and Arm semihosting.

use core::cell::Cell;

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::{SCB, SYST};
use cortex_m_semihosting::{debug, nr, syscall};
use critical_section::Mutex;

use super::Cost;
use crate::board::CORE_CLOCK_HZ;

/// SysTick's 24-bit counter range.
const SYST_MAX: u32 = 0x00FF_FFFF;
const TICKS_PER_MS: u32 = CORE_CLOCK_HZ / 1000;

/// Iterations of `cortex_m::asm::delay`'s two-instruction loop (`subs`, `bne`): it runs
/// `n + 1` times, so this is 2,000,000 instructions.
const CALIBRATION_LOOPS: u32 = 999_999;
/// Instructions the calibration loop executes.
pub const CALIBRATION_INSTRUCTIONS: u32 = 2_000_000;

static UPTIME_MS: Mutex<Cell<u64>> = Mutex::new(Cell::new(0));

/// Called from the SysTick exception handler, once per millisecond.
pub fn on_tick() {
    critical_section::with(|cs| {
        let ms = UPTIME_MS.borrow(cs);
        ms.set(ms.get() + 1);
    });
}

/// Milliseconds since [`Timer::start`]: the monotonic clock.
pub fn uptime_ms() -> u64 {
    critical_section::with(|cs| UPTIME_MS.borrow(cs).get())
}

/// Sleeps (`wfi`) until `ms` whole milliseconds have passed: one tick more than asked, so it
/// never ends early.
pub fn wait_ms(ms: u64) {
    let until = uptime_ms() + ms + 1;
    while uptime_ms() < until {
        cortex_m::asm::wfi();
    }
}

/// Owns SysTick: a 1 ms tick normally, a free-running counter while measuring.
pub struct Timer {
    syst: SYST,
    /// SysTick ticks of the calibration loop.
    calibration: u32,
}

impl Timer {
    /// Takes the core peripherals, starts the 1 ms tick and calibrates the measuring.
    pub fn start() -> Self {
        let Some(p) = cortex_m::Peripherals::take() else {
            panic!("core peripherals taken twice");
        };
        let mut syst = p.SYST;
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(TICKS_PER_MS - 1);
        syst.clear_current();
        syst.enable_interrupt();
        syst.enable_counter();
        let mut timer = Self {
            syst,
            calibration: 0,
        };
        let ((), ticks) = timer.ticks(|| cortex_m::asm::delay(CALIBRATION_LOOPS));
        timer.calibration = ticks.unwrap_or(0);
        timer
    }

    /// SysTick ticks of the 2,000,000-instruction calibration loop (0 if it failed).
    pub fn calibration(&self) -> u32 {
        self.calibration
    }

    /// Runs `f` with interrupts masked and returns its result with what it cost (`None` if the
    /// counter wrapped, i.e. `f` took more than 2^24 ticks, or calibration failed).
    pub fn measure<R>(&mut self, f: impl FnOnce() -> R) -> (R, Option<Cost>) {
        let (r, ticks) = self.ticks(f);
        let cost = ticks.filter(|_| self.calibration > 0).map(|t| Cost {
            ticks: t,
            instructions: (u64::from(t) * u64::from(CALIBRATION_INSTRUCTIONS)
                / u64::from(self.calibration)) as u32,
        });
        (r, cost)
    }

    /// SysTick counting down over its full 24-bit range around `f`; the millisecond clock
    /// stands still meanwhile.
    fn ticks<R>(&mut self, f: impl FnOnce() -> R) -> (R, Option<u32>) {
        cortex_m::interrupt::free(|_| {
            self.syst.disable_interrupt();
            self.syst.set_reload(SYST_MAX);
            self.syst.clear_current();
            // Writing the current-value register zeroes it; wait for the reload.
            while SYST::get_current() == 0 {}
            let _ = self.syst.has_wrapped();
            let start = SYST::get_current();
            let r = f();
            let end = SYST::get_current();
            let wrapped = self.syst.has_wrapped();
            self.syst.set_reload(TICKS_PER_MS - 1);
            self.syst.clear_current();
            self.syst.enable_interrupt();
            (r, (!wrapped).then(|| start - end))
        })
    }
}

/// Raises the second link's interrupt (PendSV) and returns once its handler has run: the
/// main loop runs at thread priority, below every exception.
pub fn pend_second_link() {
    SCB::set_pendsv();
    cortex_m::asm::dsb();
    cortex_m::asm::isb();
}

/// The current stack pointer.
pub fn stack_pointer() -> usize {
    cortex_m::register::msp::read() as usize
}

#[allow(unsafe_code)]
unsafe extern "C" {
    /// Lowest address the stack may grow to (cortex-m-rt's linker script: the end of .bss).
    static _stack_end: u32;
}

/// Lowest address the stack may grow to.
pub fn stack_floor() -> usize {
    (&raw const _stack_end) as usize
}

/// Opens the host's console for writing; `None` if the debugger refused.
#[allow(unsafe_code)]
pub fn host_open() -> Option<usize> {
    const NAME: &[u8] = b":tt\0";
    // SAFETY: SYS_OPEN reads the NUL-terminated name (its length excludes the NUL).
    let fd = unsafe { syscall!(OPEN, NAME.as_ptr(), nr::open::W_TRUNC, NAME.len() - 1) };
    (fd != usize::MAX).then_some(fd)
}

/// Writes `bytes` to the host file `fd`; false if the host did not take them all.
#[allow(unsafe_code)]
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
