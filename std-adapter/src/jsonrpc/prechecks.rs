//! The checks of a raw JSON-RPC message before an SDK parses it: [`precheck`] (a
//! `requestState` that is not a string), [`precheck_raw`] and [`precheck_bytes`] (the same plus
//! the I-JSON check of the text, the latter in one pass that builds no tree), and
//! [`refuse_unreadable`] (the answer to JSON a parser cannot read).

use std::borrow::Cow;

use mrtr_core::{ErrorDetail, Reason, Rejection};
use serde_json::Value;

use super::{JsonRpcError, Method, RequestState};
use crate::ijson::{self, Shape, Violation};

/// Checks a raw JSON-RPC message, before an SDK parses it, for a `requestState` that is not a
/// string on one of the three pausable methods, and returns the rejection to answer the
/// message with (in `detail` mode: use [`CipherEngine::precheck`](crate::engine::CipherEngine::precheck)
/// for the engine's own mode).
///
/// SDKs that type `requestState` as a string fail to parse such a request and answer it with
/// their own error; mrtr's contract is the uniform `-32602` rejection for any unusable
/// `requestState`, which this gives. Everything else is `None`: other methods (their
/// `requestState` is ignored), absent or string `requestState` (checked on resume),
/// notifications and responses without a method, and batches (arrays). A rejection is logged
/// like any other (target `mrtr`, reason `malformed`).
///
/// ```
/// use mrtr_std::core::ErrorDetail;
/// use mrtr_std::jsonrpc::precheck;
/// use serde_json::json;
///
/// let bad = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
///                  "params": {"name": "book_table", "requestState": 42}});
/// let error = precheck(&bad, ErrorDetail::Uniform).expect("rejected");
/// assert_eq!(error.to_value(), json!({"code": -32602, "message": "Invalid or expired requestState",
///                                     "data": {"reason": "invalid_request_state"}}));
///
/// let fine = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
///                   "params": {"name": "book_table", "requestState": "opaque"}});
/// assert!(precheck(&fine, ErrorDetail::Uniform).is_none());
/// ```
pub fn precheck(message: &Value, detail: ErrorDetail) -> Option<JsonRpcError> {
    let method = message.get("method").and_then(Value::as_str)?;
    Method::from_name(method)?;
    let reason = RequestState::from_member(message.pointer("/params/requestState"))
        .token()
        .err()?;
    Some(not_a_string(reason, method, detail))
}

/// The rejection of a `requestState` that is not a string, logged.
fn not_a_string(reason: Reason, method: &str, detail: ErrorDetail) -> JsonRpcError {
    tracing::info!(
        target: "mrtr",
        reason = reason.as_str(),
        method,
        "requestState rejected: not a string"
    );
    JsonRpcError::from_rejection(Rejection::new(reason, detail))
}

/// What [`precheck_raw`] decided for one raw JSON-RPC message.
#[derive(Clone, Debug, PartialEq)]
pub enum Precheck {
    /// Hand the message on.
    Pass,
    /// A pausable request without a `requestState` whose text is not I-JSON: hand it on, but
    /// it cannot pause. Attach the violation to its [`ResumeRequest`]
    /// ([`ResumeRequest::not_i_json`]) so a pause fails with a clear error.
    ///
    /// [`ResumeRequest`]: super::ResumeRequest
    /// [`ResumeRequest::not_i_json`]: super::ResumeRequest::not_i_json
    Unbindable(Violation),
    /// Answer the message with this error instead.
    Reject(JsonRpcError),
}

/// [`precheck`] plus the I-JSON check of the raw text (`raw`, the bytes `message` was parsed
/// from), for the three pausable methods: duplicate member names and numbers a double does
/// not carry exactly are found here, before a parser forgets them.
///
/// * a non-string `requestState`: [`Precheck::Reject`] (uniform `-32602`, reason
///   `malformed`);
/// * a `requestState` string on a request that is not I-JSON: [`Precheck::Reject`] (uniform
///   `-32602`, reason `arguments_unbindable`): the token cannot be checked against arguments
///   that parsers may read differently;
/// * no `requestState` on a request that is not I-JSON: [`Precheck::Unbindable`];
/// * anything else: [`Precheck::Pass`].
///
/// ```
/// use mrtr_std::core::ErrorDetail;
/// use mrtr_std::jsonrpc::{Precheck, precheck_raw};
///
/// let raw = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call",
///                "params":{"name":"pay","arguments":{"amount":9007199254740993},
///                          "requestState":"opaque"}}"#;
/// let message = serde_json::from_slice(raw)?;
/// let Precheck::Reject(error) = precheck_raw(&message, raw, ErrorDetail::Uniform) else {
///     panic!("a resume with unbindable arguments is refused")
/// };
/// assert_eq!(error.code(), -32602);
/// assert_eq!(error.data().unwrap()["reason"], "invalid_request_state");
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn precheck_raw(message: &Value, raw: &[u8], detail: ErrorDetail) -> Precheck {
    decide(message, || ijson::check(raw), detail)
}

/// [`precheck_raw`] on a parsed message, with `i_json` telling whether its text is I-JSON
/// (asked only for the pausable methods).
fn decide(
    message: &Value,
    i_json: impl FnOnce() -> Result<(), Violation>,
    detail: ErrorDetail,
) -> Precheck {
    if let Some(error) = precheck(message, detail) {
        return Precheck::Reject(error);
    }
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return Precheck::Pass;
    };
    if Method::from_name(method).is_none() {
        return Precheck::Pass;
    }
    let Err(violation) = i_json() else {
        return Precheck::Pass;
    };
    match RequestState::from_member(message.pointer("/params/requestState")) {
        RequestState::Token(_) => {
            tracing::info!(
                target: "mrtr",
                reason = Reason::ArgumentsUnbindable.as_str(),
                method,
                violation = violation.kind().as_str(),
                at = violation.path(),
                "requestState rejected: the request is not I-JSON"
            );
            Precheck::Reject(JsonRpcError::from_rejection(Rejection::new(
                Reason::ArgumentsUnbindable,
                detail,
            )))
        }
        RequestState::Absent | RequestState::NotAString => Precheck::Unbindable(violation),
    }
}

/// What [`precheck_bytes`] found: the decision, and the message's method.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Prechecked<'a> {
    /// What to do with the message.
    pub outcome: Precheck,
    /// The message's `method`, when it has a string one (an HTTP layer uses it to route
    /// admission hooks without parsing the message).
    pub method: Option<Cow<'a, str>>,
    /// Set when the text is not I-JSON in a way serde_json refuses outright (a number beyond
    /// a double's range such as `1e400`, a lone surrogate): an SDK built on serde_json cannot
    /// read the message at all and would answer with its own transport error (rmcp: HTTP
    /// 415). The outcome is then [`Precheck::Pass`]; answer the message with
    /// [`refuse_unreadable`] instead of handing it on (if it is JSON at all).
    pub unreadable: Option<Violation>,
}

/// The answer to a message whose text is JSON that a parser cannot read
/// ([`Prechecked::unreadable`]), from what an envelope reader tolerant of such values found:
/// its `method` and the shape of its `params.requestState`.
///
/// * a `requestState` string on a pausable method: the uniform `-32602` rejection, reason
///   `arguments_unbindable` (as [`precheck_raw`] answers a resume that is not I-JSON);
/// * a `requestState` that is not a string on a pausable method: the uniform rejection,
///   reason `malformed`;
/// * anything else: `-32602` naming the problem and where it is, e.g. `Invalid params: the
///   request is not I-JSON (number not exactly representable as a double at
///   /params/arguments/x)`.
///
/// ```
/// use mrtr_std::core::ErrorDetail;
/// use mrtr_std::jsonrpc::{RequestState, precheck_bytes, refuse_unreadable};
///
/// let raw = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call",
///               "params":{"name":"book","arguments":{"x":1e400}}}"#;
/// let violation = precheck_bytes(raw, ErrorDetail::Uniform).unreadable.expect("unreadable");
/// let error = refuse_unreadable(Some("tools/call"), RequestState::Absent, &violation,
///                               ErrorDetail::Uniform);
/// assert_eq!(error.code(), -32602);
/// assert!(error.to_value()["message"].as_str().unwrap().contains("/params/arguments/x"));
/// ```
pub fn refuse_unreadable(
    method: Option<&str>,
    request_state: RequestState<'_>,
    violation: &Violation,
    detail: ErrorDetail,
) -> JsonRpcError {
    let pausable = method.filter(|m| Method::from_name(m).is_some());
    match (pausable, request_state) {
        (Some(method), RequestState::Token(_)) => {
            tracing::info!(
                target: "mrtr",
                reason = Reason::ArgumentsUnbindable.as_str(),
                method,
                violation = violation.kind().as_str(),
                at = violation.path(),
                "requestState rejected: the request is not I-JSON"
            );
            JsonRpcError::from_rejection(Rejection::new(Reason::ArgumentsUnbindable, detail))
        }
        (Some(method), RequestState::NotAString) => not_a_string(Reason::Malformed, method, detail),
        _ => JsonRpcError::invalid_params(format!(
            "Invalid params: the request is not I-JSON ({violation})"
        )),
    }
}

/// [`precheck_raw`] on the raw text alone, for an HTTP layer in front of an SDK: the same
/// decision, reached in one pass over the text that builds no tree (see [`ijson::scan`]). Only
/// a message that is refused or marked (rare) is parsed as well, to decide exactly as
/// [`precheck_raw`] does on what a parser reads. Text a parser refuses passes: the SDK
/// answers its parse error; when that text is JSON but not I-JSON in a way the parser cannot
/// read (`1e400`, a lone surrogate), [`Prechecked::unreadable`] says so, for the layer to
/// answer with [`refuse_unreadable`].
///
/// ```
/// use mrtr_std::core::ErrorDetail;
/// use mrtr_std::jsonrpc::{Precheck, precheck_bytes};
///
/// let raw = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call",
///               "params":{"name":"book","requestState":42}}"#;
/// let checked = precheck_bytes(raw, ErrorDetail::Uniform);
/// assert_eq!(checked.method.as_deref(), Some("tools/call"));
/// let Precheck::Reject(error) = checked.outcome else { panic!("a non-string state is refused") };
/// assert_eq!(error.code(), -32602);
/// ```
pub fn precheck_bytes(raw: &[u8], detail: ErrorDetail) -> Prechecked<'_> {
    // The common case: I-JSON whose requestState (if any) is a string. Anything else is
    // decided on the parsed message, as precheck_raw decides it (so a text the scan reads but
    // a parser refuses, such as one nested deeper than serde_json follows, is handed on).
    let violation = match ijson::scan(raw) {
        Ok(envelope) => {
            let refused = envelope.request_state == Shape::Other
                && envelope
                    .method
                    .as_deref()
                    .is_some_and(|m| Method::from_name(m).is_some());
            if !refused {
                return Prechecked {
                    outcome: Precheck::Pass,
                    method: envelope.method,
                    unreadable: None,
                };
            }
            Ok(())
        }
        Err(violation) => Err(violation),
    };
    match serde_json::from_slice::<Value>(raw) {
        Ok(message) => Prechecked {
            outcome: decide(&message, || violation, detail),
            method: message
                .get("method")
                .and_then(Value::as_str)
                .map(|m| Cow::Owned(m.to_owned())),
            unreadable: None,
        },
        Err(_) => Prechecked {
            outcome: Precheck::Pass,
            method: None,
            // The scan read the text as JSON up to a violation: a parser that refuses it may
            // refuse that (or a later) value rather than the text's syntax.
            unreadable: violation
                .err()
                .filter(|v| v.kind() != ijson::ViolationKind::NotJson),
        },
    }
}
