//! The end-to-end "mrtr alone" server: the hosted server's `book_table` tool on plain rmcp
//! 3.11 with mrtr added as `mrtr-rmcp`'s README shows for an existing rmcp server, and nothing
//! else. `ci/bench-e2e.sh` runs it next to `examples/hosted-server` and the rmcp-codec server
//! (`e2e_rmcp_codec.rs`), with the same load.
//!
//! It separates what mrtr costs from what the hosted example adds around it. It has what mrtr
//! needs:
//! * `mrtr_rmcp::Parameters` (the token opened, checked against the method, version, tool,
//!   caller and arguments, and spent);
//! * the `PrecheckLayer` in front of rmcp (the I-JSON check of every body);
//! * the hosted server's default engine: aws-lc's AES-256-GCM-SIV, the fast nonce source, and
//!   the in-process replay cache.
//!
//! It leaves out what the example adds:
//! * the bearer-authentication layer (every caller is anonymous, as for the codec server);
//! * the session-ownership layer for 2025 clients;
//! * the Prometheus metrics;
//! * the other tools, prompts, resources and subscriptions.
//!
//! The tool's flow is the hosted server's own file (`examples/hosted-server/src/booking.rs`),
//! compiled in here, so both serve the same rounds.
//!
//! ```text
//! e2e-mrtr-rmcp --listen 127.0.0.1:0 --addr-file /tmp/bare.addr [--replay-capacity N]
//! ```

use std::sync::Arc;

use mrtr_benches::e2e_server::{self, Options};
use mrtr_rmcp::input::Declared;
use mrtr_rmcp::layer::PrecheckLayer;
use mrtr_rmcp::mrtr_replay::AnyReplayCache;
use mrtr_rmcp::mrtr_std::core::ErrorDetail;
use mrtr_rmcp::mrtr_std::engine::{Backend, Engine, EngineConfig, NonceSource};
use mrtr_rmcp::mrtr_std::keys::KeyConfig;
use mrtr_rmcp::{HasMrtr, Mrtr, Parameters};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResponse, ErrorData, Implementation, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use tower_layer::Layer;

/// The hosted server's `book_table` flow, as it is (its `is_booked` serves the hosted
/// server's subscription notice, which this server does not send).
#[allow(dead_code)]
#[path = "../../../examples/hosted-server/src/booking.rs"]
mod booking;

/// The hosted server's default replay capacity.
const DEFAULT_REPLAY_CAPACITY: usize = 100_000;

/// The server: the engine and the tool router (built once, shared by the handler rmcp makes
/// for each request).
#[derive(Clone)]
struct Bare {
    mrtr: Mrtr,
    tool_router: Arc<ToolRouter<Self>>,
}

impl HasMrtr for Bare {
    fn mrtr(&self) -> &Mrtr {
        &self.mrtr
    }
}

type Reply = Result<CallToolResponse, ErrorData>;

#[tool_router]
impl Bare {
    #[tool(description = "Books a restaurant table: asks for a date, then for confirmation")]
    async fn book_table(&self, Parameters { params, pending }: Parameters<booking::Args>) -> Reply {
        let declared = Declared::from_capabilities(pending.capabilities());
        if let Some(refusal) = booking::check(&params, declared)? {
            return Ok(refusal.into());
        }
        pending.run(|call| booking::flow(call, &params)).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mrtr-bare-server", "0"))
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        e2e_server::versions()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse(std::env::args().skip(1))?;
    let limits = EngineConfig {
        nonce_source: NonceSource::Fast,
        ..EngineConfig::for_audience("mrtr-bare-server")
    };
    let capacity = options.replay_capacity.unwrap_or(DEFAULT_REPLAY_CAPACITY);
    let engine = Engine::new(
        Backend::AwsLcAes256GcmSiv,
        KeyConfig::ephemeral()?,
        limits,
        AnyReplayCache::memory(capacity),
    )?;
    let mrtr = Mrtr::new(engine);
    let shutdown = tokio_util::sync::CancellationToken::new();
    let tools = Arc::new(Bare::tool_router());
    let service: StreamableHttpService<Bare, _> = StreamableHttpService::new(
        move || {
            Ok(Bare {
                mrtr: mrtr.clone(),
                tool_router: tools.clone(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        e2e_server::http_config(&shutdown),
    );
    let mcp = PrecheckLayer::new(ErrorDetail::Uniform).layer(service);
    // Routed as the hosted server routes it (a route, not a nest), like every e2e server.
    let router = axum::Router::new().route_service("/mcp", mcp);
    e2e_server::serve(&options, router, shutdown).await
}
