//! Keys, key ids and the key ring.
//!
//! The current key seals; older keys, found by exact key id, still open. There is no trial
//! decryption across keys: a token names its key id in the authenticated header, and a token
//! whose key id is not in the ring is rejected before any cryptography runs. With
//! non-committing AEADs (GCM, Poly1305) trial decryption would open a partitioning oracle.

use core::fmt;

use heapless::{String, Vec};
// Native atomics where the target has compare-and-swap (every host: lock-free, no global
// lock per seal); a `critical-section` fallback only where it has none (Cortex-M0/M0+,
// RISC-V rv32imc). See `Key`'s seal counter.
use portable_atomic::{AtomicU32, Ordering};

use crate::cipher::{Algorithm, Cipher};

pub use crate::limits::{KEY_LEN, MAX_KEY_ID_LEN};
pub use crate::secret::{KeyError, SecretKey};

/// Default number of seals one key may perform with random nonces before it refuses.
///
/// NIST SP 800-38D §8.3 limits a GCM key used with random 96-bit nonces to 2^32 invocations,
/// keeping the chance of a nonce collision below 2^-32. The counter is a `u32` (Cortex-M has no
/// 64-bit atomics), so the limit is 2^32 − 1, one seal short of NIST's bound. The same limit is
/// applied to every algorithm. The count lives in memory: a process restart resets it, so
/// operators must rotate keys on a schedule well inside the limit (see `SECURITY.md`).
pub const DEFAULT_SEAL_LIMIT: u32 = u32::MAX;

/// A key id: 1 to 16 bytes of `A-Z a-z 0-9 . _ -`. Public; written into every token header.
///
/// Held as text, validated once when built: [`KeyId::as_str`] is then free, where checking
/// the bytes as UTF-8 again on every call cost as much as the rest of a metrics update.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct KeyId(String<MAX_KEY_ID_LEN>);

impl KeyId {
    /// Parses and validates a key id.
    pub fn new(id: &str) -> Result<Self, KeyError> {
        Self::from_bytes(id.as_bytes())
    }

    /// Validates raw key-id bytes (as found in a token header).
    pub fn from_bytes(id: &[u8]) -> Result<Self, KeyError> {
        if id.is_empty() || id.len() > MAX_KEY_ID_LEN {
            return Err(KeyError::BadKeyId);
        }
        if !id
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        {
            return Err(KeyError::BadKeyId);
        }
        // ASCII, so UTF-8; 1 to 16 bytes, so it fits.
        Vec::from_slice(id)
            .ok()
            .and_then(|v| String::from_utf8(v).ok())
            .map(Self)
            .ok_or(KeyError::BadKeyId)
    }

    /// The id bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }

    /// The id as text (always ASCII).
    #[inline]
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyId({:?})", self.as_str())
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for KeyId {
    fn format(&self, f: defmt::Formatter) {
        defmt::write!(f, "{=str}", self.as_str())
    }
}

/// One key of a ring: its id, its cipher (key schedule) and how many times it has sealed.
///
/// The seal counter is a `portable_atomic::AtomicU32`. On targets with compare-and-swap
/// (x86-64, AArch64, Cortex-M3 and up, RISC-V with the A extension) it is the native
/// lock-free atomic, so concurrent seals on a multi-threaded server never share a lock. On
/// targets without CAS (Cortex-M0/M0+ `thumbv6m`, RISC-V `rv32imc`) the read-modify-write runs
/// inside a `critical-section`, which the firmware provides (for example `cortex-m`'s or
/// `riscv`'s single-hart implementation).
pub struct Key<C> {
    id: KeyId,
    cipher: C,
    seals: AtomicU32,
}

impl<C: Cipher> Key<C> {
    /// Builds a key; `secret` is consumed and wiped.
    pub fn new(id: KeyId, secret: SecretKey) -> Self {
        let cipher = C::new(&secret);
        drop(secret);
        Self {
            id,
            cipher,
            seals: AtomicU32::new(0),
        }
    }

    /// Builds a key that has already sealed `used` tokens (for restoring a persisted count).
    pub fn with_seals_used(id: KeyId, secret: SecretKey, used: u32) -> Self {
        let key = Self::new(id, secret);
        key.seals.store(used, Ordering::Relaxed);
        key
    }

    /// The key id.
    pub fn id(&self) -> &KeyId {
        &self.id
    }

    /// How many seals this key has performed (in this process).
    pub fn seals_used(&self) -> u32 {
        self.seals.load(Ordering::Relaxed)
    }

    /// Takes one seal from the budget, or `None` when `limit` is reached.
    fn take_seal(&self, limit: u32) -> Option<()> {
        self.seals
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < limit).then(|| n + 1)
            })
            .ok()
            .map(|_| ())
    }

    pub(crate) fn cipher(&self) -> &C {
        &self.cipher
    }
}

impl<C> fmt::Debug for Key<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key")
            .field("id", &self.id)
            .field("material", &"<redacted>")
            .field("seals", &self.seals.load(Ordering::Relaxed))
            .finish()
    }
}

/// Up to `K` keys of one algorithm: one current (sealing) key and older ones that still open.
pub struct KeyRing<C, const K: usize> {
    keys: Vec<Key<C>, K>,
    current: usize,
    seal_limit: u32,
}

impl<C: Cipher, const K: usize> KeyRing<C, K> {
    /// A ring whose only key is `current`.
    ///
    /// A ring of capacity 0 cannot hold its current key: that is a compile-time error.
    pub fn new(current: Key<C>) -> Self {
        const { assert!(K >= 1, "a key ring needs room for at least one key") };
        let mut keys = Vec::new();
        // K >= 1, so the first push always fits.
        let _ = keys.push(current);
        Self {
            keys,
            current: 0,
            seal_limit: DEFAULT_SEAL_LIMIT,
        }
    }

    /// Adds an older key that still opens tokens but never seals.
    pub fn with_previous(mut self, key: Key<C>) -> Result<Self, KeyError> {
        self.add_previous(key)?;
        Ok(self)
    }

    /// Adds an older key that still opens tokens but never seals.
    pub fn add_previous(&mut self, key: Key<C>) -> Result<(), KeyError> {
        if self.find(key.id.as_bytes()).is_some() {
            return Err(KeyError::DuplicateKeyId);
        }
        self.keys.push(key).map_err(|_| KeyError::RingFull)
    }

    /// Sets how many seals each key may perform before refusing (default [`DEFAULT_SEAL_LIMIT`]).
    pub fn with_seal_limit(mut self, limit: u32) -> Self {
        self.seal_limit = limit;
        self
    }

    /// How many seals each key may perform before refusing.
    pub const fn seal_limit(&self) -> u32 {
        self.seal_limit
    }

    /// The algorithm of every key in this ring.
    pub const fn algorithm(&self) -> Algorithm {
        C::ALGORITHM
    }

    /// The sealing key.
    pub fn current(&self) -> &Key<C> {
        // `current` is always a valid index: set at construction, keys are never removed.
        &self.keys[self.current]
    }

    /// The key with exactly this id, if the ring has it.
    #[inline]
    pub fn find(&self, id: &[u8]) -> Option<&Key<C>> {
        self.keys.iter().find(|k| k.id.as_bytes() == id)
    }

    /// Every key, current first.
    pub fn iter(&self) -> impl Iterator<Item = &Key<C>> {
        self.keys.iter()
    }

    /// Takes one seal from the current key's budget.
    pub(crate) fn take_seal(&self) -> Option<&Key<C>> {
        let key = self.current();
        key.take_seal(self.seal_limit).map(|_| key)
    }
}

impl<C, const K: usize> fmt::Debug for KeyRing<C, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRing")
            .field("current", &self.keys.get(self.current).map(|k| &k.id))
            .field("keys", &self.keys.len())
            .field("seal_limit", &self.seal_limit)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::vec::Vec;

    use super::*;

    /// A cipher that does nothing: these tests only count seals.
    struct Null;

    impl Cipher for Null {
        const ALGORITHM: Algorithm = Algorithm::Aes256Gcm;

        fn new(_: &SecretKey) -> Self {
            Null
        }

        fn seal_in_place(
            &self,
            _: &[u8],
            _: &[u8],
            _: &mut [u8],
        ) -> Result<[u8; crate::cipher::TAG_LEN], crate::cipher::CryptoError> {
            Err(crate::cipher::CryptoError)
        }

        fn open_in_place(
            &self,
            _: &[u8],
            _: &[u8],
            _: &mut [u8],
            _: &[u8; crate::cipher::TAG_LEN],
        ) -> Result<(), crate::cipher::CryptoError> {
            Err(crate::cipher::CryptoError)
        }
    }

    fn key(used: u32) -> Key<Null> {
        Key::with_seals_used(
            KeyId::new("k").unwrap(),
            SecretKey::from_bytes([0; 32]),
            used,
        )
    }

    #[cfg(target_has_atomic = "32")]
    #[test]
    fn hosts_count_seals_with_native_lock_free_atomics() {
        // The counter must not fall back to a critical section (a global lock under std)
        // where the target has compare-and-swap.
        assert!(AtomicU32::is_always_lock_free());
        assert!(AtomicU32::is_lock_free());
    }

    #[test]
    fn the_budget_ends_exactly_at_the_limit() {
        let k = key(0);
        assert!((0..5).all(|_| k.take_seal(5).is_some()));
        assert_eq!(k.take_seal(5), None);
        assert_eq!(k.seals_used(), 5, "a refused seal is not counted");
        let nearly = key(u32::MAX - 1);
        assert!(nearly.take_seal(u32::MAX).is_some());
        assert_eq!(nearly.take_seal(u32::MAX), None, "no wrap past u32::MAX");
        assert_eq!(nearly.seals_used(), u32::MAX);
    }

    #[test]
    fn concurrent_seals_are_counted_exactly() {
        const THREADS: u32 = 8;
        const EACH: u32 = 5_000;
        let k = key(0);
        let taken: Vec<u32> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..THREADS)
                .map(|_| {
                    s.spawn(|| {
                        (0..EACH)
                            .filter(|_| k.take_seal(u32::MAX).is_some())
                            .count()
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap() as u32)
                .collect()
        });
        assert_eq!(taken, [EACH; THREADS as usize]);
        assert_eq!(k.seals_used(), THREADS * EACH);
    }

    #[test]
    fn concurrent_seals_never_overrun_the_budget() {
        const LIMIT: u32 = 12_345;
        let k = key(0);
        let taken: usize = std::thread::scope(|s| {
            let workers: Vec<_> = (0..8)
                .map(|_| s.spawn(|| (0..5_000).filter(|_| k.take_seal(LIMIT).is_some()).count()))
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        assert_eq!(taken, LIMIT as usize);
        assert_eq!(k.seals_used(), LIMIT);
    }
}
