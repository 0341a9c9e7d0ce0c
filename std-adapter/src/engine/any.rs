//! [`AnyEngine`]: the [`Engine`] with its AEAD backend chosen at run time ([`Backend`]).

// Built without any backend feature, `Backend` has no value: nothing here can run, and what
// would use the arguments is compiled out.
#![cfg_attr(
    not(any(
        feature = "aes-gcm",
        feature = "chacha20poly1305",
        feature = "aes-gcm-siv",
        feature = "aws-lc"
    )),
    allow(unused_variables, unreachable_code, unreachable_patterns, dead_code)
)]

use std::convert::Infallible;
use std::fmt;
use std::marker::PhantomData;

use mrtr_core::cipher::{Algorithm, Cipher};
use mrtr_core::key::KeyId;
use mrtr_core::replay::ReplayCache;
use mrtr_core::{Clock, Codec, Reason, Round};
use serde_json::Value;

use super::backend::Backend;
use super::config::{Audience, EngineConfig, EngineConfigError};
use super::{Engine, NonceSource, PauseError, Step, Verified};
use crate::clock::SystemClock;
use crate::jsonrpc::{JsonRpcError, ResumeRequest};
use crate::keys::KeyConfig;
use mrtr_replay::{AnyReplayCache, AsyncReplayCache};

/// The engine of each backend this build has. Built once per process and never moved per
/// request, so the sizes of the variants do not matter.
#[allow(clippy::large_enum_variant)]
enum Inner<R, Clk> {
    #[cfg(feature = "aes-gcm")]
    Aes256Gcm(Engine<mrtr_aes_gcm::Aes256Gcm, R, Clk>),
    #[cfg(feature = "chacha20poly1305")]
    ChaCha20Poly1305(Engine<mrtr_chacha20poly1305::ChaCha20Poly1305, R, Clk>),
    #[cfg(feature = "chacha20poly1305")]
    XChaCha20Poly1305(Engine<mrtr_chacha20poly1305::XChaCha20Poly1305, R, Clk>),
    #[cfg(feature = "aes-gcm-siv")]
    Aes256GcmSiv(Engine<mrtr_aes_gcm_siv::Aes256GcmSiv, R, Clk>),
    #[cfg(feature = "aws-lc")]
    AwsLcAes256Gcm(Engine<mrtr_aws_lc::Aes256Gcm, R, Clk>),
    #[cfg(feature = "aws-lc")]
    AwsLcChaCha20Poly1305(Engine<mrtr_aws_lc::ChaCha20Poly1305, R, Clk>),
    #[cfg(feature = "aws-lc")]
    AwsLcAes256GcmSiv(Engine<mrtr_aws_lc::Aes256GcmSiv, R, Clk>),
    /// Never built: keeps `R` and `Clk` in use when no backend feature is enabled.
    #[allow(dead_code)]
    None(Infallible, PhantomData<fn() -> (R, Clk)>),
}

/// Runs `$body` with `$e` bound to the engine inside whichever backend `$inner` holds.
macro_rules! each_engine {
    ($inner:expr, $e:ident => $body:expr) => {
        match $inner {
            #[cfg(feature = "aes-gcm")]
            Inner::Aes256Gcm($e) => $body,
            #[cfg(feature = "chacha20poly1305")]
            Inner::ChaCha20Poly1305($e) => $body,
            #[cfg(feature = "chacha20poly1305")]
            Inner::XChaCha20Poly1305($e) => $body,
            #[cfg(feature = "aes-gcm-siv")]
            Inner::Aes256GcmSiv($e) => $body,
            #[cfg(feature = "aws-lc")]
            Inner::AwsLcAes256Gcm($e) => $body,
            #[cfg(feature = "aws-lc")]
            Inner::AwsLcChaCha20Poly1305($e) => $body,
            #[cfg(feature = "aws-lc")]
            Inner::AwsLcAes256GcmSiv($e) => $body,
            Inner::None(never, _) => match *never {},
        }
    };
}

/// An [`Engine`] whose AEAD backend is chosen at run time (by a flag or a configuration
/// file), over key rings of up to 4 keys: any [`Backend`] this build has.
///
/// It offers the [`Engine`] API (`verify`, `commit`, `resume`, their async forms, `pause`,
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
/// # Ok(()) }
/// # #[cfg(not(all(feature = "aes-gcm", feature = "chacha20poly1305")))] fn main() {}
/// ```
pub struct AnyEngine<R = AnyReplayCache, Clk = SystemClock> {
    backend: Backend,
    inner: Inner<R, Clk>,
}

impl<R> AnyEngine<R, SystemClock> {
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

impl<R, Clk: Clock> AnyEngine<R, Clk> {
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
    /// its budget (a reload carries the counts over; see [`Rotating`](super::Rotating)).
    pub fn with_clock_counting(
        backend: Backend,
        keys: KeyConfig,
        limits: EngineConfig,
        replay: R,
        clock: Clk,
        used: impl Fn(&KeyId) -> u32,
    ) -> Result<Self, EngineConfigError> {
        fn build<C: Cipher, R, Clk: Clock>(
            keys: KeyConfig,
            limits: EngineConfig,
            clock: Clk,
            replay: R,
            used: &dyn Fn(&KeyId) -> u32,
        ) -> Result<Engine<C, R, Clk>, EngineConfigError> {
            let builder = Codec::builder(keys.into_ring_counting::<C, 4>(used)?, clock);
            let builder = match &limits.audience {
                Audience::Unset => return Err(EngineConfigError::AudienceUnset),
                Audience::None => builder.without_audience(),
                Audience::Named(name) => builder.audience(name),
            };
            let mrtr = builder
                .ttl_ms(limits.ttl_ms)
                .max_lifetime_ms(limits.max_lifetime_ms.unwrap_or(limits.ttl_ms))
                .max_clock_skew_ms(limits.max_clock_skew_ms)
                .accept_v1(limits.accept_v1)
                .max_rounds(limits.max_rounds)
                .error_detail(limits.error_detail)
                .build()?;
            Engine::new(mrtr, replay).with_nonce_source(limits.nonce_source)
        }
        if !limits.nonce_source.allows(backend.algorithm()) {
            return Err(EngineConfigError::NonceSourceUnsafe {
                nonce_source: limits.nonce_source,
                algorithm: backend.algorithm(),
            });
        }
        let label = backend.name();
        let inner = match backend {
            #[cfg(feature = "aes-gcm")]
            Backend::Aes256Gcm => Inner::Aes256Gcm(
                build(keys, limits, clock, replay, &used)?.with_backend_label(label),
            ),
            #[cfg(feature = "chacha20poly1305")]
            Backend::ChaCha20Poly1305 => Inner::ChaCha20Poly1305(
                build(keys, limits, clock, replay, &used)?.with_backend_label(label),
            ),
            #[cfg(feature = "chacha20poly1305")]
            Backend::XChaCha20Poly1305 => Inner::XChaCha20Poly1305(
                build(keys, limits, clock, replay, &used)?.with_backend_label(label),
            ),
            #[cfg(feature = "aes-gcm-siv")]
            Backend::Aes256GcmSiv => Inner::Aes256GcmSiv(
                build(keys, limits, clock, replay, &used)?.with_backend_label(label),
            ),
            #[cfg(feature = "aws-lc")]
            Backend::AwsLcAes256Gcm => Inner::AwsLcAes256Gcm(
                build(keys, limits, clock, replay, &used)?.with_backend_label(label),
            ),
            #[cfg(feature = "aws-lc")]
            Backend::AwsLcChaCha20Poly1305 => Inner::AwsLcChaCha20Poly1305(
                build(keys, limits, clock, replay, &used)?.with_backend_label(label),
            ),
            #[cfg(feature = "aws-lc")]
            Backend::AwsLcAes256GcmSiv => Inner::AwsLcAes256GcmSiv(
                build(keys, limits, clock, replay, &used)?.with_backend_label(label),
            ),
        };
        Ok(Self { backend, inner })
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Where token ids and nonces come from.
    pub fn nonce_source(&self) -> NonceSource {
        each_engine!(&self.inner, e => e.nonce_source())
    }

    /// The id of the key that seals.
    pub fn current_key_id(&self) -> KeyId {
        each_engine!(&self.inner, e => e.mrtr().keys().current().id().clone())
    }

    /// How many more seals the current key may perform in this process before every pause
    /// fails with [`SealError::KeyExhausted`](mrtr_core::SealError::KeyExhausted).
    pub fn seals_left(&self) -> u32 {
        each_engine!(&self.inner, e => {
            let ring = e.mrtr().keys();
            ring.seal_limit().saturating_sub(ring.current().seals_used())
        })
    }

    /// How many seals each key has performed in this process, current key first.
    pub fn seals_used(&self) -> Vec<(KeyId, u32)> {
        each_engine!(&self.inner, e => e
            .mrtr()
            .keys()
            .iter()
            .map(|k| (k.id().clone(), k.seals_used()))
            .collect())
    }

    /// The AEAD algorithm in use.
    pub fn algorithm(&self) -> Algorithm {
        self.backend.algorithm()
    }

    /// The limits in use.
    pub fn limits(&self) -> EngineConfig {
        each_engine!(&self.inner, e => {
            let m = e.mrtr();
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
                nonce_source: e.nonce_source(),
            }
        })
    }

    /// The replay cache.
    pub fn replay_cache(&self) -> &R {
        each_engine!(&self.inner, e => e.replay_cache())
    }

    /// The clock.
    pub fn clock(&self) -> &Clk {
        each_engine!(&self.inner, e => e.mrtr().clock())
    }

    /// [`Engine::pause`]: seals a paused call's continuation; returns the `requestState`.
    pub fn pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
    ) -> Result<String, PauseError> {
        each_engine!(&self.inner, e => e.pause(req, round, continuation))
    }

    /// [`Engine::input_required`]: the sealed state in an `input_required` result.
    pub fn input_required(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        continuation: &[u8],
        input_requests: Option<Value>,
    ) -> Result<Value, PauseError> {
        each_engine!(&self.inner, e => e.input_required(req, round, continuation, input_requests))
    }

    /// [`Engine::verify`]: every check but the replay record.
    pub fn verify(&self, req: &ResumeRequest<'_>) -> Result<Verified, JsonRpcError> {
        each_engine!(&self.inner, e => e.verify(req))
    }

    /// [`Engine::check_local_pause`]: may a pause kept in this process (2025 era) happen?
    pub fn check_local_pause(
        &self,
        req: &ResumeRequest<'_>,
        round: Round,
        state_len: usize,
    ) -> Result<(), PauseError> {
        each_engine!(&self.inner, e => e.check_local_pause(req, round, state_len))
    }

    /// [`Engine::reject`]: the rejection for `reason` in this engine's error-detail mode.
    pub fn reject(&self, reason: Reason) -> JsonRpcError {
        each_engine!(&self.inner, e => e.reject(reason))
    }

    /// [`Engine::precheck`]: the rejection for a raw message whose `requestState` on a
    /// pausable method is not a string.
    pub fn precheck(&self, message: &Value) -> Option<JsonRpcError> {
        each_engine!(&self.inner, e => e.precheck(message))
    }
}

impl<R: ReplayCache, Clk: Clock> AnyEngine<R, Clk> {
    /// [`Engine::resume`]: checks the request's `requestState`, the replay cache last.
    pub fn resume(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        each_engine!(&self.inner, e => e.resume(req))
    }

    /// [`Engine::commit`]: records a verified token.
    pub fn commit(&self, v: Verified) -> Result<Step, JsonRpcError> {
        each_engine!(&self.inner, e => e.commit(v))
    }
}

impl<R: AsyncReplayCache, Clk: Clock> AnyEngine<R, Clk> {
    /// [`Engine::resume_async`]: checks the request's `requestState`, awaiting the replay
    /// cache last.
    pub async fn resume_async(&self, req: &ResumeRequest<'_>) -> Result<Step, JsonRpcError> {
        each_engine!(&self.inner, e => e.resume_async(req).await)
    }

    /// [`Engine::commit_async`]: records a verified token in an asynchronous replay cache.
    pub async fn commit_async(&self, v: Verified) -> Result<Step, JsonRpcError> {
        each_engine!(&self.inner, e => e.commit_async(v).await)
    }
}

impl<R: fmt::Debug, Clk> fmt::Debug for AnyEngine<R, Clk> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("AnyEngine");
        d.field("backend", &self.backend);
        each_engine!(&self.inner, e => d.field("engine", e));
        d.finish()
    }
}
