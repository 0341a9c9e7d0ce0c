//! [`EngineConfig`] and the errors of building an engine from it.

use std::fmt;

use mrtr_core::cipher::Algorithm;
use mrtr_core::key::KeyId;
use mrtr_core::{
    AcceptV1, ConfigError, DEFAULT_MAX_CLOCK_SKEW_MS, DEFAULT_MAX_ROUNDS, DEFAULT_TTL_MS,
    ErrorDetail,
};

use super::NonceSource;
use crate::keys::KeyConfigError;

/// The audience tokens are bound to: the operator-set identity of the service (token format
/// v2). Services that share key material but not an audience refuse each other's tokens.
///
/// There is no silent default: an [`AnyEngine`](super::AnyEngine) built with [`Audience::Unset`] is refused
/// ([`EngineConfigError::AudienceUnset`]); leaving the audience out is the explicit
/// [`Audience::None`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Audience {
    /// Not chosen yet (the default of [`EngineConfig`]): building an engine fails.
    #[default]
    Unset,
    /// Deliberately none: tokens are bound to "no audience" (and never open for a service
    /// that has one).
    None,
    /// This service's identity, 1 to 255 bytes (for example its server name).
    Named(String),
}

/// Token lifetime, round cap, error detail, audience, the format-v2 lifetime bounds and the
/// nonce source of an [`AnyEngine`](super::AnyEngine); the defaults are [`mrtr_core`]'s (5-minute TTL, 10 rounds,
/// uniform errors, lifetime bounded by the TTL, 60 s of clock skew, v1 tokens accepted for one
/// lifetime after start) and the OS generator, except the audience, which must be chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConfig {
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

impl Default for EngineConfig {
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

impl EngineConfig {
    /// The defaults with `audience` (this service's identity).
    pub fn for_audience(audience: impl Into<String>) -> Self {
        Self {
            audience: Audience::Named(audience.into()),
            ..Self::default()
        }
    }
}

/// Why an [`AnyEngine`](super::AnyEngine) cannot be built.
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
