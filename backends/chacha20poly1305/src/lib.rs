#![doc = include_str!("../README.md")]
//!
//! ## Map of the crate
//!
//! [`ChaCha20Poly1305`] and [`XChaCha20Poly1305`] implement [`mrtr_core::cipher::Cipher`];
//! use either as the cipher of a [`mrtr_core::key::KeyRing`].

#![no_std]
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

macro_rules! backend {
    ($(#[$doc:meta])* $name:ident, $inner:ty, $alg:expr) => {
        $(#[$doc])*
        pub struct $name($inner);

        impl Cipher for $name {
            const ALGORITHM: Algorithm = $alg;

            fn new(key: &SecretKey) -> Self {
                Self(<$inner>::new(key.expose().into()))
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
    /// ChaCha20-Poly1305 (RFC 8439) behind mrtr's cipher seam.
    ChaCha20Poly1305,
    chacha20poly1305::ChaCha20Poly1305,
    Algorithm::ChaCha20Poly1305
);
backend!(
    /// XChaCha20-Poly1305 behind mrtr's cipher seam: 192-bit nonces, so random nonces never
    /// come near a collision bound.
    XChaCha20Poly1305,
    chacha20poly1305::XChaCha20Poly1305,
    Algorithm::XChaCha20Poly1305
);

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
