//! [`AnyEngine`]: the [`CipherEngine`] with its AEAD backend chosen at run time ([`Backend`]).

// Built without any backend feature, `Backend` has no value: nothing here can run.
#![cfg_attr(
    not(any(
        feature = "aes-gcm",
        feature = "chacha20poly1305",
        feature = "aes-gcm-siv",
        feature = "aws-lc"
    )),
    allow(dead_code)
)]

use std::fmt;

use mrtr_core::cipher::{Algorithm, Cipher};
use mrtr_core::key::KeyId;
use mrtr_core::replay::{ReplayCache, ReplayError};
use mrtr_core::{Clock, Codec, Reason, Round};
use serde_json::Value;

use super::backend::{Backend, WithCipher};
use super::config::{Audience, EngineConfig, EngineConfigError};
use super::step::Record;
use super::{CipherEngine, NonceSource, PauseError, Step, Verified};
use crate::clock::SystemClock;
use crate::jsonrpc::{JsonRpcError, ResumeRequest};
use crate::keys::KeyConfig;
use mrtr_replay::{AnyReplayCache, AsyncReplayCache};

/// What [`AnyEngine`] asks of the engine of its backend: the [`CipherEngine`] API with the cipher
/// type erased. The replay store is not behind it: [`AnyEngine`] awaits its store itself and
/// hands the answer back ([`Erased::recorded`]), so no future is boxed.
trait Erased<R, Clk>: Send + Sync {
    fn nonce_source(&self) -> NonceSource;
    fn current_key_id(&self) -> KeyId;
    fn seals_left(&self) -> u32;
    fn seals_used(&self) -> Vec<(KeyId, u32)>;
    fn limits(&self) -> EngineConfig;
    fn replay_cache(&self) -> &R;
    fn clock(&self) -> &Clk;
    fn pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
    ) -> Result<String, PauseError>;
    fn input_required(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
        input_requests: Option<Value>,
    ) -> Result<Value, PauseError>;
    fn verify(&self, req: &ResumeRequest<'_>) -> Result<Verified, JsonRpcError>;
    fn check_local_pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        state_len: usize,
    ) -> Result<(), PauseError>;
    fn reject(&self, reason: Reason) -> JsonRpcError;
    fn precheck(&self, message: &Value) -> Option<JsonRpcError>;
    fn recorded(
        &self,
        step: Step,
        r: &Record,
        answer: Result<(), ReplayError>,
    ) -> Result<Step, JsonRpcError>;
    fn fmt_codec(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

impl<C, R, Clk> Erased<R, Clk> for CipherEngine<C, R, Clk>
where
    C: Cipher + Send + Sync,
    R: Send + Sync,
    Clk: Clock + Send + Sync,
{
    fn nonce_source(&self) -> NonceSource {
        CipherEngine::nonce_source(self)
    }
    fn current_key_id(&self) -> KeyId {
        self.mrtr().keys().current().id().clone()
    }
    fn seals_left(&self) -> u32 {
        let ring = self.mrtr().keys();
        ring.seal_limit()
            .saturating_sub(ring.current().seals_used())
    }
    fn seals_used(&self) -> Vec<(KeyId, u32)> {
        let ring = self.mrtr().keys();
        ring.iter()
            .map(|k| (k.id().clone(), k.seals_used()))
            .collect()
    }
    fn limits(&self) -> EngineConfig {
        let m = self.mrtr();
        EngineConfig {
            ttl_ms: m.ttl_ms(),
            max_rounds: m.max_rounds(),
            error_detail: m.error_detail(),
            audience: m
                .audience()
                .map_or(Audience::None, |a| Audience::Named(a.to_owned())),
            max_lifetime_ms: Some(m.max_lifetime_ms()),
            max_clock_skew_ms: m.max_clock_skew_ms(),
            accept_v1: m.accept_v1(),
            nonce_source: CipherEngine::nonce_source(self),
        }
    }
    fn replay_cache(&self) -> &R {
        CipherEngine::replay_cache(self)
    }
    fn clock(&self) -> &Clk {
        self.mrtr().clock()
    }
    fn pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
    ) -> Result<String, PauseError> {
        CipherEngine::pause(self, req, round, continuation)
    }
    fn input_required(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
        input_requests: Option<Value>,
    ) -> Result<Value, PauseError> {
        CipherEngine::input_required(self, req, round, continuation, input_requests)
    }
    fn verify(&self, req: &ResumeRequest<'_>) -> Result<Verified, JsonRpcError> {
        CipherEngine::verify(self, req)
    }
    fn check_local_pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        state_len: usize,
    ) -> Result<(), PauseError> {
        CipherEngine::check_local_pause(self, req, round, state_len)
    }
    fn reject(&self, reason: Reason) -> JsonRpcError {
        CipherEngine::reject(self, reason)
    }
    fn precheck(&self, message: &Value) -> Option<JsonRpcError> {
        CipherEngine::precheck(self, message)
    }
    fn recorded(
        &self,
        step: Step,
        r: &Record,
        answer: Result<(), ReplayError>,
    ) -> Result<Step, JsonRpcError> {
        CipherEngine::recorded(self, step, r, answer)
    }
    fn fmt_codec(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.mrtr(), f)
    }
}

/// Builds the engine of one backend: [`Backend::with_cipher`] runs it with that backend's
/// cipher type.
struct Build<'a, R, Clk> {
    keys: KeyConfig,
    config: EngineConfig,
    replay: R,
    clock: Clk,
    used: &'a dyn Fn(&KeyId) -> u32,
    label: &'static str,
}

impl<R, Clk> WithCipher for Build<'_, R, Clk>
where
    R: Send + Sync + 'static,
    Clk: Clock + Send + Sync + 'static,
{
    type Output = Result<Box<dyn Erased<R, Clk>>, EngineConfigError>;

    fn run<C: Cipher + Send + Sync + 'static>(self) -> Self::Output {
        let Build {
            keys,
            config,
            replay,
            clock,
            used,
            label,
        } = self;
        let builder = Codec::builder(keys.into_ring_counting::<C, 4>(used)?, clock);
        let builder = match &config.audience {
            Audience::Unset => return Err(EngineConfigError::AudienceUnset),
            Audience::None => builder.without_audience(),
            Audience::Named(name) => builder.audience(name),
        };
        let codec = builder
            .ttl_ms(config.ttl_ms)
            .max_lifetime_ms(config.max_lifetime_ms.unwrap_or(config.ttl_ms))
            .max_clock_skew_ms(config.max_clock_skew_ms)
            .accept_v1(config.accept_v1)
            .max_rounds(config.max_rounds)
            .error_detail(config.error_detail)
            .build()?;
        let engine = CipherEngine::new(codec, replay)
            .with_nonce_source(config.nonce_source)?
            .with_backend_label(label);
        Ok(Box::new(engine))
    }
}

/// An [`CipherEngine`] whose AEAD backend is chosen at run time (by a flag or a configuration
/// file), over key rings of up to 4 keys: any [`Backend`] this build has.
///
/// It offers the [`CipherEngine`] API (`verify`, `commit`, `resume`, their async forms, `pause`,
/// `input_required`, `reject`, `precheck`) and dispatches to the chosen engine. `R` is the
/// replay cache, by default the run-time-chosen [`AnyReplayCache`]; `Clk` the clock.
///
/// ```
/// # #[cfg(all(feature = "aes-gcm", feature = "chacha20poly1305"))]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use mrtr_std::core::Principal;
/// use mrtr_std::engine::{AnyEngine, Backend, EngineConfig, Step};
/// use mrtr_std::jsonrpc::{Method, RequestState, ResumeRequest};
/// use mrtr_std::keys::KeyConfig;
/// use mrtr_replay::AnyReplayCache;
///
/// // Startup, e.g. from `--cipher chacha20-poly1305 --replay memory`.
/// let backend: Backend = "chacha20-poly1305".parse()?;
/// let keys = KeyConfig::parse_env("current=k1; k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")?;
/// let engine: AnyEngine =
///     AnyEngine::new(backend, keys, EngineConfig::for_audience("booking-server"), AnyReplayCache::memory(100_000))?;
/// assert_eq!(engine.backend(), backend);
///
/// // Per request, as with `CipherEngine`.
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
/// # Ok(()) }
/// # #[cfg(not(all(feature = "aes-gcm", feature = "chacha20poly1305")))] fn main() {}
/// ```
pub struct AnyEngine<R = AnyReplayCache, Clk = SystemClock> {
    backend: Backend,
    inner: Box<dyn Erased<R, Clk>>,
}

impl<R: Send + Sync + 'static> AnyEngine<R, SystemClock> {
    /// Builds the engine for `backend` from a key configuration, the limits and the replay
    /// cache, on the system clock.
    ///
    /// Fails if `keys` holds more than 4 keys, or the limits are invalid.
    pub fn new(
        backend: Backend,
        keys: KeyConfig,
        limits: EngineConfig,
        replay: R,
    ) -> Result<Self, EngineConfigError> {
        Self::with_clock(backend, keys, limits, replay, SystemClock)
    }
}

impl<R, Clk> AnyEngine<R, Clk>
where
    R: Send + Sync + 'static,
    Clk: Clock + Send + Sync + 'static,
{
    /// [`AnyEngine::new`] on another clock (a manual clock, in tests).
    pub fn with_clock(
        backend: Backend,
        keys: KeyConfig,
        limits: EngineConfig,
        replay: R,
        clock: Clk,
    ) -> Result<Self, EngineConfigError> {
        Self::with_clock_counting(backend, keys, limits, replay, clock, |_| 0)
    }

    /// [`AnyEngine::with_clock`], each key starting with `used(id)` seals already taken from
    /// its budget (a reload carries the counts over; see [`Engine`](super::Engine)).
    pub fn with_clock_counting(
        backend: Backend,
        keys: KeyConfig,
        limits: EngineConfig,
        replay: R,
        clock: Clk,
        used: impl Fn(&KeyId) -> u32,
    ) -> Result<Self, EngineConfigError> {
        if !limits.nonce_source.allows(backend.algorithm()) {
            return Err(EngineConfigError::NonceSourceUnsafe {
                nonce_source: limits.nonce_source,
                algorithm: backend.algorithm(),
            });
        }
        let inner = backend.with_cipher(Build {
            keys,
            config: limits,
            replay,
            clock,
            used: &used,
            label: backend.name(),
        })?;
        Ok(Self { backend, inner })
    }
}

impl<R, Clk> AnyEngine<R, Clk> {
    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Where token ids and nonces come from.
    pub fn nonce_source(&self) -> NonceSource {
        self.inner.nonce_source()
    }

    /// The id of the key that seals.
    pub fn current_key_id(&self) -> KeyId {
        self.inner.current_key_id()
    }

    /// How many more seals the current key may perform in this process before every pause
    /// fails with [`SealError::KeyExhausted`](mrtr_core::SealError::KeyExhausted).
    pub fn seals_left(&self) -> u32 {
        self.inner.seals_left()
    }

    /// How many seals each key has performed in this process, current key first.
    pub fn seals_used(&self) -> Vec<(KeyId, u32)> {
        self.inner.seals_used()
    }

    /// The AEAD algorithm in use.
    pub fn algorithm(&self) -> Algorithm {
        self.backend.algorithm()
    }

    /// The limits in use.
    pub fn limits(&self) -> EngineConfig {
        self.inner.limits()
    }

    /// The replay cache.
    pub fn replay_cache(&self) -> &R {
        self.inner.replay_cache()
    }

    /// The clock.
    pub fn clock(&self) -> &Clk {
        self.inner.clock()
    }

    /// [`CipherEngine::pause`]: seals a paused call's continuation; returns the `requestState`.
    pub fn pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
    ) -> Result<String, PauseError> {
        self.inner.pause(req, round, continuation)
    }

    /// [`CipherEngine::input_required`]: the sealed state in an `input_required` result.
    pub fn input_required(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
        input_requests: Option<Value>,
    ) -> Result<Value, PauseError> {
        self.inner
            .input_required(req, round, continuation, input_requests)
    }

    /// [`CipherEngine::verify`]: every check but the replay record.
    pub fn verify(&self, req: &ResumeRequest<'_>) -> Result<Verified, JsonRpcError> {
        self.inner.verify(req)
    }

    /// [`CipherEngine::check_local_pause`]: may a pause kept in this process (2025 era) happen?
    pub fn check_local_pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        state_len: usize,
    ) -> Result<(), PauseError> {
        self.inner.check_local_pause(req, round, state_len)
    }

    /// [`CipherEngine::reject`]: the rejection for `reason` in this engine's error-detail mode.
    pub fn reject(&self, reason: Reason) -> JsonRpcError {
        self.inner.reject(reason)
    }

    /// [`CipherEngine::precheck`]: the rejection for a raw message whose `requestState` on a
    /// pausable method is not a string.
    pub fn precheck(&self, message: &Value) -> Option<JsonRpcError> {
        self.inner.precheck(message)
    }
}

impl<R: ReplayCache, Clk: Clock> AnyEngine<R, Clk> {
    /// [`CipherEngine::resume`]: checks the request's `requestState`, the replay cache last.
    pub fn resume(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        self.commit(self.inner.verify(req)?)
    }

    /// [`CipherEngine::commit`]: records a verified token.
    pub fn commit(&self, v: Verified) -> Result<Step, JsonRpcError> {
        let Some(r) = v.record else {
            return Ok(v.step);
        };
        let now = self.inner.clock().now_ms();
        let answer = self
            .inner
            .replay_cache()
            .check_and_record(&r.id, r.expires_at_ms, now);
        self.inner.recorded(v.step, &r, answer)
    }
}

impl<R: AsyncReplayCache, Clk: Clock> AnyEngine<R, Clk> {
    /// [`CipherEngine::resume_async`]: checks the request's `requestState`, awaiting the replay
    /// cache last.
    pub async fn resume_async(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        self.commit_async(self.inner.verify(req)?).await
    }

    /// [`CipherEngine::commit_async`]: records a verified token in an asynchronous replay cache.
    pub async fn commit_async(&self, v: Verified) -> Result<Step, JsonRpcError> {
        let Some(r) = v.record else {
            return Ok(v.step);
        };
        let now = self.inner.clock().now_ms();
        let answer = self
            .inner
            .replay_cache()
            .check_and_record(&r.id, r.expires_at_ms, now)
            .await;
        self.inner.recorded(v.step, &r, answer)
    }
}

/// The codec of an [`AnyEngine`], for its `Debug` output.
struct CodecDebug<'a, R, Clk>(&'a dyn Erased<R, Clk>);

impl<R, Clk> fmt::Debug for CodecDebug<'_, R, Clk> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt_codec(f)
    }
}

impl<R: fmt::Debug, Clk> fmt::Debug for AnyEngine<R, Clk> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyEngine")
            .field("backend", &self.backend)
            .field("codec", &CodecDebug(&*self.inner))
            .field("replay", self.inner.replay_cache())
            .field("nonce_source", &self.inner.nonce_source())
            .finish()
    }
}
