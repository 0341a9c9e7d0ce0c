//! Key material and the errors of building keys: what a cipher is built from.
//!
//! Its own module so that [`crate::cipher`] (which builds a key schedule from a [`SecretKey`])
//! and [`crate::key`] (which holds ciphers in a ring) do not import each other. Both types are
//! public as `mrtr_core::key::{SecretKey, KeyError}`.

use core::fmt;

use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::limits::KEY_LEN;

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

/// Why a key or key ring could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
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
