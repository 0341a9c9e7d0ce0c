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
//! A handler that refuses some requests for reasons of their own (a client capability the
//! request did not declare, arguments that fail validation) splits the two halves: it runs
//! [`Engine::verify`] (every check but the replay record), then its own checks, then
//! [`Engine::commit`] / [`Engine::commit_async`], so a request it refuses does not spend the
//! token: the client can fix the request and retry with the same `requestState`.
//!
//! When the handler needs input it calls [`Engine::input_required`] with the round
//! ([`Step::next_round`]) and its continuation, and answers with that result. A pause can
//! fail ([`PauseError`]): at the round cap (no dead token is issued), when the arguments
//! cannot be bound, or on a server fault; each maps to the JSON-RPC error to answer with.
//!
//! [`AnyEngine`] is the same engine with the AEAD chosen at run time.
//!
//! Every rejection is logged as a `tracing` event (target `mrtr`) with its precise reason
//! ([`mrtr_core::Reason::as_str`]), the method and the target; tokens, keys and
//! continuations never appear in logs or `Debug` output.

use std::fmt;

use mrtr_core::cipher::{Algorithm, Cipher};
use mrtr_core::replay::{NoReplayCache, ReplayCache};
use mrtr_core::token::{TokenBuf, token_len_for};
use mrtr_core::{
    Clock, ConfigError, DEFAULT_MAX_ROUNDS, DEFAULT_TTL_MS, ErrorDetail, Mrtr, Reason, Rejection,
    Round, SealError,
};
use serde_json::Value;
use zeroize::Zeroizing;

use crate::clock::SystemClock;
use crate::jsonrpc::{JsonRpcError, RequestState, ResumeRequest, input_required_result};
use crate::keys::{KeyConfig, KeyConfigError};
use crate::replay::{AnyReplayCache, AsyncReplayCache};
use crate::rng::OsRng;
use crate::{Aes256Gcm, ChaCha20Poly1305, XChaCha20Poly1305};

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

/// A request whose `requestState` passed every check but the replay record
/// ([`Engine::verify`]). Commit it ([`Engine::commit`], [`Engine::commit_async`]) to get the
/// [`Step`]; dropping it leaves the token unspent.
///
/// Its [`Verified::step`] is readable before the commit, for work that has no effects (a
/// handler computing its answer, to be discarded if the commit refuses). Nothing the client
/// could not repeat may happen before the commit succeeds: two replays of one token can both
/// verify, and only one commits.
#[derive(Debug)]
#[must_use = "commit the verified request to record the token and get the step"]
pub struct Verified {
    step: Step,
    /// The token id and expiry to record (`None` for a fresh request).
    record: Option<(mrtr_core::TokenId, u64)>,
}

impl Verified {
    /// Whether the request carried no `requestState` (nothing to record).
    pub fn is_fresh(&self) -> bool {
        self.record.is_none()
    }

    /// The step this request will be once committed. Read it for effect-free work only.
    pub fn step(&self) -> &Step {
        &self.step
    }

    /// The round to seal in if the handler pauses after committing.
    pub fn next_round(&self) -> Round {
        self.step.next_round()
    }
}

/// Why [`Engine::pause`] produced no token. Each maps to the JSON-RPC error the request
/// should be answered with (`JsonRpcError::from`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PauseError {
    /// The chain is at its round cap: a token sealed now could never resume. Answered as
    /// a resume beyond the cap (the rejection with reason `rounds_exceeded`).
    RoundCap(Rejection),
    /// The request's arguments cannot be bound (`-32602` naming the problem).
    Unbindable(crate::jsonrpc::Unbindable),
    /// A server-side fault: randomness, key exhaustion, an over-long continuation or an
    /// unbindable target (`-32603`; the detail goes to the log only).
    Seal(SealError),
}

impl fmt::Display for PauseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RoundCap(_) => f.write_str("the resume chain is at its round cap"),
            Self::Unbindable(e) => fmt::Display::fmt(e, f),
            Self::Seal(e) => write!(f, "cannot seal requestState: {e}"),
        }
    }
}

impl std::error::Error for PauseError {}

impl From<PauseError> for JsonRpcError {
    fn from(e: PauseError) -> Self {
        match e {
            PauseError::RoundCap(rejection) => JsonRpcError::from_rejection(rejection),
            PauseError::Unbindable(u) => JsonRpcError::from(&u),
            PauseError::Seal(_) => {
                JsonRpcError::internal("Internal error: cannot seal requestState")
            }
        }
    }
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
        let args = match req.args_digest() {
            Ok(args) => args,
            Err(e) => {
                tracing::info!(target: "mrtr", method = %req.method(), target_name = req.target(),
                    error = %e, "cannot pause: arguments cannot be bound");
                return Err(PauseError::Unbindable(e.clone()));
            }
        };
        let sealed = req.binding().map_err(SealError::from).and_then(|binding| {
            if continuation.len() > MAX_CONTINUATION_LEN {
                return Err(SealError::TooLarge);
            }
            let mut out: Box<Buf> = Box::new(TokenBuf::new());
            let sealed =
                self.mrtr
                    .pause(round, &binding, args, continuation, &mut OsRng, &mut out)?;
            Ok(sealed.as_str().to_owned())
        });
        match sealed {
            Ok(token) => {
                tracing::trace!(target: "mrtr", method = %req.method(), target_name = req.target(),
                    round = round.get(), len = token.len(), "requestState sealed");
                Ok(token)
            }
            Err(SealError::RoundsExhausted) => {
                tracing::info!(target: "mrtr", method = %req.method(), target_name = req.target(),
                    round = round.get(), "cannot pause: the resume chain is at its round cap");
                Err(PauseError::RoundCap(
                    self.mrtr.reject(Reason::RoundsExceeded),
                ))
            }
            Err(e) => {
                tracing::error!(target: "mrtr", method = %req.method(), error = %e, "cannot seal requestState");
                Err(PauseError::Seal(e))
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
    ) -> Result<Value, PauseError> {
        let token = Zeroizing::new(self.pause(req, round, continuation)?);
        Ok(input_required_result(&token, input_requests))
    }

    /// The JSON-RPC error rejecting a `requestState` for `reason`, in this engine's
    /// error-detail mode (for checks the caller runs itself). Not logged: the caller logs.
    ///
    /// ```
    /// use mrtr_std::core::{Mrtr, Reason};
    /// use mrtr_std::engine::Engine;
    /// use mrtr_std::keys::KeyConfig;
    /// use mrtr_std::{Aes256Gcm, SystemClock};
    ///
    /// let keys = KeyConfig::ephemeral()?;
    /// let mrtr = Mrtr::builder(keys.into_ring::<Aes256Gcm, 4>()?, SystemClock)
    ///     .without_audience()
    ///     .build()?;
    /// let engine = Engine::new(mrtr, ());
    /// let error = engine.reject(Reason::Malformed);
    /// assert_eq!(error.code(), -32602);
    /// assert_eq!(error.data().unwrap()["reason"], "invalid_request_state"); // uniform mode
    /// assert_eq!(error.rejection().unwrap().reason(), Reason::Malformed);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
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

    /// Every check of the request's `requestState` but the replay record: a request with
    /// no `requestState` verifies as fresh; a `requestState` that is not a string, does not
    /// open for this request, or comes with arguments that cannot be bound is rejected. Then
    /// [`Engine::commit`] / [`Engine::commit_async`] record it.
    pub fn verify(&self, req: &ResumeRequest<'_>) -> Result<Verified, JsonRpcError> {
        let token = match req.request_state() {
            RequestState::Absent => {
                return Ok(Verified {
                    step: Step::Fresh,
                    record: None,
                });
            }
            RequestState::Token(t) => t,
            RequestState::NotAString => {
                return Err(self.rejected(req, self.mrtr.reject(Reason::Malformed)));
            }
        };
        let args = req
            .args_digest()
            .map_err(|_| self.rejected(req, self.mrtr.reject(Reason::ArgumentsUnbindable)))?;
        let binding = req
            .binding()
            .map_err(|_| self.rejected(req, self.mrtr.reject(Reason::InvalidBinding)))?;
        let mut buf: Box<Buf> = Box::new(TokenBuf::new());
        let resumed = self
            .mrtr
            .verify(token, &binding, args, &mut buf)
            .map_err(|r| self.rejected(req, r))?;
        let resumption = Resumption {
            continuation: Zeroizing::new(resumed.continuation().to_vec()),
            round: resumed.round(),
            next_round: resumed.next_round(),
            expires_at_ms: resumed.expires_at_ms(),
        };
        tracing::trace!(target: "mrtr", method = %req.method(), target_name = req.target(),
            round = resumption.round, "requestState verified");
        Ok(Verified {
            record: Some((resumed.token_id(), resumption.expires_at_ms)),
            step: Step::Resumed(resumption),
        })
        // `buf` (holding the opened state) is wiped on drop here.
    }

    /// Maps the replay store's answer for a verified request to its step.
    fn recorded(
        &self,
        req: &ResumeRequest<'_>,
        step: Step,
        answer: Result<(), mrtr_core::replay::ReplayError>,
    ) -> Result<Step, JsonRpcError> {
        match answer {
            Ok(()) => {
                tracing::trace!(target: "mrtr", method = %req.method(), target_name = req.target(),
                    "requestState recorded as spent");
                Ok(step)
            }
            Err(e) => Err(self.rejected(req, self.mrtr.replay_rejection(e))),
        }
    }
}

impl<C: Cipher, R: ReplayCache, Clk: Clock, const K: usize> Engine<C, R, Clk, K> {
    /// Checks the request's `requestState`: every resume check of [`Mrtr::resume`], the
    /// replay cache last ([`Engine::verify`] then [`Engine::commit`]).
    pub fn resume(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        let verified = self.verify(req)?;
        self.commit(req, verified)
    }

    /// Records a verified token in the replay cache (single use) and returns the step.
    pub fn commit(&self, req: &ResumeRequest<'_>, v: Verified) -> Result<Step, JsonRpcError> {
        let Some((id, expires_at_ms)) = v.record else {
            return Ok(v.step);
        };
        let now = self.mrtr.clock().now_ms();
        let answer = self.replay.check_and_record(&id, expires_at_ms, now);
        self.recorded(req, v.step, answer)
    }
}

impl<C: Cipher, R: AsyncReplayCache, Clk: Clock, const K: usize> Engine<C, R, Clk, K> {
    /// [`Engine::resume`] with an asynchronous replay cache: verifies (CPU only, no I/O),
    /// then awaits the cache's check-and-record. Never blocks the runtime.
    pub async fn resume_async(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        let verified = self.verify(req)?;
        self.commit_async(req, verified).await
    }

    /// [`Engine::commit`] with an asynchronous replay cache.
    pub async fn commit_async(
        &self,
        req: &ResumeRequest<'_>,
        v: Verified,
    ) -> Result<Step, JsonRpcError> {
        let Some((id, expires_at_ms)) = v.record else {
            return Ok(v.step);
        };
        let now = self.mrtr.clock().now_ms();
        let answer = self.replay.check_and_record(&id, expires_at_ms, now).await;
        self.recorded(req, v.step, answer)
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

/// Token lifetime, round cap and error detail of an [`AnyEngine`]; the defaults are
/// [`mrtr_core`]'s (5-minute TTL, 10 rounds, uniform errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Token lifetime in ms; must be > 0.
    pub ttl_ms: u64,
    /// Handler invocations per resume chain (the call plus resumes); must be ≥ 1.
    pub max_rounds: u32,
    /// How much of a rejection's cause the client sees ([`ErrorDetail::Detailed`] is for
    /// development only: it is an oracle).
    pub error_detail: ErrorDetail,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            ttl_ms: DEFAULT_TTL_MS,
            max_rounds: DEFAULT_MAX_ROUNDS,
            error_detail: ErrorDetail::Uniform,
        }
    }
}

/// Why an [`AnyEngine`] cannot be built.
#[derive(Debug)]
pub enum EngineConfigError {
    /// The key configuration does not fit the key ring (more keys than it holds).
    Keys(KeyConfigError),
    /// The limits are invalid (zero TTL or rounds).
    Config(ConfigError),
    /// `AnyEngine` cannot run this algorithm (yet): build a `Mrtr` with its backend directly.
    UnsupportedAlgorithm(Algorithm),
}

impl fmt::Display for EngineConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Keys(e) => fmt::Display::fmt(e, f),
            Self::Config(e) => write!(f, "mrtr configuration: {e}"),
            Self::UnsupportedAlgorithm(a) => {
                write!(f, "{} is not available in AnyEngine", a.name())
            }
        }
    }
}

impl std::error::Error for EngineConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Displayed as the key error itself: its causes are this error's.
            Self::Keys(e) => e.source(),
            Self::Config(_) | Self::UnsupportedAlgorithm(_) => None,
        }
    }
}

impl From<KeyConfigError> for EngineConfigError {
    fn from(e: KeyConfigError) -> Self {
        Self::Keys(e)
    }
}

impl From<ConfigError> for EngineConfigError {
    fn from(e: ConfigError) -> Self {
        Self::Config(e)
    }
}

/// An [`Engine`] whose AEAD is chosen at run time (by a flag or a configuration file):
/// AES-256-GCM, ChaCha20-Poly1305 or XChaCha20-Poly1305, over key rings of up to 4 keys.
///
/// It offers the [`Engine`] API (`resume`, `resume_async`, `pause`, `input_required`,
/// `reject`, `precheck`) and dispatches to the chosen engine. `R` is the replay cache, by
/// default the run-time-chosen [`AnyReplayCache`]; `Clk` the clock.
///
/// ```
/// use mrtr_std::Algorithm;
/// use mrtr_std::core::Principal;
/// use mrtr_std::engine::{AnyEngine, Limits, Step};
/// use mrtr_std::jsonrpc::{Method, RequestState, ResumeRequest};
/// use mrtr_std::keys::KeyConfig;
/// use mrtr_std::replay::AnyReplayCache;
///
/// // Startup, e.g. from `--cipher chacha20-poly1305 --replay memory`.
/// let algorithm: Algorithm = Algorithm::ChaCha20Poly1305;
/// let keys = KeyConfig::parse_env("current=k1; k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")?;
/// let engine: AnyEngine =
///     AnyEngine::new(algorithm, keys, Limits::default(), AnyReplayCache::memory(100_000))?;
/// assert_eq!(engine.algorithm(), Algorithm::ChaCha20Poly1305);
///
/// // Per request, as with `Engine`.
/// let req = ResumeRequest::with_map_arguments(Method::ToolsCall, "2026-07-28", "book_table",
///     None, RequestState::Absent, Principal::Anonymous);
/// let step = engine.resume(&req)?;
/// assert!(matches!(step, Step::Fresh));
/// let token = engine.pause(&req, step.next_round(), b"awaiting date")?;
///
/// let retry = ResumeRequest::with_map_arguments(Method::ToolsCall, "2026-07-28", "book_table",
///     None, RequestState::Token(&token), Principal::Anonymous);
/// let Step::Resumed(r) = engine.resume(&retry)? else { panic!("not resumed") };
/// assert_eq!(r.continuation(), b"awaiting date");
/// assert!(engine.resume(&retry).is_err()); // single use
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
// One per process, never moved per request: variant sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum AnyEngine<R = AnyReplayCache, Clk = SystemClock> {
    /// AES-256-GCM.
    Aes256Gcm(Engine<Aes256Gcm, R, Clk>),
    /// ChaCha20-Poly1305.
    ChaCha20Poly1305(Engine<ChaCha20Poly1305, R, Clk>),
    /// XChaCha20-Poly1305.
    XChaCha20Poly1305(Engine<XChaCha20Poly1305, R, Clk>),
}

/// Runs `$body` with `$e` bound to the engine inside whichever variant `$self` is.
macro_rules! each_engine {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            AnyEngine::Aes256Gcm($e) => $body,
            AnyEngine::ChaCha20Poly1305($e) => $body,
            AnyEngine::XChaCha20Poly1305($e) => $body,
        }
    };
}

impl<R> AnyEngine<R, SystemClock> {
    /// Builds the engine for `algorithm` from a key configuration, the limits and the replay
    /// cache, on the system clock.
    ///
    /// Fails if `keys` holds more than 4 keys, or the limits are invalid.
    pub fn new(
        algorithm: Algorithm,
        keys: KeyConfig,
        limits: Limits,
        replay: R,
    ) -> Result<Self, EngineConfigError> {
        Self::with_clock(algorithm, keys, limits, replay, SystemClock)
    }
}

impl<R, Clk: Clock> AnyEngine<R, Clk> {
    /// [`AnyEngine::new`] on another clock (a manual clock, in tests).
    pub fn with_clock(
        algorithm: Algorithm,
        keys: KeyConfig,
        limits: Limits,
        replay: R,
        clock: Clk,
    ) -> Result<Self, EngineConfigError> {
        fn build<C: Cipher, Clk: Clock>(
            keys: KeyConfig,
            limits: Limits,
            clock: Clk,
        ) -> Result<Mrtr<C, Clk>, EngineConfigError> {
            Ok(Mrtr::builder(keys.into_ring::<C, 4>()?, clock)
                .without_audience()
                .ttl_ms(limits.ttl_ms)
                .max_rounds(limits.max_rounds)
                .error_detail(limits.error_detail)
                .build()?)
        }
        Ok(match algorithm {
            Algorithm::Aes256Gcm => {
                Self::Aes256Gcm(Engine::new(build(keys, limits, clock)?, replay))
            }
            Algorithm::ChaCha20Poly1305 => {
                Self::ChaCha20Poly1305(Engine::new(build(keys, limits, clock)?, replay))
            }
            Algorithm::XChaCha20Poly1305 => {
                Self::XChaCha20Poly1305(Engine::new(build(keys, limits, clock)?, replay))
            }
            other => return Err(EngineConfigError::UnsupportedAlgorithm(other)),
        })
    }

    /// The AEAD in use.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            Self::Aes256Gcm(_) => Algorithm::Aes256Gcm,
            Self::ChaCha20Poly1305(_) => Algorithm::ChaCha20Poly1305,
            Self::XChaCha20Poly1305(_) => Algorithm::XChaCha20Poly1305,
        }
    }

    /// The token lifetime, round cap and error detail in use.
    pub fn limits(&self) -> Limits {
        each_engine!(self, e => Limits {
            ttl_ms: e.mrtr().ttl_ms(),
            max_rounds: e.mrtr().max_rounds(),
            error_detail: e.mrtr().error_detail(),
        })
    }

    /// The replay cache.
    pub fn replay_cache(&self) -> &R {
        each_engine!(self, e => e.replay_cache())
    }

    /// The clock.
    pub fn clock(&self) -> &Clk {
        each_engine!(self, e => e.mrtr().clock())
    }

    /// [`Engine::pause`]: seals a paused call's continuation; returns the `requestState`.
    pub fn pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
    ) -> Result<String, PauseError> {
        each_engine!(self, e => e.pause(req, round, continuation))
    }

    /// [`Engine::input_required`]: the sealed state in an `input_required` result.
    pub fn input_required(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
        input_requests: Option<Value>,
    ) -> Result<Value, PauseError> {
        each_engine!(self, e => e.input_required(req, round, continuation, input_requests))
    }

    /// [`Engine::verify`]: every check but the replay record.
    pub fn verify(&self, req: &ResumeRequest<'_>) -> Result<Verified, JsonRpcError> {
        each_engine!(self, e => e.verify(req))
    }

    /// [`Engine::reject`]: the rejection for `reason` in this engine's error-detail mode.
    pub fn reject(&self, reason: Reason) -> JsonRpcError {
        each_engine!(self, e => e.reject(reason))
    }

    /// [`Engine::precheck`]: the rejection for a raw message whose `requestState` on a
    /// pausable method is not a string.
    pub fn precheck(&self, message: &Value) -> Option<JsonRpcError> {
        each_engine!(self, e => e.precheck(message))
    }
}

impl<R: ReplayCache, Clk: Clock> AnyEngine<R, Clk> {
    /// [`Engine::resume`]: checks the request's `requestState`, the replay cache last.
    pub fn resume(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        each_engine!(self, e => e.resume(req))
    }

    /// [`Engine::commit`]: records a verified token.
    pub fn commit(&self, req: &ResumeRequest<'_>, v: Verified) -> Result<Step, JsonRpcError> {
        each_engine!(self, e => e.commit(req, v))
    }
}

impl<R: AsyncReplayCache, Clk: Clock> AnyEngine<R, Clk> {
    /// [`Engine::resume_async`]: checks the request's `requestState`, awaiting the replay
    /// cache last.
    pub async fn resume_async(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        each_engine!(self, e => e.resume_async(req).await)
    }

    /// [`Engine::commit_async`]: records a verified token in an asynchronous replay cache.
    pub async fn commit_async(
        &self,
        req: &ResumeRequest<'_>,
        v: Verified,
    ) -> Result<Step, JsonRpcError> {
        each_engine!(self, e => e.commit_async(req, v).await)
    }
}

impl<R: fmt::Debug, Clk> fmt::Debug for AnyEngine<R, Clk> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Aes256Gcm(e) => f.debug_tuple("Aes256Gcm").field(e).finish(),
            Self::ChaCha20Poly1305(e) => f.debug_tuple("ChaCha20Poly1305").field(e).finish(),
            Self::XChaCha20Poly1305(e) => f.debug_tuple("XChaCha20Poly1305").field(e).finish(),
        }
    }
}
