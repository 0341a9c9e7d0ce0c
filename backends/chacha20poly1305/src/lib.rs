#![doc = include_str!("../README.md")]
//!
//! ## Map of the crate
//!
//! [`ChaCha20Poly1305`] and [`XChaCha20Poly1305`] implement [`mrtr_core::cipher::Cipher`];
//! use either as the cipher of a [`mrtr_core::key::KeyRing`].

#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use aead::array::Array;
use aead::{AeadCore, AeadInOut, KeyInit};
use mrtr_core::cipher::{Algorithm, Cipher, CryptoError, TAG_LEN};
use mrtr_core::key::SecretKey;

fn seal<A: AeadInOut>(
    a: &A,
    nonce: &[u8],
    aad: &[u8],
    buf: &mut [u8],
) -> Result<[u8; TAG_LEN], CryptoError>
where
    aead::Tag<A>: Into<[u8; TAG_LEN]>,
{
    let nonce: &aead::Nonce<A> = nonce.try_into().map_err(|_| CryptoError)?;
    let tag = a
        .encrypt_inout_detached(nonce, aad, buf.into())
        .map_err(|_| CryptoError)?;
    Ok(tag.into())
}

fn open<A: AeadInOut>(
    a: &A,
    nonce: &[u8],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8; TAG_LEN],
) -> Result<(), CryptoError>
where
    aead::Tag<A>: From<[u8; TAG_LEN]>,
{
    let nonce: &aead::Nonce<A> = nonce.try_into().map_err(|_| CryptoError)?;
    let tag: aead::Tag<A> = (*tag).into();
    a.decrypt_inout_detached(nonce, aad, buf.into(), &tag)
        .map_err(|_| CryptoError)
}

/// A RustCrypto ChaCha20-Poly1305 variant of this crate, and the algorithm its tokens name.
pub trait Variant: AeadInOut + private::Sealed {
    /// The algorithm id written into tokens.
    const ALGORITHM: Algorithm;
    /// The type's name, for `Debug`.
    const NAME: &'static str;
    /// The AEAD keyed with a 256-bit key.
    fn from_key(key: &[u8; 32]) -> Self;
}

mod private {
    pub trait Sealed {}
    impl Sealed for chacha20poly1305::ChaCha20Poly1305 {}
    impl Sealed for chacha20poly1305::XChaCha20Poly1305 {}
}

impl Variant for chacha20poly1305::ChaCha20Poly1305 {
    const ALGORITHM: Algorithm = Algorithm::ChaCha20Poly1305;
    const NAME: &'static str = "ChaCha20Poly1305";
    fn from_key(key: &[u8; 32]) -> Self {
        Self::new(key.into())
    }
}

impl Variant for chacha20poly1305::XChaCha20Poly1305 {
    const ALGORITHM: Algorithm = Algorithm::XChaCha20Poly1305;
    const NAME: &'static str = "XChaCha20Poly1305";
    fn from_key(key: &[u8; 32]) -> Self {
        Self::new(key.into())
    }
}

/// A ChaCha20-Poly1305 variant behind mrtr's cipher seam (use the aliases
/// [`ChaCha20Poly1305`] and [`XChaCha20Poly1305`]).
pub struct ChaCha<V>(V);

impl<V: Variant> Cipher for ChaCha<V>
where
    aead::Tag<V>: Into<[u8; TAG_LEN]> + From<[u8; TAG_LEN]>,
{
    const ALGORITHM: Algorithm = V::ALGORITHM;

    fn new(key: &SecretKey) -> Self {
        Self(V::from_key(key.expose()))
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

impl<V: Variant> core::fmt::Debug for ChaCha<V> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}(<redacted>)", V::NAME)
    }
}

/// ChaCha20-Poly1305 (RFC 8439) behind mrtr's cipher seam.
pub type ChaCha20Poly1305 = ChaCha<chacha20poly1305::ChaCha20Poly1305>;

/// XChaCha20-Poly1305 behind mrtr's cipher seam: 192-bit nonces, so random nonces never come
/// near a collision bound.
pub type XChaCha20Poly1305 = ChaCha<chacha20poly1305::XChaCha20Poly1305>;

// Compile-time check that the algorithm's nonce length matches the RustCrypto type's.
const _: () = {
    use aead::array::typenum::Unsigned;
    assert!(
        <chacha20poly1305::ChaCha20Poly1305 as AeadCore>::NonceSize::USIZE
            == Algorithm::ChaCha20Poly1305.nonce_len()
    );
    assert!(
        <chacha20poly1305::XChaCha20Poly1305 as AeadCore>::NonceSize::USIZE
            == Algorithm::XChaCha20Poly1305.nonce_len()
    );
};
#[allow(unused_imports)]
use Array as _;
