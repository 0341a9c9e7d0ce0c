//! One pausable request (`tools/call`, `prompts/get`, `resources/read`): authenticate the
//! caller, check the `requestState` with mrtr, run the handler's flow, and seal the next
//! state when the flow pauses again.
//!
//! Flows are pure: they compute their answer from the request and the verified state and have
//! no effects (the server acts on a completed result after it is returned). So the token is
//! recorded in the replay cache only once the flow has answered: a flow that refuses the
//! request (a capability the request did not declare, invalid input) leaves the token
//! unspent, and the client can retry it with the request corrected. Of two concurrent replays
//! both may compute an answer; only the one whose record succeeds is returned.

use mrtr_std::engine::{AnyEngine, Step};
use mrtr_std::ijson::Violation;
use mrtr_std::jsonrpc::{JsonRpcError, Method, RequestState, ResumeRequest};
use rmcp::model::{
    ErrorCode, ErrorData, InputRequests, InputRequiredResult, InputResponses, JsonObject,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ask::Caps;
use crate::auth::Caller;

/// What a flow sees of its request.
pub struct Call<'a> {
    /// Fresh, or resumed from a checked token.
    pub step: &'a Step,
    /// `params.inputResponses`.
    pub responses: Option<&'a InputResponses>,
    /// `params.arguments`.
    pub arguments: Option<&'a JsonObject>,
    /// The input kinds the client declared on this request.
    pub caps: Caps,
    /// The authenticated caller.
    pub caller: &'a Caller,
}

impl Call<'_> {
    /// The resumed continuation, decoded as the flow's own state type (`None` when fresh).
    ///
    /// The bytes were sealed by this server, so a decoding failure is a server fault.
    pub fn state<S: DeserializeOwned>(&self) -> Result<Option<S>, ErrorData> {
        match self.step {
            Step::Fresh => Ok(None),
            Step::Resumed(r) => serde_json::from_slice(r.continuation())
                .map(Some)
                .map_err(|e| ErrorData::internal_error(format!("bad continuation: {e}"), None)),
        }
    }

    /// A string argument.
    pub fn arg_str(&self, name: &str) -> Option<&str> {
        self.arguments?.get(name)?.as_str()
    }

    /// An integer argument.
    pub fn arg_u64(&self, name: &str) -> Option<u64> {
        self.arguments?.get(name)?.as_u64()
    }
}

/// What a flow decided.
pub enum Outcome<T> {
    /// Finished.
    Done(T),
    /// Needs input; `state` is sealed into `requestState`.
    Ask {
        state: Vec<u8>,
        requests: InputRequests,
    },
    /// Needs a retry only (load shedding): a state-only result.
    Retry { state: Vec<u8> },
    /// Needs input and keeps no state (the answer alone completes the call).
    AskStateless(InputRequests),
}

impl<T> Outcome<T> {
    /// Pause with `state` and `requests`.
    pub fn ask<S: Serialize>(state: &S, requests: InputRequests) -> Result<Self, ErrorData> {
        Ok(Self::Ask {
            state: encode(state)?,
            requests,
        })
    }

    /// Pause with `state` only.
    pub fn retry<S: Serialize>(state: &S) -> Result<Self, ErrorData> {
        Ok(Self::Retry {
            state: encode(state)?,
        })
    }
}

fn encode<S: Serialize>(state: &S) -> Result<Vec<u8>, ErrorData> {
    serde_json::to_vec(state)
        .map_err(|e| ErrorData::internal_error(format!("cannot encode continuation: {e}"), None))
}

/// The request's result: complete, or `input_required`.
pub enum Reply<T> {
    /// Complete.
    Complete(T),
    /// `resultType: "input_required"`.
    InputRequired(InputRequiredResult),
}

/// A pausable request's parts, borrowed from the SDK's typed params.
pub struct Request<'a> {
    /// Which method.
    pub method: Method,
    /// Tool name, prompt name or resource URI.
    pub target: &'a str,
    /// `params.arguments` (tools and prompts).
    pub arguments: Option<&'a JsonObject>,
    /// `params.requestState`.
    pub request_state: Option<&'a str>,
    /// `params.inputResponses`.
    pub responses: Option<&'a InputResponses>,
}

/// The HTTP request rmcp received the request in (none on stdio).
fn http_parts(ctx: &RequestContext<RoleServer>) -> Option<&axum::http::request::Parts> {
    ctx.extensions.get::<axum::http::request::Parts>()
}

/// The authenticated caller of a request (anonymous on stdio).
pub fn caller_of(ctx: &RequestContext<RoleServer>) -> Caller {
    http_parts(ctx)
        .and_then(|parts| parts.extensions.get::<Caller>())
        .cloned()
        .unwrap_or(Caller::Anonymous)
}

/// Runs `flow` for `request`: resume checks, the flow, and sealing its next state.
pub async fn run<T>(
    sealer: &AnyEngine,
    request: Request<'_>,
    ctx: &RequestContext<RoleServer>,
    flow: impl FnOnce(&Call<'_>) -> Result<Outcome<T>, ErrorData>,
) -> Result<Reply<T>, ErrorData> {
    let caller = caller_of(ctx);
    let version = ctx
        .protocol_version()
        .map(|v| v.as_str().to_owned())
        .unwrap_or_default();
    let state = match request.request_state {
        Some(s) => RequestState::Token(s),
        None => RequestState::Absent,
    };
    let mut req = ResumeRequest::with_map_arguments(
        request.method,
        &version,
        request.target,
        request.arguments,
        state,
        caller.principal(),
    );
    // The preflight found the raw request is not I-JSON: it cannot be bound.
    if let Some(violation) = http_parts(ctx).and_then(|p| p.extensions.get::<Violation>()) {
        req = req.not_i_json(violation.clone());
    }
    let verified = sealer.verify(&req).map_err(to_error_data)?;
    let caps = Caps::from_client(ctx.client_capabilities().as_ref());
    let call = Call {
        step: verified.step(),
        responses: request.responses,
        arguments: request.arguments,
        caps,
        caller: &caller,
    };
    // A refusal here returns before the token is recorded: it stays usable.
    let outcome = flow(&call)?;
    let round = verified.next_round();
    sealer.commit_async(verified).await.map_err(to_error_data)?;
    let seal = |state: &[u8]| {
        sealer
            .pause(&req, round, state)
            .map_err(|e| to_error_data(e.into()))
    };
    let reply = match outcome {
        Outcome::Done(result) => Reply::Complete(result),
        Outcome::Ask { state, requests } => Reply::InputRequired(InputRequiredResult::new(
            Some(requests),
            Some(seal(&state)?),
        )),
        Outcome::Retry { state } => {
            Reply::InputRequired(InputRequiredResult::from_request_state(seal(&state)?))
        }
        Outcome::AskStateless(requests) => {
            Reply::InputRequired(InputRequiredResult::new(Some(requests), None))
        }
    };
    tracing::debug!(
        method = %request.method,
        target = request.target,
        caller = ?caller,
        round = round.get(),
        complete = matches!(reply, Reply::Complete(_)),
        "pausable request handled"
    );
    Ok(reply)
}

/// mrtr-std's JSON-RPC error object as the SDK's error type.
pub fn to_error_data(e: JsonRpcError) -> ErrorData {
    ErrorData::new(
        ErrorCode(e.code()),
        e.message().to_owned(),
        e.data().cloned(),
    )
}
