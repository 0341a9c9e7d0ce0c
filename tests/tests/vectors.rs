//! Golden vectors: fixed key, RNG bytes, clock and inputs → exact token text, per backend and
//! per token format.
//!
//! The files live in `tests/vectors/<algorithm>.json` (format v1) and
//! `tests/vectors/v2/<algorithm>.json` (format v2); the schema is in `tests/vectors/README.md`.
//! Each test regenerates every vector of its file from the vector's own inputs and compares
//! the AAD and token byte for byte, resumes the token, and checks the file holds exactly the
//! vectors specified below. `MRTR_BLESS=1` rewrites the files from the specification instead
//! of failing on a difference.

use std::path::PathBuf;

use mrtr_core::Aad;
use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::{AcceptV1, Binding, Codec, ManualClock, Principal, Reason, Round, TokenFormat};
use mrtr_tests::fixture::{Buf, bind, choose_audience, resume};
use mrtr_tests::hex;
use mrtr_tests::rng::{ReplayRng, SeqRng};
use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct VectorFile {
    algorithm: String,
    /// The token format of every vector in the file: 1 or 2.
    format: u8,
    vectors: Vec<Vector>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Vector {
    name: String,
    /// The sealing engine's audience; `null`: built without one. Always `null` in format v1,
    /// which binds none.
    audience: Option<String>,
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

/// name, audience (v2), key id, now, ttl, round, method, version, target, principal,
/// continuation.
type Row<'a> = (
    &'a str,
    Option<&'a str>,
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

/// The specified vectors of `format` for an algorithm with `nonce_len`-byte nonces; `aad_hex`
/// and `token` are left empty for [`generate`] to fill. Both formats share the rows; format v2
/// adds each row's audience (one row binds none, one the longest).
fn specification(format: TokenFormat, nonce_len: usize) -> Vec<Vector> {
    let long_uri = format!(
        "https://files.example/projects/mrtr/{}report.pdf?version=7&lang=en",
        "archive/2026/".repeat(24)
    );
    let all_bytes: Vec<u8> = (0..=255).collect();
    let longest_audience = format!("https://mcp.example/{}", "a".repeat(235));
    #[rustfmt::skip]
    let rows: [Row<'_>; 7] = [
        ("anonymous-tools-call", Some("booking.example"), "k1", 1_795_996_800_000, 300_000, 1,
            "tools/call", "2026-07-28", "book_table", None, b"step=date"),
        ("authenticated-prompts-get", Some("https://mcp.example/trips"), "2026-11",
            1_795_996_812_345, 300_000, 1,
            "prompts/get", "2026-07-28", "trip_plan", who("https://idp.example", "alice"),
            b"{\"asked\":[\"city\"]}"),
        ("resources-read-long-uri", Some(&longest_audience), "rk.3", 1_795_997_000_000, 120_000,
            1, "resources/read", "2026-07-28", &long_uri,
            who("https://accounts.example", "user-42"), b"page=3"),
        ("empty-continuation", None, "k1", 1_795_996_800_000, 1, 1,
            "tools/call", "2026-07-28", "ping", who("", ""), b""),
        ("continuation-256-bytes", Some("booking.example"), "k1", 1_795_996_800_000, 600_000, 1,
            "tools/call", "2026-07-28", "upload", who("https://idp.example", "bob"), &all_bytes),
        ("round-3", Some("booking.example"), "k1", 1_795_996_900_000, 60_000, 3,
            "tools/call", "2026-07-28", "book_table", who("https://idp.example", "alice"),
            b"step=confirm"),
        ("nul-in-target-long-key-id", Some("passerelle-n\u{b0}7"), "sixteen-chars-id",
            1_795_996_800_000, 300_000, 1,
            "custom/op", "draft-x", "r\u{e9}server\0table", None, b"\0\x01"),
    ];
    rows.into_iter()
        .enumerate()
        .map(
            |(
                i,
                (name, audience, key_id, now, ttl, round, method, version, target, principal, cont),
            )| {
                let i = i as u8;
                Vector {
                    name: name.into(),
                    audience: audience
                        .filter(|_| format == TokenFormat::V2)
                        .map(str::to_owned),
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
/// with core's code: header || audience (v2) || principal || method NUL version NUL target.
fn documented_aad(header: &[u8], v: &Vector) -> Vec<u8> {
    let mut aad = header.to_vec();
    if header[0] == 2 {
        match &v.audience {
            None => aad.push(0),
            Some(a) => {
                aad.push(1);
                aad.extend_from_slice(&(a.len() as u16).to_be_bytes());
                aad.extend_from_slice(a.as_bytes());
            }
        }
    }
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

/// An engine for `v`'s key, clock reading and TTL, sealing `format` bound to `v`'s audience.
fn engine_for<'c, C: Cipher>(
    v: &Vector,
    format: TokenFormat,
    clock: &'c ManualClock,
) -> Codec<C, &'c ManualClock, mrtr_core::replay::NoReplayCache, 1> {
    let key = SecretKey::from_slice(&v.bytes("key_hex", &v.key_hex)).expect("32-byte key");
    let kid = KeyId::new(&v.key_id).expect("valid key id");
    let ring = KeyRing::<C, 1>::new(Key::new(kid, key));
    choose_audience(Codec::builder(ring, clock), v.audience.as_deref())
        .seal_format(format)
        .ttl_ms(v.ttl_ms)
        .build()
        .unwrap()
}

/// Regenerates `v`'s AAD and token from its inputs, resumes the token and checks the opened
/// state. Returns `v` with `aad_hex` and `token` filled.
fn generate<C: Cipher>(format: TokenFormat, v: &Vector) -> Vector {
    let clock = ManualClock::new(v.now_ms);
    let mrtr = engine_for::<C>(v, format, &clock);
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

    let mut header = vec![format.byte(), C::ALGORITHM.id(), v.key_id.len() as u8];
    header.extend_from_slice(v.key_id.as_bytes());
    let aad = Aad::build(&header, v.audience.as_deref(), &b).unwrap();
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

/// `tests/vectors/<algorithm>.json` for v1, `tests/vectors/v2/<algorithm>.json` for v2.
fn path<C: Cipher>(format: TokenFormat) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let dir = match format {
        TokenFormat::V1 => dir,
        _ => dir.join(format.to_string()),
    };
    dir.join(format!("{}.json", C::ALGORITHM.name().to_ascii_lowercase()))
}

fn blessing() -> bool {
    std::env::var_os("MRTR_BLESS").is_some_and(|v| v == "1")
}

fn golden_vectors_match<C: Cipher>() {
    for format in [TokenFormat::V1, TokenFormat::V2] {
        vectors_of_format_match::<C>(format);
    }
}

fn vectors_of_format_match<C: Cipher>(format: TokenFormat) {
    let spec = VectorFile {
        algorithm: C::ALGORITHM.name().into(),
        format: format.byte(),
        vectors: specification(format, C::ALGORITHM.nonce_len())
            .iter()
            .map(|v| generate::<C>(format, v))
            .collect(),
    };
    let file = path::<C>(format);
    if blessing() {
        let text = serde_json::to_string_pretty(&spec).unwrap() + "\n";
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
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
    assert_eq!(stored.format, format.byte());

    // Every stored vector reproduces from its own inputs, byte for byte.
    for v in &stored.vectors {
        let again = generate::<C>(format, v);
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
    stored_tokens_resume_and_reject_other_bindings::<C>(format, &stored);
}

/// Opens every stored token with a fresh engine that seals v2, as a consumer of the file would
/// (v1 tokens open during the v1 window, and are refused once v1 is off), and checks that
/// another target, another audience (v2) and expiry are refused.
fn stored_tokens_resume_and_reject_other_bindings<C: Cipher>(
    format: TokenFormat,
    stored: &VectorFile,
) {
    for v in &stored.vectors {
        let clock = ManualClock::new(v.now_ms);
        let mrtr = engine_for::<C>(v, TokenFormat::V2, &clock);
        let args: [u8; 32] = hex::decode(&v.args_digest_hex).unwrap().try_into().unwrap();
        let reason = |m: &Codec<C, &ManualClock, _, 1>, b: &Binding<'_>| {
            resume(m, &v.token, b, &args)
                .map(|_| ())
                .map_err(|r| r.reason())
        };
        assert_eq!(reason(&mrtr, &v.binding()), Ok(()), "{}", v.name);
        let other = bind(&v.method, &v.protocol_version, "other", v.principal());
        assert_eq!(reason(&mrtr, &other), Err(Reason::Tampered), "{}", v.name);

        let other_audience = Vector {
            audience: Some("another.example".into()),
            ..v.clone()
        };
        let elsewhere = engine_for::<C>(&other_audience, TokenFormat::V2, &clock);
        let v1_off = {
            let key = SecretKey::from_slice(&hex::decode(&v.key_hex).unwrap()).unwrap();
            let ring = KeyRing::<C, 1>::new(Key::new(KeyId::new(&v.key_id).unwrap(), key));
            Codec::builder(ring, &clock)
                .without_audience()
                .ttl_ms(v.ttl_ms)
                .accept_v1(AcceptV1::Never)
                .build()
                .unwrap()
        };
        match format {
            // v1 binds no audience: during the v1 window any service with the key opens it;
            // with v1 off, none does.
            TokenFormat::V1 => {
                assert_eq!(reason(&elsewhere, &v.binding()), Ok(()), "{}", v.name);
                let refused = reason(&v1_off, &v.binding());
                assert_eq!(refused, Err(Reason::VersionRetired), "{}", v.name);
            }
            _ => {
                let refused = reason(&elsewhere, &v.binding());
                assert_eq!(refused, Err(Reason::Tampered), "{}", v.name);
            }
        }
        clock.advance(v.ttl_ms);
        assert_eq!(
            reason(&mrtr, &v.binding()),
            Err(Reason::Expired),
            "{}",
            v.name
        );
    }
}

mrtr_tests::per_backend!(golden_vectors_match);
