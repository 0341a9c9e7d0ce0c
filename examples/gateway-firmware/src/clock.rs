//! Time from SysTick: an interrupt every millisecond advances an uptime counter, which the
//! main loop reads through `critical-section`. On top of it: mrtr's [`Clock`] and an
//! `embedded-hal` [`DelayNs`] that sleeps until enough ticks have passed.

use core::cell::Cell;

use cortex_m::peripheral::SYST;
use cortex_m::peripheral::syst::SystClkSource;
use critical_section::Mutex;
use embedded_hal::delay::DelayNs;
use mrtr_core::Clock;

use crate::board::CORE_CLOCK_HZ;

/// Wall-clock time at boot, ms since the Unix epoch (2026-11-30T00:00:00Z). Real firmware
/// takes it from its RTC or from SNTP: tokens sealed here may be opened on another node.
pub const BOOT_EPOCH_MS: u64 = 1_795_996_800_000;

/// SysTick's 24-bit counter range.
const SYST_MAX: u32 = 0x00FF_FFFF;
const TICKS_PER_MS: u32 = CORE_CLOCK_HZ / 1000;

static UPTIME_MS: Mutex<Cell<u64>> = Mutex::new(Cell::new(0));

/// Called from the SysTick exception handler, once per millisecond.
pub fn on_tick() {
    critical_section::with(|cs| {
        let ms = UPTIME_MS.borrow(cs);
        ms.set(ms.get() + 1);
    });
}

/// Milliseconds since [`Timer::start`].
pub fn uptime_ms() -> u64 {
    critical_section::with(|cs| UPTIME_MS.borrow(cs).get())
}

/// Owns SysTick: a 1 ms tick normally, a free-running counter while measuring.
pub struct Timer {
    syst: SYST,
}

impl Timer {
    /// Starts the 1 ms tick from the core clock.
    pub fn start(mut syst: SYST) -> Self {
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(TICKS_PER_MS - 1);
        syst.clear_current();
        syst.enable_interrupt();
        syst.enable_counter();
        Self { syst }
    }

    /// Runs `f` with interrupts masked and SysTick counting down over its full 24-bit range,
    /// and returns `f`'s result with the core-clock ticks it took (`None` if the counter
    /// wrapped, i.e. `f` took more than 2^24 ticks). The millisecond clock stands still
    /// meanwhile.
    pub fn measure<R>(&mut self, f: impl FnOnce() -> R) -> (R, Option<u32>) {
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

/// mrtr's clock: the boot epoch plus the SysTick uptime.
#[derive(Clone, Copy, Debug, Default)]
pub struct SysTickClock;

impl Clock for SysTickClock {
    fn now_ms(&self) -> u64 {
        BOOT_EPOCH_MS + uptime_ms()
    }
}

/// Waits on the SysTick millisecond counter, sleeping (`wfi`) between ticks. Resolution is one
/// tick: a delay waits for one tick more than asked, so it never ends early.
#[derive(Clone, Copy, Debug, Default)]
pub struct TickDelay;

impl TickDelay {
    fn wait_ms(ms: u64) {
        let until = uptime_ms() + ms + 1;
        while uptime_ms() < until {
            cortex_m::asm::wfi();
        }
    }
}

impl DelayNs for TickDelay {
    fn delay_ns(&mut self, ns: u32) {
        Self::wait_ms(u64::from(ns.div_ceil(1_000_000)));
    }

    fn delay_us(&mut self, us: u32) {
        Self::wait_ms(u64::from(us.div_ceil(1_000)));
    }

    fn delay_ms(&mut self, ms: u32) {
        Self::wait_ms(u64::from(ms));
    }
}
