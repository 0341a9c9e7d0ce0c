#![doc = include_str!("../README.md")]
//!
//! ## Map of the crate
//!
//! [`Aes256Gcm`], [`ChaCha20Poly1305`] and [`Aes256GcmSiv`] implement [`Cipher`]; use any of
//! them as the cipher of a [`mrtr_core::key::KeyRing`].

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use core::marker::PhantomData;

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

/// An algorithm aws-lc-rs provides to this crate, and the algorithm id its tokens name.
pub trait Variant: private::Sealed {
    /// The algorithm id written into tokens.
    const ALGORITHM: Algorithm;
    /// The type's name, for `Debug`.
    const NAME: &'static str;
    /// The aws-lc-rs algorithm.
    fn aead() -> &'static aead::Algorithm;
}

mod private {
    pub trait Sealed {}
    impl Sealed for super::Aes256GcmAlgorithm {}
    impl Sealed for super::ChaCha20Poly1305Algorithm {}
    impl Sealed for super::Aes256GcmSivAlgorithm {}
}

/// Marks AES-256-GCM (96-bit nonce).
#[derive(Debug)]
pub enum Aes256GcmAlgorithm {}

/// Marks ChaCha20-Poly1305 (RFC 8439, 96-bit nonce).
#[derive(Debug)]
pub enum ChaCha20Poly1305Algorithm {}

/// Marks AES-256-GCM-SIV (RFC 8452, 96-bit nonce, nonce-misuse resistant).
#[derive(Debug)]
pub enum Aes256GcmSivAlgorithm {}

impl Variant for Aes256GcmAlgorithm {
    const ALGORITHM: Algorithm = Algorithm::Aes256Gcm;
    const NAME: &'static str = "Aes256Gcm";
    fn aead() -> &'static aead::Algorithm {
        &aead::AES_256_GCM
    }
}

impl Variant for Aes256GcmSivAlgorithm {
    const ALGORITHM: Algorithm = Algorithm::Aes256GcmSiv;
    const NAME: &'static str = "Aes256GcmSiv";
    fn aead() -> &'static aead::Algorithm {
        &aead::AES_256_GCM_SIV
    }
}

impl Variant for ChaCha20Poly1305Algorithm {
    const ALGORITHM: Algorithm = Algorithm::ChaCha20Poly1305;
    const NAME: &'static str = "ChaCha20Poly1305";
    fn aead() -> &'static aead::Algorithm {
        &aead::CHACHA20_POLY1305
    }
}

/// An aws-lc-rs AEAD behind mrtr's cipher seam (use the aliases [`Aes256Gcm`],
/// [`ChaCha20Poly1305`] and [`Aes256GcmSiv`]).
pub struct AwsLc<V>(Option<LessSafeKey>, PhantomData<fn() -> V>);

impl<V: Variant> Cipher for AwsLc<V> {
    const ALGORITHM: Algorithm = V::ALGORITHM;

    fn new(secret: &SecretKey) -> Self {
        Self(key(V::aead(), secret), PhantomData)
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

impl<V: Variant> core::fmt::Debug for AwsLc<V> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}(<redacted>)", V::NAME)
    }
}

/// AES-256-GCM (96-bit nonce) from aws-lc-rs behind mrtr's cipher seam.
pub type Aes256Gcm = AwsLc<Aes256GcmAlgorithm>;

/// ChaCha20-Poly1305 (RFC 8439, 96-bit nonce) from aws-lc-rs behind mrtr's cipher seam.
pub type ChaCha20Poly1305 = AwsLc<ChaCha20Poly1305Algorithm>;

/// AES-256-GCM-SIV (RFC 8452, 96-bit nonce) from aws-lc-rs behind mrtr's cipher seam: a
/// repeated nonce reveals only that two sealed states were identical, so it may be paired with
/// a userspace nonce source.
pub type Aes256GcmSiv = AwsLc<Aes256GcmSivAlgorithm>;
