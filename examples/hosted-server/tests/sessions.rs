//! Issue 49, section 2: 2025-era sessions are capped per caller and in total, with a clear
//! refusal (rmcp sets no cap: its session table and the owner map grew with every
//! `initialize`).

mod support;

use serde_json::json;
use support::{Response, Server};

fn initialize(server: &Server, token: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "session-caps", "version": "1"}}});
    let auth = format!("Bearer {token}");
    server.http("POST", &[("Authorization", &auth)], Some(&body))
}

fn session_id(r: &Response) -> String {
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.header("mcp-session-id").expect("a session id").to_owned()
}

fn close(server: &Server, token: &str, id: &str) -> u16 {
    let auth = format!("Bearer {token}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", id),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    server.http("DELETE", &headers, None).status
}

#[test]
fn sessions_are_capped_per_caller_and_in_total() {
    let server = Server::start(
        "sessions",
        &["--max-sessions-per-caller", "2", "--max-sessions", "3"],
    );
    let b1 = session_id(&initialize(&server, "bob-token"));
    let _b2 = session_id(&initialize(&server, "bob-token"));
    let refused = initialize(&server, "bob-token");
    assert_eq!(refused.status, 429);
    assert!(refused.header("mcp-session-id").is_none());
    let error = &refused.json()["error"];
    assert_eq!(error["code"], -32029, "{error}");
    assert_eq!(
        error["data"],
        json!({"limit": "sessions_per_caller", "max": 2})
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("open sessions per caller, 2"),
        "{error}"
    );
    // bob at his cap does not stop alice, until the server's cap.
    let _a1 = session_id(&initialize(&server, "alice-token"));
    let full = initialize(&server, "alice-token");
    assert_eq!(full.status, 503);
    assert_eq!(full.json()["error"]["data"]["limit"], "sessions_total");
    // A closed session frees its place.
    assert_eq!(close(&server, "bob-token", &b1), 202);
    session_id(&initialize(&server, "alice-token"));
}

#[test]
fn stateless_requests_are_never_refused_by_the_session_caps() {
    let server = Server::start(
        "stateless",
        &["--max-sessions-per-caller", "1", "--max-sessions", "1"],
    );
    session_id(&initialize(&server, "bob-token"));
    assert_eq!(initialize(&server, "bob-token").status, 503);
    let r = server.call_tool("bob-token", "countdown", json!({"pauses": 0}), None);
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
}
