//! Issue 49, section 2, over the wire: one caller can no longer starve the others.
//!
//! Each resume keeps its token id in the replay store for the token's lifetime. Without a
//! quota, with `--replay-capacity 4`, four resumes by bob filled the store, and alice's valid
//! resume was refused (`replay_store_full`, answered as the uniform `-32602`). With a resume
//! quota, bob's fourth resume gets the quota error naming the limit, and alice's succeeds.

mod support;

use serde_json::{Value, json};
use support::Server;

const COUNTDOWN: &str = "countdown";

/// A fresh `countdown` call: its first token.
fn first_token(server: &Server, token: &str) -> String {
    let r = server.call_tool(token, COUNTDOWN, json!({"pauses": 5}), None);
    r["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("a paused result: {r}"))
        .to_owned()
}

fn resume(server: &Server, token: &str, state: &str) -> Value {
    server.call_tool(token, COUNTDOWN, json!({"pauses": 5}), Some(state))
}

fn is_resumed(r: &Value) -> bool {
    r["result"]["requestState"].is_string()
}

/// Bob takes four tokens and resumes them all; then alice resumes one. Returns bob's four
/// answers and alice's.
fn bob_then_alice(server: &Server) -> (Vec<Value>, Value) {
    let bobs: Vec<String> = (0..4).map(|_| first_token(server, "bob-token")).collect();
    let answers = bobs
        .iter()
        .map(|state| resume(server, "bob-token", state))
        .collect();
    let alices = first_token(server, "alice-token");
    (answers, resume(server, "alice-token", &alices))
}

#[test]
fn without_a_quota_one_caller_fills_the_store_and_alice_is_refused() {
    // The reproduction as it was: the test that the quota below makes pass.
    let server = Server::start(
        "no-quota",
        &["--replay-capacity", "4", "--quota-resumes", "off"],
    );
    let (bob, alice) = bob_then_alice(&server);
    assert!(bob.iter().all(is_resumed), "{bob:?}");
    assert_eq!(alice["error"]["code"], -32602, "{alice}");
}

#[test]
fn with_a_resume_quota_bob_gets_the_quota_error_and_alice_resumes() {
    // A slow refill (one token in 1,000 s) so that no timing can let bob's fourth through.
    let server = Server::start(
        "quota",
        &["--replay-capacity", "4", "--quota-resumes", "0.001/3"],
    );
    let (bob, alice) = bob_then_alice(&server);
    assert!(bob[..3].iter().all(is_resumed), "{bob:?}");
    let refused = &bob[3]["error"];
    assert_eq!(refused["code"], -32029, "{refused}");
    assert_eq!(
        refused["message"],
        "quota exceeded: resumes per caller, 0.001/s (burst 3)"
    );
    assert_eq!(refused["data"]["limit"], "resumes_per_caller");
    assert!(
        refused["data"]["retryAfterMs"].as_u64().unwrap() > 0,
        "{refused}"
    );
    assert!(is_resumed(&alice), "alice's resume: {alice}");
}

#[test]
fn a_resume_is_charged_before_its_token_is_opened() {
    // Garbage tokens spend the quota like valid ones (the answer is no oracle), and a
    // refusal by the quota is the same whatever the token.
    let server = Server::start("charged", &["--quota-resumes", "0.001/2"]);
    for _ in 0..2 {
        let r = resume(&server, "bob-token", "not-a-token");
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
    let valid = first_token(&server, "bob-token");
    let r = resume(&server, "bob-token", &valid);
    assert_eq!(r["error"]["code"], -32029, "{r}");
    let r = resume(&server, "bob-token", "not-a-token");
    assert_eq!(r["error"]["code"], -32029, "{r}");
    // The valid token was not spent by the refusal: alice's quota is her own, and bob's
    // token still resumes for bob once he has a token again (not within this test's time).
    let alices = first_token(&server, "alice-token");
    assert!(is_resumed(&resume(&server, "alice-token", &alices)));
}

#[test]
fn a_pause_quota_refuses_the_pause_and_names_it() {
    let server = Server::start("pauses", &["--quota-pauses", "0.001/2"]);
    for _ in 0..2 {
        first_token(&server, "bob-token");
    }
    let r = server.call_tool("bob-token", COUNTDOWN, json!({"pauses": 5}), None);
    assert_eq!(r["error"]["code"], -32029, "{r}");
    assert_eq!(r["error"]["data"]["limit"], "pauses_per_caller");
    first_token(&server, "alice-token");
}
