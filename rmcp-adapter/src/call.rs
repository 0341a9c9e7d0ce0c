//! A pausable request in two steps: [`Pending`] (verified, token not yet spent) and [`Call`]
//! (committed: the handler runs, and may pause again with a typed continuation).

use std::fmt;

use mrtr_replay::{AnyReplayCache, AsyncReplayCache};
use mrtr_std::core::{ArgsDigest, Round};
use mrtr_std::engine::{Resumption, Step, Verified};
use mrtr_std::jsonrpc::{Method, RequestState, ResumeRequest, Unbindable};
use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, ErrorData, InputRequests, InputRequiredResult, InputResponses,
};
use rmcp::service::{Peer, RequestContext};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::caller::Caller;
use crate::error::ToErrorData;

/// The engine generation a request is served by.
pub(crate) type EngineRef<R> =
    std::sync::Arc<mrtr_std::engine::Generation<R, mrtr_std::clock::SystemClock>>;

/// What a request is bound to, owned (so it can be kept across the handler's awaits).
pub(crate) struct Bound {
    pub(crate) method: Method,
    pub(crate) version: String,
    pub(crate) target: String,
    pub(crate) caller: Caller,
    pub(crate) args: Result<ArgsDigest, Unbindable>,
}

impl Bound {
    /// The request to seal the next token against.
    pub(crate) fn request(&self) -> ResumeRequest<'_> {
        ResumeRequest::from_parts(
            self.method,
            &self.version,
            &self.target,
            self.caller.principal(),
            RequestState::Absent,
            self.args.clone(),
        )
    }
}

/// What a pausable request keeps of its rmcp [`RequestContext`]: the peer (to ask a
/// 2025-era client in process), the capabilities the request declared (decoded once) and its
/// era. Taken once when the request is verified; the context itself is not copied.
pub(crate) struct Origin {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) capabilities: Option<ClientCapabilities>,
    /// Made in a session opened by `initialize` (a 2025-era revision).
    pub(crate) era_2025: bool,
}

impl Origin {
    /// Reads what a request keeps from its context; `era_2025` from the protocol version
    /// the caller already read.
    pub(crate) fn new(ctx: &RequestContext<RoleServer>, era_2025: bool) -> Self {
        Self {
            peer: ctx.peer.clone(),
            capabilities: ctx.client_capabilities(),
            era_2025,
        }
    }
}

/// What a pausable request keeps from its verification to its last round, in one box that
/// [`Pending`] hands on to [`Call`]. The handler's future moves the request several times
/// (into the flow, through the commit, into rmcp's boxed tool future): a pointer moves in one
/// store where these few hundred bytes would take a `memcpy` each time, which costs more than
/// the one allocation per request (figures in CHANGELOG.md, "Measured design decisions").
pub(crate) struct Request {
    pub(crate) binding: Bound,
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) origin: Origin,
    /// The caller's quotas, if the server set any: a pause is charged before it is sealed.
    pub(crate) charge: Option<crate::caller::Charge>,
}

/// A pausable request whose `requestState` passed every check but the replay record.
///
/// Run the checks that are the request's fault and not the handler's here (a capability the
/// request did not declare, arguments that fail validation): a refusal now leaves the token
/// unspent, so the client can fix the request and retry with the same `requestState`. Then
/// [`Pending::commit`] records the token (single use) and gives the [`Call`]. Nothing the
/// client could not repeat may happen before the commit succeeds.
#[must_use = "commit the pending request to spend its token and run the handler"]
pub struct Pending<R = AnyReplayCache> {
    pub(crate) engine: EngineRef<R>,
    pub(crate) req: Box<Request>,
    pub(crate) verified: Verified,
}

impl<R: AsyncReplayCache> Pending<R> {
    /// Whether the request carried no `requestState` (a fresh call).
    pub fn is_fresh(&self) -> bool {
        self.verified.is_fresh()
    }

    /// The caller the request (and any token it pauses with) is bound to.
    pub fn caller(&self) -> &Caller {
        &self.req.binding.caller
    }

    /// The client capabilities this request declared (per request in 2026-07-28; a 2025-era
    /// session's from its `initialize`).
    pub fn capabilities(&self) -> Option<&ClientCapabilities> {
        self.req.origin.capabilities.as_ref()
    }

    /// The client this request came from (to send it requests or notifications).
    pub fn peer(&self) -> &Peer<RoleServer> {
        &self.req.origin.peer
    }

    /// Records the token as spent (the replay store is asked now: this is the await) and
    /// returns the call. A replay, or a replay store that cannot answer, is the uniform
    /// rejection.
    ///
    /// The future holds the request once: it is written as a block over `self` (an `async fn`
    /// would keep a second copy of its argument).
    #[expect(
        clippy::manual_async_fn,
        reason = "an async fn would keep a second copy of the request in its future"
    )]
    pub fn commit(self) -> impl Future<Output = Result<Call<R>, ErrorData>> {
        async move {
            let step = self
                .engine
                .commit_async(self.verified)
                .await
                .map_err(|e| e.to_error_data())?;
            Ok(Call {
                engine: self.engine,
                req: self.req,
                step,
                local: None,
            })
        }
    }
}

impl<R> fmt::Debug for Pending<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending")
            .field("method", &self.req.binding.method)
            .field("target", &self.req.binding.target)
            .field("caller", &self.req.binding.caller)
            .field("fresh", &self.verified.is_fresh())
            .finish_non_exhaustive()
    }
}

/// A committed pausable request: fresh, or resumed from a token that is now spent. The
/// handler reads its state ([`Call::state`]) and the client's answers
/// ([`Call::input_responses`]), and either completes or pauses again ([`Call::pause`],
/// [`Call::retry`]).
pub struct Call<R = AnyReplayCache> {
    pub(crate) engine: EngineRef<R>,
    pub(crate) req: Box<Request>,
    pub(crate) step: Step,
    /// Set when the rounds run in this process (a 2025-era session, see [`crate::eras`]):
    /// the state travels in memory, never sealed. Boxed, so that a 2026-07-28 call, which
    /// never has one, stays a few words to move.
    pub(crate) local: Option<Box<Local>>,
}

/// The in-process state of a call driven by [`Pending::run`] in a 2025-era session.
pub(crate) struct Local {
    /// The state the previous round paused with (`None` in the first round).
    pub(crate) state: Option<Vec<u8>>,
    /// Which handler invocation this is ([`Round::FIRST`] for the first).
    pub(crate) round: Round,
    /// The state this round pauses with, once [`Call::pause`] or [`Call::retry`] ran.
    pub(crate) paused: std::sync::Mutex<Option<Vec<u8>>>,
}

impl<R> Call<R> {
    /// Fresh, or resumed (with its continuation). For a call whose rounds run in this
    /// process ([`Pending::run`] in a 2025-era session) this is the step of the request
    /// itself: fresh; its state is in [`Call::state`].
    pub fn step(&self) -> &Step {
        &self.step
    }

    /// The resumed token's continuation and round, if resumed from a `requestState`.
    pub fn resumed(&self) -> Option<&Resumption> {
        match &self.step {
            Step::Fresh => None,
            Step::Resumed(r) => Some(r),
        }
    }

    /// Whether this round runs in this process, driven by [`Pending::run`] in a 2025-era
    /// session (the client answers each round's input requests as server-to-client requests;
    /// nothing is sealed).
    pub fn is_in_process(&self) -> bool {
        self.local.is_some()
    }

    /// The handler's continuation: sealed in a token (2026-07-28) or kept in memory.
    fn continuation(&self) -> Option<&[u8]> {
        match &self.local {
            Some(local) => local.state.as_deref(),
            None => self.resumed().map(Resumption::continuation),
        }
    }

    /// The handler's own state, sealed when it paused: `None` on a fresh call.
    ///
    /// The bytes were sealed by this server, so they decode unless the state type changed
    /// between the pause and the resume (a deploy in between): that is an internal error.
    pub fn state<T: DeserializeOwned>(&self) -> Result<Option<T>, ErrorData> {
        self.continuation()
            .map(|bytes| {
                serde_json::from_slice(bytes).map_err(|e| {
                    tracing::error!(target: "mrtr", method = %self.req.binding.method,
                        target_name = %self.req.binding.target, error = %e,
                        "a sealed continuation does not decode as the handler's state type");
                    ErrorData::internal_error("Internal error: cannot read the paused state", None)
                })
            })
            .transpose()
    }

    /// The client's answers to the previous round's input requests.
    pub fn input_responses(&self) -> Option<&InputResponses> {
        self.req.input_responses.as_ref()
    }

    /// The caller the call is bound to.
    pub fn caller(&self) -> &Caller {
        &self.req.binding.caller
    }

    /// The client capabilities this request declared.
    pub fn capabilities(&self) -> Option<&ClientCapabilities> {
        self.req.origin.capabilities.as_ref()
    }

    /// The client this request came from.
    pub fn peer(&self) -> &Peer<RoleServer> {
        &self.req.origin.peer
    }
}

impl<R> Call<R> {
    /// Pauses: seals `state` (as JSON, at most
    /// [`MAX_CONTINUATION_LEN`](mrtr_std::engine::MAX_CONTINUATION_LEN) bytes) into a
    /// `requestState` bound to this request, and returns the `input_required` result asking
    /// for `requests`.
    ///
    /// Fails at the round cap (the client gets the max-rounds rejection instead of a token
    /// that could never resume), when the arguments cannot be bound (`-32602` naming why),
    /// or on a server fault (`-32603`).
    ///
    /// In a call run in this process ([`Call::is_in_process`]) nothing is sealed: the state is
    /// kept for the next round and the result carries the input requests only, for
    /// [`Pending::run`] to ask the client. The round cap applies the same way.
    pub fn pause<T: Serialize>(
        &self,
        state: &T,
        requests: InputRequests,
    ) -> Result<InputRequiredResult, ErrorData> {
        match self.seal(state)? {
            Some(token) => Ok(InputRequiredResult::new(Some(requests), Some(token))),
            None => Ok(InputRequiredResult::new(Some(requests), None)),
        }
    }

    /// Pauses with `state` and no input request: a state-only result the client retries as
    /// it is (load shedding, long work in steps). Run in this process, the next round runs at
    /// once.
    pub fn retry<T: Serialize>(&self, state: &T) -> Result<InputRequiredResult, ErrorData> {
        match self.seal(state)? {
            Some(token) => Ok(InputRequiredResult::from_request_state(token)),
            None => Ok(InputRequiredResult::new(None, None)),
        }
    }

    /// Seals `state` into a token, or (run in this process) keeps it for the next round and
    /// returns `None`.
    fn seal<T: Serialize>(&self, state: &T) -> Result<Option<String>, ErrorData> {
        let bytes = serde_json::to_vec(state).map_err(|e| {
            tracing::error!(target: "mrtr", error = %e, "cannot encode the handler's state");
            ErrorData::internal_error("Internal error: cannot encode the paused state", None)
        })?;
        if let Some(local) = &self.local {
            keep(&self.engine, &self.req.binding, local, bytes)?;
            return Ok(None);
        }
        if let Some(charge) = &self.req.charge {
            charge.pause()?;
        }
        let req = self.req.binding.request();
        self.engine
            .pause(&req, self.step.next_round(), &bytes)
            .map(Some)
            .map_err(|e| e.to_error_data())
    }
}

impl<R> fmt::Debug for Call<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("method", &self.req.binding.method)
            .field("target", &self.req.binding.target)
            .field("caller", &self.req.binding.caller)
            .field("step", &self.step)
            .field("in_process", &self.local.is_some())
            .finish_non_exhaustive()
    }
}

/// Keeps the state an in-process round pauses with, once mrtr-std's pause checks pass (the
/// round cap, answered as a 2026-07-28 resume beyond it is, and the state's size limit).
pub(crate) fn keep<R>(
    engine: &EngineRef<R>,
    binding: &Bound,
    local: &Local,
    bytes: Vec<u8>,
) -> Result<(), ErrorData> {
    engine
        .check_local_pause(&binding.request(), local.round, bytes.len())
        .map_err(|e| e.to_error_data())?;
    if let Ok(mut slot) = local.paused.lock() {
        *slot = Some(bytes);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request's future moves its `Pending` and its `Call` several times (into the flow,
    /// through the commit, into rmcp's boxed tool future). They stay a few words, what they
    /// carry boxed once, so that no move becomes a `memcpy` of hundreds of bytes again.
    #[test]
    fn pending_and_call_stay_small_to_move() {
        let (pending, call) = (size_of::<Pending>(), size_of::<Call>());
        assert!(pending <= 128, "Pending is {pending} bytes");
        assert!(call <= 64, "Call is {call} bytes");
    }
}
