//! The floor: one AEAD sealing and opening a buffer in place, detached tag, fixed nonce, no
//! associated data, no framing, no randomness, no encoding. What no token format could beat.
//!
//! The RustCrypto rows are the floors of mrtr's own backends; the `ring` and `aws-lc-rs` rows
//! decide whether a third, std-only backend is worth having. The fair floor, which a token
//! format can actually approach, is in [`crate::fair_floor`].

use aead::{AeadCore, AeadInOut, KeyInit};

use crate::KEY;

/// Tag length of every AEAD here.
pub const TAG: usize = 16;

/// A raw AEAD with a fixed key and nonce.
pub trait RawAead {
    /// Short, path-safe name for benchmark ids.
    fn id(&self) -> &'static str;
    /// Encrypts `buf` in place and returns the tag.
    fn seal(&self, buf: &mut [u8]) -> [u8; TAG];
    /// Verifies `tag` and decrypts `buf` in place; panics on failure (benchmark inputs are
    /// always valid).
    fn open(&self, buf: &mut [u8], tag: &[u8; TAG]);
}

/// A RustCrypto AEAD (the `aead` 0.6 in-out API mrtr's backends use).
pub struct RustCrypto<A: AeadCore> {
    id: &'static str,
    aead: A,
    nonce: aead::Nonce<A>,
}

impl<A: AeadInOut + KeyInit> RustCrypto<A> {
    fn with_id(id: &'static str) -> Self {
        Self {
            id,
            aead: A::new_from_slice(&KEY).expect("32-byte key"),
            nonce: Default::default(),
        }
    }
}

/// RustCrypto AES-256-GCM: the floor of `mrtr-aes-gcm`.
pub fn rustcrypto_aes_gcm() -> RustCrypto<aes_gcm::Aes256Gcm> {
    RustCrypto::with_id("rustcrypto-aes256gcm")
}

/// RustCrypto ChaCha20-Poly1305: the floor of `mrtr-chacha20poly1305`.
pub fn rustcrypto_chacha() -> RustCrypto<chacha20poly1305::ChaCha20Poly1305> {
    RustCrypto::with_id("rustcrypto-chacha20poly1305")
}

/// RustCrypto XChaCha20-Poly1305: the floor of `mrtr-chacha20poly1305`'s X variant.
pub fn rustcrypto_xchacha() -> RustCrypto<chacha20poly1305::XChaCha20Poly1305> {
    RustCrypto::with_id("rustcrypto-xchacha20poly1305")
}

/// RustCrypto AES-256-GCM-SIV: the floor of `mrtr-aes-gcm-siv`.
pub fn rustcrypto_aes_gcm_siv() -> RustCrypto<aes_gcm_siv::Aes256GcmSiv> {
    RustCrypto::with_id("rustcrypto-aes256gcmsiv")
}

impl<A: AeadInOut> RawAead for RustCrypto<A>
where
    aead::Tag<A>: Into<[u8; TAG]> + From<[u8; TAG]>,
{
    fn id(&self) -> &'static str {
        self.id
    }

    fn seal(&self, buf: &mut [u8]) -> [u8; TAG] {
        self.aead
            .encrypt_inout_detached(&self.nonce, &[], buf.into())
            .expect("seal")
            .into()
    }

    fn open(&self, buf: &mut [u8], tag: &[u8; TAG]) {
        let tag: aead::Tag<A> = (*tag).into();
        self.aead
            .decrypt_inout_detached(&self.nonce, &[], buf.into(), &tag)
            .expect("open");
    }
}

/// The `ring` and `aws-lc-rs` rows (feature `comparisons`, on by default).
#[cfg(feature = "comparisons")]
mod native {
    use super::{RawAead, TAG};
    use crate::KEY;

    /// `ring`'s AEAD.
    pub struct Ring {
        id: &'static str,
        key: ring::aead::LessSafeKey,
    }

    /// `ring` AES-256-GCM.
    pub fn ring_aes_gcm() -> Ring {
        Ring::new("ring-aes256gcm", &ring::aead::AES_256_GCM)
    }

    /// `ring` ChaCha20-Poly1305.
    pub fn ring_chacha() -> Ring {
        Ring::new("ring-chacha20poly1305", &ring::aead::CHACHA20_POLY1305)
    }

    impl Ring {
        fn new(id: &'static str, alg: &'static ring::aead::Algorithm) -> Self {
            let key = ring::aead::UnboundKey::new(alg, &KEY).expect("key");
            Self {
                id,
                key: ring::aead::LessSafeKey::new(key),
            }
        }
    }

    impl RawAead for Ring {
        fn id(&self) -> &'static str {
            self.id
        }

        fn seal(&self, buf: &mut [u8]) -> [u8; TAG] {
            use ring::aead::{Aad, Nonce};
            let tag = self
                .key
                .seal_in_place_separate_tag(
                    Nonce::assume_unique_for_key([0; 12]),
                    Aad::empty(),
                    buf,
                )
                .expect("seal");
            tag.as_ref().try_into().expect("16-byte tag")
        }

        fn open(&self, buf: &mut [u8], tag: &[u8; TAG]) {
            use ring::aead::{Aad, Nonce, Tag};
            let tag = Tag::from(*tag);
            self.key
                .open_in_place_separate_tag(
                    Nonce::assume_unique_for_key([0; 12]),
                    Aad::empty(),
                    tag,
                    buf,
                    0..,
                )
                .expect("open");
        }
    }

    /// `aws-lc-rs`'s AEAD.
    pub struct AwsLc {
        id: &'static str,
        key: aws_lc_rs::aead::LessSafeKey,
    }

    /// `aws-lc-rs` AES-256-GCM.
    pub fn aws_lc_aes_gcm() -> AwsLc {
        AwsLc::new("awslc-aes256gcm", &aws_lc_rs::aead::AES_256_GCM)
    }

    /// `aws-lc-rs` ChaCha20-Poly1305.
    pub fn aws_lc_chacha() -> AwsLc {
        AwsLc::new(
            "awslc-chacha20poly1305",
            &aws_lc_rs::aead::CHACHA20_POLY1305,
        )
    }

    /// `aws-lc-rs` AES-256-GCM-SIV (no mrtr backend uses it; for comparison).
    pub fn aws_lc_aes_gcm_siv() -> AwsLc {
        AwsLc::new("awslc-aes256gcmsiv", &aws_lc_rs::aead::AES_256_GCM_SIV)
    }

    impl AwsLc {
        fn new(id: &'static str, alg: &'static aws_lc_rs::aead::Algorithm) -> Self {
            let key = aws_lc_rs::aead::UnboundKey::new(alg, &KEY).expect("key");
            Self {
                id,
                key: aws_lc_rs::aead::LessSafeKey::new(key),
            }
        }
    }

    impl RawAead for AwsLc {
        fn id(&self) -> &'static str {
            self.id
        }

        fn seal(&self, buf: &mut [u8]) -> [u8; TAG] {
            use aws_lc_rs::aead::{Aad, Nonce};
            let tag = self
                .key
                .seal_in_place_separate_tag(
                    Nonce::assume_unique_for_key([0; 12]),
                    Aad::empty(),
                    buf,
                )
                .expect("seal");
            tag.as_ref().try_into().expect("16-byte tag")
        }

        fn open(&self, buf: &mut [u8], tag: &[u8; TAG]) {
            use aws_lc_rs::aead::{Aad, Nonce};
            self.key
                .open_in_place_separate_tag(
                    Nonce::assume_unique_for_key([0; 12]),
                    Aad::empty(),
                    tag,
                    buf,
                )
                .expect("open");
        }
    }
}

#[cfg(feature = "comparisons")]
pub use native::*;
