//! The seed corpus: real tokens for the fixture, named `<expected outcome>-<what>`, where the
//! outcome is `ok` or a `Reason` name.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mrtr_core::key::KeyRing;
use mrtr_core::{Codec, DEFAULT_TTL_MS, ManualClock, Round, TokenFormat};

use crate::fixture::{self, ARGS, CountingRng, NOW_MS};
use crate::format;

/// A seed: target name, file name, contents.
pub type Seed = (&'static str, String, Vec<u8>);

struct Sealer {
    engine: Codec<mrtr_aes_gcm::Aes256Gcm, ManualClock, mrtr_core::replay::NoReplayCache, 2>,
    rng: CountingRng,
}

/// How a sealing node differs from the fixture's engine.
#[derive(Clone, Copy)]
struct Node {
    audience: &'static str,
    format: TokenFormat,
    ttl_ms: u64,
}

const SAME: Node = Node {
    audience: fixture::AUDIENCE,
    format: TokenFormat::V2,
    ttl_ms: DEFAULT_TTL_MS,
};

impl Sealer {
    fn new(ring: KeyRing<mrtr_aes_gcm::Aes256Gcm, 2>, now: u64) -> Self {
        Self::node(ring, now, SAME)
    }

    fn node(ring: KeyRing<mrtr_aes_gcm::Aes256Gcm, 2>, now: u64, node: Node) -> Self {
        let engine = Codec::builder(ring, ManualClock::new(now))
            .audience(node.audience)
            .seal_format(node.format)
            .ttl_ms(node.ttl_ms)
            // The fixture's engine enforces the cap; the sealer must be able to seal past it
            // for the `rounds_exceeded` seed.
            .max_rounds(u32::MAX)
            .build()
            .expect("config");
        Self {
            engine,
            rng: CountingRng::new(now),
        }
    }

    fn seal(&mut self, round: Round, args: &[u8; 32], continuation: &[u8]) -> String {
        let mut out = fixture::buf();
        let sealed = self
            .engine
            .pause(
                round,
                &fixture::binding(),
                args,
                continuation,
                &mut self.rng,
                &mut out,
            )
            .expect("seal");
        sealed.as_str().to_owned()
    }

    /// Seals round 1, then resumes and re-pauses until a token of `round` exists.
    fn chain(&mut self, round: u32) -> String {
        let mut token = self.seal(Round::FIRST, &ARGS, b"step=1");
        let binding = fixture::binding();
        let engine = Codec::builder(
            fixture::ring(fixture::CURRENT, fixture::PREVIOUS),
            ManualClock::new(self.engine.clock().now_ms()),
        )
        .audience(fixture::AUDIENCE)
        .max_rounds(u32::MAX)
        .build()
        .expect("config");
        for _ in 1..round {
            let mut buf = fixture::buf();
            let next = engine
                .resume(&token, &binding, &ARGS, &mut buf)
                .expect("chain")
                .next_round();
            token = self.seal(next, &ARGS, b"step=n");
        }
        token
    }
}

use mrtr_core::Clock as _;

/// Named real tokens, as text.
pub fn tokens() -> Vec<(String, String)> {
    let issued = NOW_MS - 1_000;
    let mut cur = Sealer::new(fixture::ring(fixture::CURRENT, fixture::PREVIOUS), issued);
    let mut prev = Sealer::new(fixture::ring(fixture::PREVIOUS, fixture::CURRENT), issued);
    let mut old = Sealer::new(
        fixture::ring(fixture::CURRENT, fixture::PREVIOUS),
        NOW_MS - DEFAULT_TTL_MS - 1,
    );
    let mut foreign = Sealer::new(
        fixture::ring(("fz-9", [0x33; 32]), fixture::CURRENT),
        issued,
    );
    let both = || fixture::ring(fixture::CURRENT, fixture::PREVIOUS);
    let mut v1 = Sealer::node(
        both(),
        issued,
        Node {
            format: TokenFormat::V1,
            ..SAME
        },
    );
    let mut other_service = Sealer::node(
        both(),
        issued,
        Node {
            audience: "other.example",
            ..SAME
        },
    );
    let mut long_lived = Sealer::node(
        both(),
        issued,
        Node {
            ttl_ms: DEFAULT_TTL_MS + 1,
            ..SAME
        },
    );
    let mut ahead = Sealer::new(both(), NOW_MS + fixture::MAX_SKEW_MS + 1);
    let long: Vec<u8> = (0..fixture::MAX_CONTINUATION as u32)
        .map(|i| i as u8)
        .collect();

    let mut tampered = URL_SAFE_NO_PAD
        .decode(cur.seal(Round::FIRST, &ARGS, b"step=date"))
        .expect("b64");
    let last = tampered.len() - 20;
    tampered[last] ^= 0x01;

    vec![
        ("ok-empty".into(), cur.seal(Round::FIRST, &ARGS, b"")),
        (
            "ok-step".into(),
            cur.seal(Round::FIRST, &ARGS, b"step=date"),
        ),
        ("ok-long".into(), cur.seal(Round::FIRST, &ARGS, &long)),
        ("ok-round9".into(), cur.chain(9)),
        ("rounds_exceeded-round10".into(), cur.chain(10)),
        (
            "ok-previous-key".into(),
            prev.seal(Round::FIRST, &ARGS, b"k=0"),
        ),
        ("expired-ttl".into(), old.seal(Round::FIRST, &ARGS, b"late")),
        (
            "arguments_mismatch-args".into(),
            cur.seal(Round::FIRST, &[0xa5; 32], b"other"),
        ),
        (
            "unknown_key-fz9".into(),
            foreign.seal(Round::FIRST, &ARGS, b"x"),
        ),
        ("tampered-body".into(), URL_SAFE_NO_PAD.encode(tampered)),
        ("ok-v1".into(), v1.seal(Round::FIRST, &ARGS, b"step=date")),
        (
            "tampered-other-audience".into(),
            other_service.seal(Round::FIRST, &ARGS, b"theirs"),
        ),
        (
            "lifetime_exceeded-ttl".into(),
            long_lived.seal(Round::FIRST, &ARGS, b"long"),
        ),
        (
            "issued_in_future-clock-ahead".into(),
            ahead.seal(Round::FIRST, &ARGS, b"ahead"),
        ),
    ]
}

/// Every seed of every target.
pub fn all() -> Vec<Seed> {
    let mut seeds = Vec::new();
    for (name, text) in tokens() {
        let bytes = URL_SAFE_NO_PAD.decode(&text).expect("own token");
        if let Some(plain) = format::open_token(&bytes) {
            // Bit 0: the key; bit 1: format v1.
            let select = u8::from(bytes[3..].starts_with(fixture::PREVIOUS.0.as_bytes()))
                | if bytes[0] == 1 { 2 } else { 0 };
            let mut seed = vec![select];
            seed.extend_from_slice(&plain);
            seeds.push(("sealed_state", name.clone(), seed));
        }
        seeds.push(("unseal_bytes", name.clone(), bytes));
        if name.starts_with("ok-") {
            seeds.push(("b64", name.clone(), text.clone().into_bytes()));
        }
        seeds.push(("unseal_text", name, text.into_bytes()));
    }
    // Past MAX_CONTINUATION: the buffer bounds the token, and a short method and key id leave
    // room for a longer continuation (found by sealed_state; kept as a regression seed).
    let roomy = format::State {
        round: 1,
        issued_at: NOW_MS - 1_000,
        expires_at: NOW_MS + 60_000,
        token_id: [7; 16],
        args: ARGS,
        method: "tools/call".into(),
        continuation: vec![0x42; 280],
    };
    let mut seed = vec![0];
    seed.extend_from_slice(&format::encode_state(&roomy));
    seeds.push(("sealed_state", "ok-continuation-280".into(), seed));
    for (name, text) in [
        ("canonical", "Zm9vYmE"),
        ("noncanonical", "Zh"),
        ("bad-length", "Zm9vY"),
    ] {
        seeds.push(("b64", name.into(), text.as_bytes().to_vec()));
    }
    for (name, bytes) in crate::json::seeds() {
        seeds.push(("resume_json", name, bytes));
    }
    for (name, text) in [
        (
            "pass-resume",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"n":[1,0.5,"x"]},"requestState":"tok"}}"#,
        ),
        (
            "reject-not-a-string",
            r#"{"jsonrpc":"2.0","id":"a","method":"prompts/get","params":{"requestState":{"a":null}}}"#,
        ),
        (
            "reject-lossy-resume",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"n":9007199254740993},"requestState":"t"}}"#,
        ),
        (
            "unbindable-duplicate",
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"u","u\u0072i":"v"}}"#,
        ),
        (
            "pass-escaped-names",
            r#"{"jsonrpc":"2.0","id":4,"met\u0068od":"tools\/call","params":{"requestState":"\ud83d\ude00"}}"#,
        ),
        (
            "pass-other-method",
            r#"[{"jsonrpc":"2.0","method":"notifications/initialized","params":{"requestState":1}}]"#,
        ),
    ] {
        seeds.push(("precheck", name.into(), text.as_bytes().to_vec()));
    }
    for (name, bytes) in ijson() {
        seeds.push(("ijson", name, bytes));
    }
    let mut rng = CountingRng::new(7);
    for (target, len) in [
        ("aad", 96),
        ("aad", 400),
        ("replay", 64),
        ("replay", 512),
        ("lease", 64),
        ("lease", 700),
    ] {
        let mut bytes = vec![0u8; len];
        rand_core::TryRng::try_fill_bytes(&mut rng, &mut bytes).expect("infallible");
        seeds.push((target, format!("random-{len}"), bytes));
    }
    // Found by the replay target: ids recorded, forgotten once expired while the clock ran
    // ahead, then the clock stepped back so that more accepted tokens are live than the set
    // holds when it reports Full (the oracle once counted those as entries).
    seeds.push((
        "replay",
        "clock-back-after-eviction".into(),
        CLOCK_BACK_AFTER_EVICTION.to_vec(),
    ));
    seeds
}

const CLOCK_BACK_AFTER_EVICTION: [u8; 69] = [
    0xff, 0xff, 0xaa, 0x83, 0x51, 0xa3, 0x76, 0xb7, 0xf7, 0x76, 0xf7, 0xf7, 0xf7, 0x2e, 0xf7, 0xf7,
    0xf7, 0xa3, 0xf7, 0xff, 0xff, 0xff, 0x53, 0x76, 0x53, 0x53, 0xff, 0x53, 0xff, 0x53, 0xff, 0xff,
    0xff, 0xff, 0xff, 0x53, 0x53, 0x53, 0x53, 0xf7, 0xf7, 0x51, 0x09, 0xf7, 0xf7, 0xad, 0xf7, 0xf7,
    0xf9, 0xff, 0xec, 0xaa, 0xff, 0xa7, 0xf7, 0x59, 0x75, 0xf7, 0x3f, 0xf7, 0x3a, 0x89, 0x89, 0x89,
    0x27, 0x3f, 0xc4, 0xde, 0x05,
];

/// Seeds of the `ijson` target, named `<first violation>-<what>` (the violation as
/// `ViolationKind::as_str` names it, or `ok`) as `mrtr_std::ijson::check` judges them.
pub fn ijson() -> Vec<(String, Vec<u8>)> {
    let nested = |depth: usize| {
        let mut text = "[".repeat(depth).into_bytes();
        text.extend_from_slice("]".repeat(depth).as_bytes());
        text
    };
    let members = |count: usize, dup: bool| {
        let mut text = String::from("{");
        for i in 0..count {
            text.push_str(&format!("\"m{i}\":{i},"));
        }
        text.push_str(if dup { "\"m\\u0030\":0}" } else { "\"end\":0}" });
        text.into_bytes()
    };
    let mut seeds: Vec<(String, Vec<u8>)> = [
        (
            "ok-request",
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"book","arguments":{"n":[1,0.5,-2e3,true,null]},"requestState":"AQEE"}}"#,
        ),
        (
            "ok-numbers",
            "[0,-0,0.0,1.50,0.1,1e21,1E+21,100e-2,9007199254740992,5e-324,1.7976931348623157e308,0e99999,0.0e-9223372036854775808]",
        ),
        (
            "ok-escapes",
            r#"{"a\u0062":"\ud83d\ude00","ab\"":"\n\/\t","m\u00e9thode":"caf\u00e9 ✓"}"#,
        ),
        ("ok-scalar", " \t\r\n\"x\" "),
        ("duplicate_name-escaped", r#"{"a":1,"\u0061":2}"#),
        ("duplicate_name-nested", r#"{"p":{"q":[{"r":1,"s":2,"r":3}]}}"#),
        ("lossy_number-2p53-plus-1", r#"{"n":9007199254740993}"#),
        ("lossy_number-over-precise", "[3.141592653589793238]"),
        ("lossy_number-below-subnormal", "[4.9e-324,1e-400]"),
        ("lossy_number-exponent-overflow", "[0.01e-9223372036854775808]"),
        ("lossy_number-exponent-i64-max", "1e9223372036854775807"),
        ("lossy_number-exponent-below-i64", "1e-9223372036854775809"),
        (
            "lossy_number-exponent-leading-zeros",
            "[1e000000000000000000000000000000400]",
        ),
        ("lossy_number-zero-exponent-past-i64", "0e99999999999999999999"),
        ("lone_surrogate-high", r#"["\ud800"]"#),
        ("lone_surrogate-low", r#"{"\udc00":1}"#),
        ("lone_surrogate-unpaired", r#""\ud83d\u0041""#),
        ("not_json-trailing", r#"{"a":1} x"#),
        ("not_json-control", "[\"\u{1}\"]"),
        ("not_json-number", "[01]"),
    ]
    .into_iter()
    .map(|(name, text)| (name.to_owned(), text.as_bytes().to_vec()))
    .collect();
    seeds.push(("not_json-utf8".into(), b"[\"\xff\"]".to_vec()));
    seeds.push(("ok-depth-128".into(), nested(128)));
    seeds.push(("too_deep-129".into(), nested(129)));
    seeds.push(("ok-members-300".into(), members(300, false)));
    seeds.push(("duplicate_name-many-members".into(), members(40, true)));
    seeds
}
