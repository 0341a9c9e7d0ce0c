//! The seam between mrtr and an AEAD implementation.
//!
//! Each backend crate (`mrtr-aes-gcm`, `mrtr-chacha20poly1305`, `mrtr-aes-gcm-siv`,
//! `mrtr-aws-lc`) implements [`Cipher`] for one algorithm. Core never names a concrete cipher,
//! so a std-only backend (for example one built on `ring`) can plug in the same way.

use crate::secret::SecretKey;

pub use crate::limits::{MAX_NONCE_LEN, TAG_LEN};

/// The AEAD algorithms a token can name in its header.
///
/// The numeric value is the algorithm id byte of the token header (`docs/token-format.md`).
/// Ids are never reused; new algorithms get new ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum Algorithm {
    /// AES-256-GCM with a 96-bit random nonce.
    Aes256Gcm = 1,
    /// ChaCha20-Poly1305 (RFC 8439) with a 96-bit random nonce.
    ChaCha20Poly1305 = 2,
    /// XChaCha20-Poly1305 with a 192-bit random nonce.
    XChaCha20Poly1305 = 3,
    /// AES-256-GCM-SIV (RFC 8452, nonce-misuse resistant) with a 96-bit random nonce.
    Aes256GcmSiv = 4,
}

impl Algorithm {
    /// The id byte written into the token header.
    pub const fn id(self) -> u8 {
        self as u8
    }

    /// Nonce length in bytes.
    pub const fn nonce_len(self) -> usize {
        match self {
            Self::Aes256Gcm | Self::ChaCha20Poly1305 | Self::Aes256GcmSiv => 12,
            Self::XChaCha20Poly1305 => 24,
        }
    }

    /// A stable, human-readable name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Aes256Gcm => "AES-256-GCM",
            Self::ChaCha20Poly1305 => "ChaCha20-Poly1305",
            Self::XChaCha20Poly1305 => "XChaCha20-Poly1305",
            Self::Aes256GcmSiv => "AES-256-GCM-SIV",
        }
    }
}

/// The one, opaque failure of a cipher operation.
///
/// Deliberately carries nothing: a caller learns only that the operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CryptoError;

impl core::fmt::Display for CryptoError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("aead operation failed")
    }
}

impl core::error::Error for CryptoError {}

/// An AEAD with 256-bit keys and 128-bit tags, used in place with detached tags.
///
/// Implementations must not panic on any input: a wrong nonce length, an over-long buffer or a
/// tag mismatch all return [`CryptoError`]. On a failed [`Cipher::open_in_place`] the buffer
/// contents are unspecified; core wipes it.
pub trait Cipher {
    /// The algorithm this implementation provides; its nonce length is the one core generates.
    const ALGORITHM: Algorithm;

    /// Builds the cipher from a key. The implementation must wipe its key schedule on drop.
    fn new(key: &SecretKey) -> Self;

    /// Encrypts `buf` in place and returns the tag.
    fn seal_in_place(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; TAG_LEN], CryptoError>;

    /// Verifies `tag` and decrypts `buf` in place.
    fn open_in_place(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), CryptoError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_nonce_lengths_are_the_documented_ones() {
        let all = [
            Algorithm::Aes256Gcm,
            Algorithm::ChaCha20Poly1305,
            Algorithm::XChaCha20Poly1305,
            Algorithm::Aes256GcmSiv,
        ];
        assert_eq!(all.map(Algorithm::id), [1, 2, 3, 4]);
        assert_eq!(all.map(Algorithm::nonce_len), [12, 12, 24, 12]);
    }
}
