//! Two tools that ask the user to confirm before they act, served to MCP clients of both eras
//! on one endpoint: 2026-07-28 clients get `input_required` with a sealed `requestState`,
//! 2025 clients (sessions) get an elicitation request. Keys come from a file, tokens are single
//! use, callers come from bearer tokens, and no log shows a token.
//!
//! `MRTR_KEY_FILE=keys.txt cargo run -p mrtr-rmcp --example two_tools`, where `keys.txt`
//! holds `current=k1` and `k1:<32 bytes, base64>` (see `KeyConfig::parse_file`).

use mrtr_rmcp::input::{self, Answer};
use mrtr_rmcp::layer::PrecheckLayer;
use mrtr_rmcp::mrtr_replay::AnyReplayCache;
use mrtr_rmcp::mrtr_std::caller::Caller;
use mrtr_rmcp::mrtr_std::core::ErrorDetail;
use mrtr_rmcp::mrtr_std::engine::{Backend, Engine, EngineConfig};
use mrtr_rmcp::mrtr_std::keys::KeyConfig;
use mrtr_rmcp::session::Sessions;
use mrtr_rmcp::{Call, CallerLayer, HasMrtr, Mrtr, Parameters, Stack};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::json;
use tower_layer::Layer as _;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

#[derive(Clone)]
pub struct Notes {
    tool_router: ToolRouter<Self>,
    mrtr: Mrtr,
}

impl HasMrtr for Notes {
    fn mrtr(&self) -> &Mrtr {
        &self.mrtr
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Note {
    /// The note's name.
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Share {
    /// The note's name.
    name: String,
    /// Who gets it.
    with: String,
}

/// One round of a confirmed action: ask `question`; on the next round, `act` if accepted.
fn confirm(
    call: &Call,
    question: &str,
    act: impl FnOnce() -> String,
) -> Result<CallToolResponse, ErrorData> {
    if call.state::<bool>()?.is_none() {
        let form = input::form(question, json!({"confirm": {"type": "boolean"}}), &[]);
        return Ok(call.pause(&true, input::one("confirm", form))?.into());
    }
    let text = match input::answer(call.input_responses(), "confirm") {
        Answer::Accepted(form) if form.get("confirm") == Some(&json!(true)) => act(),
        _ => "cancelled".to_owned(),
    };
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
}

#[tool_router]
impl Notes {
    #[tool(description = "Deletes a note, once the user confirms")]
    async fn delete_note(
        &self,
        Parameters { params, pending }: Parameters<Note>,
    ) -> Result<CallToolResponse, ErrorData> {
        let question = format!("Delete {}?", params.name);
        pending
            .run(|call| confirm(call, &question, || format!("deleted {}", params.name)))
            .await
    }

    #[tool(description = "Shares a note, once the user confirms")]
    async fn share_note(
        &self,
        Parameters { params, pending }: Parameters<Share>,
    ) -> Result<CallToolResponse, ErrorData> {
        let question = format!("Share {} with {}?", params.name, params.with);
        pending
            .run(|call| {
                confirm(call, &question, || {
                    format!("shared {} with {}", params.name, params.with)
                })
            })
            .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// The caller behind a bearer token: a stand-in for your token validator.
fn authenticate(head: &http::request::Parts) -> Option<Caller> {
    match mrtr_rmcp::bearer_token(&head.headers) {
        Some("alice-token") => Some(Caller::user("https://idp.example", "alice")),
        Some(_) => None, // an unknown token: 401
        None => Some(Caller::Anonymous),
    }
}

/// The `/mcp` endpoint: the tools, mrtr's engine and its layers, in front of rmcp.
pub fn app(keys: KeyConfig) -> Result<axum::Router, Box<dyn std::error::Error>> {
    let store = AnyReplayCache::memory(100_000); // single use; Redis for several nodes
    let engine = Engine::new(
        Backend::Aes256Gcm,
        keys,
        EngineConfig::for_audience("notes"),
        store,
    )?;
    let notes = Notes {
        tool_router: Notes::tool_router(),
        mrtr: Mrtr::new(engine),
    };
    let sessions = Sessions::owned(LocalSessionManager::default()); // 2025 clients
    let layers = Stack::new(PrecheckLayer::new(ErrorDetail::Uniform))
        .caller(CallerLayer::new(authenticate))
        .owners(sessions.owner_layer());
    let rmcp = StreamableHttpService::new(
        move || Ok(notes.clone()),
        sessions,
        StreamableHttpServerConfig::default(),
    );
    Ok(axum::Router::new().route_service("/mcp", layers.layer(rmcp)))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Whatever RUST_LOG says, rmcp's whole messages (tokens, answers) never reach the log.
    let logs = tracing_subscriber::fmt::layer().with_filter(mrtr_rmcp::log_filter());
    tracing_subscriber::registry().with(logs).init();
    let keys = KeyConfig::load_file(std::env::var("MRTR_KEY_FILE")?)?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    axum::serve(listener, app(keys)?).await?;
    Ok(())
}
