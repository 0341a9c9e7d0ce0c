//! The `mrtr-std` JSON-RPC glue under the fixture's keys and clock: request seeds with real
//! tokens, and the uniform error object a rejection must produce.

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_core::replay::SharedReplaySet;
use mrtr_core::{Codec, ManualClock, Principal, Round};
use mrtr_std::engine::CipherEngine;
use mrtr_std::jsonrpc::ResumeRequest;
use serde_json::{Value, json};

use crate::fixture::{self, CountingRng, NOW_MS};

/// The std engine under test: the fixture's ring and clock, single use through a replay set.
pub type StdEngine = CipherEngine<Aes256Gcm, SharedReplaySet<4>, ManualClock, 2>;

/// The methods a fuzz input can name, by its first byte.
pub const METHODS: [&str; 4] = ["tools/call", "prompts/get", "resources/read", "tools/list"];

/// The authenticated caller (or anonymous) a fuzz input resumes as.
pub fn principal(anonymous: bool) -> Principal<'static> {
    if anonymous {
        Principal::Anonymous
    } else {
        Principal::User {
            issuer: "https://idp.example",
            subject: "alice",
        }
    }
}

/// A fresh std engine at the fixture's "now".
pub fn engine() -> StdEngine {
    let mrtr = Codec::builder(
        fixture::ring(fixture::CURRENT, fixture::PREVIOUS),
        ManualClock::new(NOW_MS),
    )
    .audience(fixture::AUDIENCE)
    .build()
    .expect("config");
    CipherEngine::new(mrtr, SharedReplaySet::new())
}

/// The error object every rejected `requestState` must produce in the default mode.
pub fn uniform_error() -> Value {
    json!({
        "code": -32602,
        "message": "Invalid or expired requestState",
        "data": { "reason": "invalid_request_state" },
    })
}

/// Seals a token for `params` as `method` would bind it, issued a second before "now".
fn token_for(method: &str, params: &Value, continuation: &[u8], seed: u64) -> String {
    let who = principal(false);
    let req = ResumeRequest::from_params(method, params, who)
        .expect("valid params")
        .expect("pausable method");
    let mrtr = Codec::builder(
        fixture::ring(fixture::CURRENT, fixture::PREVIOUS),
        ManualClock::new(NOW_MS - 1_000),
    )
    .audience(fixture::AUDIENCE)
    .build()
    .expect("config");
    let mut out = fixture::buf();
    let binding = req.binding().expect("bindable");
    let sealed = mrtr
        .pause(
            Round::FIRST,
            binding,
            req.args_digest().expect("bindable arguments"),
            continuation,
            &mut CountingRng::new(seed),
            &mut out,
        )
        .expect("seal");
    sealed.as_str().to_owned()
}

/// Named request seeds: selector byte (method index, bit 7: anonymous) + params JSON.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let meta = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28" });
    let with_state = |method: usize, mut params: Value, cont: &[u8], seed: u64| {
        params["requestState"] = Value::String(token_for(METHODS[method], &params, cont, seed));
        params
    };
    let call = json!({
        "name": "book_table",
        "arguments": { "party": 4, "date": "2026-12-01", "notes": ["window", null, 1.5] },
        "_meta": meta,
    });
    let prompt = json!({ "name": "summary", "arguments": { "style": "short" }, "_meta": meta });
    let read = json!({ "uri": "file:///menu.txt", "_meta": meta });
    let no_args = json!({ "name": "ping", "_meta": meta });
    let mut not_a_string = call.clone();
    not_a_string["requestState"] = json!(42);
    let cases = [
        (
            "ok-tools-call",
            0,
            with_state(0, call.clone(), b"step=date", 1),
        ),
        ("ok-prompts-get", 1, with_state(1, prompt, b"p", 2)),
        ("ok-resources-read", 2, with_state(2, read, b"r", 3)),
        ("ok-no-arguments", 0, with_state(0, no_args, b"", 4)),
        ("fresh-tools-call", 0, call.clone()),
        ("malformed-not-a-string", 0, not_a_string),
        ("ignored-other-method", 3, with_state(0, call, b"x", 5)),
    ];
    cases
        .into_iter()
        .map(|(name, method, params)| {
            let mut bytes = vec![method as u8];
            bytes.extend_from_slice(params.to_string().as_bytes());
            (name.to_owned(), bytes)
        })
        .collect()
}
