//! The tool list and dispatch, plus `countdown` (state-only pauses, for the round cap).

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, ErrorData, JsonObject, Tool};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::call::{Call, Outcome};
use crate::{booking, conformance};

/// A tool's flow: one round.
pub type Flow = fn(&Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData>;

/// `countdown`'s name.
pub const COUNTDOWN: &str = "countdown";

fn schema(v: serde_json::Value) -> Arc<JsonObject> {
    match v {
        serde_json::Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// Every tool this server lists.
pub fn list() -> Vec<Tool> {
    let mut tools = vec![
        Tool::new(
            booking::NAME,
            "Books a restaurant table: asks for a date, then for confirmation",
            schema(booking::input_schema()),
        ),
        Tool::new(
            COUNTDOWN,
            "Pauses `pauses` times with state-only results, then completes",
            schema(json!({
                "type": "object",
                "properties": {"pauses": {"type": "integer", "minimum": 0, "maximum": 100}},
                "required": ["pauses"]
            })),
        ),
    ];
    for (name, description, _) in conformance::TOOLS {
        tools.push(Tool::new(
            *name,
            *description,
            schema(json!({"type": "object", "properties": {}})),
        ));
    }
    tools
}

/// The flow of the tool called `name`.
pub fn flow(name: &str) -> Option<Flow> {
    match name {
        booking::NAME => Some(booking::flow),
        COUNTDOWN => Some(countdown),
        _ => conformance::TOOLS
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, _, f)| *f),
    }
}

/// Sealed state of `countdown`.
#[derive(Serialize, Deserialize)]
struct Left {
    pauses: u64,
}

fn countdown(call: &Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData> {
    let Some(total @ 0..=100) = call.arg_u64("pauses") else {
        return Ok(Outcome::Done(CallToolResult::error(vec![
            ContentBlock::text("pauses must be an integer from 0 to 100"),
        ])));
    };
    let left = match call.state::<Left>()? {
        None => total,
        Some(l) => l.pauses,
    };
    if left == 0 {
        return Ok(Outcome::Done(CallToolResult::success(vec![
            ContentBlock::text(format!("countdown finished after {total} pauses")),
        ])));
    }
    Outcome::retry(&Left { pauses: left - 1 })
}
