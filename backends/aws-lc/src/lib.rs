#![doc = include_str!("../README.md")]
//!
//! ## Map of the crate
//!
//! [`Aes256Gcm`] and [`ChaCha20Poly1305`] implement [`Cipher`]; use either as the cipher of a
//! [`mrtr_core::key::KeyRing`].

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use mrtr_core::cipher::{Algorithm, Cipher, CryptoError, TAG_LEN};
use mrtr_core::key::SecretKey;

/// Builds the AWS-LC key. A 32-byte key is the only input `UnboundKey::new` checks, and
/// `SecretKey` always holds 32 bytes; `None` only if AWS-LC itself fails to initialise.
fn key(alg: &'static aead::Algorithm, secret: &SecretKey) -> Option<LessSafeKey> {
    UnboundKey::new(alg, secret.expose())
        .ok()
        .map(LessSafeKey::new)
}

fn seal(
    key: &Option<LessSafeKey>,
    nonce: &[u8],
    aad: &[u8],
    buf: &mut [u8],
) -> Result<[u8; TAG_LEN], CryptoError> {
    let key = key.as_ref().ok_or(CryptoError)?;
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| CryptoError)?;
    let tag = key
        .seal_in_place_separate_tag(nonce, Aad::from(aad), buf)
        .map_err(|_| CryptoError)?;
    tag.as_ref().try_into().map_err(|_| CryptoError)
}

fn open(
    key: &Option<LessSafeKey>,
    nonce: &[u8],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8; TAG_LEN],
) -> Result<(), CryptoError> {
    let key = key.as_ref().ok_or(CryptoError)?;
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| CryptoError)?;
    key.open_in_place_separate_tag(nonce, Aad::from(aad), tag, buf)
        .map(|_| ())
        .map_err(|_| CryptoError)
}

macro_rules! backend {
    ($(#[$doc:meta])* $name:ident, $alg:expr, $lc:expr) => {
        $(#[$doc])*
        pub struct $name(Option<LessSafeKey>);

        impl Cipher for $name {
            const ALGORITHM: Algorithm = $alg;

            fn new(secret: &SecretKey) -> Self {
                Self(key($lc, secret))
            }

            fn seal_in_place(
                &self,
                nonce: &[u8],
                aad: &[u8],
                buf: &mut [u8],
            ) -> Result<[u8; TAG_LEN], CryptoError> {
                seal(&self.0, nonce, aad, buf)
            }

            fn open_in_place(
                &self,
                nonce: &[u8],
                aad: &[u8],
                buf: &mut [u8],
                tag: &[u8; TAG_LEN],
            ) -> Result<(), CryptoError> {
                open(&self.0, nonce, aad, buf, tag)
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!(stringify!($name), "(<redacted>)"))
            }
        }
    };
}

backend!(
    /// AES-256-GCM (96-bit nonce) from aws-lc-rs behind mrtr's cipher seam.
    Aes256Gcm,
    Algorithm::Aes256Gcm,
    &aead::AES_256_GCM
);
backend!(
    /// ChaCha20-Poly1305 (RFC 8439, 96-bit nonce) from aws-lc-rs behind mrtr's cipher seam.
    ChaCha20Poly1305,
    Algorithm::ChaCha20Poly1305,
    &aead::CHACHA20_POLY1305
);
