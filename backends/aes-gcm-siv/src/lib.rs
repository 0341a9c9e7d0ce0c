#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use aead::{AeadInOut, KeyInit};
use mrtr_core::cipher::{Algorithm, Cipher, CryptoError, TAG_LEN};
use mrtr_core::key::SecretKey;

/// AES-256-GCM-SIV behind mrtr's cipher seam.
pub struct Aes256GcmSiv(aes_gcm_siv::Aes256GcmSiv);

impl Cipher for Aes256GcmSiv {
    const ALGORITHM: Algorithm = Algorithm::Aes256GcmSiv;

    fn new(key: &SecretKey) -> Self {
        Self(aes_gcm_siv::Aes256GcmSiv::new(key.expose().into()))
    }

    fn seal_in_place(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; TAG_LEN], CryptoError> {
        let nonce = aes_gcm_siv::Nonce::try_from(nonce).map_err(|_| CryptoError)?;
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
        let nonce = aes_gcm_siv::Nonce::try_from(nonce).map_err(|_| CryptoError)?;
        let tag = aes_gcm_siv::Tag::from(*tag);
        self.0
            .decrypt_inout_detached(&nonce, aad, buf.into(), &tag)
            .map_err(|_| CryptoError)
    }
}

impl core::fmt::Debug for Aes256GcmSiv {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Aes256GcmSiv(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::format;

    #[test]
    fn wrong_nonce_lengths_are_refused_not_panics() {
        let cipher = Aes256GcmSiv::new(&SecretKey::from_bytes([7; 32]));
        for len in [0usize, 8, 11, 13, 16, 24] {
            let nonce = [0u8; 24];
            let mut buf = *b"state";
            assert_eq!(
                cipher.seal_in_place(&nonce[..len], b"", &mut buf),
                Err(CryptoError)
            );
            assert_eq!(
                cipher.open_in_place(&nonce[..len], b"", &mut buf, &[0; TAG_LEN]),
                Err(CryptoError)
            );
        }
    }

    #[test]
    fn a_flipped_bit_anywhere_is_refused() {
        let cipher = Aes256GcmSiv::new(&SecretKey::from_bytes([7; 32]));
        let nonce = [3u8; 12];
        let mut sealed = *b"paused state";
        let tag = cipher.seal_in_place(&nonce, b"aad", &mut sealed).unwrap();
        for i in 0..sealed.len() * 8 {
            let mut buf = sealed;
            buf[i / 8] ^= 1 << (i % 8);
            assert_eq!(
                cipher.open_in_place(&nonce, b"aad", &mut buf, &tag),
                Err(CryptoError)
            );
        }
        for i in 0..TAG_LEN * 8 {
            let mut t = tag;
            t[i / 8] ^= 1 << (i % 8);
            let mut buf = sealed;
            assert_eq!(
                cipher.open_in_place(&nonce, b"aad", &mut buf, &t),
                Err(CryptoError)
            );
        }
        let mut buf = sealed;
        assert_eq!(
            cipher.open_in_place(&nonce, b"aae", &mut buf, &tag),
            Err(CryptoError)
        );
        cipher
            .open_in_place(&nonce, b"aad", &mut sealed, &tag)
            .unwrap();
        assert_eq!(&sealed, b"paused state");
    }

    #[test]
    fn debug_hides_the_key() {
        let cipher = Aes256GcmSiv::new(&SecretKey::from_bytes([0x5c; 32]));
        assert_eq!(format!("{cipher:?}"), "Aes256GcmSiv(<redacted>)");
    }
}
