//! The prompt the conformance suite's MRTR scenario calls: built with the `testing` feature
//! only, like the conformance tools.

use mrtr_rmcp::Call;
use mrtr_rmcp::input::{self, Answer};
use rmcp::model::{ErrorData, GetPromptResponse, GetPromptResult, PromptMessage, Role};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The conformance suite's prompt.
pub const PROMPT: &str = "test_input_required_result_prompt";

/// Sealed state of the conformance prompt.
#[derive(Serialize, Deserialize)]
struct AskedContext {
    key: String,
}

/// One round of the conformance prompt.
pub fn prompt(call: &Call) -> Result<GetPromptResponse, ErrorData> {
    if call.state::<AskedContext>()?.is_some()
        && let Answer::Accepted(form) = input::answer(call.input_responses(), "user_context")
        && let Some(context) = input::text_field(form, "context")
    {
        return Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            format!("Use this context: {context}"),
        )])
        .into());
    }
    let q = input::form(
        "What context should the prompt use?",
        json!({"context": {"type": "string"}}),
        &[],
    );
    let state = AskedContext {
        key: "user_context".into(),
    };
    Ok(call.pause(&state, input::one("user_context", q))?.into())
}
