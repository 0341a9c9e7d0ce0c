//! Over the real HTTP stack (axum, mrtr's precheck layer, rmcp's Streamable HTTP service, a
//! typed `Parameters<P>` tool), with raw request bodies:
//!
//! * JSON that serde_json cannot read (`1e400`, a lone surrogate) gets a JSON-RPC `-32602`
//!   naming the problem from the precheck layer, never rmcp's HTTP 415 (issue 49, section 7);
//! * the argument binding is what the handler reads (issue 49, section 4): a token paused with
//!   `{"n":1}` does not resume `{"n":1.0}`, `100` not `1e2`, `0` not `-0`, while texts read
//!   alike resume. (The gateway's digest, `mrtr_json` on the raw text, is held to the same
//!   pairs in `tests/tests/args_digest.rs`.)
//! * a server without the precheck layer fails closed: nothing pauses or resumes through it,
//!   with `-32603` and one `ERROR` log naming the missing layer, and a token it refused is not
//!   spent.

mod support;

use mrtr_rmcp::{HasMrtr, Mrtr, Parameters, log_filter};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::Value;
use support::{Sink, meta, serve, serve_without_precheck};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::{Layer as _, Registry};

#[derive(Clone)]
struct Counter {
    tool_router: ToolRouter<Self>,
    mrtr: Mrtr,
}

impl HasMrtr for Counter {
    fn mrtr(&self) -> &Mrtr {
        &self.mrtr
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Args {
    /// Any number: the handler reads `1` and `1.0` as the same double.
    n: f64,
}

#[tool_router]
impl Counter {
    fn new() -> Self {
        Self::sharing(support::mrtr(10))
    }

    /// A server on `mrtr`: its engine and replay store shared with every other server on it.
    fn sharing(mrtr: Mrtr) -> Self {
        Self {
            tool_router: Self::tool_router(),
            mrtr,
        }
    }

    /// Pauses on the fresh call (state only), answers on the resume.
    #[tool(description = "Pauses once, then echoes n")]
    async fn book(
        &self,
        Parameters { params, pending }: Parameters<Args>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = pending.commit().await?;
        match call.state::<u32>()? {
            None => Ok(call.retry(&1u32)?.into()),
            Some(_) => {
                let text = format!("n={}", params.n);
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
            }
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Counter {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// A `tools/call` body for `book` whose `arguments` member is the raw text `arguments`, with
/// `extra` raw members appended to `params`.
fn body(arguments: &str, extra: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"book","arguments":{arguments},"_meta":{}{extra}}}}}"#,
        meta()
    )
}

/// Posts `body` raw: the HTTP status and the body as JSON (or as a JSON string, if not JSON).
async fn post(url: &str, body: String) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "book")
        .header("authorization", "Bearer alice")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, json)
}

/// The answer's JSON-RPC error: its code and message (panics on any other answer).
fn error(status: u16, answer: &Value) -> (i64, String) {
    assert_eq!(
        status, 200,
        "a JSON-RPC answer, not an HTTP error: {answer}"
    );
    assert_eq!(answer["id"], 7, "{answer}");
    let code = answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{answer}"));
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    (code, message.to_owned())
}

fn is_uniform(answer: &Value) -> bool {
    answer["error"]["code"] == -32602
        && answer["error"]["data"]["reason"] == "invalid_request_state"
}

/// Pauses with `arguments` and returns the `requestState`.
async fn pause(url: &str, arguments: &str) -> String {
    let (status, answer) = post(url, body(arguments, "")).await;
    assert_eq!(status, 200, "{answer}");
    answer["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("paused: {answer}"))
        .to_owned()
}

/// Resumes `token` with `arguments`: the answer.
async fn resume(url: &str, token: &str, arguments: &str) -> Value {
    let extra = format!(r#","requestState":"{token}""#);
    let (status, answer) = post(url, body(arguments, &extra)).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

#[tokio::test]
async fn json_serde_cannot_read_gets_a_named_minus_32602_not_http_415() {
    let served = serve(Counter::new()).await;
    let url = &served.url;
    for (arguments, named) in [
        (
            r#"{"n": 1e400}"#,
            "number not exactly representable as a double",
        ),
        (
            r#"{"n": -1e400}"#,
            "number not exactly representable as a double",
        ),
        (r#"{"n": 1, "s": "\udc00"}"#, "lone surrogate"),
        (r#"{"n": 1, "s": ["x", "a\ud800"]}"#, "lone surrogate"),
    ] {
        let (status, answer) = post(url, body(arguments, "")).await;
        let (code, message) = error(status, &answer);
        assert_eq!(code, -32602, "{arguments}: {answer}");
        assert!(message.contains(named), "{arguments}: {message}");
        assert!(
            message.contains("/params/arguments/"),
            "{arguments}: {message}"
        );
    }
    // A resume with such arguments gets the uniform rejection, as any resume that is not
    // I-JSON does; so does a requestState that is not a string.
    let token = pause(url, r#"{"n": 1}"#).await;
    let answer = resume(url, &token, r#"{"n": 1e400}"#).await;
    assert!(is_uniform(&answer), "{answer}");
    let (status, answer) = post(url, body(r#"{"s":"\udc00"}"#, r#","requestState":5"#)).await;
    assert_eq!(status, 200);
    assert!(is_uniform(&answer), "{answer}");
    // The token was not spent by those.
    let answer = resume(url, &token, r#"{"n": 1}"#).await;
    assert_eq!(answer["result"]["content"][0]["text"], "n=1", "{answer}");
    // Text that is not JSON at all is still rmcp's to answer.
    let (status, _) = post(
        url,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"n": 1e400"#.to_owned(),
    )
    .await;
    assert_ne!(status, 200);
}

#[tokio::test]
async fn a_token_resumes_only_arguments_the_handler_reads_as_it_was_paused_with() {
    let served = serve(Counter::new()).await;
    let url = &served.url;
    // Issue 49's pairs (RFC 8785 writes each pair alike): bound apart. The pairs read alike
    // by every reader: bound alike.
    let apart = [("1", "1.0"), ("100", "1e2"), ("0", "-0"), ("1.0", "1")];
    let alike = [
        ("1.0", "1.00"),
        ("1e2", "1E2"),
        ("1e2", "100.0"),
        ("-0", "-0.0"),
        ("7", "7"),
    ];
    for (pairs, resumes) in [(&apart[..], false), (&alike[..], true)] {
        for (a, b) in pairs {
            let (paused, resumed) = (format!(r#"{{"n":{a}}}"#), format!(r#"{{"n": {b}}}"#));
            let token = pause(url, &paused).await;
            let answer = resume(url, &token, &resumed).await;
            if resumes {
                assert!(
                    answer["result"]["content"].is_array(),
                    "{a} then {b}: {answer}"
                );
            } else {
                assert!(is_uniform(&answer), "{a} then {b}: {answer}");
            }
        }
    }
}

#[tokio::test]
async fn without_the_precheck_layer_nothing_pauses_or_resumes() {
    // Global: the servers run on the runtime's threads. Only this test sets it; the other
    // tests of this file log into it too, but they never miss the layer.
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = Registry::default().with(LevelFilter::DEBUG).with(
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .with_filter(log_filter()),
    );
    tracing::subscriber::set_global_default(subscriber).unwrap();

    // Two servers on one engine and one replay store: one set up as documented, one with the
    // precheck layer forgotten.
    let mrtr = support::mrtr(10);
    let checked = serve(Counter::sharing(mrtr.clone())).await;
    let unchecked = serve_without_precheck(Counter::sharing(mrtr)).await;

    // A fresh call that would pause is refused as a server fault, naming no token.
    let (status, answer) = post(&unchecked.url, body(r#"{"n":1}"#, "")).await;
    let (code, message) = error(status, &answer);
    assert_eq!(code, -32603, "{answer}");
    assert!(message.contains("cannot check"), "{message}");
    assert!(answer.get("result").is_none(), "{answer}");

    // A valid token is refused the same way, before it is opened: the same answer as a
    // token that is garbage, so the misconfiguration is no oracle.
    let token = pause(&checked.url, r#"{"n":1}"#).await;
    let refused = resume(&unchecked.url, &token, r#"{"n":1}"#).await;
    let garbage = resume(&unchecked.url, "AAAA", r#"{"n":1}"#).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert_eq!(refused["error"], garbage["error"]);

    // Nothing was spent: the token still resumes where the layer is in place.
    let resumed = resume(&checked.url, &token, r#"{"n":1}"#).await;
    assert_eq!(resumed["result"]["content"][0]["text"], "n=1", "{resumed}");

    // The operator is told once, at ERROR, what is missing (then at DEBUG); the token is in
    // no log line (rmcp's own DEBUG events, which would show it, are kept out by `log_filter`,
    // as every server should).
    let log = sink.text();
    let named: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("PrecheckLayer is not in front"))
        .collect();
    assert_eq!(named.len(), 3, "{log}");
    assert_eq!(
        named.iter().filter(|l| l.contains("ERROR")).count(),
        1,
        "{log}"
    );
    assert!(!log.contains(&token), "the token was logged");
}
