#![doc = include_str!("../README.md")]
//!
//! ## Map of the crate
//!
//! [`Aes256Gcm`] implements [`mrtr_core::cipher::Cipher`]; use it as the cipher of a
//! [`mrtr_core::key::KeyRing`].

#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use aead::{AeadInOut, KeyInit};
use mrtr_core::cipher::{Algorithm, Cipher, CryptoError, TAG_LEN};
use mrtr_core::key::SecretKey;

/// AES-256-GCM behind mrtr's cipher seam.
pub struct Aes256Gcm(aes_gcm::Aes256Gcm);

impl Cipher for Aes256Gcm {
    const ALGORITHM: Algorithm = Algorithm::Aes256Gcm;

    fn new(key: &SecretKey) -> Self {
        Self(aes_gcm::Aes256Gcm::new(key.expose().into()))
    }

    fn seal_in_place(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; TAG_LEN], CryptoError> {
        let nonce = aes_gcm::Nonce::try_from(nonce).map_err(|_| CryptoError)?;
        let tag = self
            .0
            .encrypt_inout_detached(&nonce, aad, buf.into())
            .map_err(|_| CryptoError)?;
        Ok(tag.into())
    }

    fn open_in_place(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), CryptoError> {
        let nonce = aes_gcm::Nonce::try_from(nonce).map_err(|_| CryptoError)?;
        let tag = aes_gcm::Tag::from(*tag);
        self.0
            .decrypt_inout_detached(&nonce, aad, buf.into(), &tag)
            .map_err(|_| CryptoError)
    }
}

impl core::fmt::Debug for Aes256Gcm {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Aes256Gcm(<redacted>)")
    }
}
