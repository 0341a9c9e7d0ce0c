//! Published test vectors through the `Cipher` seam, and agreement with the RustCrypto
//! backends on the same inputs.

use mrtr_aws_lc::{Aes256Gcm, Aes256GcmSiv, ChaCha20Poly1305};
use mrtr_core::cipher::{Cipher, TAG_LEN};
use mrtr_core::key::SecretKey;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn key(s: &str) -> SecretKey {
    SecretKey::from_slice(&hex(s)).expect("32-byte key")
}

/// Seals `pt` and checks ciphertext and tag, then opens it back; a flipped bit in the
/// ciphertext, the tag or the associated data must fail.
fn check<C: Cipher>(k: &SecretKey, nonce: &[u8], aad: &[u8], pt: &[u8], ct: &[u8], tag: &[u8]) {
    let c = C::new(k);
    let mut buf = pt.to_vec();
    let t = c.seal_in_place(nonce, aad, &mut buf).expect("seal");
    assert_eq!(buf, ct, "ciphertext");
    assert_eq!(&t[..], tag, "tag");
    c.open_in_place(nonce, aad, &mut buf, &t).expect("open");
    assert_eq!(buf, pt, "plaintext");

    let mut sealed = ct.to_vec();
    if let Some(b) = sealed.first_mut() {
        *b ^= 1;
        assert!(
            c.open_in_place(nonce, aad, &mut sealed, &t).is_err(),
            "flipped ciphertext"
        );
    }
    let mut bad_tag = t;
    bad_tag[TAG_LEN - 1] ^= 0x80;
    let mut sealed = ct.to_vec();
    assert!(
        c.open_in_place(nonce, aad, &mut sealed, &bad_tag).is_err(),
        "flipped tag"
    );
    let mut bad_aad = aad.to_vec();
    bad_aad.push(0);
    let mut sealed = ct.to_vec();
    assert!(
        c.open_in_place(nonce, &bad_aad, &mut sealed, &t).is_err(),
        "longer aad"
    );
}

/// The GCM specification's (McGrew & Viega) test case 14: AES-256, zero key, zero IV, one
/// zero block.
#[test]
fn aes_256_gcm_spec_test_case_14() {
    check::<Aes256Gcm>(
        &key(&"00".repeat(32)),
        &[0; 12],
        b"",
        &[0; 16],
        &hex("cea7403d4d606b6e074ec5d3baf39d18"),
        &hex("d0d1c8a799996bf0265b98b5d48ab919"),
    );
}

/// The GCM specification's test case 16: AES-256 with associated data and a 60-byte
/// plaintext.
#[test]
fn aes_256_gcm_spec_test_case_16() {
    check::<Aes256Gcm>(
        &key("feffe9928665731c6d6a8f9467308308 feffe9928665731c6d6a8f9467308308"),
        &hex("cafebabefacedbaddecaf888"),
        &hex("feedfacedeadbeeffeedfacedeadbeef abaddad2"),
        &hex(
            "d9313225f88406e5a55909c5aff5269a 86a7a9531534f7da2e4c303d8a318a72
             1c3c0c95956809532fcf0e2449a6b525 b16aedf5aa0de657ba637b39",
        ),
        &hex(
            "522dc1f099567d07f47f37a32a84427d 643a8cdcbfe5c0c97598a2bd2555d1aa
             8cb08e48590dbb3da7b08b1056828838 c5f61e6393ba7a0abcc9f662",
        ),
        &hex("76fc6ece0f4e1768cddf8853bb2d551b"),
    );
}

/// RFC 8439 §2.8.2: the AEAD_CHACHA20_POLY1305 example.
#[test]
fn chacha20_poly1305_rfc8439_2_8_2() {
    let pt = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip \
               for the future, sunscreen would be it.";
    check::<ChaCha20Poly1305>(
        &key("808182838485868788898a8b8c8d8e8f 909192939495969798999a9b9c9d9e9f"),
        &hex("070000004041424344454647"),
        &hex("50515253c0c1c2c3c4c5c6c7"),
        pt,
        &hex(
            "d31a8d34648e60db7b86afbc53ef7ec2 a4aded51296e08fea9e2b5a736ee62d6
             3dbea45e8ca9671282fafb69da92728b 1a71de0a9e060b2905d6a5b67ecd3b36
             92ddbd7f2d778b8c9803aee328091b58 fab324e4fad675945585808b4831d7bc
             3ff4def08e4b7a9de576d26586cec64b 6116",
        ),
        &hex("1ae10b594f09e26a7e902ecbd0600691"),
    );
}

/// Same key, nonce, associated data and plaintext give the same bytes as the RustCrypto
/// backends, at every length up to a few blocks.
#[test]
fn agrees_with_rustcrypto_backends() {
    let k = SecretKey::from_bytes([0x42; 32]);
    let nonce = [7u8; 12];
    for len in 0..200 {
        let pt: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let aad = &pt[..len / 3];

        let (mut a, mut b) = (pt.clone(), pt.clone());
        let ta = Aes256Gcm::new(&k)
            .seal_in_place(&nonce, aad, &mut a)
            .unwrap();
        let tb = mrtr_aes_gcm::Aes256Gcm::new(&k)
            .seal_in_place(&nonce, aad, &mut b)
            .unwrap();
        assert_eq!((a, ta), (b, tb), "AES-256-GCM, {len} bytes");

        let (mut a, mut b) = (pt.clone(), pt.clone());
        let ta = ChaCha20Poly1305::new(&k)
            .seal_in_place(&nonce, aad, &mut a)
            .unwrap();
        let tb = mrtr_chacha20poly1305::ChaCha20Poly1305::new(&k)
            .seal_in_place(&nonce, aad, &mut b)
            .unwrap();
        assert_eq!((a, ta), (b, tb), "ChaCha20-Poly1305, {len} bytes");

        let (mut a, mut b) = (pt.clone(), pt.clone());
        let ta = Aes256GcmSiv::new(&k)
            .seal_in_place(&nonce, aad, &mut a)
            .unwrap();
        let tb = mrtr_aes_gcm_siv::Aes256GcmSiv::new(&k)
            .seal_in_place(&nonce, aad, &mut b)
            .unwrap();
        assert_eq!((a, ta), (b, tb), "AES-256-GCM-SIV, {len} bytes");
    }
}

/// Wrong nonce lengths are refused, never a panic.
#[test]
fn refuses_wrong_nonce_length() {
    let k = SecretKey::from_bytes([1; 32]);
    let mut buf = [0u8; 8];
    for n in [0usize, 8, 11, 13, 24] {
        let nonce = vec![0u8; n];
        assert!(
            Aes256Gcm::new(&k)
                .seal_in_place(&nonce, b"", &mut buf)
                .is_err()
        );
        assert!(
            ChaCha20Poly1305::new(&k)
                .open_in_place(&nonce, b"", &mut buf, &[0; TAG_LEN])
                .is_err()
        );
        assert!(
            Aes256GcmSiv::new(&k)
                .seal_in_place(&nonce, b"", &mut buf)
                .is_err()
        );
    }
}
