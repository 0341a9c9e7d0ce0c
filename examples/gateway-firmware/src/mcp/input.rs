//! Reading the client's answers (`params.inputResponses`) to the previous round's input
//! requests, as the hosted server reads them (`mrtr_rmcp::input`).

use mrtr_json::{Kind, Value};

use super::reply::non_empty;

/// What the client answered to one elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer<'r> {
    /// `action: "accept"` with object `content`.
    Accepted(Value<'r>),
    /// `action: "decline"` or `"cancel"`.
    Refused,
    /// No answer under that key, or not an elicitation result.
    Missing,
}

/// The answer under `key` of `responses`.
pub fn answer<'r>(responses: Option<Value<'r>>, key: &str) -> Answer<'r> {
    let Some(resp) = responses.and_then(|r| r.get(key)) else {
        return Answer::Missing;
    };
    let Some(action) = resp.get("action") else {
        return Answer::Missing;
    };
    if action.str_eq("accept") {
        match resp.get("content").filter(|c| c.kind() == Kind::Object) {
            Some(content) => Answer::Accepted(content),
            None => Answer::Missing,
        }
    } else if action.str_eq("decline") || action.str_eq("cancel") {
        Answer::Refused
    } else {
        Answer::Missing
    }
}

/// A non-empty (after trimming) string field of an accepted form.
pub fn text_field<'r>(content: Value<'r>, field: &str) -> Option<Value<'r>> {
    non_empty(content.get(field))
}

/// The accepted text field `field` of the answer under `key`.
pub fn accepted_text<'r>(
    responses: Option<Value<'r>>,
    key: &str,
    field: &str,
) -> Option<Value<'r>> {
    match answer(responses, key) {
        Answer::Accepted(content) => text_field(content, field),
        _ => None,
    }
}

/// The text (a string value) of a sampling result under `key`: its content is one block or
/// (2026-07-28) an array of blocks, of which the first text block counts.
pub fn sampled_text<'r>(responses: Option<Value<'r>>, key: &str) -> Option<Value<'r>> {
    let content = responses?.get(key)?.get("content")?;
    let block = match content.kind() {
        Kind::Array => content
            .items()
            .find(|b| b.get("type").is_some_and(|t| t.str_eq("text")))?,
        _ => content,
    };
    if !block.get("type")?.str_eq("text") {
        return None;
    }
    block.get("text").filter(|t| t.kind() == Kind::String)
}

/// The `roots` array of a `roots/list` result under `key`, when every root has a string
/// `uri`.
pub fn roots<'r>(responses: Option<Value<'r>>, key: &str) -> Option<Value<'r>> {
    let roots = responses?.get(key)?.get("roots")?;
    if roots.kind() != Kind::Array {
        return None;
    }
    roots
        .items()
        .all(|r| r.get("uri").is_some_and(|u| u.kind() == Kind::String))
        .then_some(roots)
}

/// Whether `responses` holds an answer under `key`.
pub fn has(responses: Option<Value<'_>>, key: &str) -> bool {
    responses.is_some_and(|r| r.get(key).is_some())
}
