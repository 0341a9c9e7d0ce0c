//! The peer checks: rmcp's client drives each pausable flow through all its rounds.

use anyhow::{Context, bail, ensure};
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, GetPromptRequestParams,
    InputResponses, ReadResourceRequestParams, ResourceContents,
};
use serde_json::{Value, json};

use crate::answers::Answers;
use crate::connect;

/// The members of `v`, or none when it is not an object.
pub(crate) fn object(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

/// The text content of a tool result, joined.
pub(crate) fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

async fn book_table(url: &str) -> anyhow::Result<()> {
    let answers = Answers::new([
        Some(json!({"date": "2026-12-24"})),
        Some(json!({"confirm": true})),
    ]);
    let client = connect(url, "alice-token", answers.clone()).await?;
    let params =
        CallToolRequestParams::new("book_table").with_arguments(object(json!({"party_size": 2})));
    let result = client.call_tool(params).await.context("call_tool")?;
    client.cancel().await.ok();
    let text = text(&result);
    ensure!(
        text.contains("for 2 ") && text.contains("on 2026-12-24 for alice"),
        "result: {text}"
    );
    let questions = answers.questions();
    ensure!(questions.len() == 2, "questions: {questions:?}");
    ensure!(
        questions[1].contains("2026-12-24"),
        "confirmation: {}",
        questions[1]
    );
    Ok(())
}

async fn plan_dinner(url: &str) -> anyhow::Result<()> {
    let answers = Answers::new([Some(json!({"restrictions": "meat"}))]);
    let client = connect(url, "bob-token", answers.clone()).await?;
    let params = GetPromptRequestParams::new("plan_dinner")
        .with_arguments(object(json!({"cuisine": "mexican"})));
    let result = client.get_prompt(params).await.context("get_prompt")?;
    client.cancel().await.ok();
    let message = serde_json::to_value(&result.messages)?;
    let text = message[0]["content"]["text"].as_str().unwrap_or_default();
    ensure!(
        text.contains("guacamole") && !text.contains("tacos"),
        "prompt: {text}"
    );
    ensure!(
        answers.questions().len() == 1,
        "questions: {:?}",
        answers.questions()
    );
    Ok(())
}

async fn bookings_report(url: &str) -> anyhow::Result<()> {
    let answers = Answers::new([Some(json!({"month": "2026-09"}))]);
    let client = connect(url, "bob-token", answers.clone()).await?;
    let result = client
        .read_resource(ReadResourceRequestParams::new("mrtr://reports/bookings"))
        .await
        .context("read_resource")?;
    client.cancel().await.ok();
    let Some(ResourceContents::TextResourceContents { text, .. }) = result.contents.first() else {
        bail!("no text contents: {result:?}");
    };
    ensure!(
        text.starts_with("Bookings report for 2026-09\nrequested by bob"),
        "report: {text}"
    );
    Ok(())
}

async fn conformance_multi_round(url: &str) -> anyhow::Result<()> {
    let answers = Answers::new([
        Some(json!({"name": "Ferris"})),
        Some(json!({"color": "orange"})),
    ]);
    let client = connect(url, "carol-token", answers).await?;
    let result = client
        .call_tool(CallToolRequestParams::new(
            "test_input_required_result_multi_round",
        ))
        .await
        .context("call_tool")?;
    client.cancel().await.ok();
    ensure!(
        text(&result) == "Ferris's favorite color is orange.",
        "result: {}",
        text(&result)
    );
    Ok(())
}

async fn tampered_state_is_rejected(url: &str) -> anyhow::Result<()> {
    let client = connect(url, "alice-token", Answers::default()).await?;
    let args = object(json!({"party_size": 2}));
    let first = client
        .call_tool_once(CallToolRequestParams::new("book_table").with_arguments(args.clone()))
        .await?;
    let CallToolResponse::InputRequired(paused) = first else {
        bail!("expected input_required");
    };
    let mut state = paused.request_state.context("requestState")?;
    let flipped = if state.ends_with('A') { 'B' } else { 'A' };
    state.pop();
    state.push(flipped);
    let mut responses = InputResponses::new();
    responses.insert(
        "date".into(),
        json!({"action": "accept", "content": {"date": "2026-12-24"}}),
    );
    let retry = CallToolRequestParams::new("book_table")
        .with_arguments(args)
        .with_input_responses(responses)
        .with_request_state(state);
    let outcome = client.call_tool_once(retry).await;
    client.cancel().await.ok();
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
            Ok(())
        }
        other => bail!("expected the rejection, got {other:?}"),
    }
}

/// Runs every check; fails if any does.
pub async fn run(url: &str) -> anyhow::Result<()> {
    let mut failed = 0;
    let mut passed = 0;
    macro_rules! check {
        ($name:ident) => {
            match $name(url).await {
                Ok(()) => {
                    passed += 1;
                    println!("ok - {}", stringify!($name));
                }
                Err(e) => {
                    failed += 1;
                    println!("FAILED - {}: {e:#}", stringify!($name));
                }
            }
        };
    }
    check!(book_table);
    check!(plan_dinner);
    check!(bookings_report);
    check!(conformance_multi_round);
    check!(tampered_state_is_rejected);
    println!("rmcp client: {passed} passed, {failed} failed");
    ensure!(failed == 0, "{failed} rmcp client checks failed");
    Ok(())
}
