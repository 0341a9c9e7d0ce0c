//! Golden vectors: fixed key, RNG bytes, clock and inputs → exact token text, per backend.
//!
//! The files live in `tests/vectors/<algorithm>.json` (schema in `tests/vectors/README.md`).
//! Each test regenerates every vector of its file from the vector's own inputs and compares
//! the AAD and token byte for byte, resumes the token, and checks the file holds exactly the
//! vectors specified below. `MRTR_BLESS=1` rewrites the files from the specification instead
//! of failing on a difference.

use std::path::PathBuf;

use mrtr_core::binding::Aad;
use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::{Binding, ManualClock, Mrtr, Principal, Round, TokenFormat};
use mrtr_tests::fixture::{Buf, bind, resume};
use mrtr_tests::hex;
use mrtr_tests::rng::{ReplayRng, SeqRng};
use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct VectorFile {
    algorithm: String,
    vectors: Vec<Vector>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Vector {
    name: String,
    key_id: String,
    key_hex: String,
    rng_hex: String,
    now_ms: u64,
    ttl_ms: u64,
    round: u32,
    method: String,
    protocol_version: String,
    target: String,
    principal: Option<Who>,
    args_digest_hex: String,
    continuation_hex: String,
    aad_hex: String,
    token: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Who {
    issuer: String,
    subject: String,
}

impl Vector {
    fn principal(&self) -> Principal<'_> {
        match &self.principal {
            None => Principal::Anonymous,
            Some(w) => Principal::User {
                issuer: &w.issuer,
                subject: &w.subject,
            },
        }
    }

    fn binding(&self) -> Binding<'_> {
        bind(
            &self.method,
            &self.protocol_version,
            &self.target,
            self.principal(),
        )
    }

    fn bytes(&self, field: &str, hex: &str) -> Vec<u8> {
        hex::decode(hex).unwrap_or_else(|| panic!("{}: {field} is not hex", self.name))
    }
}

/// Deterministic filler: `len` bytes starting at `start`, stepping by `step`.
fn pattern(len: usize, start: u8, step: u8) -> Vec<u8> {
    (0..len)
        .map(|i| start.wrapping_add(step.wrapping_mul(i as u8)))
        .collect()
}

fn who(issuer: &str, subject: &str) -> Option<Who> {
    Some(Who {
        issuer: issuer.into(),
        subject: subject.into(),
    })
}

/// name, key id, now, ttl, round, method, version, target, principal, continuation.
type Row<'a> = (
    &'a str,
    &'a str,
    u64,
    u64,
    u32,
    &'a str,
    &'a str,
    &'a str,
    Option<Who>,
    &'a [u8],
);

/// The specified vectors for an algorithm with `nonce_len`-byte nonces; `aad_hex` and `token`
/// are left empty for [`generate`] to fill.
fn specification(nonce_len: usize) -> Vec<Vector> {
    let long_uri = format!(
        "https://files.example/projects/mrtr/{}report.pdf?version=7&lang=en",
        "archive/2026/".repeat(24)
    );
    let all_bytes: Vec<u8> = (0..=255).collect();
    #[rustfmt::skip]
    let rows: [Row<'_>; 7] = [
        ("anonymous-tools-call", "k1", 1_795_996_800_000, 300_000, 1,
            "tools/call", "2026-07-28", "book_table", None, b"step=date"),
        ("authenticated-prompts-get", "2026-11", 1_795_996_812_345, 300_000, 1,
            "prompts/get", "2026-07-28", "trip_plan", who("https://idp.example", "alice"),
            b"{\"asked\":[\"city\"]}"),
        ("resources-read-long-uri", "rk.3", 1_795_997_000_000, 120_000, 1,
            "resources/read", "2026-07-28", &long_uri, who("https://accounts.example", "user-42"),
            b"page=3"),
        ("empty-continuation", "k1", 1_795_996_800_000, 1, 1,
            "tools/call", "2026-07-28", "ping", who("", ""), b""),
        ("continuation-256-bytes", "k1", 1_795_996_800_000, 600_000, 1,
            "tools/call", "2026-07-28", "upload", who("https://idp.example", "bob"), &all_bytes),
        ("round-3", "k1", 1_795_996_900_000, 60_000, 3,
            "tools/call", "2026-07-28", "book_table", who("https://idp.example", "alice"),
            b"step=confirm"),
        ("nul-in-target-long-key-id", "sixteen-chars-id", 1_795_996_800_000, 300_000, 1,
            "custom/op", "draft-x", "r\u{e9}server\0table", None, b"\0\x01"),
    ];
    rows.into_iter()
        .enumerate()
        .map(
            |(i, (name, key_id, now, ttl, round, method, version, target, principal, cont))| {
                let i = i as u8;
                Vector {
                    name: name.into(),
                    key_id: key_id.into(),
                    key_hex: hex::encode(&pattern(32, i.wrapping_mul(32), 1)),
                    rng_hex: hex::encode(&pattern(16 + nonce_len, 0x80 + i, 7)),
                    now_ms: now,
                    ttl_ms: ttl,
                    round,
                    method: method.into(),
                    protocol_version: version.into(),
                    target: target.into(),
                    principal,
                    args_digest_hex: hex::encode(&pattern(32, 0xd0 + i, 3)),
                    continuation_hex: hex::encode(cont),
                    aad_hex: String::new(),
                    token: String::new(),
                }
            },
        )
        .collect()
}

/// The canonical AAD, built here from the layout documented in `core/src/binding.rs`, not
/// with core's code: header || principal || method NUL version NUL target.
fn documented_aad(header: &[u8], v: &Vector) -> Vec<u8> {
    let mut aad = header.to_vec();
    match &v.principal {
        None => aad.push(0),
        Some(w) => {
            aad.push(1);
            for field in [&w.issuer, &w.subject] {
                aad.extend_from_slice(&(field.len() as u16).to_be_bytes());
                aad.extend_from_slice(field.as_bytes());
            }
        }
    }
    aad.extend_from_slice(v.method.as_bytes());
    aad.push(0);
    aad.extend_from_slice(v.protocol_version.as_bytes());
    aad.push(0);
    aad.extend_from_slice(v.target.as_bytes());
    aad
}

/// Regenerates `v`'s AAD and token from its inputs, resumes the token and checks the opened
/// state. Returns `v` with `aad_hex` and `token` filled.
fn generate<C: Cipher>(v: &Vector) -> Vector {
    let key = SecretKey::from_slice(&v.bytes("key_hex", &v.key_hex)).expect("32-byte key");
    let kid = KeyId::new(&v.key_id).expect("valid key id");
    let ring = KeyRing::<C, 1>::new(Key::new(kid, key));
    let clock = ManualClock::new(v.now_ms);
    let mrtr = Mrtr::builder(ring, &clock)
        .without_audience()
        .seal_format(TokenFormat::V1)
        .ttl_ms(v.ttl_ms)
        .build()
        .unwrap();
    let b = v.binding();
    let args: [u8; 32] = v
        .bytes("args", &v.args_digest_hex)
        .try_into()
        .expect("32-byte digest");
    let cont = v.bytes("continuation", &v.continuation_hex);
    let rng_bytes = v.bytes("rng", &v.rng_hex);

    // Reach the vector's round the only way the API allows: pause, resume, pause again.
    assert!(v.round >= 1, "{}: rounds start at 1", v.name);
    let mut round = Round::FIRST;
    let mut chain = SeqRng::new(u64::from(v.round));
    for _ in 1..v.round {
        let mut out = Buf::new();
        let t = mrtr
            .pause(round, &b, &args, b"earlier", &mut chain, &mut out)
            .unwrap();
        round = resume(&mrtr, t.as_str(), &b, &args).unwrap().next_round;
    }
    assert_eq!(round.get(), v.round);

    let mut rng = ReplayRng::new(&rng_bytes);
    let mut out = Buf::new();
    let sealed = mrtr
        .pause(round, &b, &args, &cont, &mut rng, &mut out)
        .unwrap();
    assert_eq!(
        rng.remaining(),
        0,
        "{}: rng_hex is exactly what one pause draws",
        v.name
    );
    let token = sealed.as_str().to_owned();

    let mut header = vec![1, C::ALGORITHM.id(), v.key_id.len() as u8];
    header.extend_from_slice(v.key_id.as_bytes());
    let aad = Aad::build(&header, None, &b).unwrap();
    assert_eq!(
        aad.as_bytes(),
        documented_aad(&header, v),
        "{}: AAD layout",
        v.name
    );

    let opened = resume(&mrtr, &token, &b, &args).unwrap();
    assert_eq!(opened.round, v.round);
    assert_eq!(opened.issued_at_ms, v.now_ms);
    assert_eq!(opened.expires_at_ms, v.now_ms + v.ttl_ms);
    assert_eq!(
        &opened.token_id[..],
        &rng_bytes[..16],
        "token id = first 16 rng bytes"
    );
    assert_eq!(opened.method, v.method);
    assert_eq!(opened.continuation, cont);

    Vector {
        aad_hex: hex::encode(aad.as_bytes()),
        token,
        ..v.clone()
    }
}

fn path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("vectors")
        .join(file)
}

fn file_name<C: Cipher>() -> String {
    format!("{}.json", C::ALGORITHM.name().to_ascii_lowercase())
}

fn blessing() -> bool {
    std::env::var_os("MRTR_BLESS").is_some_and(|v| v == "1")
}

fn golden_vectors_match<C: Cipher>() {
    let spec = VectorFile {
        algorithm: C::ALGORITHM.name().into(),
        vectors: specification(C::ALGORITHM.nonce_len())
            .iter()
            .map(generate::<C>)
            .collect(),
    };
    let file = path(&file_name::<C>());
    if blessing() {
        let text = serde_json::to_string_pretty(&spec).unwrap() + "\n";
        std::fs::write(&file, text).unwrap();
    }
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with MRTR_BLESS=1 to create it",
            file.display()
        )
    });
    let stored: VectorFile =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    assert_eq!(stored.algorithm, C::ALGORITHM.name());

    // Every stored vector reproduces from its own inputs, byte for byte.
    for v in &stored.vectors {
        let again = generate::<C>(v);
        assert_eq!(again.aad_hex, v.aad_hex, "{}: AAD differs", v.name);
        assert_eq!(again.token, v.token, "{}: token differs", v.name);
    }
    // And the file holds exactly the specified vectors.
    let names = |f: &VectorFile| f.vectors.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&stored),
        names(&spec),
        "vector list; MRTR_BLESS=1 rewrites the file"
    );
    for (s, w) in stored.vectors.iter().zip(&spec.vectors) {
        assert_eq!(
            s, w,
            "{}: stored vector differs; MRTR_BLESS=1 rewrites the file",
            s.name
        );
    }
    stored_tokens_resume_and_reject_other_bindings::<C>(&stored);
}

/// Opens every stored token with a fresh engine, as a consumer of the file would, and checks
/// that another target and expiry are refused.
fn stored_tokens_resume_and_reject_other_bindings<C: Cipher>(stored: &VectorFile) {
    for v in &stored.vectors {
        let key = SecretKey::from_slice(&hex::decode(&v.key_hex).unwrap()).unwrap();
        let ring = KeyRing::<C, 1>::new(Key::new(KeyId::new(&v.key_id).unwrap(), key));
        let clock = ManualClock::new(v.now_ms);
        let mrtr = Mrtr::builder(ring, &clock)
            .without_audience()
            .seal_format(TokenFormat::V1)
            .ttl_ms(v.ttl_ms)
            .build()
            .unwrap();
        let args: [u8; 32] = hex::decode(&v.args_digest_hex).unwrap().try_into().unwrap();
        assert!(
            resume(&mrtr, &v.token, &v.binding(), &args).is_ok(),
            "{}",
            v.name
        );
        let other = bind(&v.method, &v.protocol_version, "other", v.principal());
        assert!(
            resume(&mrtr, &v.token, &other, &args).is_err(),
            "{}",
            v.name
        );
        clock.advance(v.ttl_ms);
        assert!(
            resume(&mrtr, &v.token, &v.binding(), &args).is_err(),
            "{}",
            v.name
        );
    }
}

mrtr_tests::per_backend!(golden_vectors_match);
