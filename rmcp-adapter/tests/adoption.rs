//! The README's server (`examples/two_tools.rs`, included as it is), served on loopback and
//! driven by rmcp's own client in both eras: 2026-07-28 (`input_required` rounds with a sealed
//! `requestState`) and 2025-11-25 / 2025-06-18 (sessions, elicitation requests).

#[path = "../examples/two_tools.rs"]
#[allow(dead_code)] // its `main` is the example's, not the test's
mod two_tools;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mrtr_rmcp::mrtr_std::keys::KeyConfig;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorData, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};

/// A client that declares form elicitation and answers every form with `confirm`.
#[derive(Clone)]
struct User {
    confirm: bool,
    version: ProtocolVersion,
    asked: Arc<AtomicUsize>,
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
        ClientConfig::new(caps, Implementation::new("adoption-test", "1"))
            .with_protocol_version(self.version.clone())
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _ctx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let mut answer = ElicitResult::new(ElicitationAction::Accept);
        answer.content = Some(json!({"confirm": self.confirm}));
        Ok(answer)
    }
}

async fn serve() -> (String, tokio_util::sync::CancellationToken) {
    let keys = KeyConfig::parse_env("current=k1; k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
        .unwrap();
    let app = two_tools::app(keys).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let stop = tokio_util::sync::CancellationToken::new();
    let done = stop.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { done.cancelled_owned().await })
            .await;
    });
    (url, stop)
}

fn call(tool: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned()).with_arguments(args.as_object().cloned().unwrap())
}

/// Calls `tool` as alice with a client of `lifecycle` that answers `confirm`; returns the text
/// and how many times the user was asked.
async fn run(
    url: &str,
    lifecycle: ClientLifecycleMode,
    version: ProtocolVersion,
    confirm: bool,
    tool: &str,
    args: Value,
) -> (String, usize) {
    let user = User {
        confirm,
        version,
        asked: Arc::default(),
    };
    let asked = user.asked.clone();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .auth_header("alice-token".to_owned());
    let client = user
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            lifecycle,
        )
        .await
        .unwrap();
    let result = client.call_tool(call(tool, args)).await.unwrap();
    client.cancel().await.unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    (text, asked.load(Ordering::SeqCst))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_tools_in_both_eras() {
    let (url, stop) = serve().await;
    let eras = [
        (
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            ProtocolVersion::V_2026_07_28,
        ),
        (
            ClientLifecycleMode::Initialize,
            ProtocolVersion::V_2025_11_25,
        ),
        (
            ClientLifecycleMode::Initialize,
            ProtocolVersion::V_2025_06_18,
        ),
    ];
    for (lifecycle, version) in eras {
        let delete = json!({"name": "groceries"});
        let (text, asked) = run(
            &url,
            lifecycle.clone(),
            version.clone(),
            true,
            "delete_note",
            delete.clone(),
        )
        .await;
        assert_eq!(
            (text.as_str(), asked),
            ("deleted groceries", 1),
            "{version:?}"
        );
        let (text, _) = run(
            &url,
            lifecycle.clone(),
            version.clone(),
            false,
            "delete_note",
            delete,
        )
        .await;
        assert_eq!(text, "cancelled", "{version:?}");
        let share = json!({"name": "groceries", "with": "bob"});
        let (text, asked) = run(&url, lifecycle, version.clone(), true, "share_note", share).await;
        assert_eq!(
            (text.as_str(), asked),
            ("shared groceries with bob", 1),
            "{version:?}"
        );
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_bearer_token_gets_401_and_a_tampered_state_the_uniform_error() {
    let (url, stop) = serve().await;
    let http = reqwest::Client::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "delete_note", "arguments": {"name": "groceries"},
        "requestState": "AAAA",
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}}});
    let send = |token: &'static str| {
        http.post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "delete_note")
            .header("authorization", format!("Bearer {token}"))
            .body(body.to_string())
            .send()
    };
    assert_eq!(send("mallory-token").await.unwrap().status(), 401);
    let answer = send("alice-token").await.unwrap();
    let text = answer.text().await.unwrap();
    // JSON, or one server-sent event carrying it.
    let json = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(&text);
    let error: Value = serde_json::from_str(json).unwrap();
    assert_eq!(error["error"]["code"], -32602, "{text}");
    stop.cancel();
}
