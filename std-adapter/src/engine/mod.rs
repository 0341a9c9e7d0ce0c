//! The resume/pause engine for JSON-RPC handlers: a configured [`Codec`], a random
//! generator and a replay cache, behind a JSON-shaped API. Three types, one API:
//!
//! * [`Engine`]: what a server holds. Its AEAD backend is chosen at run time ([`Backend`]) and
//!   its keys are replaced while it serves ([`Engine::reload`]); each request runs on the
//!   current generation ([`Engine::current`], a [`Generation`]).
//! * [`AnyEngine`]: one generation on its own: the backend chosen at run time, the keys fixed.
//! * [`CipherEngine`]: the same over one cipher type chosen at compile time (tests,
//!   benchmarks, a server that needs nothing else).
//!
//! A handler calls `resume` (or `resume_async` on tokio with a network replay store) with the
//! request's [`ResumeRequest`]:
//!
//! * [`Step::Fresh`]: no `requestState`, start the call;
//! * [`Step::Resumed`]: a valid token, continue from its continuation;
//! * `Err(JsonRpcError)`: answer the request with this error object.
//!
//! A handler that refuses some requests for reasons of their own (a client capability the
//! request did not declare, arguments that fail validation) splits the two halves: it runs
//! `verify` (every check but the replay record), then its own checks, then `commit` /
//! `commit_async`, so a request it refuses does not spend the token: the client can fix the
//! request and retry with the same `requestState`.
//!
//! When the handler needs input it calls `input_required` with the round
//! ([`Step::next_round`]) and its continuation, and answers with that result. A pause can
//! fail ([`PauseError`]): at the round cap (no dead token is issued), when the arguments
//! cannot be bound, or on a server fault; each maps to the JSON-RPC error to answer with.
//!
//! Each seal draws its token id and nonce from the engine's [`NonceSource`]: the OS generator
//! by default, or the fork-aware userspace generator for AES-256-GCM-SIV only (an engine that
//! would pair it with another algorithm is refused).
//!
//! Every rejection is logged as a `tracing` event (target `mrtr`) with its precise reason
//! ([`mrtr_core::Reason::as_str`]), the method and the target; tokens, keys and
//! continuations never appear in logs or `Debug` output.

use std::fmt;

use mrtr_core::cipher::Cipher;
use mrtr_core::replay::{NoReplayCache, ReplayCache, ReplayError};
use mrtr_core::{Clock, Codec, Reason, Round, SealError};
use mrtr_core::{TokenBuf, token_len_for};
use serde_json::Value;

use crate::clock::SystemClock;
use crate::jsonrpc::{JsonRpcError, Method, ResumeRequest, input_required_result};
use crate::rng::OsRng;
use crate::rng_fast::FastRng;
use mrtr_replay::AsyncReplayCache;

mod any;
mod backend;
mod config;
mod ledger;
mod nonce;
mod reloadable;
mod step;

pub use any::AnyEngine;
pub use backend::{Backend, UnknownBackend};
pub use config::{Audience, EngineConfig, EngineConfigError};
pub use nonce::{NonceSource, UnknownNonceSource};
pub use reloadable::{Engine, Generation, ReloadWarning, Reloaded, SharedStore};
pub use step::{PauseError, Resumption, Step, Verified};
use step::{Record, WipedBytes, WipedText};

/// Longest continuation a handler may seal, in bytes.
pub const MAX_CONTINUATION_LEN: usize = 8 * 1024;

/// Longest `requestState` accepted (and produced): a token holding a
/// [`MAX_CONTINUATION_LEN`]-byte continuation. Longer ones are refused before decoding.
pub const MAX_TOKEN_LEN: usize = token_len_for(MAX_CONTINUATION_LEN);

/// Token buffers come in three sizes: on the stack for tokens of continuations up to 256 and
/// 1 024 bytes, boxed for the largest. Each request zeroes its buffer when it is made and wipes
/// it when it is dropped, so the buffer is only as large as the token needs.
const SMALL: usize = token_len_for(256);
const MEDIUM: usize = token_len_for(1024);

/// Runs `$body` with `$buf` bound to a `&mut TokenBuf` that holds `$len` bytes of token text.
macro_rules! with_token_buf {
    ($len:expr, $buf:ident => $body:expr) => {{
        let len: usize = $len;
        if len <= SMALL {
            let mut b = TokenBuf::<SMALL>::new();
            let $buf = &mut b;
            $body
        } else if len <= MEDIUM {
            let mut b = TokenBuf::<MEDIUM>::new();
            let $buf = &mut b;
            $body
        } else {
            let mut b: Box<TokenBuf<MAX_TOKEN_LEN>> = Box::new(TokenBuf::new());
            let $buf = &mut *b;
            $body
        }
    }};
}

/// A configured [`Codec`] plus a replay cache `R` and its [`NonceSource`] (the OS random
/// generator unless [`CipherEngine::with_nonce_source`] chose otherwise).
///
/// `R` is a synchronous [`ReplayCache`] for [`CipherEngine::resume`] (e.g.
/// [`MemoryReplayCache`](mrtr_replay::MemoryReplayCache)), an [`AsyncReplayCache`] for
/// [`CipherEngine::resume_async`] (e.g. the Redis cache), or [`NoReplayCache`]: tokens are then
/// multi-use within their TTL. The `Codec` keeps its own TTL, round cap and error detail.
pub struct CipherEngine<C, R = NoReplayCache, Clk = SystemClock, const K: usize = 4> {
    mrtr: Codec<C, Clk, NoReplayCache, K>,
    replay: R,
    /// The `backend` label of the seal metrics.
    backend: &'static str,
    /// The metric handles of every request (registered when the engine is built).
    metrics: crate::obs::EngineMetrics,
    nonce_source: NonceSource,
}

impl<C: Cipher, R, Clk: Clock, const K: usize> CipherEngine<C, R, Clk, K> {
    /// Wraps a configured `Codec` (built without a replay cache) and the replay cache to use.
    pub fn new(mrtr: Codec<C, Clk, NoReplayCache, K>, replay: R) -> Self {
        let backend = crate::obs::algorithm_label(C::ALGORITHM);
        let metrics = crate::obs::EngineMetrics::new(backend, mrtr.keys().current().id().as_str());
        let engine = Self {
            mrtr,
            replay,
            backend,
            metrics,
            nonce_source: NonceSource::Os,
        };
        engine.publish_keys();
        engine
    }

    /// Draws token ids and nonces from `source` instead of the OS generator.
    ///
    /// Refused ([`EngineConfigError::NonceSourceUnsafe`]) unless `source` may be used with
    /// this engine's algorithm ([`NonceSource::allows`]): [`NonceSource::Fast`] only with
    /// AES-256-GCM-SIV.
    ///
    /// ```
    /// # #[cfg(feature = "aes-gcm")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use mrtr_std::core::Codec;
    /// use mrtr_std::engine::{CipherEngine, EngineConfigError, NonceSource};
    /// use mrtr_std::keys::KeyConfig;
    /// use mrtr_aes_gcm::Aes256Gcm;
    /// use mrtr_std::clock::SystemClock;
    ///
    /// let keys = KeyConfig::ephemeral()?;
    /// let mrtr = Codec::builder(keys.into_ring::<Aes256Gcm, 4>()?, SystemClock)
    ///     .audience("booking-server")
    ///     .build()?;
    /// let refused = CipherEngine::new(mrtr, ()).with_nonce_source(NonceSource::Fast).unwrap_err();
    /// assert!(matches!(refused, EngineConfigError::NonceSourceUnsafe { .. }));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "aes-gcm"))] fn main() {}
    /// ```
    pub fn with_nonce_source(mut self, source: NonceSource) -> Result<Self, EngineConfigError> {
        if !source.allows(C::ALGORITHM) {
            return Err(EngineConfigError::NonceSourceUnsafe {
                nonce_source: source,
                algorithm: C::ALGORITHM,
            });
        }
        self.nonce_source = source;
        Ok(self)
    }

    /// Where token ids and nonces come from.
    pub fn nonce_source(&self) -> NonceSource {
        self.nonce_source
    }

    /// Names the backend in the seal metrics (an [`AnyEngine`] names its provider).
    #[cfg_attr(
        not(any(
            feature = "aes-gcm",
            feature = "chacha20poly1305",
            feature = "aes-gcm-siv",
            feature = "aws-lc"
        )),
        allow(dead_code)
    )]
    pub(crate) fn with_backend_label(mut self, backend: &'static str) -> Self {
        self.backend = backend;
        self.metrics =
            crate::obs::EngineMetrics::new(backend, self.mrtr.keys().current().id().as_str());
        self
    }

    /// Seals each key may still perform, and which one seals, for the key metrics.
    fn publish_keys(&self) {
        let ring = self.mrtr.keys();
        let current = ring.current().id();
        for key in ring.iter() {
            let left = ring.seal_limit().saturating_sub(key.seals_used());
            crate::obs::key_loaded(key.id().as_str(), left, key.id() == current);
        }
    }

    /// The token engine.
    pub fn mrtr(&self) -> &Codec<C, Clk, NoReplayCache, K> {
        &self.mrtr
    }

    /// The replay cache.
    pub fn replay_cache(&self) -> &R {
        &self.replay
    }

    /// A pause kept in this process (a 2025-era session asks its questions as server-to-client
    /// requests and seals nothing) passes the checks a sealed [`CipherEngine::pause`] makes: round
    /// `round` is below the round cap, and `state_len` bytes of state fit in
    /// [`MAX_CONTINUATION_LEN`]. A refusal is logged and counted as a sealed pause's is, so
    /// both eras refuse alike.
    pub fn check_local_pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        state_len: usize,
    ) -> Result<(), PauseError> {
        let method = req.method().as_str();
        if round.get() >= self.mrtr.max_rounds() {
            tracing::info!(target: "mrtr", method, target_name = req.target(), round = round.get(),
                "cannot pause: the in-process flow is at its round cap");
            crate::obs::pause_refused(method, "round_cap");
            return Err(PauseError::RoundCap(
                self.mrtr.reject(Reason::RoundsExceeded),
            ));
        }
        if state_len > MAX_CONTINUATION_LEN {
            tracing::error!(target: "mrtr", method, target_name = req.target(), state_len,
                "cannot pause: the state is larger than MAX_CONTINUATION_LEN");
            crate::obs::pause_refused(method, crate::obs::seal_error_cause(&SealError::TooLarge));
            return Err(PauseError::Seal(SealError::TooLarge));
        }
        Ok(())
    }

    /// Seals a paused call's `continuation` and returns the `requestState` text.
    ///
    /// `round` is [`Step::next_round`] of the request being handled. Fails
    /// ([`PauseError`]) at the round cap, when the arguments cannot be bound, or on a
    /// server-side fault: a continuation over [`MAX_CONTINUATION_LEN`], a request that
    /// cannot be bound (over-long target, version or principal), randomness or key
    /// exhaustion.
    pub fn pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
    ) -> Result<String, PauseError> {
        let method = req.method().as_str();
        let args = match req.args_digest() {
            Ok(args) => args,
            Err(e) => {
                tracing::info!(target: "mrtr", method = %req.method(), target_name = req.target(),
                    error = %e, "cannot pause: arguments cannot be bound");
                crate::obs::pause_refused(method, "unbindable");
                return Err(PauseError::Unbindable(e.clone()));
            }
        };
        let sealed = req
            .binding()
            .map_err(|e| SealError::from(*e))
            .and_then(|binding| {
                if continuation.len() > MAX_CONTINUATION_LEN {
                    return Err(SealError::TooLarge);
                }
                with_token_buf!(token_len_for(continuation.len()), out => {
                    let sealed = match self.nonce_source {
                        NonceSource::Os => {
                            self.mrtr.pause(round, binding, args, continuation, &mut OsRng, out)?
                        }
                        NonceSource::Fast => self
                            .mrtr
                            .pause(round, binding, args, continuation, &mut FastRng, out)?,
                    };
                    Ok(sealed.as_str().to_owned())
                })
            });
        match sealed {
            Ok(token) => {
                tracing::trace!(target: "mrtr", method = %req.method(), target_name = req.target(),
                    round = round.get(), len = token.len(), "requestState sealed");
                let ring = self.mrtr.keys();
                let key = ring.current();
                let left = ring.seal_limit().saturating_sub(key.seals_used());
                self.metrics.sealed(self.backend, key.id().as_str(), left);
                Ok(token)
            }
            Err(SealError::RoundsExhausted) => {
                tracing::info!(target: "mrtr", method = %req.method(), target_name = req.target(),
                    round = round.get(), "cannot pause: the resume chain is at its round cap");
                crate::obs::pause_refused(method, "round_cap");
                Err(PauseError::RoundCap(
                    self.mrtr.reject(Reason::RoundsExceeded),
                ))
            }
            Err(e) => {
                tracing::error!(target: "mrtr", method = %req.method(), error = %e, "cannot seal requestState");
                crate::obs::pause_refused(method, crate::obs::seal_error_cause(&e));
                Err(PauseError::Seal(e))
            }
        }
    }

    /// [`CipherEngine::pause`], wrapped in the `input_required` result with `input_requests` (the
    /// `inputRequests` map; `None` for a state-only result).
    pub fn input_required(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
        input_requests: Option<Value>,
    ) -> Result<Value, PauseError> {
        let token = WipedText::new(self.pause(req, round, continuation)?);
        Ok(input_required_result(&token, input_requests))
    }

    /// The JSON-RPC error rejecting a `requestState` for `reason`, in this engine's
    /// error-detail mode (for checks the caller runs itself). Not logged: the caller logs.
    ///
    /// ```
    /// # #[cfg(all(feature = "aes-gcm", feature = "chacha20poly1305"))]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use mrtr_std::core::{Codec, Reason};
    /// use mrtr_std::engine::CipherEngine;
    /// use mrtr_std::keys::KeyConfig;
    /// use mrtr_aes_gcm::Aes256Gcm;
    /// use mrtr_std::clock::SystemClock;
    ///
    /// let keys = KeyConfig::ephemeral()?;
    /// let mrtr = Codec::builder(keys.into_ring::<Aes256Gcm, 4>()?, SystemClock)
    ///     .audience("booking-server")
    ///     .build()?;
    /// let engine = CipherEngine::new(mrtr, ());
    /// let error = engine.reject(Reason::Malformed);
    /// assert_eq!(error.code(), -32602);
    /// assert_eq!(error.data().unwrap()["reason"], "invalid_request_state"); // uniform mode
    /// assert_eq!(error.rejection().unwrap().reason(), Reason::Malformed);
    /// # Ok(()) }
    /// # #[cfg(not(all(feature = "aes-gcm", feature = "chacha20poly1305")))] fn main() {}
    /// ```
    pub fn reject(&self, reason: Reason) -> JsonRpcError {
        JsonRpcError::from_rejection(self.mrtr.reject(reason))
    }

    /// [`jsonrpc::precheck`](crate::jsonrpc::precheck) in this engine's error-detail mode:
    /// the rejection for a raw JSON-RPC message whose `requestState` on a pausable method is
    /// not a string, to answer before an SDK that types it as a string parses the message.
    pub fn precheck(&self, message: &Value) -> Option<JsonRpcError> {
        crate::jsonrpc::precheck(message, self.mrtr.error_detail())
    }

    /// Logs and wraps a rejection of a request for `method` on `target`.
    fn rejected(&self, method: Method, target: &str, reason: Reason) -> JsonRpcError {
        crate::obs::rejected(method.as_str(), reason);
        match reason {
            Reason::ReplayStoreFull | Reason::ReplayStoreUnavailable => tracing::warn!(
                target: "mrtr",
                reason = reason.as_str(),
                method = %method,
                target_name = target,
                "requestState refused: replay store cannot record it (fail closed)"
            ),
            _ => tracing::info!(
                target: "mrtr",
                reason = reason.as_str(),
                method = %method,
                target_name = target,
                "requestState rejected"
            ),
        }
        JsonRpcError::from_rejection(self.mrtr.reject(reason))
    }

    /// Every check of the request's `requestState` but the replay record: a request with
    /// no `requestState` verifies as fresh; a `requestState` that is not a string, does not
    /// open for this request, or comes with arguments that cannot be bound is rejected. Then
    /// [`CipherEngine::commit`] / [`CipherEngine::commit_async`] record it.
    pub fn verify(&self, req: &ResumeRequest<'_>) -> Result<Verified, JsonRpcError> {
        let reject = |reason| self.rejected(req.method(), req.target(), reason);
        let Some(token) = req.request_state().token().map_err(reject)? else {
            self.metrics.passed(req.method(), false);
            return Ok(Verified {
                step: Step::Fresh,
                record: None,
            });
        };
        let args = req
            .args_digest()
            .map_err(|_| reject(Reason::ArgumentsUnbindable))?;
        let binding = req.binding().map_err(|_| reject(Reason::InvalidBinding))?;
        let (resumption, id) = with_token_buf!(token.len(), buf => {
            let resumed = self
                .mrtr
                .verify(token, binding, args, buf)
                .map_err(|r| reject(r.reason()))?;
            let resumption = Resumption {
                continuation: WipedBytes::new(resumed.continuation().to_vec()),
                round: resumed.round(),
                next_round: resumed.next_round(),
                expires_at_ms: resumed.expires_at_ms(),
            };
            (resumption, resumed.token_id())
            // `buf` (holding the opened state) is wiped on drop here.
        });
        tracing::trace!(target: "mrtr", method = %req.method(), target_name = req.target(),
            round = resumption.round, "requestState verified");
        Ok(Verified {
            record: Some(Record {
                id,
                expires_at_ms: resumption.expires_at_ms,
                method: req.method(),
                target: req.target().into(),
            }),
            step: Step::Resumed(resumption),
        })
    }

    /// The replay step, shared by [`CipherEngine::commit`] and [`CipherEngine::commit_async`]: the
    /// store's answer for a verified token becomes its step, or the rejection.
    fn recorded(
        &self,
        step: Step,
        r: &Record,
        answer: Result<(), ReplayError>,
    ) -> Result<Step, JsonRpcError> {
        match answer {
            Ok(()) => {
                tracing::trace!(target: "mrtr", method = %r.method, target_name = &*r.target,
                    "requestState recorded as spent");
                self.metrics.passed(r.method, true);
                Ok(step)
            }
            Err(e) => {
                Err(self.rejected(r.method, &r.target, self.mrtr.replay_rejection(e).reason()))
            }
        }
    }
}

impl<C: Cipher, R: ReplayCache, Clk: Clock, const K: usize> CipherEngine<C, R, Clk, K> {
    /// Checks the request's `requestState`: every resume check of [`Codec::resume`], the
    /// replay cache last ([`CipherEngine::verify`] then [`CipherEngine::commit`]).
    pub fn resume(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        self.commit(self.verify(req)?)
    }

    /// Records a verified token in the replay cache (single use) and returns the step.
    pub fn commit(&self, v: Verified) -> Result<Step, JsonRpcError> {
        let Some(r) = v.record else {
            return Ok(v.step);
        };
        let now = self.mrtr.clock().now_ms();
        let answer = self.replay.check_and_record(&r.id, r.expires_at_ms, now);
        self.recorded(v.step, &r, answer)
    }
}

impl<C: Cipher, R: AsyncReplayCache, Clk: Clock, const K: usize> CipherEngine<C, R, Clk, K> {
    /// [`CipherEngine::resume`] with an asynchronous replay cache: verifies (CPU only, no I/O),
    /// then awaits the cache's check-and-record. Never blocks the runtime.
    pub async fn resume_async(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        self.commit_async(self.verify(req)?).await
    }

    /// [`CipherEngine::commit`] with an asynchronous replay cache.
    pub async fn commit_async(&self, v: Verified) -> Result<Step, JsonRpcError> {
        let Some(r) = v.record else {
            return Ok(v.step);
        };
        let now = self.mrtr.clock().now_ms();
        let answer = self
            .replay
            .check_and_record(&r.id, r.expires_at_ms, now)
            .await;
        self.recorded(v.step, &r, answer)
    }
}

impl<C, R: fmt::Debug, Clk, const K: usize> fmt::Debug for CipherEngine<C, R, Clk, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CipherEngine")
            .field("mrtr", &self.mrtr)
            .field("replay", &self.replay)
            .field("nonce_source", &self.nonce_source)
            .finish()
    }
}
