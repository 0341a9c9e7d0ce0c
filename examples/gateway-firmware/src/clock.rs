//! Wall-clock time on a board without a real-time clock: a time the gateway learns once (the
//! upstream's HTTP `Date` header, or SNTP) plus the monotonic tick count since then.
//!
//! Tokens carry wall-clock expiry times because a token sealed on one node may be resumed on
//! another, so the gateway cannot seal or resume before it knows the time. Until
//! [`WallClock::learn`] has run, [`WallClock::now`] is `None` and the gateway refuses with
//! [`crate::gateway::GatewayError::TimeUnknown`]. Should mrtr be called directly anyway, the
//! [`Clock`] reading is `u64::MAX`, which fails closed: sealing overflows
//! ([`mrtr_core::SealError::ClockOverflow`]) and every token reads as expired.

use core::cell::Cell;

use critical_section::Mutex;
use mrtr_core::Clock;

use crate::arch;

/// Milliseconds from a counter that never goes back (SysTick, `mtime`, a HAL timer).
pub trait Monotonic {
    /// Milliseconds since some fixed point (usually boot).
    fn ms(&self) -> u64;
}

/// The board's uptime: [`arch::uptime_ms`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Uptime;

impl Monotonic for Uptime {
    fn ms(&self) -> u64 {
        arch::uptime_ms()
    }
}

/// No time before 2024-01-01T00:00:00Z is believed: a source that says so is broken.
pub const EARLIEST_PLAUSIBLE_MS: u64 = 1_704_067_200_000;

/// Why a learned time was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub enum LearnError {
    /// Before [`EARLIEST_PLAUSIBLE_MS`].
    Implausible,
}

/// Wall-clock milliseconds since the Unix epoch: a learned time plus monotonic ticks.
/// Can be a `static`; learning and reading go through a `critical-section` mutex, so an
/// interrupt handler may read it.
pub struct WallClock<M> {
    ticks: M,
    /// Wall-clock time at tick 0, once learned.
    base_ms: Mutex<Cell<Option<u64>>>,
}

impl<M: Monotonic> WallClock<M> {
    /// A clock that does not know the time yet.
    pub const fn new(ticks: M) -> Self {
        Self {
            ticks,
            base_ms: Mutex::new(Cell::new(None)),
        }
    }

    /// Takes `now_ms` (ms since the Unix epoch, e.g. from [`parse_http_date`]) as the time
    /// now. Later calls re-synchronise.
    pub fn learn(&self, now_ms: u64) -> Result<(), LearnError> {
        if now_ms < EARLIEST_PLAUSIBLE_MS {
            return Err(LearnError::Implausible);
        }
        let base = now_ms.saturating_sub(self.ticks.ms());
        critical_section::with(|cs| self.base_ms.borrow(cs).set(Some(base)));
        Ok(())
    }

    /// The time now, or `None` until it has been learned.
    pub fn now(&self) -> Option<u64> {
        let base = critical_section::with(|cs| self.base_ms.borrow(cs).get())?;
        Some(base.saturating_add(self.ticks.ms()))
    }

    /// Whether the time has been learned.
    pub fn is_known(&self) -> bool {
        self.now().is_some()
    }
}

/// mrtr's view: `u64::MAX` until the time is known, so that nothing seals or opens (see the
/// module docs). Check [`WallClock::now`] first to refuse clearly.
impl<M: Monotonic> Clock for WallClock<M> {
    fn now_ms(&self) -> u64 {
        self.now().unwrap_or(u64::MAX)
    }
}

/// The gateway's clock, learned at boot from its upstream.
pub static CLOCK: WallClock<Uptime> = WallClock::new(Uptime);

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];
const WEEKDAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];

/// Parses an HTTP `Date` header in its only generated form, IMF-fixdate (RFC 9110 §5.6.7:
/// `Sun, 06 Nov 1994 08:49:37 GMT`), to ms since the Unix epoch. Every field is checked,
/// the weekday included; anything else is `None`.
pub fn parse_http_date(text: &str) -> Option<u64> {
    let b: &[u8; 29] = text.as_bytes().try_into().ok()?;
    let fixed = [
        (3, b','),
        (4, b' '),
        (7, b' '),
        (11, b' '),
        (16, b' '),
        (19, b':'),
    ];
    if fixed.iter().any(|&(at, c)| b[at] != c) || b[22] != b':' || &b[25..] != b" GMT" {
        return None;
    }
    let day = digits(&b[5..7])?;
    let month = MONTHS.iter().position(|m| m[..] == b[8..11])? as u64 + 1;
    let year = digits(&b[12..16])?;
    let (hour, minute, second) = (
        digits(&b[17..19])?,
        digits(&b[20..22])?,
        digits(&b[23..25])?,
    );
    if year < 1970 || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let days = days_since_epoch(year, month, day);
    if b[..3] != WEEKDAYS[(days % 7) as usize][..] {
        return None;
    }
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second.min(59);
    Some(seconds * 1_000)
}

fn digits(b: &[u8]) -> Option<u64> {
    b.iter().try_fold(0u64, |n, &c| {
        c.is_ascii_digit().then(|| n * 10 + u64::from(c - b'0'))
    })
}

fn is_leap(year: u64) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given date (year >= 1970), counted month by month: at most
/// a few hundred iterations for any plausible year, run once at boot.
fn days_since_epoch(year: u64, month: u64, day: u64) -> u64 {
    let years: u64 = (1970..year)
        .map(|y| if is_leap(y) { 366 } else { 365 })
        .sum();
    let months: u64 = (1..month).map(|m| days_in_month(year, m)).sum();
    years + months + day - 1
}
