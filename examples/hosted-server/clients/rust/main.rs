//! rmcp's own client against the hosted server, over Streamable HTTP at 2026-07-28.
//!
//! * `mrtr-rmcp-client peer --url URL`: the peer test: the tool, the prompt and the resource
//!   through all their rounds (the SDK drives the retries), each checked; exits non-zero on
//!   any failure.
//! * `mrtr-rmcp-client demo --url URL`: drives `book_table` round by round and prints each.
//! * `mrtr-rmcp-client gateway-stdio -- COMMAND ARGS...` / `gateway-http --url URL`: the
//!   gateway firmware's checks (`gateway.rs`), over stdio (a child process) or HTTP.

mod answers;
mod demo;
mod gateway;
mod peer;

use anyhow::Context;
use clap::{Parser, Subcommand};
use rmcp::model::ProtocolVersion;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};

use crate::answers::Answers;

#[derive(Parser)]
struct Args {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand)]
enum Mode {
    /// Run the peer checks.
    Peer {
        /// The server's MCP endpoint.
        #[arg(long)]
        url: String,
    },
    /// Drive book_table round by round, printing each round.
    Demo {
        /// The server's MCP endpoint.
        #[arg(long)]
        url: String,
        /// Bearer token.
        #[arg(long, default_value = "alice-token")]
        token: String,
    },
    /// The gateway firmware's checks over stdio: starts COMMAND as a child process.
    GatewayStdio {
        /// The command that starts the gateway on stdin/stdout, and its arguments.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// The gateway firmware's checks over Streamable HTTP.
    GatewayHttp {
        /// The gateway's MCP endpoint.
        #[arg(long)]
        url: String,
        /// Bearer token.
        #[arg(long, default_value = "gateway-demo-token")]
        token: String,
    },
}

/// Connects with `server/discover` at 2026-07-28, answering elicitations from `answers`.
pub async fn connect(
    url: &str,
    token: &str,
    answers: Answers,
) -> anyhow::Result<RunningService<RoleClient, Answers>> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token.to_owned()),
    );
    answers
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .with_context(|| format!("connecting to {url}"))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Args::parse().mode {
        Mode::Peer { url } => peer::run(&url).await,
        Mode::Demo { url, token } => demo::run(&url, &token).await,
        Mode::GatewayStdio { command } => gateway::run(gateway::Target::Stdio(command)).await,
        Mode::GatewayHttp { url, token } => {
            gateway::run(gateway::Target::Http { url, token }).await
        }
    }
}
