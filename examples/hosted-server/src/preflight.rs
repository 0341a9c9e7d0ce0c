//! Checks on the raw JSON-RPC body that must run before rmcp parses it.
//!
//! rmcp deserializes `requestState` as a string: a request whose `requestState` is a number,
//! object, array or boolean fails to parse there and is answered `-32601`. mrtr's contract is
//! the uniform `-32602` rejection for any unusable `requestState`, so this layer answers such
//! requests itself, with the error mrtr-std builds ([`mrtr_std::jsonrpc::precheck`]).
//!
//! It also checks that a pausable request is I-JSON (RFC 7493) while its raw text is at hand:
//! a duplicate member name or a number a double does not carry exactly is gone once a parser
//! has built a map, and the argument digest could no longer tell such requests apart. A resume
//! with one gets the uniform rejection here; a fresh call goes on, marked (the violation is
//! put in the request's extensions), and cannot pause.
//!
//! It also runs the initial authorization of `subscriptions/listen` (see [`crate::listen`]).

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{Method as HttpMethod, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use mrtr_std::core::ErrorDetail;
use mrtr_std::ijson::Violation;
use mrtr_std::jsonrpc::{self, Precheck};
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::listen::{self, Admitted, NotAdmitted};
use crate::server::App;

/// Largest request body this layer buffers (rmcp applies its own limits after it).
pub const MAX_BODY: usize = 4 * 1024 * 1024;

/// What the preflight decided for one JSON-RPC message.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to rmcp.
    Pass,
    /// Hand it to rmcp, marked: its arguments cannot be bound, so it cannot pause.
    Unbindable(Violation),
    /// Answer with this JSON-RPC error for request `id`.
    Reject { id: Value, error: Value },
}

/// Checks one JSON-RPC message, parsed and raw; rejections are in `detail` mode.
pub fn check(message: &Value, raw: &[u8], detail: ErrorDetail) -> Verdict {
    match jsonrpc::precheck_raw(message, raw, detail) {
        Precheck::Pass => Verdict::Pass,
        Precheck::Unbindable(v) => Verdict::Unbindable(v),
        Precheck::Reject(error) => Verdict::Reject {
            id: message.get("id").cloned().unwrap_or(Value::Null),
            error: error.to_value(),
        },
    }
}

/// Axum middleware running [`check`] on POST bodies.
pub async fn preflight(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    if request.method() != HttpMethod::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response(),
    };
    let mut parts = parts;
    if let Ok(message) = serde_json::from_slice::<Value>(&bytes) {
        match check(&message, &bytes, app.sealer.limits().error_detail) {
            Verdict::Pass => {}
            Verdict::Unbindable(v) => {
                parts.extensions.insert(v);
            }
            Verdict::Reject { id, error } => return error_response(id, error),
        }
        if message.get("method").and_then(Value::as_str) == Some("subscriptions/listen") {
            match admit_listen(&app, &message, &parts.extensions).await {
                Ok(admitted) => {
                    parts.extensions.insert(admitted);
                }
                Err(error) => {
                    let id = message.get("id").cloned().unwrap_or(Value::Null);
                    return error_response(id, error);
                }
            }
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

fn error_response(id: Value, error: Value) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Runs the initial authorization of a `subscriptions/listen` request before rmcp sees it
/// (rmcp acknowledges before calling the handler). A refusal is the request's error.
async fn admit_listen(
    app: &Arc<App>,
    message: &Value,
    extensions: &axum::http::Extensions,
) -> Result<Admitted, Value> {
    let Some(id) = message.get("id").and_then(listen::request_id) else {
        return Err(json!({"code": -32600, "message": "subscriptions/listen needs a request id"}));
    };
    let caller = extensions
        .get::<Caller>()
        .cloned()
        .unwrap_or(Caller::Anonymous);
    let filter = listen::filter(message.get("params"));
    match listen::admit(&app.subs, id, filter, caller.clone()).await {
        Ok(admitted) => Ok(admitted),
        Err(NotAdmitted::AtCapacity) => {
            tracing::warn!("subscriptions/listen refused: registry at capacity");
            Err(json!({"code": -32603, "message": "Subscription capacity reached"}))
        }
        Err(NotAdmitted::Refused(reason)) => {
            tracing::info!(caller = ?caller, ?reason, "subscriptions/listen not authorized");
            Err(
                json!({"code": -32600, "message": "Subscription not authorized",
                       "data": {"reason": "subscription_denied"}}),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIFORM: ErrorDetail = ErrorDetail::Uniform;

    #[test]
    fn non_string_state_on_pausable_methods_is_rejected_uniformly() {
        for bad in [
            json!(1),
            json!({"a": 1}),
            json!(["x"]),
            json!(true),
            json!(null),
        ] {
            let msg = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                             "params": {"name": "t", "requestState": bad}});
            let raw = msg.to_string();
            let Verdict::Reject { id, error } = check(&msg, raw.as_bytes(), UNIFORM) else {
                panic!("accepted {msg}");
            };
            assert_eq!(id, json!(7));
            assert_eq!(
                error,
                json!({"code": -32602, "message": "Invalid or expired requestState",
                                     "data": {"reason": "invalid_request_state"}})
            );
        }
    }

    #[test]
    fn everything_else_passes() {
        let ok = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "requestState": "abc"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "t"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"requestState": 5}}),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled"}),
            json!([1, 2]),
        ];
        for msg in ok {
            let raw = msg.to_string();
            assert_eq!(check(&msg, raw.as_bytes(), UNIFORM), Verdict::Pass, "{msg}");
        }
    }

    #[test]
    fn requests_that_are_not_i_json_cannot_resume_and_are_marked_when_fresh() {
        let resume = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t",
            "arguments":{"amount":9007199254740993},"requestState":"abc"}}"#;
        let msg: Value = serde_json::from_str(resume).unwrap();
        let Verdict::Reject { id, error } = check(&msg, resume.as_bytes(), UNIFORM) else {
            panic!("accepted");
        };
        assert_eq!(id, json!(9));
        assert_eq!(error["data"]["reason"], "invalid_request_state");
        let fresh = r#"{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"t",
            "arguments":{"a":"x","a":"y"}}}"#;
        let msg: Value = serde_json::from_str(fresh).unwrap();
        let Verdict::Unbindable(v) = check(&msg, fresh.as_bytes(), UNIFORM) else {
            panic!("not marked");
        };
        assert_eq!(v.path(), "/params/arguments/a");
    }
}
