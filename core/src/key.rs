//! Keys, key ids and the key ring.
//!
//! The current key seals; older keys, found by exact key id, still open. There is no trial
//! decryption across keys: a token names its key id in the authenticated header, and a token
//! whose key id is not in the ring is rejected before any cryptography runs. With
//! non-committing AEADs (GCM, Poly1305) trial decryption would open a partitioning oracle.

use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering};

use heapless::Vec;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::cipher::{Algorithm, Cipher};

/// Length of every key, in bytes (256-bit keys for all supported algorithms).
pub const KEY_LEN: usize = 32;

/// Longest key id, in bytes.
pub const MAX_KEY_ID_LEN: usize = 16;

/// Default number of seals one key may perform with random nonces before it refuses.
///
/// NIST SP 800-38D §8.3 limits a GCM key used with random 96-bit nonces to 2^32 invocations,
/// keeping the chance of a nonce collision below 2^-32. The counter is a `u32` (Cortex-M has no
/// 64-bit atomics), so the limit is 2^32 − 1, one seal short of NIST's bound. The same limit is
/// applied to every algorithm. The count lives in memory: a process restart resets it, so
/// operators must rotate keys on a schedule well inside the limit (see `SECURITY.md`).
pub const DEFAULT_SEAL_LIMIT: u32 = u32::MAX;

/// 32 bytes of key material. Wiped on drop; never shown by `Debug`.
#[derive(Clone)]
pub struct SecretKey([u8; KEY_LEN]);

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl ZeroizeOnDrop for SecretKey {}

impl SecretKey {
    /// Wraps key bytes. The caller should wipe its own copy.
    pub const fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        Self(bytes)
    }

    /// Copies key bytes from a slice, which must be exactly [`KEY_LEN`] long.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, KeyError> {
        let arr: [u8; KEY_LEN] = bytes.try_into().map_err(|_| KeyError::BadKeyLength)?;
        Ok(Self(arr))
    }

    /// The key bytes, for a backend's key schedule.
    pub fn expose(&self) -> &[u8; KEY_LEN] {
        &self.0
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

/// A key id: 1 to 16 bytes of `A-Z a-z 0-9 . _ -`. Public; written into every token header.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct KeyId(Vec<u8, MAX_KEY_ID_LEN>);

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
        Vec::from_slice(id)
            .map(Self)
            .map_err(|_| KeyError::BadKeyId)
    }

    /// The id bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The id as text (always ASCII).
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.0).unwrap_or("")
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

/// Why a key or key ring could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum KeyError {
    /// Key material is not exactly 32 bytes.
    BadKeyLength,
    /// A key id is empty, longer than 16 bytes, or uses a character outside `A-Za-z0-9._-`.
    BadKeyId,
    /// Two keys in one ring share an id.
    DuplicateKeyId,
    /// The ring already holds as many keys as its capacity.
    RingFull,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::BadKeyLength => "key must be exactly 32 bytes",
            Self::BadKeyId => "key id must be 1-16 characters of A-Z a-z 0-9 . _ -",
            Self::DuplicateKeyId => "two keys share one key id",
            Self::RingFull => "key ring is full",
        })
    }
}

impl core::error::Error for KeyError {}

/// One key of a ring: its id, its cipher (key schedule) and how many times it has sealed.
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
