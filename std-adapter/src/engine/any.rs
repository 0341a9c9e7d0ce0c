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
use std::str::FromStr;

use mrtr_core::cipher::{Algorithm, Cipher};
use mrtr_core::key::KeyId;
use mrtr_core::replay::ReplayCache;
use mrtr_core::{
    AcceptV1, Clock, ConfigError, DEFAULT_MAX_CLOCK_SKEW_MS, DEFAULT_MAX_ROUNDS, DEFAULT_TTL_MS,
    ErrorDetail, Mrtr, Reason, Round,
};
use serde_json::Value;

use super::{Engine, NonceSource, PauseError, Step, Verified};
use crate::clock::SystemClock;
use crate::jsonrpc::{JsonRpcError, ResumeRequest};
use crate::keys::{KeyConfig, KeyConfigError};
use mrtr_replay::{AnyReplayCache, AsyncReplayCache};

/// An AEAD implementation an [`AnyEngine`] can run: an algorithm and the crate that provides
/// it. Only the backends whose cargo features are enabled exist (`aes-gcm` and
/// `chacha20poly1305` by default; `aes-gcm-siv`, `aws-lc`).
///
/// Tokens depend on the algorithm only: a token sealed by one provider opens with any other
/// provider of the same algorithm, so a fleet can change providers one node at a time.
///
/// ```
/// # #[cfg(all(feature = "aes-gcm", feature = "chacha20poly1305"))]
/// # fn main() -> Result<(), mrtr_std::engine::UnknownBackend> {
/// use mrtr_std::Algorithm;
/// use mrtr_std::engine::Backend;
///
/// let b: Backend = "chacha20-poly1305".parse()?;
/// assert_eq!(b.algorithm(), Algorithm::ChaCha20Poly1305);
/// assert_eq!(b.to_string(), "chacha20-poly1305");
/// assert!(Backend::enabled().contains(&b));
/// # Ok(()) }
/// # #[cfg(not(all(feature = "aes-gcm", feature = "chacha20poly1305")))] fn main() {}
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// AES-256-GCM from RustCrypto (`mrtr-aes-gcm`, feature `aes-gcm`).
    #[cfg(feature = "aes-gcm")]
    Aes256Gcm,
    /// ChaCha20-Poly1305 from RustCrypto (`mrtr-chacha20poly1305`, feature
    /// `chacha20poly1305`).
    #[cfg(feature = "chacha20poly1305")]
    ChaCha20Poly1305,
    /// XChaCha20-Poly1305 from RustCrypto (`mrtr-chacha20poly1305`, feature
    /// `chacha20poly1305`).
    #[cfg(feature = "chacha20poly1305")]
    XChaCha20Poly1305,
    /// AES-256-GCM-SIV from RustCrypto (`mrtr-aes-gcm-siv`, feature `aes-gcm-siv`).
    #[cfg(feature = "aes-gcm-siv")]
    Aes256GcmSiv,
    /// AES-256-GCM from aws-lc-rs (`mrtr-aws-lc`, feature `aws-lc`).
    #[cfg(feature = "aws-lc")]
    AwsLcAes256Gcm,
    /// ChaCha20-Poly1305 from aws-lc-rs (`mrtr-aws-lc`, feature `aws-lc`).
    #[cfg(feature = "aws-lc")]
    AwsLcChaCha20Poly1305,
    /// AES-256-GCM-SIV from aws-lc-rs (`mrtr-aws-lc`, feature `aws-lc`).
    #[cfg(feature = "aws-lc")]
    AwsLcAes256GcmSiv,
}

impl Backend {
    /// Every backend this build has, in a stable order.
    pub fn enabled() -> &'static [Backend] {
        &[
            #[cfg(feature = "aes-gcm")]
            Self::Aes256Gcm,
            #[cfg(feature = "chacha20poly1305")]
            Self::ChaCha20Poly1305,
            #[cfg(feature = "chacha20poly1305")]
            Self::XChaCha20Poly1305,
            #[cfg(feature = "aes-gcm-siv")]
            Self::Aes256GcmSiv,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256Gcm,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcChaCha20Poly1305,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256GcmSiv,
        ]
    }

    /// The algorithm (what the token header names).
    pub fn algorithm(self) -> Algorithm {
        match self {
            #[cfg(feature = "aes-gcm")]
            Self::Aes256Gcm => Algorithm::Aes256Gcm,
            #[cfg(feature = "chacha20poly1305")]
            Self::ChaCha20Poly1305 => Algorithm::ChaCha20Poly1305,
            #[cfg(feature = "chacha20poly1305")]
            Self::XChaCha20Poly1305 => Algorithm::XChaCha20Poly1305,
            #[cfg(feature = "aes-gcm-siv")]
            Self::Aes256GcmSiv => Algorithm::Aes256GcmSiv,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256Gcm => Algorithm::Aes256Gcm,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcChaCha20Poly1305 => Algorithm::ChaCha20Poly1305,
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256GcmSiv => Algorithm::Aes256GcmSiv,
        }
    }

    /// A stable name for configuration: the algorithm in lowercase (`aes-256-gcm`,
    /// `chacha20-poly1305`, `xchacha20-poly1305`, `aes-256-gcm-siv`), prefixed with `aws-lc-`
    /// for the aws-lc-rs providers.
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "aes-gcm")]
            Self::Aes256Gcm => "aes-256-gcm",
            #[cfg(feature = "chacha20poly1305")]
            Self::ChaCha20Poly1305 => "chacha20-poly1305",
            #[cfg(feature = "chacha20poly1305")]
            Self::XChaCha20Poly1305 => "xchacha20-poly1305",
            #[cfg(feature = "aes-gcm-siv")]
            Self::Aes256GcmSiv => "aes-256-gcm-siv",
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256Gcm => "aws-lc-aes-256-gcm",
            #[cfg(feature = "aws-lc")]
            Self::AwsLcChaCha20Poly1305 => "aws-lc-chacha20-poly1305",
            #[cfg(feature = "aws-lc")]
            Self::AwsLcAes256GcmSiv => "aws-lc-aes-256-gcm-siv",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend name this build does not have (see [`Backend::enabled`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownBackend(String);

impl fmt::Display for UnknownBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown or disabled AEAD backend {:?}; this build has: ",
            self.0
        )?;
        let names: Vec<&str> = Backend::enabled().iter().map(|b| b.name()).collect();
        if names.is_empty() {
            f.write_str("none (enable a backend feature of mrtr-std)")
        } else {
            f.write_str(&names.join(", "))
        }
    }
}

impl std::error::Error for UnknownBackend {}

impl FromStr for Backend {
    type Err = UnknownBackend;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Backend::enabled()
            .iter()
            .copied()
            .find(|b| b.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownBackend(s.to_owned()))
    }
}

/// The audience tokens are bound to: the operator-set identity of the service (token format
/// v2). Services that share key material but not an audience refuse each other's tokens.
///
/// There is no silent default: an [`AnyEngine`] built with [`Audience::Unset`] is refused
/// ([`EngineConfigError::AudienceUnset`]); leaving the audience out is the explicit
/// [`Audience::None`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Audience {
    /// Not chosen yet (the default of [`Limits`]): building an engine fails.
    #[default]
    Unset,
    /// Deliberately none: tokens are bound to "no audience" (and never open for a service
    /// that has one).
    None,
    /// This service's identity, 1 to 255 bytes (for example its server name).
    Named(String),
}

/// Token lifetime, round cap, error detail, audience, the format-v2 lifetime bounds and the
/// nonce source of an [`AnyEngine`]; the defaults are [`mrtr_core`]'s (5-minute TTL, 10 rounds,
/// uniform errors, lifetime bounded by the TTL, 60 s of clock skew, v1 tokens accepted for one
/// lifetime after start) and the OS generator, except the audience, which must be chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Token lifetime in ms; must be > 0.
    pub ttl_ms: u64,
    /// Handler invocations per resume chain (the call plus resumes); must be ≥ 1.
    pub max_rounds: u32,
    /// How much of a rejection's cause the client sees ([`ErrorDetail::Detailed`] is for
    /// development only: it is an oracle).
    pub error_detail: ErrorDetail,
    /// The audience (must be chosen).
    pub audience: Audience,
    /// Longest `expires − issued` a token may claim, in ms (`None`: the TTL). Keep it at an
    /// old, longer TTL for one old TTL after lowering the TTL.
    pub max_lifetime_ms: Option<u64>,
    /// How far in the future a token's issue time may be, in ms (clock skew between nodes).
    pub max_clock_skew_ms: u64,
    /// Whether format-v1 tokens (no audience) still open during a rollout.
    pub accept_v1: AcceptV1,
    /// Where each seal draws its token id and nonce ([`NonceSource::Os`] by default;
    /// [`NonceSource::Fast`] only with AES-256-GCM-SIV, else the engine is refused).
    pub nonce_source: NonceSource,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            ttl_ms: DEFAULT_TTL_MS,
            max_rounds: DEFAULT_MAX_ROUNDS,
            error_detail: ErrorDetail::Uniform,
            audience: Audience::Unset,
            max_lifetime_ms: None,
            max_clock_skew_ms: DEFAULT_MAX_CLOCK_SKEW_MS,
            accept_v1: AcceptV1::ForStartupWindow,
            nonce_source: NonceSource::Os,
        }
    }
}

impl Limits {
    /// The defaults with `audience` (this service's identity).
    pub fn for_audience(audience: impl Into<String>) -> Self {
        Self {
            audience: Audience::Named(audience.into()),
            ..Self::default()
        }
    }
}

/// Why an [`AnyEngine`] cannot be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum EngineConfigError {
    /// The key configuration does not fit the key ring (more keys than it holds).
    Keys(KeyConfigError),
    /// The limits are invalid (zero TTL or rounds, an empty or over-long audience, a
    /// maximum lifetime below the TTL).
    Config(ConfigError),
    /// No audience was chosen ([`Audience::Unset`]).
    AudienceUnset,
    /// A reload gives a key id that is already in use other key material. A key id must never
    /// be reused: tokens under the old material would stop opening, and the two keys would
    /// share one seal count.
    KeyIdReused(KeyId),
    /// A reload gives key material this process already knows under another id (configured
    /// now or removed earlier). The material would start a second seal count of 0 under the
    /// new id, so its budget would no longer bound its seals: keep the old id.
    KeyMaterialReused {
        /// The new id the configuration gives it.
        id: KeyId,
        /// The id the process knows the material by.
        known_as: KeyId,
    },
    /// The nonce source may not be used with the backend's algorithm: the fast userspace
    /// generator ([`NonceSource::Fast`]) with anything but AES-256-GCM-SIV, where one repeated
    /// nonce (after a VM snapshot restore) would let an attacker forge tokens.
    NonceSourceUnsafe {
        /// The source that was asked for.
        nonce_source: NonceSource,
        /// The algorithm it was asked for.
        algorithm: Algorithm,
    },
}

impl fmt::Display for EngineConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Keys(e) => fmt::Display::fmt(e, f),
            Self::Config(e) => write!(f, "mrtr configuration: {e}"),
            Self::AudienceUnset => f.write_str(
                "mrtr configuration: no token audience chosen: set it to this service's \
                 identity (Audience::Named), or to Audience::None deliberately",
            ),
            Self::KeyIdReused(id) => write!(
                f,
                "key id {:?} is configured with different key material than before; a key id \
                 must never be reused: give the new key a new id",
                id.as_str()
            ),
            Self::KeyMaterialReused { id, known_as } => write!(
                f,
                "key id {:?} is configured with the key material this process knows as key id \
                 {:?}; the material would restart its seal budget from 0 under the new id: \
                 keep the id {:?} or generate a new key",
                id.as_str(),
                known_as.as_str(),
                known_as.as_str()
            ),
            Self::NonceSourceUnsafe {
                nonce_source,
                algorithm,
            } => write!(
                f,
                "mrtr configuration: nonce source {nonce_source} is not allowed with {}: only \
                 aes-256-gcm-siv tolerates a repeated nonce (the fast userspace generator \
                 repeats after a VM snapshot restore); use nonce source os",
                crate::obs::algorithm_label(*algorithm)
            ),
        }
    }
}

impl std::error::Error for EngineConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Displayed as the key error itself: its causes are this error's.
            Self::Keys(e) => e.source(),
            Self::Config(e) => Some(e),
            Self::AudienceUnset => None,
            Self::KeyIdReused(_) | Self::KeyMaterialReused { .. } => None,
            Self::NonceSourceUnsafe { .. } => None,
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
/// use mrtr_std::engine::{AnyEngine, Backend, Limits, Step};
/// use mrtr_std::jsonrpc::{Method, RequestState, ResumeRequest};
/// use mrtr_std::keys::KeyConfig;
/// use mrtr_replay::AnyReplayCache;
///
/// // Startup, e.g. from `--cipher chacha20-poly1305 --replay memory`.
/// let backend: Backend = "chacha20-poly1305".parse()?;
/// let keys = KeyConfig::parse_env("current=k1; k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")?;
/// let engine: AnyEngine =
///     AnyEngine::new(backend, keys, Limits::for_audience("booking-server"), AnyReplayCache::memory(100_000))?;
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
        limits: Limits,
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
        limits: Limits,
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
        limits: Limits,
        replay: R,
        clock: Clk,
        used: impl Fn(&KeyId) -> u32,
    ) -> Result<Self, EngineConfigError> {
        fn build<C: Cipher, R, Clk: Clock>(
            keys: KeyConfig,
            limits: Limits,
            clock: Clk,
            replay: R,
            used: &dyn Fn(&KeyId) -> u32,
        ) -> Result<Engine<C, R, Clk>, EngineConfigError> {
            let builder = Mrtr::builder(keys.into_ring_counting::<C, 4>(used)?, clock);
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
    pub fn limits(&self) -> Limits {
        each_engine!(&self.inner, e => {
            let m = e.mrtr();
            Limits {
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
