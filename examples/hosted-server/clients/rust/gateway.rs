//! rmcp's client against the gateway firmware (examples/gateway-firmware) under QEMU.
//!
//! * `gateway-stdio -- COMMAND ARGS...`: starts the gateway as a child process with rmcp's
//!   `TokioChildProcess` (stdio framing over the emulated UART) and runs the checks.
//! * `gateway-http --url URL [--token BEARER]`: the same checks over Streamable HTTP.
//!
//! The checks: discovery and `tools/list`, the confirm flow of `set_output` (accept, then
//! decline: nothing changed), `get_outputs` showing the change, the three rounds of
//! `calibrate`, the conformance tool `test_input_required_result_multi_round`, and a tampered
//! `requestState` refused with the uniform `-32602`. Exits non-zero on any failure.

use anyhow::{Context, bail, ensure};
use rmcp::model::{CallToolRequestParams, CallToolResponse, InputResponses, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceError};
use serde_json::json;

use crate::answers::Answers;
use crate::peer::{object, text};

/// How the gateway is reached.
pub enum Target {
    /// A command that starts the gateway speaking MCP on its stdin/stdout.
    Stdio(Vec<String>),
    /// A Streamable HTTP endpoint and its bearer token.
    Http { url: String, token: String },
}

fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

async fn connect(
    target: &Target,
    answers: Answers,
) -> anyhow::Result<RunningService<RoleClient, Answers>> {
    match target {
        Target::Stdio(command) => {
            let (program, args) = command.split_first().context("no gateway command given")?;
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(args);
            let transport = TokioChildProcess::new(cmd)
                .with_context(|| format!("cannot start the gateway: {command:?}"))?;
            answers
                .serve_with_lifecycle(transport, lifecycle())
                .await
                .with_context(|| format!("server/discover over stdio with {command:?}"))
        }
        Target::Http { url, token } => {
            let transport = StreamableHttpClientTransport::from_config(
                StreamableHttpClientTransportConfig::with_uri(url.clone())
                    .auth_header(token.clone()),
            );
            answers
                .serve_with_lifecycle(transport, lifecycle())
                .await
                .with_context(|| format!("server/discover at {url}"))
        }
    }
}

/// The four duties of `get_outputs`' text `duty: [a, b, c, d]`.
fn duties(text: &str) -> anyhow::Result<Vec<u32>> {
    let inner = text
        .trim()
        .strip_prefix("duty: [")
        .and_then(|t| t.strip_suffix(']'))
        .with_context(|| format!("get_outputs text: {text:?}"))?;
    inner
        .split(',')
        .map(|d| d.trim().parse::<u32>().context("a duty"))
        .collect()
}

/// One session: tools listed, set_output accepted then declined, get_outputs, calibrate,
/// the conformance multi-round tool, and a tampered token refused.
async fn session(target: &Target) -> anyhow::Result<Vec<String>> {
    let mut done = Vec::new();
    let answers = Answers::new([
        // set_output channel 2 → 37 %: confirmed.
        Some(json!({"confirm": true})),
        // set_output channel 2 → 90 %: declined.
        None,
        // calibrate: reference, offset, confirm.
        Some(json!({"reference": 25})),
        Some(json!({"offset": -3})),
        Some(json!({"confirm": true})),
        // multi_round: name, colour.
        Some(json!({"name": "Ferris"})),
        Some(json!({"color": "orange"})),
    ]);
    let client = connect(target, answers.clone()).await?;
    let outcome = async {
        let tools = client.list_all_tools().await.context("tools/list")?;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        for wanted in ["set_output", "get_outputs", "calibrate"] {
            ensure!(
                names.contains(&wanted),
                "tools/list lacks {wanted}: {names:?}"
            );
        }
        done.push(format!("tools/list: {} tools", names.len()));

        let set = |duty: u32| {
            CallToolRequestParams::new("set_output")
                .with_arguments(object(json!({"channel": 2, "duty": duty})))
        };
        let result = client.call_tool(set(37)).await.context("set_output 37")?;
        ensure!(
            text(&result) == "channel 2 set to 37 %",
            "set_output accepted: {:?}",
            text(&result)
        );
        let result = client.call_tool(set(90)).await.context("set_output 90")?;
        ensure!(
            text(&result) == "nothing changed",
            "set_output declined: {:?}",
            text(&result)
        );
        let result = client
            .call_tool(CallToolRequestParams::new("get_outputs"))
            .await
            .context("get_outputs")?;
        let d = duties(&text(&result))?;
        ensure!(d.len() == 4 && d[2] == 37, "duties after the flows: {d:?}");
        done.push("set_output: confirmed (37 %), declined (unchanged), get_outputs agrees".into());

        let result = client
            .call_tool(
                CallToolRequestParams::new("calibrate")
                    .with_arguments(object(json!({"sensor": "t1"}))),
            )
            .await
            .context("calibrate")?;
        let t = text(&result);
        ensure!(
            t.starts_with("calibrated t1: reference 25")
                && (t.ends_with("offset -3") || t.ends_with("offset -3.0")),
            "calibrate: {t:?}"
        );
        done.push("calibrate: three rounds".into());

        let result = client
            .call_tool(CallToolRequestParams::new(
                "test_input_required_result_multi_round",
            ))
            .await
            .context("multi_round")?;
        ensure!(
            text(&result) == "Ferris's favorite color is orange.",
            "multi_round: {:?}",
            text(&result)
        );
        done.push("test_input_required_result_multi_round: two rounds".into());
        ensure!(
            answers.questions().len() == 7,
            "questions asked: {:?}",
            answers.questions()
        );

        // A tampered token, sent by hand through the same session.
        let args = object(json!({"channel": 1, "duty": 5}));
        let first = client
            .call_tool_once(CallToolRequestParams::new("set_output").with_arguments(args.clone()))
            .await
            .context("set_output, first round")?;
        let CallToolResponse::InputRequired(paused) = first else {
            bail!("set_output did not ask for confirmation");
        };
        let state = paused.request_state.context("no requestState")?;
        let mut bytes = state.into_bytes();
        let mid = bytes.len() / 2;
        bytes[mid] = if bytes[mid] == b'A' { b'B' } else { b'A' };
        let state = String::from_utf8(bytes)?;
        let mut responses = InputResponses::new();
        responses.insert(
            "confirm".into(),
            json!({"action": "accept", "content": {"confirm": true}}),
        );
        let outcome = client
            .call_tool_once(
                CallToolRequestParams::new("set_output")
                    .with_arguments(args)
                    .with_input_responses(responses)
                    .with_request_state(state),
            )
            .await;
        match outcome {
            Err(ServiceError::McpError(e)) => {
                ensure!(e.code.0 == -32602, "code {}", e.code.0);
                ensure!(
                    e.message == "Invalid or expired requestState",
                    "message {}",
                    e.message
                );
                ensure!(
                    e.data == Some(json!({"reason": "invalid_request_state"})),
                    "data {:?}",
                    e.data
                );
            }
            other => bail!("a tampered token was not refused: {other:?}"),
        }
        done.push("tampered requestState: -32602 invalid_request_state".into());
        Ok(())
    }
    .await;
    client.cancel().await.ok();
    outcome.map(|()| done)
}

/// Runs the checks; fails if any does.
pub async fn run(target: Target) -> anyhow::Result<()> {
    let name = match &target {
        Target::Stdio(command) => format!("stdio {}", command.join(" ")),
        Target::Http { url, .. } => format!("http {url}"),
    };
    match session(&target).await {
        Ok(done) => {
            for line in &done {
                println!("ok - {line}");
            }
            println!(
                "rmcp gateway client ({name}): {} passed, 0 failed",
                done.len()
            );
            Ok(())
        }
        Err(e) => {
            println!("FAILED - rmcp gateway client ({name}): {e:#}");
            Err(e)
        }
    }
}
