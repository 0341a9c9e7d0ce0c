//! Key configuration: both formats, every error named, rings for every backend.

mod support;

use std::env::VarError;

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use mrtr_std::core::cipher::Cipher;
use mrtr_std::core::key::KeyRing;
use mrtr_std::keys::{KeyConfig, KeyConfigProblem, MRTR_KEYS, MRTR_KEYS_FILE};
use support::{KEY1_B64, KEY2_B64};

fn problem(r: Result<KeyConfig, mrtr_std::keys::KeyConfigError>) -> KeyConfigProblem {
    r.unwrap_err().problem().clone()
}

#[test]
fn env_form_with_rotation() {
    let c = KeyConfig::parse_env(&format!(" k1:{KEY1_B64} ;current=k2;k2:{KEY2_B64}; ")).unwrap();
    assert_eq!(c.current_id().as_str(), "k2");
    assert_eq!(
        c.ids().map(|i| i.as_str()).collect::<Vec<_>>(),
        ["k1", "k2"]
    );
    assert_eq!(c.len(), 2);
    let ring: KeyRing<Aes256Gcm, 2> = c.into_ring().unwrap();
    assert_eq!(ring.current().id().as_str(), "k2");
    assert!(ring.find(b"k1").is_some());
}

#[test]
fn file_form_with_comments_and_blank_lines() {
    let text = format!("# keys\n\n  k.new_2 {KEY2_B64}   current\nk-old {KEY1_B64}\n");
    let c = KeyConfig::parse_file("keys.txt", &text).unwrap();
    assert_eq!(c.current_id().as_str(), "k.new_2");
    assert_eq!(c.ids().count(), 2);
}

#[test]
fn base64_variants_decode_to_the_same_key() {
    use mrtr_std::core::{Binding, Codec, ManualClock, Principal, Round, TokenBuf, token_len_for};
    use mrtr_std::rng::OsRng;
    // Standard with and without padding, and URL-safe: all accepted, all the same key.
    const STD: &str = "++++++++++++++++++++//////////////////////8=";
    let url_safe = STD.replace('+', "-").replace('/', "_");
    let unpadded = STD.trim_end_matches('=');
    let clock = ManualClock::new(1_000);
    let b = Binding::new("tools/call", "v", "t", Principal::Anonymous).unwrap();
    let reference: KeyRing<Aes256Gcm, 1> = KeyConfig::parse_env(&format!("current=a; a:{STD}"))
        .unwrap()
        .into_ring()
        .unwrap();
    let opener = Codec::builder(reference, &clock)
        .without_audience()
        .build()
        .unwrap();
    for (k, same) in [
        (STD, true),
        (unpadded, true),
        (url_safe.as_str(), true),
        (KEY1_B64, false),
    ] {
        let ring: KeyRing<Aes256Gcm, 1> = KeyConfig::parse_env(&format!("current=a; a:{k}"))
            .unwrap()
            .into_ring()
            .unwrap();
        let sealer = Codec::builder(ring, &clock)
            .without_audience()
            .build()
            .unwrap();
        let mut out: TokenBuf<{ token_len_for(8) }> = TokenBuf::new();
        let token = sealer
            .pause(Round::FIRST, &b, &[0; 32], b"k", &mut OsRng, &mut out)
            .unwrap();
        let token = token.as_str().to_owned();
        let mut buf: TokenBuf<{ token_len_for(8) }> = TokenBuf::new();
        assert_eq!(
            opener.resume(&token, &b, &[0; 32], &mut buf).is_ok(),
            same,
            "{k}"
        );
    }
}

#[test]
fn each_problem_is_named_with_entry_and_key_id() {
    type Case = (
        String,
        KeyConfigProblem,
        Option<usize>,
        Option<&'static str>,
        &'static str,
    );
    let cases: Vec<Case> = vec![
        (
            String::new(),
            KeyConfigProblem::Empty,
            None,
            None,
            "MRTR_KEYS: no key configured",
        ),
        (
            format!("current=k1; k1:{}", &KEY1_B64[..40]),
            KeyConfigProblem::WrongLength { decoded: 30 },
            Some(2),
            Some("k1"),
            "MRTR_KEYS entry 2 (key id \"k1\"): key is 30 bytes after base64 decoding, must be 32",
        ),
        (
            "current=k1; k1:not*base64".into(),
            KeyConfigProblem::BadBase64,
            Some(2),
            Some("k1"),
            "MRTR_KEYS entry 2 (key id \"k1\"): key is not valid base64",
        ),
        (
            "current=k1; k1:".into(),
            KeyConfigProblem::BadBase64,
            Some(2),
            Some("k1"),
            "not valid base64",
        ),
        (
            format!("current=k1; k1:{KEY1_B64}; k1:{KEY2_B64}"),
            KeyConfigProblem::DuplicateKeyId,
            Some(3),
            Some("k1"),
            "MRTR_KEYS entry 3 (key id \"k1\"): key id used twice",
        ),
        (
            format!("k1:{KEY1_B64}"),
            KeyConfigProblem::NoCurrentKey,
            None,
            None,
            "MRTR_KEYS: no key is marked current",
        ),
        (
            format!("current=k1; current=k1; k1:{KEY1_B64}"),
            KeyConfigProblem::SeveralCurrentKeys,
            Some(2),
            None,
            "more than one key is marked current",
        ),
        (
            format!("current=k9; k1:{KEY1_B64}"),
            KeyConfigProblem::UnknownCurrentKey,
            Some(1),
            Some("k9"),
            "MRTR_KEYS entry 1 (key id \"k9\"): the key marked current is not configured",
        ),
        (
            format!("current=k1; bad id:{KEY1_B64}"),
            KeyConfigProblem::BadKeyId,
            Some(2),
            None,
            "key id must be 1-16 characters",
        ),
        (
            format!("current=k1; k1234567890abcdefg:{KEY1_B64}"),
            KeyConfigProblem::BadKeyId,
            Some(2),
            None,
            "key id must be",
        ),
        (
            format!("current=k1; {KEY1_B64}"),
            KeyConfigProblem::Syntax("ID:BASE64 or current=ID"),
            Some(2),
            None,
            "expected ID:BASE64 or current=ID",
        ),
        (
            format!("current=k1; k1:{}", "A".repeat(300)),
            KeyConfigProblem::Syntax("an entry of at most 256 characters"),
            Some(2),
            None,
            "at most 256",
        ),
    ];
    for (input, want, entry, id, msg) in cases {
        let err = KeyConfig::parse_env(&input).unwrap_err();
        assert_eq!(err.problem(), &want, "{input}");
        assert_eq!(err.entry(), entry, "{input}");
        assert_eq!(err.key_id().map(|k| k.as_str()), id, "{input}");
        assert!(err.to_string().contains(msg), "{err} / {msg}");
    }
}

#[test]
fn file_form_problems_name_the_file_and_line() {
    let err = KeyConfig::parse_file(
        "/etc/mrtr/keys",
        &format!("# c\nk1 {KEY1_B64} current extra\n"),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "/etc/mrtr/keys line 2 (key id \"k1\"): expected ID BASE64 [current]"
    );
    let err = KeyConfig::parse_file(
        "f",
        &format!("k1 {KEY1_B64} current\nk2 {KEY2_B64} current\n"),
    )
    .unwrap_err();
    assert_eq!(err.problem(), &KeyConfigProblem::SeveralCurrentKeys);
    assert_eq!(err.entry(), Some(2));
    assert_eq!(
        problem(KeyConfig::parse_file("f", "k1\n")),
        KeyConfigProblem::Syntax("ID BASE64 [current]")
    );
    assert_eq!(
        problem(KeyConfig::parse_file("f", "# only comments\n\n")),
        KeyConfigProblem::Empty
    );
    assert_eq!(
        problem(KeyConfig::parse_file("f", &format!("k1 {KEY1_B64}\n"))),
        KeyConfigProblem::NoCurrentKey
    );
}

#[test]
fn ring_too_big_for_its_capacity() {
    let c = KeyConfig::parse_env(&format!("current=k1; k1:{KEY1_B64}; k2:{KEY2_B64}")).unwrap();
    let err = c.into_ring::<Aes256Gcm, 1>().unwrap_err();
    assert_eq!(
        err.problem(),
        &KeyConfigProblem::RingTooBig {
            keys: 2,
            capacity: 1
        }
    );
    assert!(
        err.to_string()
            .contains("2 keys configured, the key ring holds at most 1")
    );
}

#[test]
fn every_backend_gets_a_ring() {
    fn ring<C: Cipher>() {
        let c = KeyConfig::parse_env(&format!("current=k2; k2:{KEY2_B64}; k1:{KEY1_B64}")).unwrap();
        let ring: KeyRing<C, 4> = c.into_ring().unwrap();
        assert_eq!(ring.current().id().as_str(), "k2");
        assert_eq!(ring.iter().count(), 2);
    }
    ring::<Aes256Gcm>();
    ring::<ChaCha20Poly1305>();
    ring::<XChaCha20Poly1305>();
}

#[test]
fn environment_lookup_prefers_the_variable_then_the_file() {
    let dir = std::env::temp_dir().join(format!("mrtr-keys-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("keys");
    std::fs::write(&path, format!("kf {KEY1_B64} current\n")).unwrap();
    let path_s = path.to_str().unwrap().to_owned();

    let only_file = |name: &str| {
        if name == MRTR_KEYS_FILE {
            Ok(path_s.clone())
        } else {
            Err(VarError::NotPresent)
        }
    };
    assert_eq!(
        KeyConfig::from_vars(only_file)
            .unwrap()
            .current_id()
            .as_str(),
        "kf"
    );

    let both = |name: &str| match name {
        MRTR_KEYS => Ok(format!("current=kv; kv:{KEY2_B64}")),
        _ => Ok(path_s.clone()),
    };
    assert_eq!(
        KeyConfig::from_vars(both).unwrap().current_id().as_str(),
        "kv"
    );

    let none = |_: &str| Err(VarError::NotPresent);
    let err = KeyConfig::from_vars(none).unwrap_err();
    assert_eq!(err.problem(), &KeyConfigProblem::NotConfigured);
    assert!(err.to_string().contains("set MRTR_KEYS or MRTR_KEYS_FILE"));

    let missing = |name: &str| {
        if name == MRTR_KEYS_FILE {
            Ok("/nonexistent/mrtr/keys".to_owned())
        } else {
            Err(VarError::NotPresent)
        }
    };
    let err = KeyConfig::from_vars(missing).unwrap_err();
    assert_eq!(
        err.problem(),
        &KeyConfigProblem::Io(std::io::ErrorKind::NotFound)
    );
    assert!(
        err.to_string()
            .starts_with("/nonexistent/mrtr/keys: cannot read the key file")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ephemeral_keys_are_random_and_distinct() {
    let a = KeyConfig::ephemeral().unwrap();
    let b = KeyConfig::ephemeral().unwrap();
    assert!(a.current_id().as_str().starts_with("eph-"));
    assert_ne!(a.current_id(), b.current_id());
    assert_eq!(a.len(), 1);
}
