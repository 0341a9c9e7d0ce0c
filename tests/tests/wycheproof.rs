//! Wycheproof AEAD vectors through mrtr's own backend seam (`Cipher`), for every backend:
//! `mrtr-aes-gcm`, `mrtr-chacha20poly1305` (both algorithms), `mrtr-aes-gcm-siv` and
//! `mrtr-aws-lc` (both).
//!
//! * A vector with a 32-byte key, 16-byte tag and the algorithm's nonce length is run in full:
//!   a valid one opens to its plaintext and seals back to its ciphertext and tag; an invalid
//!   one is refused, and the refused buffer never holds the plaintext.
//! * Any other key, tag or nonce size must be refused by the seam (key: `SecretKey`,
//!   tag: the `[u8; 16]` type, nonce: `open_in_place`/`seal_in_place`) without panicking.
//!   Those vectors are counted apart from the ones run in full.

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_aes_gcm_siv::Aes256GcmSiv;
use mrtr_chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use mrtr_core::cipher::{Cipher, CryptoError, TAG_LEN};
use mrtr_core::key::{KEY_LEN, KeyError, SecretKey};
use wycheproof::TestResult;
use wycheproof::aead::{TestName, TestSet};

#[derive(Debug, Default)]
struct Counts {
    valid: usize,
    invalid: usize,
    /// Invalid vectors whose plaintext differs from their ciphertext, so a refused buffer
    /// holding the plaintext would be noticed.
    plaintext_checked: usize,
    other_key_size: usize,
    other_tag_size: usize,
    other_nonce_size: usize,
}

fn run<C: Cipher>(name: TestName) -> Counts {
    let set = TestSet::load(name).expect("vectors load");
    let nonce_len = C::ALGORITHM.nonce_len();
    let mut n = Counts::default();
    for group in &set.test_groups {
        for t in &group.tests {
            let id = t.tc_id;
            let key = SecretKey::from_slice(&t.key);
            if t.key.len() != KEY_LEN {
                assert_eq!(key.err(), Some(KeyError::BadKeyLength), "tc {id}");
                n.other_key_size += 1;
                continue;
            }
            let cipher = C::new(&key.expect("32-byte key"));
            let tag = <&[u8; TAG_LEN]>::try_from(&t.tag[..]);
            if t.nonce.len() != nonce_len {
                // Some of these vectors carry no tag at all: any 16 bytes do for the refusal.
                let tag = tag.unwrap_or(&[0; TAG_LEN]);
                let mut buf = t.ct.to_vec();
                assert_eq!(
                    cipher.open_in_place(&t.nonce, &t.aad, &mut buf, tag),
                    Err(CryptoError),
                    "tc {id}: open accepted a {}-byte nonce",
                    t.nonce.len()
                );
                let mut buf = t.pt.to_vec();
                assert_eq!(
                    cipher.seal_in_place(&t.nonce, &t.aad, &mut buf),
                    Err(CryptoError),
                    "tc {id}: seal accepted a {}-byte nonce",
                    t.nonce.len()
                );
                n.other_nonce_size += 1;
                continue;
            }
            let Ok(tag) = tag else {
                // The seam only takes full 16-byte tags: a truncated or long tag cannot
                // even be passed to it.
                n.other_tag_size += 1;
                continue;
            };

            let mut buf = t.ct.to_vec();
            let opened = cipher.open_in_place(&t.nonce, &t.aad, &mut buf, tag);
            match t.result {
                TestResult::Valid | TestResult::Acceptable => {
                    assert_eq!(
                        opened,
                        Ok(()),
                        "tc {id} ({}): valid vector refused",
                        t.comment
                    );
                    assert_eq!(buf, &t.pt[..], "tc {id}: wrong plaintext");
                    let mut again = t.pt.to_vec();
                    let sealed = cipher.seal_in_place(&t.nonce, &t.aad, &mut again);
                    assert_eq!(sealed, Ok(*tag), "tc {id}: wrong tag on re-encryption");
                    assert_eq!(
                        again,
                        &t.ct[..],
                        "tc {id}: wrong ciphertext on re-encryption"
                    );
                    n.valid += 1;
                }
                TestResult::Invalid => {
                    assert_eq!(
                        opened,
                        Err(CryptoError),
                        "tc {id} ({}, {:?}): invalid vector accepted",
                        t.comment,
                        t.flags
                    );
                    if !t.pt.is_empty() && t.pt[..] != t.ct[..] {
                        assert_ne!(buf, &t.pt[..], "tc {id}: plaintext released on failure");
                        n.plaintext_checked += 1;
                    }
                    n.invalid += 1;
                }
            }
        }
    }
    assert_eq!(
        n.valid + n.invalid + n.other_key_size + n.other_tag_size + n.other_nonce_size,
        set.number_of_tests,
        "every vector is counted once"
    );
    eprintln!("{}: {n:?}", C::ALGORITHM.name());
    n
}

#[test]
fn aes_256_gcm_passes_wycheproof() {
    let n = run::<Aes256Gcm>(TestName::AesGcm);
    assert!(
        n.valid > 0 && n.invalid > 0 && n.plaintext_checked > 0,
        "{n:?}"
    );
    // AES-128/192 keys and nonces other than 96 bits are in the set and must be refused.
    assert!(n.other_key_size > 0 && n.other_nonce_size > 0, "{n:?}");
}

#[test]
fn chacha20_poly1305_passes_wycheproof() {
    let n = run::<ChaCha20Poly1305>(TestName::ChaCha20Poly1305);
    assert!(
        n.valid > 0 && n.invalid > 0 && n.plaintext_checked > 0,
        "{n:?}"
    );
    assert!(n.other_nonce_size > 0, "{n:?}");
}

#[test]
fn xchacha20_poly1305_passes_wycheproof() {
    let n = run::<XChaCha20Poly1305>(TestName::XChaCha20Poly1305);
    assert!(
        n.valid > 0 && n.invalid > 0 && n.plaintext_checked > 0,
        "{n:?}"
    );
    assert!(n.other_nonce_size > 0, "{n:?}");
}

#[test]
fn aes_256_gcm_siv_passes_wycheproof() {
    let n = run::<Aes256GcmSiv>(TestName::AesGcmSiv);
    assert!(
        n.valid > 0 && n.invalid > 0 && n.plaintext_checked > 0,
        "{n:?}"
    );
    // The set also holds AES-128-GCM-SIV vectors: refused at the seam (all its nonces are 96
    // bits).
    assert!(n.other_key_size > 0, "{n:?}");
}

#[test]
fn aws_lc_aes_256_gcm_passes_wycheproof() {
    let n = run::<mrtr_aws_lc::Aes256Gcm>(TestName::AesGcm);
    assert!(
        n.valid > 0 && n.invalid > 0 && n.plaintext_checked > 0,
        "{n:?}"
    );
    assert!(n.other_key_size > 0 && n.other_nonce_size > 0, "{n:?}");
}

#[test]
fn aws_lc_chacha20_poly1305_passes_wycheproof() {
    let n = run::<mrtr_aws_lc::ChaCha20Poly1305>(TestName::ChaCha20Poly1305);
    assert!(
        n.valid > 0 && n.invalid > 0 && n.plaintext_checked > 0,
        "{n:?}"
    );
    assert!(n.other_nonce_size > 0, "{n:?}");
}

#[test]
fn aws_lc_aes_256_gcm_siv_passes_wycheproof() {
    let n = run::<mrtr_aws_lc::Aes256GcmSiv>(TestName::AesGcmSiv);
    assert!(
        n.valid > 0 && n.invalid > 0 && n.plaintext_checked > 0,
        "{n:?}"
    );
    assert!(n.other_key_size > 0, "{n:?}");
}
