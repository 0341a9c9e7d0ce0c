//! Secret hygiene, per backend where a backend is involved:
//!
//! * `Debug`/`Display` of keys, key rings, engines, ciphers, tokens (`Sealed`), opened states
//!   (`Resumed`), token buffers and rejections never show key bytes, token text or
//!   continuation bytes;
//! * key material is zeroized on drop: `SecretKey` and every backend's key schedule implement
//!   `ZeroizeOnDrop` (checked at compile time against the features the backends enable);
//! * the four failures a client can provoke most easily (tampered token, unknown key id, wrong
//!   principal, malformed token) look the same on the wire by default, and differ in detailed
//!   mode;
//! * every equality test of secret or authenticated material in core and the backends goes
//!   through `subtle` (a source review that fails on any new non-reviewed comparison).
//!
//! A failed resume wipes its `TokenBuf` (`TokenBuf::is_wiped`, asserted below for the four
//! failures). What cannot be observed without `unsafe`: the wipe on drop. See `SECURITY.md`.

use std::fs;
use std::path::{Path, PathBuf};

use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::{
    Codec, ErrorDetail, ManualClock, Principal, Reason, Rejection, Round, TokenBuf, token_len_for,
};
use mrtr_tests::fixture::{ARGS, AUDIENCE, NOW, VERSION, bind, call};
use mrtr_tests::rng::SeqRng;
use mrtr_tests::{b64, hex, per_backend};
use zeroize::ZeroizeOnDrop;

/// Key bytes with no repeated 4-byte window, so any 4 leaked bytes are recognisable.
const SECRET: [u8; 32] = {
    let mut k = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        k[i] = (i as u8).wrapping_mul(37).wrapping_add(0x9b);
        i += 1;
    }
    k
};

/// A continuation a handler would consider private.
const CONTINUATION: &[u8] = b"card=4111-1111-1111-1111;cvv=737";

/// Every way `bytes` (or any 4-byte window of it) could show up in formatted output: hex,
/// the decimal list `Debug` prints for arrays and slices, raw text, and base64.
fn leaks(text: &str, bytes: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let lower = text.to_lowercase();
    for w in bytes.windows(4) {
        let decimal = format!("{}, {}, {}, {}", w[0], w[1], w[2], w[3]);
        let hexed = hex::encode(w);
        if text.contains(&decimal) || lower.contains(&hexed) {
            found.push(format!("window {w:?}"));
        }
        if let Ok(s) = std::str::from_utf8(w)
            && text.contains(s)
        {
            found.push(format!("text {s:?}"));
        }
    }
    let encoded = b64::encode(bytes);
    for part in encoded.as_bytes().chunks(8).filter(|c| c.len() == 8) {
        let part = std::str::from_utf8(part).expect("ascii");
        if text.contains(part) {
            found.push(format!("base64 {part}"));
        }
    }
    found
}

fn assert_clean(what: &str, text: &str, secret: &[u8]) {
    let found = leaks(text, secret);
    assert!(
        found.is_empty(),
        "{what} shows secret bytes ({found:?}): {text}"
    );
}

/// Both `{:?}` and `{:#?}`.
fn debug_forms<T: std::fmt::Debug>(v: &T) -> [String; 2] {
    [format!("{v:?}"), format!("{v:#?}")]
}

#[test]
fn the_leak_detector_detects() {
    // The checks below are only as good as `leaks`: a derived Debug, hex or base64 of the
    // key, and a continuation shown as text or bytes are all caught.
    assert!(!leaks(&format!("{SECRET:?}"), &SECRET).is_empty());
    assert!(!leaks(&hex::encode(&SECRET[5..9]), &SECRET).is_empty());
    assert!(!leaks(&b64::encode(&SECRET), &SECRET).is_empty());
    assert!(!leaks(&format!("{:?}", &CONTINUATION[3..10]), CONTINUATION).is_empty());
    assert!(!leaks("...1111-1111...", CONTINUATION).is_empty());
    assert!(leaks("SecretKey(<redacted>)", &SECRET).is_empty());
}

fn key_material_never_formatted<C: Cipher + std::fmt::Debug>() {
    let secret = SecretKey::from_bytes(SECRET);
    for s in debug_forms(&secret) {
        assert_clean("SecretKey", &s, &SECRET);
    }
    let cipher = C::new(&secret);
    for s in debug_forms(&cipher) {
        assert_clean("backend cipher", &s, &SECRET);
    }
    let key: Key<C> = Key::new(KeyId::new("k-hyg").unwrap(), secret.clone());
    for s in debug_forms(&key) {
        assert_clean("Key", &s, &SECRET);
        assert!(
            s.contains("k-hyg"),
            "the key id is public and useful in logs: {s}"
        );
    }
    let old: Key<C> = Key::new(KeyId::new("k-old").unwrap(), SecretKey::from_bytes(SECRET));
    let ring: KeyRing<C, 4> = KeyRing::new(key).with_previous(old).unwrap();
    for s in debug_forms(&ring) {
        assert_clean("KeyRing", &s, &SECRET);
    }
    let clock = ManualClock::new(NOW);
    let mrtr = Codec::builder(ring, &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    for s in debug_forms(&mrtr) {
        assert_clean("Codec", &s, &SECRET);
    }
}

fn tokens_and_states_never_formatted<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let ring: KeyRing<C, 4> = KeyRing::new(Key::new(
        KeyId::new("k1").unwrap(),
        SecretKey::from_bytes(SECRET),
    ));
    let mrtr = Codec::builder(ring, &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    let mut rng = SeqRng::new(7);
    let mut out: TokenBuf<{ token_len_for(64) }> = TokenBuf::new();
    let sealed = mrtr
        .pause(
            Round::FIRST,
            &call(),
            &ARGS,
            CONTINUATION,
            &mut rng,
            &mut out,
        )
        .unwrap();
    let token = sealed.as_str().to_owned();
    let token_bytes = token.as_bytes().to_vec();
    for s in debug_forms(&sealed) {
        assert_clean("Sealed (token text)", &s, &token_bytes);
        assert_clean("Sealed (continuation)", &s, CONTINUATION);
    }
    // `sealed` borrows `out`; its last use is above.
    for s in debug_forms(&out) {
        assert_clean("TokenBuf after pause", &s, &token_bytes);
    }

    let mut buf: TokenBuf<{ token_len_for(64) }> = TokenBuf::new();
    let resumed = mrtr.resume(&token, &call(), &ARGS, &mut buf).unwrap();
    assert_eq!(resumed.continuation(), CONTINUATION);
    for s in debug_forms(&resumed) {
        assert_clean("Resumed (continuation)", &s, CONTINUATION);
        assert_clean("Resumed (token text)", &s, &token_bytes);
    }
    for s in debug_forms(&buf) {
        assert_clean("TokenBuf after resume", &s, CONTINUATION);
    }

    let wrong = bind("tools/call", VERSION, "other_tool", Principal::Anonymous);
    let rejection = mrtr.resume(&token, &wrong, &ARGS, &mut buf).unwrap_err();
    for s in debug_forms(&rejection)
        .into_iter()
        .chain([rejection.to_string()])
    {
        assert_clean("Rejection", &s, &token_bytes);
        assert_clean("Rejection", &s, CONTINUATION);
    }
}

#[test]
fn aws_lc_key_material_never_formatted() {
    key_material_never_formatted::<mrtr_aws_lc::Aes256Gcm>();
    key_material_never_formatted::<mrtr_aws_lc::ChaCha20Poly1305>();
    key_material_never_formatted::<mrtr_aws_lc::Aes256GcmSiv>();
}

fn zeroize_on_drop<T: ZeroizeOnDrop>() {}

#[test]
fn key_material_is_zeroized_on_drop() {
    // The aes-gcm and chacha20poly1305 dev-dependencies of this crate enable no features, so
    // these bounds hold only if the backends themselves build their ciphers with `zeroize`.
    zeroize_on_drop::<SecretKey>();
    zeroize_on_drop::<aes_gcm::Aes256Gcm>();
    zeroize_on_drop::<chacha20poly1305::ChaCha20Poly1305>();
    zeroize_on_drop::<chacha20poly1305::XChaCha20Poly1305>();
    // aes-gcm-siv's cipher holds nothing but its AES-256 key-generating key (derived keys are
    // wiped after each operation by its own `zeroize` feature): the AES key schedule must be
    // wiped on drop, which only mrtr-aes-gcm-siv's features switch on.
    zeroize_on_drop::<aes::Aes256>();
}

/// The four easy failures: (what, rejection) in `detail` mode.
fn four_failures<C: Cipher>(detail: ErrorDetail) -> Vec<(&'static str, Rejection)> {
    let clock = ManualClock::new(NOW);
    let ring: KeyRing<C, 4> = KeyRing::new(Key::new(
        KeyId::new("k1").unwrap(),
        SecretKey::from_bytes(SECRET),
    ));
    let mrtr = Codec::builder(ring, &clock)
        .audience(AUDIENCE)
        .error_detail(detail)
        .build()
        .unwrap();
    let mut rng = SeqRng::new(11);
    let mut out: TokenBuf<{ token_len_for(64) }> = TokenBuf::new();
    let token = mrtr
        .pause(Round::FIRST, &call(), &ARGS, b"step=1", &mut rng, &mut out)
        .unwrap()
        .as_str()
        .to_owned();

    let mut tampered = b64::decode(&token).unwrap();
    let last = tampered.len() - 1;
    tampered[last] ^= 0x80;
    let mut unknown = b64::decode(&token).unwrap();
    unknown[3] = b'x'; // "k1" -> "x1": a valid key id the ring does not hold
    let mallory = Principal::User {
        issuer: "https://idp.example",
        subject: "mallory",
    };
    let cases = [
        ("tampered", b64::encode(&tampered), call()),
        ("unknown key id", b64::encode(&unknown), call()),
        (
            "wrong principal",
            token.clone(),
            bind("tools/call", VERSION, "book_table", mallory),
        ),
        (
            "malformed",
            format!("{}*", &token[..token.len() - 1]),
            call(),
        ),
    ];
    cases
        .into_iter()
        .map(|(what, text, binding)| {
            let mut buf: TokenBuf<{ token_len_for(64) }> = TokenBuf::new();
            let err = mrtr
                .resume(&text, &binding, &ARGS, &mut buf)
                .expect_err(what);
            assert!(buf.is_wiped(), "{what}: the token buffer was not wiped");
            (what, err)
        })
        .collect()
}

fn easy_failures_are_uniform_by_default<C: Cipher>() {
    let uniform = four_failures::<C>(ErrorDetail::Uniform);
    let reasons: Vec<Reason> = uniform.iter().map(|(_, r)| r.reason()).collect();
    assert_eq!(
        reasons,
        [
            Reason::Tampered,
            Reason::UnknownKey,
            Reason::Tampered,
            Reason::Malformed
        ],
        "the cases provoke what they claim"
    );
    let first = uniform[0].1;
    for (what, r) in &uniform {
        assert_eq!(
            r.wire(),
            first.wire(),
            "{what}: the wire differs in uniform mode"
        );
        assert_eq!(r.to_string(), first.to_string(), "{what}: Display differs");
    }

    let detailed = four_failures::<C>(ErrorDetail::Detailed);
    let wire: Vec<&str> = detailed.iter().map(|(_, r)| r.wire().reason).collect();
    assert_eq!(wire, ["tampered", "unknown_key", "tampered", "malformed"]);
    for (what, r) in &detailed {
        assert_ne!(
            r.wire(),
            first.wire(),
            "{what}: detailed mode shows nothing more"
        );
        assert_eq!(
            (r.wire().code, r.wire().message),
            (first.wire().code, first.wire().message)
        );
    }
}

per_backend!(
    key_material_never_formatted,
    tokens_and_states_never_formatted,
    easy_failures_are_uniform_by_default,
    a_stepped_back_clock_does_not_revive_a_spent_token
);

// ---- constant-time review -------------------------------------------------------------------

/// Identifiers that name secret or authenticated material in core and the backends.
const SENSITIVE: &[&str] = &[
    "args",
    "args_digest",
    "digest",
    "token_id",
    "id",
    "tag",
    "expose",
    "secret",
    "key",
    "continuation",
    "nonce",
    "plain",
    "method",
    "state",
    "body",
];

/// Equality tests (the ones that can exit early on the first differing byte).
const EQUALITY: &[&str] = &[
    "==",
    "!=",
    ".eq(",
    ".ne(",
    "starts_with",
    "ends_with",
    "contains(",
];

/// Reviewed non-constant-time equality sites: (file suffix, code on the line, why it is fine).
const REVIEWED: &[(&str, &str, &str)] = &[
    (
        "core/src/key.rs",
        "k.id.as_bytes() == id",
        "key ids are public: written in clear in every token header",
    ),
    (
        "core/src/token/mod.rs",
        "alg != algorithm.id()",
        "the algorithm id byte of the public header",
    ),
    (
        "core/src/binding.rs",
        "method.as_bytes().contains(&0) || protocol_version.as_bytes().contains(&0)",
        "validates the server's own request fields, not sealed material",
    ),
];

/// Constant-time comparisons that must stay: (file suffix, code on the line).
const CONSTANT_TIME: &[(&str, &str)] = &[
    (
        "core/src/engine/mod.rs",
        "ct::eq(state.args_digest(), args)",
    ),
    (
        "core/src/engine/mod.rs",
        "ct::eq(state.method_bytes(), method)",
    ),
    ("core/src/replay/set.rs", "ct::eq(&e.id, id)"),
    // The word-at-a-time comparison itself: XOR/OR folding, one barrier on the result.
    (
        "core/src/ct.rs",
        "diff |= u64::from_ne_bytes(*x) ^ u64::from_ne_bytes(*y);",
    ),
    ("core/src/ct.rs", "diff.ct_eq(&0)"),
];

fn sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).unwrap();
                out.push((path, text));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in [
        "core/src",
        "backends/aes-gcm/src",
        "backends/chacha20poly1305/src",
        "backends/aws-lc/src",
        "backends/aes-gcm-siv/src",
    ] {
        walk(&root.join(dir), &mut out);
    }
    // The lease machine holds no secret or sealed material: check ids, times and flags only.
    out.retain(|(p, _)| !unix(p).contains("/lease/"));
    // Unit tests kept in their own file (`#[cfg(test)] mod tests;`) are test code, as is
    // everything after `#[cfg(test)]` in a file (`code_lines`).
    out.retain(|(p, _)| {
        let p = unix(p);
        let in_src = p.rsplit_once("/src/").map_or(p.as_str(), |(_, rest)| rest);
        !(in_src == "tests.rs"
            || in_src.ends_with("/tests.rs")
            || in_src.starts_with("tests/")
            || in_src.contains("/tests/"))
    });
    out
}

/// The numbered code lines before the first `#[cfg(test)]`, without comments.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let test_from = text.find("#[cfg(test)]").unwrap_or(text.len());
    let test_line = text[..test_from].lines().count();
    text.lines()
        .enumerate()
        .take_while(move |(n, _)| *n < test_line)
        .map(|(n, l)| (n + 1, l.split("//").next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty())
}

fn identifiers(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

fn unix(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

#[test]
fn secret_and_authenticated_material_is_compared_in_constant_time() {
    let sources = sources();
    assert!(sources.len() >= 10, "found the sources: {}", sources.len());
    assert!(
        sources
            .iter()
            .any(|(p, _)| unix(p).ends_with("core/src/engine/mod.rs"))
    );
    let mut unreviewed = Vec::new();
    let mut reviewed_seen = vec![false; REVIEWED.len()];
    for (path, text) in &sources {
        let file = unix(path);
        for (n, line) in code_lines(text) {
            let compares = EQUALITY.iter().any(|op| line.contains(op));
            let sensitive = identifiers(line).any(|w| SENSITIVE.contains(&w));
            if !(compares && sensitive) {
                continue;
            }
            match REVIEWED
                .iter()
                .position(|(f, code, _)| file.ends_with(f) && line.contains(code))
            {
                Some(i) => reviewed_seen[i] = true,
                None => unreviewed.push(format!("{file}:{n}: {line}")),
            }
        }
    }
    assert!(
        unreviewed.is_empty(),
        "equality on secret or authenticated material outside `subtle`; use ct_eq or review \
         it here and in SECURITY.md:\n{}",
        unreviewed.join("\n")
    );
    for (i, seen) in reviewed_seen.iter().enumerate() {
        assert!(
            seen,
            "reviewed site no longer exists, update the list: {:?}",
            REVIEWED[i]
        );
    }
    for (f, code) in CONSTANT_TIME {
        let found = sources
            .iter()
            .any(|(p, t)| unix(p).ends_with(f) && code_lines(t).any(|(_, l)| l.contains(code)));
        assert!(found, "constant-time comparison gone from {f}: {code}");
    }
}

#[test]
fn the_review_flags_a_plain_comparison() {
    // The scan above would catch the classic mistake.
    let bad = "if state.args_digest() != args {";
    assert!(EQUALITY.iter().any(|op| bad.contains(op)));
    assert!(identifiers(bad).any(|w| SENSITIVE.contains(&w)));
    assert!(!REVIEWED.iter().any(|(_, code, _)| bad.contains(code)));
}

// ---- fail closed under a wall clock that steps back ------------------------------------------

fn a_stepped_back_clock_does_not_revive_a_spent_token<C: Cipher>() {
    use mrtr_core::replay::SharedReplaySet;
    // Token expiry uses the wall clock, which can step back (NTP step, VM restore). Once the
    // replay set has evicted a spent token at its expiry, a clock stepped back behind that
    // expiry must not make the token acceptable a second time.
    let clock = ManualClock::new(NOW);
    let seen = SharedReplaySet::<4>::new();
    let ring: KeyRing<C, 4> = KeyRing::new(Key::new(
        KeyId::new("k1").unwrap(),
        SecretKey::from_bytes(SECRET),
    ));
    let mrtr = Codec::builder(ring, &clock)
        .audience(AUDIENCE)
        .ttl_ms(1_000)
        .replay_cache(&seen)
        .build()
        .unwrap();
    let mut rng = SeqRng::new(3);
    let mut out: TokenBuf<{ token_len_for(64) }> = TokenBuf::new();
    let spent = mrtr
        .pause(Round::FIRST, &call(), &ARGS, b"once", &mut rng, &mut out)
        .unwrap()
        .as_str()
        .to_owned();
    let mut buf: TokenBuf<{ token_len_for(64) }> = TokenBuf::new();
    assert!(
        mrtr.resume(&spent, &call(), &ARGS, &mut buf).is_ok(),
        "first use"
    );

    // Later, another resume at a time past the spent token's expiry evicts its entry.
    clock.set(NOW + 1_500);
    let mut out: TokenBuf<{ token_len_for(64) }> = TokenBuf::new();
    let other = mrtr
        .pause(Round::FIRST, &call(), &ARGS, b"other", &mut rng, &mut out)
        .unwrap()
        .as_str()
        .to_owned();
    assert!(mrtr.resume(&other, &call(), &ARGS, &mut buf).is_ok());

    // The wall clock steps back one second: the spent token is unexpired again.
    clock.set(NOW + 500);
    let again = mrtr.resume(&spent, &call(), &ARGS, &mut buf);
    assert_eq!(
        again.map(|_| ()).map_err(|e| e.reason()),
        Err(Reason::Replayed),
        "a spent token was accepted again after the clock stepped back"
    );
}

/// The same scenario against `mrtr-std`'s in-process cache (one shard, so the later resume
/// evicts the spent entry). It keeps a high-water time as `ReplaySet` does.
#[test]
fn memory_replay_cache_survives_a_clock_stepped_back() {
    use mrtr_core::replay::ReplayCache;
    use mrtr_replay::MemoryReplayCache;
    let cache = MemoryReplayCache::with_shards(8, 1);
    let (spent, other) = ([1u8; 16], [2u8; 16]);
    assert_eq!(cache.check_and_record(&spent, NOW + 1_000, NOW), Ok(()));
    assert_eq!(
        cache.check_and_record(&other, NOW + 2_500, NOW + 1_500),
        Ok(())
    );
    // The clock steps back behind the spent token's expiry: it is live again.
    let again = cache.check_and_record(&spent, NOW + 1_000, NOW + 500);
    assert_eq!(again, Err(mrtr_core::replay::ReplayError::Replayed));
}
