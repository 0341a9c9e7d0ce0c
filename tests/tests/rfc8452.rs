//! RFC 8452's published AES-256-GCM-SIV vectors (Appendix C.2, and the counter-wrap tests of
//! Appendix C.3) through the `Cipher` seam of both AES-256-GCM-SIV backends (`mrtr-aes-gcm-siv`
//! and `mrtr-aws-lc`): each seals to the published
//! ciphertext and tag, opens back to its plaintext, and is refused with any tag bit flipped.
//! The vectors are stored in `tests/data/rfc8452-aes-256-gcm-siv.json`.

use std::path::PathBuf;

use mrtr_core::cipher::{Cipher, CryptoError, TAG_LEN};
use mrtr_core::key::SecretKey;
use mrtr_tests::hex;
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    algorithm: String,
    vectors: Vec<Vector>,
}

#[derive(Deserialize)]
struct Vector {
    section: String,
    key_hex: String,
    nonce_hex: String,
    aad_hex: String,
    plaintext_hex: String,
    ciphertext_hex: String,
    tag_hex: String,
}

fn bytes(hex: &str) -> Vec<u8> {
    hex::decode(hex).expect("hex")
}

fn load() -> File {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/rfc8452-aes-256-gcm-siv.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("vector file parses")
}

#[test]
fn rustcrypto_rfc8452_vectors_seal_open_and_refuse_a_flipped_tag() {
    check::<mrtr_aes_gcm_siv::Aes256GcmSiv>();
}

#[test]
fn aws_lc_rfc8452_vectors_seal_open_and_refuse_a_flipped_tag() {
    check::<mrtr_aws_lc::Aes256GcmSiv>();
}

fn check<C: Cipher>() {
    let file = load();
    assert_eq!(file.algorithm, "AES-256-GCM-SIV");
    let (mut c2, mut c3) = (0, 0);
    for (i, v) in file.vectors.iter().enumerate() {
        let key = SecretKey::from_slice(&bytes(&v.key_hex)).expect("32-byte key");
        let cipher = C::new(&key);
        let (nonce, aad) = (bytes(&v.nonce_hex), bytes(&v.aad_hex));
        let (plain, sealed) = (bytes(&v.plaintext_hex), bytes(&v.ciphertext_hex));
        let tag: [u8; TAG_LEN] = bytes(&v.tag_hex).try_into().expect("16-byte tag");

        let mut buf = plain.clone();
        let got = cipher.seal_in_place(&nonce, &aad, &mut buf);
        assert_eq!(got, Ok(tag), "vector {i}: tag");
        assert_eq!(buf, sealed, "vector {i}: ciphertext");

        cipher
            .open_in_place(&nonce, &aad, &mut buf, &tag)
            .unwrap_or_else(|_| panic!("vector {i}: refused"));
        assert_eq!(buf, plain, "vector {i}: plaintext");

        for bit in [0, 63, 127] {
            let mut bad = tag;
            bad[bit / 8] ^= 1 << (bit % 8);
            let mut buf = sealed.clone();
            assert_eq!(
                cipher.open_in_place(&nonce, &aad, &mut buf, &bad),
                Err(CryptoError),
                "vector {i}: tag bit {bit} flipped"
            );
        }
        match v.section.as_str() {
            "C.2" => c2 += 1,
            "C.3" => c3 += 1,
            other => panic!("vector {i}: unknown section {other}"),
        }
    }
    // Appendix C.2 has 24 AEAD_AES_256_GCM_SIV vectors, C.3 two counter-wrap vectors.
    assert_eq!((c2, c3), (24, 2));
}
