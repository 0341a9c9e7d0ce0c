//! The demo: `book_table` round by round, printed.

use anyhow::{Context, bail};
use rmcp::model::{CallToolRequestParams, CallToolResponse, InputRequest, InputResponses};
use serde_json::{Value, json};

use crate::answers::Answers;
use crate::connect;

/// Drives `book_table` to completion, then shows that its spent `requestState` is refused.
pub async fn run(url: &str, token: &str) -> anyhow::Result<()> {
    let answers = Answers::new([
        Some(json!({"date": "2026-12-24"})),
        Some(json!({"confirm": true})),
    ]);
    let client = connect(url, token, Answers::default()).await?;
    let args = match json!({"party_size": 4, "restaurant": "Chez Ferris"}) {
        Value::Object(m) => m,
        _ => unreachable!(),
    };
    println!("connected to {url} (protocol 2026-07-28, bearer {token})");
    let mut params = CallToolRequestParams::new("book_table").with_arguments(args.clone());
    let mut spent = None;
    for round in 1.. {
        if round > 5 {
            bail!("book_table did not complete in 5 rounds");
        }
        println!(
            "\nround {round}: tools/call book_table {}",
            Value::Object(args.clone())
        );
        let response = client
            .call_tool_once(params.clone())
            .await
            .context("tools/call")?;
        let paused = match response {
            CallToolResponse::Complete(result) => {
                let text: String = result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                    .collect();
                println!("  -> complete: {text}");
                break;
            }
            CallToolResponse::InputRequired(paused) => paused,
            _ => bail!("unexpected response"),
        };
        let state = paused.request_state.context("no requestState")?;
        println!(
            "  -> input_required; requestState: {} characters, sealed with AEAD (opaque to the client)",
            state.len()
        );
        let mut responses = InputResponses::new();
        for (key, request) in paused.input_requests.unwrap_or_default() {
            let InputRequest::Elicitation(req) = request else {
                bail!("unexpected input request kind under {key}");
            };
            let message = match &req.params {
                rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } => {
                    message.clone()
                }
                _ => bail!("unexpected elicitation mode"),
            };
            let answer = answers.next(&message);
            println!("  server asks [{key}]: {message}");
            println!(
                "  client answers: {}",
                answer.clone().unwrap_or(Value::Null)
            );
            responses.insert(key, serde_json::to_value(Answers::result(answer))?);
        }
        spent = Some((state.clone(), responses.clone()));
        params = CallToolRequestParams::new("book_table")
            .with_arguments(args.clone())
            .with_input_responses(responses)
            .with_request_state(state);
    }
    if let Some((state, responses)) = spent {
        println!("\nreplaying the last requestState once more:");
        let replay = CallToolRequestParams::new("book_table")
            .with_arguments(args)
            .with_input_responses(responses)
            .with_request_state(state);
        match client.call_tool_once(replay).await {
            Err(rmcp::ServiceError::McpError(e)) => println!(
                "  -> error {} \"{}\" {}",
                e.code.0,
                e.message,
                e.data.unwrap_or(Value::Null)
            ),
            Ok(_) => bail!("the replayed requestState was accepted"),
            Err(e) => bail!("unexpected failure: {e}"),
        }
    }
    client.cancel().await.ok();
    Ok(())
}
