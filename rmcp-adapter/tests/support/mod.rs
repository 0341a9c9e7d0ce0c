//! A real rmcp Streamable HTTP server on loopback, behind a bearer-auth layer and mrtr's
//! precheck layer, and rmcp's own client for it.

#![allow(dead_code)] // each test file uses part of the harness

use std::io;
use std::sync::{Arc, Mutex};

use mrtr_replay::AnyReplayCache;
use mrtr_rmcp::layer::PrecheckLayer;
use mrtr_rmcp::{CallerLayer, Mrtr, Stack, bearer_token};
use mrtr_std::caller::Caller;
use mrtr_std::core::ErrorDetail;
use mrtr_std::engine::{Backend, Engine, EngineConfig};
use mrtr_std::keys::KeyConfig;
use rmcp::model::{ClientCapabilities, ClientConfig, ErrorData, Implementation, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower_layer::Layer;

pub const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// mrtr with AES-256-GCM, the in-process replay cache, and a round cap of `max_rounds`.
pub fn mrtr(max_rounds: u32) -> Mrtr {
    let keys = KeyConfig::parse_env(&format!("current=k1; k1:{KEY}")).unwrap();
    let limits = EngineConfig {
        max_rounds,
        ..EngineConfig::for_audience("mrtr-rmcp-tests")
    };
    let engine = Engine::new(
        Backend::Aes256Gcm,
        keys,
        limits,
        AnyReplayCache::memory(1_000),
    )
    .unwrap();
    Mrtr::new(engine)
}

/// Bearer auth: `alice` and `bob` are users of `https://idp.test`; anything else, or no
/// header, is anonymous.
fn callers() -> CallerLayer<impl Fn(&http::request::Parts) -> Option<Caller> + Send + Sync + 'static>
{
    CallerLayer::new(|head: &http::request::Parts| {
        Some(match bearer_token(&head.headers) {
            Some("alice") => Caller::user("https://idp.test", "alice"),
            Some("bob") => Caller::user("https://idp.test", "bob"),
            _ => Caller::Anonymous,
        })
    })
}

/// A running server.
pub struct Served {
    pub url: String,
    stop: CancellationToken,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Serves `server` (stateless 2026-07-28, JSON responses) on a free loopback port.
pub async fn serve<S: ServerHandler + Clone + Send + Sync + 'static>(server: S) -> Served {
    serve_with(server, |service| {
        let mcp = Stack::new(PrecheckLayer::new(ErrorDetail::Uniform))
            .caller(callers())
            .layer(service);
        axum::Router::new().nest_service("/mcp", mcp)
    })
    .await
}

/// [`serve`] misconfigured: the caller layer but no precheck layer in front of rmcp.
pub async fn serve_without_precheck<S: ServerHandler + Clone + Send + Sync + 'static>(
    server: S,
) -> Served {
    serve_with(server, |service| {
        axum::Router::new().nest_service("/mcp", callers().layer(service))
    })
    .await
}

/// Serves the router `route` makes of `server`'s rmcp service on a free loopback port.
async fn serve_with<S: ServerHandler + Clone + Send + Sync + 'static>(
    server: S,
    route: impl FnOnce(StreamableHttpService<S, LocalSessionManager>) -> axum::Router,
) -> Served {
    let stop = CancellationToken::new();
    let service: StreamableHttpService<S, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::default(),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_cancellation_token(stop.child_token()),
    );
    let router = route(service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let done = stop.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move { done.cancelled_owned().await })
            .await;
    });
    Served { url, stop }
}

/// Serves `server` on one endpoint for both eras (rmcp's legacy sessions on: `initialize`
/// opens a session; 2026-07-28 requests stay stateless), with `grants`' sessions, which idle
/// out after `idle` without a request.
#[cfg(feature = "subscriptions")]
pub async fn serve_dual<S, C>(
    server: S,
    grants: mrtr_rmcp::session::ResourceGrants<C>,
    idle: std::time::Duration,
) -> Served
where
    S: ServerHandler + Clone + Send + Sync + 'static,
    C: mrtr_std::clock::MonotonicClock + 'static,
{
    let stop = CancellationToken::new();
    let mut local = LocalSessionManager::default();
    local.session_config.keep_alive = Some(idle);
    let sessions = mrtr_rmcp::session::Sessions::new(local, grants);
    let owners = sessions.owner_layer();
    let service: StreamableHttpService<S, _> = StreamableHttpService::new(
        move || Ok(server.clone()),
        sessions,
        StreamableHttpServerConfig::default()
            .with_json_response(true)
            .with_cancellation_token(stop.child_token()),
    );
    let mcp = Stack::new(PrecheckLayer::new(ErrorDetail::Uniform))
        .caller(callers())
        .owners(owners)
        .layer(service);
    let router = axum::Router::new().nest_service("/mcp", mcp);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let done = stop.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move { done.cancelled_owned().await })
            .await;
    });
    Served { url, stop }
}

/// A client that declares form elicitation, or nothing.
#[derive(Clone)]
pub struct TestClient {
    form: bool,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities = if self.form {
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new("mrtr-rmcp-tests", "1"))
    }
}

pub type Client = RunningService<RoleClient, TestClient>;

/// rmcp's client for `url`, as `token` (`None`: anonymous), at 2026-07-28.
pub async fn client(url: &str, token: Option<&str>, form: bool) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token.to_owned());
    }
    TestClient { form }
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap()
}

/// The uniform rejection of a bad `requestState`.
pub fn assert_uniform(e: &ErrorData) {
    assert_eq!(e.code.0, -32602, "{e:?}");
    assert_eq!(e.message, "Invalid or expired requestState");
    assert_eq!(e.data, Some(json!({"reason": "invalid_request_state"})));
}

/// The error of a failed call, which must have failed with an MCP error.
pub fn mcp_error<T: std::fmt::Debug>(r: Result<T, rmcp::ServiceError>) -> ErrorData {
    match r {
        Err(rmcp::ServiceError::McpError(e)) => e,
        other => panic!("expected an MCP error, got {other:?}"),
    }
}

/// Posts a raw JSON-RPC body (for what no SDK sends) and returns the JSON response.
pub async fn post_raw(url: &str, body: &str) -> Value {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "book")
        .header("authorization", "Bearer alice")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

/// The `_meta` a 2026-07-28 request carries.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
    })
}

/// A 2025-11-25 session driven by hand over HTTP: no SDK, so nothing happens behind the
/// test's back (no automatic `DELETE`, no re-initialization).
pub struct RawSession {
    pub url: String,
    pub id: String,
    next: u64,
}

impl RawSession {
    /// Initializes a session as `token` (`Bearer <token>`).
    pub async fn open(url: &str, token: &str) -> Self {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}});
        let response = raw_request(reqwest::Method::POST, url, token, None, Some(&init)).await;
        assert_eq!(response.status(), 200);
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let mut session = Self {
            url: url.to_owned(),
            id,
            next: 1,
        };
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(session.send(token, &done).await.0, 202);
        session.next = 1;
        session
    }

    /// A request `method` with `params` in this session, as `token`: the HTTP status and the
    /// body (JSON, or the text as a JSON string).
    pub async fn request(&mut self, token: &str, method: &str, params: Value) -> (u16, Value) {
        let id = self.next;
        self.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(token, &body).await
    }

    /// Any JSON-RPC message in this session, as `token`.
    pub async fn send(&self, token: &str, body: &Value) -> (u16, Value) {
        let id = Some(self.id.as_str());
        let r = raw_request(reqwest::Method::POST, &self.url, token, id, Some(body)).await;
        status_and_body(r).await
    }

    /// `GET` (the session's standalone stream) as `token`: the status only.
    pub async fn get(&self, token: &str) -> u16 {
        let r = raw_request(reqwest::Method::GET, &self.url, token, Some(&self.id), None).await;
        r.status().as_u16()
    }

    /// `DELETE` as `token`: the status.
    pub async fn delete(&self, token: &str) -> u16 {
        let r = raw_request(
            reqwest::Method::DELETE,
            &self.url,
            token,
            Some(&self.id),
            None,
        )
        .await;
        r.status().as_u16()
    }
}

async fn raw_request(
    method: reqwest::Method,
    url: &str,
    token: &str,
    session: Option<&str>,
    body: Option<&Value>,
) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .request(method, url)
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {token}"));
    if let Some(id) = session {
        request = request
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    request.send().await.unwrap()
}

async fn status_and_body(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    // A session answers as an event stream: the JSON-RPC message is its last non-empty data.
    let data = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|d| !d.is_empty());
    let body = serde_json::from_str(data.unwrap_or(&text)).unwrap_or(Value::String(text));
    (status, body)
}

/// A log sink shared between the subscriber and the test.
#[derive(Clone, Default)]
pub struct Sink(Arc<Mutex<Vec<u8>>>);

impl io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Sink {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}
