//! The resume/pause engine for JSON-RPC handlers: a configured [`Mrtr`], the OS random
//! generator and a replay cache, behind a JSON-shaped API.
//!
//! A handler calls [`Engine::resume`] (or [`Engine::resume_async`] on tokio with a network
//! replay store) with the request's [`ResumeRequest`]:
//!
//! * [`Step::Fresh`]: no `requestState`, start the call;
//! * [`Step::Resumed`]: a valid token, continue from its continuation;
//! * `Err(JsonRpcError)`: answer the request with this error object.
//!
//! When the handler needs input it calls [`Engine::input_required`] with the round
//! ([`Step::next_round`]) and its continuation, and answers with that result.
//!
//! Every rejection is logged as a `tracing` event (target `mrtr`) with its precise reason
//! ([`mrtr_core::Reason::as_str`]), the method and the target; tokens, keys and
//! continuations never appear in logs or `Debug` output.

use std::fmt;

use mrtr_core::cipher::Cipher;
use mrtr_core::replay::{NoReplayCache, ReplayCache};
use mrtr_core::token::{TokenBuf, token_len_for};
use mrtr_core::{Clock, Mrtr, Reason, Rejection, Round, SealError};
use serde_json::Value;
use zeroize::Zeroizing;

use crate::clock::SystemClock;
use crate::jsonrpc::{JsonRpcError, RequestState, ResumeRequest, input_required_result};
use crate::replay::AsyncReplayCache;
use crate::rng::OsRng;

/// Longest continuation a handler may seal, in bytes.
pub const MAX_CONTINUATION_LEN: usize = 8 * 1024;

/// Longest `requestState` accepted (and produced): a token holding a
/// [`MAX_CONTINUATION_LEN`]-byte continuation. Longer ones are refused before decoding.
pub const MAX_TOKEN_LEN: usize = token_len_for(MAX_CONTINUATION_LEN);

type Buf = TokenBuf<MAX_TOKEN_LEN>;

/// What a request is, once its `requestState` is checked.
#[derive(Debug)]
pub enum Step {
    /// No `requestState`: a fresh call.
    Fresh,
    /// A valid token: resume from its continuation.
    Resumed(Resumption),
}

impl Step {
    /// The round to seal in if the handler pauses now.
    pub fn next_round(&self) -> Round {
        match self {
            Self::Fresh => Round::FIRST,
            Self::Resumed(r) => r.next_round,
        }
    }
}

/// A token that passed every check, replay cache included: its continuation and round.
/// The continuation is wiped on drop and never shown by `Debug`.
pub struct Resumption {
    continuation: Zeroizing<Vec<u8>>,
    round: u32,
    next_round: Round,
    expires_at_ms: u64,
}

impl Resumption {
    /// The handler's continuation bytes, as given when pausing.
    pub fn continuation(&self) -> &[u8] {
        &self.continuation
    }

    /// The round the token was sealed in (this resume is handler invocation `round + 1`).
    pub fn round(&self) -> u32 {
        self.round
    }

    /// The round to seal in if this call pauses again.
    pub fn next_round(&self) -> Round {
        self.next_round
    }

    /// When the token expires, ms since the Unix epoch.
    pub fn expires_at_ms(&self) -> u64 {
        self.expires_at_ms
    }
}

impl fmt::Debug for Resumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resumption")
            .field("round", &self.round)
            .field("continuation", &"<redacted>")
            .field("expires_at_ms", &self.expires_at_ms)
            .finish()
    }
}

/// A token that passed every check but the replay cache.
struct Verified {
    resumption: Resumption,
    token_id: mrtr_core::TokenId,
}

/// A configured [`Mrtr`] plus a replay cache `R` and the OS random generator.
///
/// `R` is a synchronous [`ReplayCache`] for [`Engine::resume`] (e.g.
/// [`MemoryReplayCache`](crate::replay_mem::MemoryReplayCache)), an [`AsyncReplayCache`] for
/// [`Engine::resume_async`] (e.g. the Redis cache), or [`NoReplayCache`]: tokens are then
/// multi-use within their TTL. The `Mrtr` keeps its own TTL, round cap and error detail.
pub struct Engine<C, R = NoReplayCache, Clk = SystemClock, const K: usize = 4> {
    mrtr: Mrtr<C, Clk, NoReplayCache, K>,
    replay: R,
}

impl<C: Cipher, R, Clk: Clock, const K: usize> Engine<C, R, Clk, K> {
    /// Wraps a configured `Mrtr` (built without a replay cache) and the replay cache to use.
    pub fn new(mrtr: Mrtr<C, Clk, NoReplayCache, K>, replay: R) -> Self {
        Self { mrtr, replay }
    }

    /// The token engine.
    pub fn mrtr(&self) -> &Mrtr<C, Clk, NoReplayCache, K> {
        &self.mrtr
    }

    /// The replay cache.
    pub fn replay_cache(&self) -> &R {
        &self.replay
    }

    /// Seals a paused call's `continuation` and returns the `requestState` text.
    ///
    /// `round` is [`Step::next_round`] of the request being handled. Fails on a server-side
    /// fault: a continuation over [`MAX_CONTINUATION_LEN`], a request that cannot be bound
    /// (over-long target, version or principal), randomness or key exhaustion.
    pub fn pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
    ) -> Result<String, SealError> {
        let binding = req.binding()?;
        if continuation.len() > MAX_CONTINUATION_LEN {
            return Err(SealError::TooLarge);
        }
        let mut out: Box<Buf> = Box::new(TokenBuf::new());
        let sealed = self.mrtr.pause(
            round,
            &binding,
            req.args_digest(),
            continuation,
            &mut OsRng,
            &mut out,
        );
        match sealed {
            Ok(sealed) => Ok(sealed.as_str().to_owned()),
            Err(e) => {
                tracing::error!(target: "mrtr", method = %req.method(), error = %e, "cannot seal requestState");
                Err(e)
            }
        }
    }

    /// [`Engine::pause`], wrapped in the `input_required` result with `input_requests` (the
    /// `inputRequests` map; `None` for a state-only result).
    pub fn input_required(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
        input_requests: Option<Value>,
    ) -> Result<Value, SealError> {
        let token = Zeroizing::new(self.pause(req, round, continuation)?);
        Ok(input_required_result(&token, input_requests))
    }

    /// Logs and wraps a rejection.
    fn rejected(&self, req: &ResumeRequest<'_>, rejection: Rejection) -> JsonRpcError {
        let reason = rejection.reason();
        match reason {
            Reason::ReplayStoreFull | Reason::ReplayStoreUnavailable => tracing::warn!(
                target: "mrtr",
                reason = reason.as_str(),
                method = %req.method(),
                target_name = req.target(),
                "requestState refused: replay store cannot record it (fail closed)"
            ),
            _ => tracing::info!(
                target: "mrtr",
                reason = reason.as_str(),
                method = %req.method(),
                target_name = req.target(),
                "requestState rejected"
            ),
        }
        JsonRpcError::from_rejection(rejection)
    }

    /// Every check but the replay cache.
    fn verify(&self, req: &ResumeRequest<'_>) -> Result<Option<Verified>, JsonRpcError> {
        let token = match req.request_state() {
            RequestState::Absent => return Ok(None),
            RequestState::Token(t) => t,
            RequestState::NotAString => {
                return Err(self.rejected(req, self.mrtr.reject(Reason::Malformed)));
            }
        };
        let binding = req
            .binding()
            .map_err(|_| self.rejected(req, self.mrtr.reject(Reason::InvalidBinding)))?;
        let mut buf: Box<Buf> = Box::new(TokenBuf::new());
        let resumed = self
            .mrtr
            .verify(token, &binding, req.args_digest(), &mut buf)
            .map_err(|r| self.rejected(req, r))?;
        Ok(Some(Verified {
            token_id: resumed.token_id(),
            resumption: Resumption {
                continuation: Zeroizing::new(resumed.continuation().to_vec()),
                round: resumed.round(),
                next_round: resumed.next_round(),
                expires_at_ms: resumed.expires_at_ms(),
            },
        }))
        // `buf` (holding the opened state) is wiped on drop here.
    }
}

impl<C: Cipher, R: ReplayCache, Clk: Clock, const K: usize> Engine<C, R, Clk, K> {
    /// Checks the request's `requestState`: every resume check of [`Mrtr::resume`], the
    /// replay cache last. A `requestState` that is not a string is rejected as malformed.
    pub fn resume(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        let Some(v) = self.verify(req)? else {
            return Ok(Step::Fresh);
        };
        let now = self.mrtr.clock().now_ms();
        match self
            .replay
            .check_and_record(&v.token_id, v.resumption.expires_at_ms, now)
        {
            Ok(()) => Ok(Step::Resumed(v.resumption)),
            Err(e) => Err(self.rejected(req, self.mrtr.replay_rejection(e))),
        }
    }
}

impl<C: Cipher, R: AsyncReplayCache, Clk: Clock, const K: usize> Engine<C, R, Clk, K> {
    /// [`Engine::resume`] with an asynchronous replay cache: verifies (CPU only, no I/O),
    /// then awaits the cache's check-and-record. Never blocks the runtime.
    pub async fn resume_async(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        let Some(v) = self.verify(req)? else {
            return Ok(Step::Fresh);
        };
        let now = self.mrtr.clock().now_ms();
        match self
            .replay
            .check_and_record(&v.token_id, v.resumption.expires_at_ms, now)
            .await
        {
            Ok(()) => Ok(Step::Resumed(v.resumption)),
            Err(e) => Err(self.rejected(req, self.mrtr.replay_rejection(e))),
        }
    }
}

impl<C, R: fmt::Debug, Clk, const K: usize> fmt::Debug for Engine<C, R, Clk, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("mrtr", &self.mrtr)
            .field("replay", &self.replay)
            .finish()
    }
}
