//! What a real firmware must provide, checked on the target: a hardware RNG adapted to
//! rand_core 0.10 ([`crate::trng`]), and a wall clock learned once ([`crate::clock`]).
//!
//! The micro:bit's nRF51 has a TRNG peripheral, which QEMU models: there the checks use it
//! through `nrf51-hal`'s driver (rand_core 0.9). The other QEMU machines have none, so the same adapter is
//! driven by a clearly non-random stand-in there. Failing and stuck sources run everywhere.

use core::cell::Cell;
use core::num::NonZeroU32;

use chacha20::ChaCha20Rng;
use mrtr_core::cipher::Cipher;
use mrtr_core::{Codec, Reason, Round, SealError};
use rand_core::{SeedableRng, TryRng};

use crate::clock::{EARLIEST_PLAUSIBLE_MS, Monotonic, Uptime, WallClock, parse_http_date};
use crate::gateway::{self, GatewayError};
use crate::report::{Outcome, Report};
use crate::text::TokenText;
use crate::trng::{HalTrng, TrngError};
use crate::{AAD, ARGS, OWNER, TOOL, Token, arch, call, check, keys};

/// The upstream's `Date` header the gateway learns its time from.
pub const UPSTREAM_DATE: &str = "Mon, 30 Nov 2026 00:00:00 GMT";
/// That time, ms since the Unix epoch (2026-11-30T00:00:00Z).
pub const UPSTREAM_DATE_MS: u64 = 1_795_996_800_000;

/// Runs the clock and the TRNG checks.
pub fn run<C: Cipher>(report: &mut Report) {
    clock::<C>(report);
    trng::<C>(report);
}

#[inline(never)]
fn clock<C: Cipher>(report: &mut Report) {
    defmt::println!("-- wall clock: learned once, then monotonic ticks");
    check!(
        report,
        parse_http_date(UPSTREAM_DATE) == Some(UPSTREAM_DATE_MS),
        "Date header parses to {=u64} ms",
        UPSTREAM_DATE_MS
    );
    for bad in [
        "Tue, 30 Nov 2026 00:00:00 GMT",
        "Mon, 31 Nov 2026 00:00:00 GMT",
        "Mon, 30 Nov 2026 24:00:00 GMT",
        "Mon, 30 Nov 2026 00:00:00 UTC",
        "Monday, 30-Nov-26 00:00:00 GMT",
        "",
    ] {
        check!(
            report,
            parse_http_date(bad).is_none(),
            "Date header refused: {=str}",
            bad
        );
    }

    // A token sealed by a node that knows the time.
    let Some(valid) = reference_token::<C>() else {
        check!(report, false, "reference node seals");
        return;
    };
    let wall = WallClock::new(Uptime);
    learning::<C>(report, &wall, &valid);
    ticking(report, &wall);
    exact_ticks(report);
}

/// A token for the gateway's call, sealed by a node that knows the time.
#[inline(never)]
fn reference_token<C: Cipher>() -> Option<TokenText> {
    let reference = Codec::builder(keys::ring::<C>(), &crate::clock::CLOCK)
        .aad_capacity::<AAD>()
        .audience(crate::GATEWAY_ID)
        .build()
        .ok()?;
    let mut rng = crate::rng::example_rng();
    crate::issue(&reference, &call(TOOL, OWNER), b"step=1", &mut rng)
        .ok()
        .map(|t| t.text)
}

/// Whether a node that knows the time opens `token`.
#[inline(never)]
fn reference_opens<C: Cipher>(token: &TokenText) -> bool {
    Codec::builder(keys::ring::<C>(), &crate::clock::CLOCK)
        .aad_capacity::<AAD>()
        .audience(crate::GATEWAY_ID)
        .build()
        .is_ok_and(|r| {
            crate::open(&r, token.as_str(), &call(TOOL, OWNER), &ARGS) == Outcome::Accepted
        })
}

/// Before the time is learned nothing is sealed or opened; after, everything works.
#[inline(never)]
fn learning<C: Cipher>(report: &mut Report, wall: &WallClock<Uptime>, valid: &TokenText) {
    let Ok(engine) = Codec::builder(keys::ring::<C>(), wall)
        .aad_capacity::<AAD>()
        .audience(crate::GATEWAY_ID)
        .build()
    else {
        check!(report, false, "configuration builds");
        return;
    };
    let binding = call(TOOL, OWNER);
    let mut rng = crate::rng::example_rng();
    let (mut out, mut buf) = (Token::new(), Token::new());
    check!(report, wall.now().is_none(), "before learning: no time");
    let p = gateway::pause(
        &engine,
        Round::FIRST,
        &binding,
        &ARGS,
        b"x",
        &mut rng,
        &mut out,
    );
    check!(
        report,
        p.as_ref().err() == Some(&GatewayError::TimeUnknown),
        "before learning: pause refused (time unknown)"
    );
    let r = gateway::resume(&engine, valid.as_str(), &binding, &ARGS, &mut buf);
    check!(
        report,
        r.as_ref().err() == Some(&GatewayError::TimeUnknown),
        "before learning: resume refused (time unknown)"
    );
    let seals = engine.keys().current().seals_used();
    let direct = engine.pause(Round::FIRST, &binding, &ARGS, b"x", &mut rng, &mut out);
    check!(
        report,
        direct.as_ref().err() == Some(&SealError::ClockOverflow)
            && engine.keys().current().seals_used() == seals,
        "before learning, mrtr called directly: pause fails closed ({})",
        direct.as_ref().err()
    );
    crate::rejected!(
        report,
        crate::open(&engine, valid.as_str(), &binding, &ARGS),
        Reason::Expired,
        "before learning, mrtr called directly: resume fails closed"
    );

    check!(
        report,
        wall.learn(EARLIEST_PLAUSIBLE_MS - 1) == Err(crate::clock::LearnError::Implausible)
            && wall.now().is_none(),
        "a time before 2024 is not learned"
    );
    let learned = parse_http_date(UPSTREAM_DATE).map(|ms| wall.learn(ms));
    let now = wall.now().unwrap_or(0);
    check!(
        report,
        learned == Some(Ok(())) && (UPSTREAM_DATE_MS..UPSTREAM_DATE_MS + 2).contains(&now),
        "learned from the Date header: now {=u64}",
        now
    );
    let r = gateway::resume(&engine, valid.as_str(), &binding, &ARGS, &mut buf);
    check!(
        report,
        r.is_ok_and(|r| r.continuation() == b"step=1"),
        "after learning: the reference node's token opens"
    );
    let p = gateway::pause(
        &engine,
        Round::FIRST,
        &binding,
        &ARGS,
        b"x",
        &mut rng,
        &mut out,
    )
    .map(|s| TokenText::of(s.as_str()));
    check!(
        report,
        p.as_ref().is_ok_and(reference_opens::<C>),
        "after learning: pause seals a token the reference node opens"
    );
}

/// The learned clock moves with the board's ticks.
#[inline(never)]
fn ticking(report: &mut Report, wall: &WallClock<Uptime>) {
    let before = wall.now().unwrap_or(0);
    arch::wait_ms(5);
    let elapsed = wall.now().unwrap_or(0).saturating_sub(before);
    check!(
        report,
        elapsed >= 5,
        "the clock follows the board's ticks: {=u64} ms over a 5 ms wait",
        elapsed
    );
}

/// Ticks set by hand, to check the arithmetic exactly (the board's ticks only give bounds).
struct ManualTicks(Cell<u64>);

impl Monotonic for &ManualTicks {
    fn ms(&self) -> u64 {
        self.0.get()
    }
}

/// Wall time is the learned time plus the ticks since learning, to the millisecond; learning
/// again re-synchronises.
#[inline(never)]
fn exact_ticks(report: &mut Report) {
    let ticks = ManualTicks(Cell::new(1_000));
    let wall = WallClock::new(&ticks);
    let learned = wall.learn(UPSTREAM_DATE_MS);
    ticks.0.set(1_000 + 12_345);
    let later = wall.now();
    let resynced = wall.learn(UPSTREAM_DATE_MS + 60_000);
    ticks.0.set(1_000 + 12_345 + 7);
    check!(
        report,
        learned.is_ok()
            && later == Some(UPSTREAM_DATE_MS + 12_345)
            && resynced.is_ok()
            && wall.now() == Some(UPSTREAM_DATE_MS + 60_007),
        "learned time + ticks since, exactly ({}); re-learning re-synchronises",
        later
    );
}

/// A rand_core 0.6 driver whose hardware reports every draw as failed.
struct Failing06;

impl rand_core_06::RngCore for Failing06 {
    fn next_u32(&mut self) -> u32 {
        0
    }
    fn next_u64(&mut self) -> u64 {
        0
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        dst.fill(0);
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), rand_core_06::Error> {
        // The code is the driver's choice: here, "peripheral timed out".
        Err(NonZeroU32::new(0x4000).map_or(rand_core_06::Error::from(NonZeroU32::MIN), Into::into))
    }
}
impl rand_core_06::CryptoRng for Failing06 {}

/// A rand_core 0.9 driver whose hardware reports every draw as failed.
struct Failing09;

/// The driver's error.
#[derive(Debug)]
struct TimedOut;

impl core::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("peripheral timed out")
    }
}

impl rand_core_09::TryRngCore for Failing09 {
    type Error = TimedOut;
    fn try_next_u32(&mut self) -> Result<u32, TimedOut> {
        Err(TimedOut)
    }
    fn try_next_u64(&mut self) -> Result<u64, TimedOut> {
        Err(TimedOut)
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), TimedOut> {
        Err(TimedOut)
    }
}
impl rand_core_09::TryCryptoRng for Failing09 {}

/// A rand_core 0.9 driver stuck at zero: it reports success, the health test must catch it.
struct Stuck09;

impl rand_core_09::RngCore for Stuck09 {
    fn next_u32(&mut self) -> u32 {
        0
    }
    fn next_u64(&mut self) -> u64 {
        0
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        dst.fill(0);
    }
}
impl rand_core_09::CryptoRng for Stuck09 {}

/// The board's TRNG through its HAL: the nRF51's RNG peripheral, `nrf51-hal`'s driver
/// (rand_core 0.9).
#[cfg(machine = "microbit")]
fn board_trng() -> Option<HalTrng<crate::trng::RandCore09<nrf51_hal::rng::Rng>>> {
    let p = nrf51_hal::pac::Peripherals::take()?;
    Some(HalTrng::rand_core_09(nrf51_hal::rng::Rng::new(p.RNG)))
}

/// Machines without a TRNG peripheral in QEMU: a stand-in with a HAL's interface (rand_core
/// 0.6). NOT random (xorshift32): it only drives the adapter on these machines.
#[cfg(not(machine = "microbit"))]
fn board_trng() -> Option<HalTrng<crate::trng::RandCore06<StandIn>>> {
    Some(HalTrng::rand_core_06(StandIn(0x9E37_79B9)))
}

/// Not random: see [`board_trng`].
#[cfg(not(machine = "microbit"))]
struct StandIn(u32);

#[cfg(not(machine = "microbit"))]
impl rand_core_06::RngCore for StandIn {
    fn next_u32(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
    fn next_u64(&mut self) -> u64 {
        (u64::from(self.next_u32()) << 32) | u64::from(self.next_u32())
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for chunk in dst.chunks_mut(4) {
            let w = self.next_u32().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), rand_core_06::Error> {
        self.fill_bytes(dst);
        Ok(())
    }
}
#[cfg(not(machine = "microbit"))]
impl rand_core_06::CryptoRng for StandIn {}

#[inline(never)]
fn trng<C: Cipher>(report: &mut Report) {
    defmt::println!("-- hardware RNG through rand_core 0.10 (HalTrng)");
    #[cfg(machine = "microbit")]
    defmt::println!("   source: nRF51 RNG peripheral (nrf51-hal)");
    #[cfg(not(machine = "microbit"))]
    defmt::println!("   source: no TRNG peripheral on this QEMU machine: a non-random stand-in");
    let Ok(engine) = Codec::builder(keys::ring::<C>(), &crate::clock::CLOCK)
        .aad_capacity::<AAD>()
        .audience(crate::GATEWAY_ID)
        .build()
    else {
        check!(report, false, "configuration builds");
        return;
    };
    let binding = call(TOOL, OWNER);
    let (mut out, mut buf) = (Token::new(), Token::new());

    let Some(hal) = board_trng() else {
        check!(report, false, "the board's RNG driver is available");
        return;
    };
    let mut trng = hal;
    let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
    let drawn = trng
        .try_fill_bytes(&mut a)
        .and_then(|()| trng.try_fill_bytes(&mut b));
    check!(
        report,
        drawn.is_ok() && a != b && a != [0; 16],
        "two 16-byte draws differ ({})",
        drawn.err()
    );
    let sealed = gateway::pause(
        &engine,
        Round::FIRST,
        &binding,
        &ARGS,
        b"t",
        &mut trng,
        &mut out,
    )
    .map(|s| TokenText::of(s.as_str()));
    let opened = sealed
        .as_ref()
        .is_ok_and(|t| gateway::resume(&engine, t.as_str(), &binding, &ARGS, &mut buf).is_ok());
    check!(report, opened, "a token sealed with its bytes opens");
    let seeded = ChaCha20Rng::try_from_rng(&mut trng);
    let drbg_ok = seeded.is_ok_and(|mut drbg| {
        engine
            .pause(Round::FIRST, &binding, &ARGS, b"d", &mut drbg, &mut out)
            .is_ok()
    });
    check!(report, drbg_ok, "a ChaCha20 DRBG seeded from it seals");

    let seals = engine.keys().current().seals_used();
    let mut failing = HalTrng::rand_core_06(Failing06);
    let p = gateway::pause(
        &engine,
        Round::FIRST,
        &binding,
        &ARGS,
        b"f",
        &mut failing,
        &mut out,
    );
    check!(
        report,
        p.as_ref().err() == Some(&GatewayError::Seal(SealError::Rng)),
        "a TRNG failure (rand_core 0.6 driver) is a seal error, not a panic ({})",
        p.as_ref().err()
    );
    check!(
        report,
        engine.keys().current().seals_used() == seals + 1,
        "the failed seal counted against the key's budget (fail safe)"
    );
    let mut failing = HalTrng::rand_core_09(Failing09);
    let p = gateway::pause(
        &engine,
        Round::FIRST,
        &binding,
        &ARGS,
        b"f",
        &mut failing,
        &mut out,
    );
    check!(
        report,
        p.as_ref().err() == Some(&GatewayError::Seal(SealError::Rng)),
        "a TRNG failure (rand_core 0.9 driver) is a seal error, not a panic ({})",
        p.as_ref().err()
    );
    check!(
        report,
        ChaCha20Rng::try_from_rng(&mut failing).err() == Some(TrngError::Source),
        "seeding a DRBG from a failing TRNG is an error"
    );
    let mut stuck = HalTrng::rand_core_09(Stuck09);
    let p = engine.pause(Round::FIRST, &binding, &ARGS, b"s", &mut stuck, &mut out);
    check!(
        report,
        p.as_ref().err() == Some(&SealError::Rng) && stuck.has_failed(),
        "a TRNG stuck at zero fails the health test: seal error"
    );
    let mut again = [0u8; 4];
    check!(
        report,
        stuck.try_fill_bytes(&mut again) == Err(TrngError::Stuck),
        "a failed TRNG stays failed"
    );
}
