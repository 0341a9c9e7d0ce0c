//! `log_filter` against rmcp itself: a real server and client at TRACE, the whole log
//! captured twice, once through the filter and once without it. Without it, rmcp logs the
//! `requestState` and the client's answers (so this test can fail); through it, neither appears.

mod support;

use support::Sink;

use mrtr_rmcp::input::{self, Answer};
use mrtr_rmcp::{HasMrtr, Mrtr, Parameters, log_filter};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    InputResponses, ServerCapabilities, ServerConfig,
};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::json;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::{Layer as _, Registry};

/// An answer no log may show.
const CANARY: &str = "canary-date-4711";

#[derive(Clone)]
struct Server {
    tool_router: ToolRouter<Self>,
    mrtr: Mrtr,
}

impl HasMrtr for Server {
    fn mrtr(&self) -> &Mrtr {
        &self.mrtr
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    party: u32,
}

#[tool_router]
impl Server {
    #[tool(description = "Asks for a date, then books")]
    async fn book(
        &self,
        Parameters { params, pending }: Parameters<Args>,
    ) -> Result<CallToolResponse, ErrorData> {
        pending
            .run(|call| {
                if call.state::<bool>()?.is_none() {
                    let ask = input::form("Date?", json!({"date": {"type": "string"}}), &[]);
                    return Ok(call.pause(&true, input::one("date", ask))?.into());
                }
                let date = match input::answer(call.input_responses(), "date") {
                    Answer::Accepted(form) => input::text_field(form, "date").unwrap_or("?"),
                    _ => "?",
                };
                let text = format!("{} booked on {}", params.party, date.len());
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
            })
            .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_trace_rmcp_logs_the_token_and_the_filter_keeps_it_out() {
    let (filtered, unfiltered) = (Sink::default(), Sink::default());
    let (f, u) = (filtered.clone(), unfiltered.clone());
    let subscriber = Registry::default()
        .with(LevelFilter::TRACE)
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || f.clone())
                .with_filter(log_filter()),
        )
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || u.clone()),
        );
    // Global: the server and client run on the runtime's worker threads.
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let served = support::serve(Server {
        tool_router: Server::tool_router(),
        mrtr: support::mrtr(10),
    })
    .await;
    let alice = support::client(&served.url, Some("alice"), true).await;
    let args = json!({"party": 2}).as_object().cloned().unwrap();
    let first = CallToolRequestParams::new("book").with_arguments(args.clone());
    let token = match alice.call_tool_once(first).await.unwrap() {
        CallToolResponse::InputRequired(paused) => paused.request_state.unwrap(),
        other => panic!("expected input_required, got {other:?}"),
    };
    let answers: InputResponses =
        serde_json::from_value(json!({"date": {"action": "accept", "content": {"date": CANARY}}}))
            .unwrap();
    let second = CallToolRequestParams::new("book")
        .with_arguments(args)
        .with_request_state(token.clone())
        .with_input_responses(answers);
    assert!(matches!(
        alice.call_tool_once(second).await.unwrap(),
        CallToolResponse::Complete(_)
    ));

    let (filtered, unfiltered) = (filtered.text(), unfiltered.text());
    // The control: rmcp really does log whole messages at TRACE and DEBUG.
    assert!(unfiltered.contains(&token), "rmcp no longer logs the token");
    assert!(
        unfiltered.contains(CANARY),
        "rmcp no longer logs the answers"
    );
    // Through the filter: the rest of the log, without a single secret.
    assert!(!filtered.is_empty(), "the filter dropped everything");
    assert!(!filtered.contains(&token), "a requestState in the log");
    assert!(!filtered.contains(CANARY), "an answer in the log");
    assert!(
        !filtered
            .lines()
            .any(|l| l.contains(" rmcp") && (l.contains("DEBUG") || l.contains("TRACE"))),
        "an rmcp DEBUG or TRACE line passed"
    );
}
