//! A reseeding, fork-aware userspace CSPRNG: ChaCha20 keyed from the OS, for hosts where the
//! `getrandom` system call per seal ([`OsRng`](crate::rng::OsRng)) is a measurable cost.
//!
//! **Pair it with AES-256-GCM-SIV (`mrtr-aes-gcm-siv`), not with AES-GCM or ChaCha20-Poly1305.**
//! [`OsRng`](crate::rng::OsRng) stays the default nonce source for those. The reasoning is in
//! `SECURITY.md`, "Nonces and randomness"; in short:
//!
//! * [`ReseedingRng`] draws a fresh 256-bit ChaCha20 key from the OS when it is created, after
//!   [`ReseedPolicy::max_bytes`] bytes of output, after [`ReseedPolicy::max_age`], and whenever
//!   the process forked since it was seeded. A forked child therefore never continues its
//!   parent's stream: before its first byte it detects the fork, discards the copied state
//!   and reseeds from the OS, or fails if the OS cannot answer.
//! * What it **cannot** detect: a VM snapshot restored twice (or a process image checkpointed
//!   and restored, as CRIU does) resumes with the same state and the same process id, so the
//!   clones repeat each other's output until their next reseed. Nothing in userspace can see
//!   that without the VM generation id, which Linux does not yet expose to programs. Under
//!   AES-GCM one repeated nonce lets an attacker forge tokens; under AES-GCM-SIV a repeated
//!   nonce only reveals whether two sealed states were identical, and a repeated token id is
//!   at worst refused by the replay cache as a replay. That is why the two go together.
//! * The fork check on Unix is one atomic load per draw: a counter that a `pthread_atfork`
//!   child handler increments in every child the C library's `fork` creates (the `forkguard`
//!   crate registers it; this crate itself forbids `unsafe`). It sees every fork made through
//!   the C library (`fork(2)` from libc, `nix`, Python's `os.fork` in an embedding process)
//!   and every grandchild, whatever its process id. It does **not** see a child created by a
//!   raw `clone` system call that bypasses the C library's fork handlers (or glibc's
//!   `_Fork`); such a child must not draw from a generator it inherited. Where the handler
//!   cannot be registered (not Unix, or `pthread_atfork` failed), the check falls back to
//!   comparing the process id (a `getpid` system call per draw).
//!
//! ```
//! use mrtr_std::rng_fast::{FastRng, ReseedingRng};
//! use rand_core::TryRng;
//!
//! // An owned generator (one per worker)...
//! let mut rng = ReseedingRng::new()?;
//! let mut nonce = [0u8; 12];
//! rng.try_fill_bytes(&mut nonce)?;
//!
//! // ...or the zero-sized handle to this thread's generator, used like `OsRng`.
//! let mut id = [0u8; 16];
//! FastRng.try_fill_bytes(&mut id)?;
//! assert_ne!(id, [0; 16]);
//! # Ok::<(), getrandom::Error>(())
//! ```

use std::cell::RefCell;
use std::fmt;
use std::time::Duration;

use crate::clock::coarse_monotonic;

use chacha20::ChaCha20Rng;
use rand_core::{SeedableRng, TryCryptoRng, TryRng};

/// When a [`ReseedingRng`] takes a fresh key from the OS, besides at creation and after a fork.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReseedPolicy {
    /// Output bytes per key: the draw that would exceed this reseeds first.
    pub max_bytes: u64,
    /// Age of a key: the first draw at or after this age reseeds first.
    pub max_age: Duration,
}

impl Default for ReseedPolicy {
    /// 64 KiB or 60 s, whichever comes first: at 28 bytes per seal, one `getrandom` call per
    /// ~2 300 tokens on a busy server.
    fn default() -> Self {
        Self {
            max_bytes: 64 * 1024,
            max_age: Duration::from_secs(60),
        }
    }
}

/// Whether the process forked since the generator was keyed.
enum ForkCheck {
    /// The C library's fork handler counter (one atomic load per check).
    #[cfg(unix)]
    Atfork(forkguard::atfork::Guard),
    /// The process id it was keyed in (one `getpid` system call per check).
    Pid(u32),
}

impl ForkCheck {
    fn new() -> Self {
        #[cfg(unix)]
        if let Ok(guard) = forkguard::atfork::Guard::try_new() {
            return Self::Atfork(guard);
        }
        Self::Pid(std::process::id())
    }

    fn forked(&mut self) -> bool {
        match self {
            #[cfg(unix)]
            Self::Atfork(guard) => guard.detected_fork(),
            Self::Pid(pid) => *pid != std::process::id(),
        }
    }
}

/// The generator's keyed state and when it must be replaced.
struct Keyed {
    chacha: ChaCha20Rng,
    fork: ForkCheck,
    drawn: u64,
    /// When it reaches the policy's age limit (the time it was keyed plus `max_age`), on the
    /// coarse monotonic clock (a few ns to read, at most one tick behind: the age limit is kept
    /// to within a few ms). Kept as a deadline: each draw compares one reading to it.
    retire_at: Duration,
}

/// ChaCha20 keyed from the OS, reseeded by [`ReseedPolicy`] and after a fork. See the module
/// documentation for what it detects and what it cannot.
///
/// The key is wiped when the generator is dropped or reseeded (`chacha20`'s `zeroize`).
/// `Debug` shows the policy and the reseed count, never the state.
pub struct ReseedingRng {
    keyed: Option<Keyed>,
    policy: ReseedPolicy,
    reseeds: u64,
}

impl ReseedingRng {
    /// A generator with the default [`ReseedPolicy`], keyed from the OS now.
    pub fn new() -> Result<Self, getrandom::Error> {
        Self::with_policy(ReseedPolicy::default())
    }

    /// A generator with `policy`, keyed from the OS now.
    pub fn with_policy(policy: ReseedPolicy) -> Result<Self, getrandom::Error> {
        let mut rng = Self {
            keyed: None,
            policy,
            reseeds: 0,
        };
        rng.keyed = Some(Self::key(policy)?);
        Ok(rng)
    }

    /// The policy in use.
    pub fn policy(&self) -> ReseedPolicy {
        self.policy
    }

    /// How many times the key was replaced since creation (by the policy or after a fork).
    pub fn reseeds(&self) -> u64 {
        self.reseeds
    }

    /// Bytes drawn under the current key (a reseed starts again from 0).
    pub fn drawn(&self) -> u64 {
        self.keyed.as_ref().map_or(0, |k| k.drawn)
    }

    fn key(policy: ReseedPolicy) -> Result<Keyed, getrandom::Error> {
        let mut seed = zeroize::Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut seed[..])?;
        Ok(Keyed {
            chacha: ChaCha20Rng::from_seed(*seed),
            fork: ForkCheck::new(),
            drawn: 0,
            // Keyed at `t`, usable while `now - t < max_age`: while `now < t + max_age`
            // (saturated, a deadline never reached).
            retire_at: coarse_monotonic().saturating_add(policy.max_age),
        })
    }

    /// The state to draw `len` bytes from: the current one if it may still be used, else a
    /// fresh one. A failed reseed leaves no state behind, so no later draw can reuse it.
    #[inline]
    fn state(&mut self, len: usize) -> Result<&mut ChaCha20Rng, getrandom::Error> {
        let len = len as u64;
        let max_bytes = self.policy.max_bytes;
        let usable = self.keyed.as_mut().is_some_and(|k| {
            !k.fork.forked()
                && k.drawn.saturating_add(len) <= max_bytes
                && coarse_monotonic() < k.retire_at
        });
        if !usable {
            self.reseed()?;
        }
        match self.keyed.as_mut() {
            Some(k) => {
                k.drawn = k.drawn.saturating_add(len);
                Ok(&mut k.chacha)
            }
            // Unreachable: set just above.
            None => Err(getrandom::Error::UNEXPECTED),
        }
    }

    /// Replaces the key. Out of line: one draw in thousands comes here, and the others keep a
    /// small frame.
    #[cold]
    #[inline(never)]
    fn reseed(&mut self) -> Result<(), getrandom::Error> {
        self.keyed = None;
        self.keyed = Some(Self::key(self.policy)?);
        self.reseeds += 1;
        Ok(())
    }
}

impl fmt::Debug for ReseedingRng {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReseedingRng")
            .field("policy", &self.policy)
            .field("reseeds", &self.reseeds)
            .finish_non_exhaustive()
    }
}

impl TryRng for ReseedingRng {
    type Error = getrandom::Error;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut b = [0u8; 4];
        self.try_fill_bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut b = [0u8; 8];
        self.try_fill_bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        match self.state(dst.len())?.try_fill_bytes(dst) {
            Ok(()) => Ok(()),
            Err(never) => match never {},
        }
    }
}

impl TryCryptoRng for ReseedingRng {}

thread_local! {
    static THREAD_RNG: RefCell<Option<ReseedingRng>> = const { RefCell::new(None) };
}

/// A zero-sized handle to this thread's [`ReseedingRng`] (default policy, created on first
/// use), for code that passes `&mut OsRng` today. Each thread has its own generator, so
/// threads never contend; a forked child reseeds before its first draw.
#[derive(Clone, Copy, Debug, Default)]
pub struct FastRng;

impl FastRng {
    fn with<T>(
        f: impl FnOnce(&mut ReseedingRng) -> Result<T, getrandom::Error>,
    ) -> Result<T, getrandom::Error> {
        THREAD_RNG.with(|cell| {
            // A re-entrant use is impossible (nothing here calls back into FastRng); if it
            // happened anyway, fail rather than panic.
            let mut slot = cell
                .try_borrow_mut()
                .map_err(|_| getrandom::Error::UNEXPECTED)?;
            if slot.is_none() {
                Self::first_use(&mut slot)?;
            }
            match slot.as_mut() {
                Some(rng) => f(rng),
                None => Err(getrandom::Error::UNEXPECTED),
            }
        })
    }

    /// Creates this thread's generator. Out of line: once per thread, and every other draw
    /// keeps a small frame.
    #[cold]
    #[inline(never)]
    fn first_use(slot: &mut Option<ReseedingRng>) -> Result<(), getrandom::Error> {
        *slot = Some(ReseedingRng::new()?);
        Ok(())
    }

    /// Reseeds of this thread's generator so far (0 before its first use).
    pub fn reseeds() -> u64 {
        Self::read(ReseedingRng::reseeds)
    }

    /// Bytes this thread's generator has drawn under its current key (0 before its first use).
    pub fn drawn() -> u64 {
        Self::read(ReseedingRng::drawn)
    }

    fn read(f: impl FnOnce(&ReseedingRng) -> u64) -> u64 {
        THREAD_RNG.with(|cell| {
            cell.try_borrow()
                .ok()
                .and_then(|s| s.as_ref().map(f))
                .unwrap_or(0)
        })
    }
}

impl TryRng for FastRng {
    type Error = getrandom::Error;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Self::with(|r| r.try_next_u32())
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Self::with(|r| r.try_next_u64())
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        Self::with(|r| r.try_fill_bytes(dst))
    }
}

impl TryCryptoRng for FastRng {}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn policy(max_bytes: u64, max_age: Duration) -> ReseedPolicy {
        ReseedPolicy { max_bytes, max_age }
    }

    #[test]
    fn reseeds_before_the_draw_that_would_pass_the_byte_limit() {
        let mut rng = ReseedingRng::with_policy(policy(64, Duration::from_secs(3600))).unwrap();
        let mut b = [0u8; 28];
        rng.try_fill_bytes(&mut b).unwrap();
        rng.try_fill_bytes(&mut b).unwrap();
        assert_eq!(rng.reseeds(), 0, "56 of 64 bytes drawn");
        rng.try_fill_bytes(&mut b).unwrap();
        assert_eq!(rng.reseeds(), 1, "84 > 64: a new key first");
        rng.try_fill_bytes(&mut b).unwrap();
        assert_eq!(rng.reseeds(), 1, "56 bytes under the new key");
        // A draw larger than the limit still gets one fresh key, not a refusal.
        let mut big = [0u8; 200];
        rng.try_fill_bytes(&mut big).unwrap();
        assert_eq!(rng.reseeds(), 2);
    }

    #[test]
    fn reseeds_once_the_key_is_old() {
        let mut rng = ReseedingRng::with_policy(policy(u64::MAX, Duration::ZERO)).unwrap();
        for n in 1..=3 {
            rng.try_next_u64().unwrap();
            assert_eq!(rng.reseeds(), n, "an age limit of zero reseeds every draw");
        }
        let mut rng =
            ReseedingRng::with_policy(policy(u64::MAX, Duration::from_millis(20))).unwrap();
        rng.try_next_u64().unwrap();
        assert_eq!(rng.reseeds(), 0);
        // Past the limit by more than the coarse clock's tick (at most 10 ms).
        std::thread::sleep(Duration::from_millis(35));
        rng.try_next_u64().unwrap();
        assert_eq!(rng.reseeds(), 1);
    }

    #[test]
    fn generators_and_draws_do_not_repeat() {
        let mut seen = HashSet::new();
        for _ in 0..8 {
            let mut rng = ReseedingRng::with_policy(policy(4096, Duration::from_secs(60))).unwrap();
            for _ in 0..2000 {
                let mut b = [0u8; 16];
                rng.try_fill_bytes(&mut b).unwrap();
                assert!(seen.insert(b), "a 128-bit draw repeated");
            }
            assert!(rng.reseeds() >= 7, "2000 × 16 B at 4 KiB per key");
        }
        let mut ids = HashSet::new();
        for _ in 0..1000 {
            let mut b = [0u8; 16];
            FastRng.try_fill_bytes(&mut b).unwrap();
            assert!(ids.insert(b));
        }
        assert!(FastRng.try_next_u32().is_ok() && FastRng.try_next_u64().is_ok());
    }

    #[test]
    fn debug_shows_no_state() {
        let rng = ReseedingRng::new().unwrap();
        let text = format!("{rng:?}");
        assert!(
            text.starts_with("ReseedingRng { policy: ReseedPolicy"),
            "{text}"
        );
        assert!(
            !text.contains("chacha") && !text.contains("seed:"),
            "{text}"
        );
    }

    #[test]
    fn threads_have_their_own_generators() {
        FastRng.try_next_u64().unwrap();
        let other = std::thread::spawn(|| {
            let before = FastRng::reseeds();
            FastRng.try_next_u64().unwrap();
            (before, FastRng::reseeds())
        })
        .join()
        .unwrap();
        assert_eq!(
            other,
            (0, 0),
            "a new thread starts its own, freshly keyed generator"
        );
    }
}
