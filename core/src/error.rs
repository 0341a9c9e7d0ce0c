//! Rejections of a resume, and failures of a pause.
//!
//! A rejected `requestState` is reported to the client uniformly by default: JSON-RPC
//! `-32602`, message `"Invalid or expired requestState"`, `data.reason =
//! "invalid_request_state"` (the TypeScript and Python SDK convention). The precise [`Reason`]
//! is for server logs and metrics; [`ErrorDetail::Detailed`] puts it on the wire as well.
//! The spec-reserved codes `-32020..=-32022` are never used.

use core::fmt;

/// JSON-RPC code for every rejected `requestState` (Invalid params).
pub const INVALID_PARAMS: i32 = -32602;

/// JSON-RPC message for every rejected `requestState`.
pub const REJECTION_MESSAGE: &str = "Invalid or expired requestState";

/// `data.reason` for every rejected `requestState` in the default, uniform mode.
pub const UNIFORM_REASON: &str = "invalid_request_state";

/// Why a `requestState` was rejected. For logs and metrics; not for the client by default.
///
/// Listed in the order the resume checks run; the last two are refused by a caller (such as
/// `mrtr-std`) before the token is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Reason {
    /// Longer than the token buffer: refused before any decoding.
    TooLong,
    /// Not unpadded base64url, or too short or inconsistent to be a token.
    Malformed,
    /// The header names a token format version this build does not read.
    UnsupportedVersion,
    /// The header names another AEAD algorithm than the key ring's.
    WrongAlgorithm,
    /// A format v1 token, which this engine no longer opens: its v1 window is over, or v1
    /// was turned off ([`AcceptV1`](crate::AcceptV1)).
    VersionRetired,
    /// The header's key id is not in the key ring.
    UnknownKey,
    /// Authentication failed: tampered bytes, or another method, protocol version, target,
    /// principal or key than the one it was sealed for.
    Tampered,
    /// Authentic, but the sealed state does not parse (a bug or a foreign sealer).
    BadState,
    /// Authentic, but sealed for another method.
    MethodMismatch,
    /// Past its expiry (`expires_at <= now`).
    Expired,
    /// Its sealed lifetime (`expires_at − issued_at`) is longer than the configured maximum
    /// lifetime (by default the TTL): sealed under a longer TTL, or by a foreign sealer.
    LifetimeExceeded,
    /// Issued later than the verifier's now plus the allowed clock skew (default 60 s): sealed
    /// by a node whose clock runs ahead.
    IssuedInFuture,
    /// Resuming would exceed the configured maximum number of rounds.
    RoundsExceeded,
    /// The request's arguments differ from the ones the token was sealed with.
    ArgumentsMismatch,
    /// The replay cache has already seen this token.
    Replayed,
    /// The replay cache is full of live entries (fail closed).
    ReplayStoreFull,
    /// The replay cache could not be reached or answered an error (fail closed).
    ReplayStoreUnavailable,
    /// The request's method, protocol version, target or principal cannot be bound at all,
    /// or its associated data exceeds the engine's AAD capacity
    /// ([`crate::Builder::aad_capacity`]).
    InvalidBinding,
    /// The request's arguments cannot be bound: they are not I-JSON (a duplicate member
    /// name, or a number whose value a double does not carry exactly) or are nested too deep
    /// to canonicalize.
    ArgumentsUnbindable,
}

impl Reason {
    /// Every reason, in check order.
    pub const ALL: &'static [Reason] = &[
        Self::TooLong,
        Self::Malformed,
        Self::UnsupportedVersion,
        Self::WrongAlgorithm,
        Self::VersionRetired,
        Self::UnknownKey,
        Self::Tampered,
        Self::BadState,
        Self::MethodMismatch,
        Self::Expired,
        Self::LifetimeExceeded,
        Self::IssuedInFuture,
        Self::RoundsExceeded,
        Self::ArgumentsMismatch,
        Self::Replayed,
        Self::ReplayStoreFull,
        Self::ReplayStoreUnavailable,
        Self::InvalidBinding,
        Self::ArgumentsUnbindable,
    ];

    /// A stable snake_case name, used as `data.reason` in detailed mode and in logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::TooLong => "too_long",
            Self::Malformed => "malformed",
            Self::UnsupportedVersion => "unsupported_version",
            Self::WrongAlgorithm => "wrong_algorithm",
            Self::VersionRetired => "version_retired",
            Self::UnknownKey => "unknown_key",
            Self::Tampered => "tampered",
            Self::BadState => "bad_state",
            Self::MethodMismatch => "method_mismatch",
            Self::Expired => "expired",
            Self::LifetimeExceeded => "lifetime_exceeded",
            Self::IssuedInFuture => "issued_in_future",
            Self::RoundsExceeded => "rounds_exceeded",
            Self::ArgumentsMismatch => "arguments_mismatch",
            Self::Replayed => "replayed",
            Self::ReplayStoreFull => "replay_store_full",
            Self::ReplayStoreUnavailable => "replay_store_unavailable",
            Self::InvalidBinding => "invalid_binding",
            Self::ArgumentsUnbindable => "arguments_unbindable",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much of a rejection's cause the client sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ErrorDetail {
    /// Every rejection looks the same on the wire (the default; no oracle).
    #[default]
    Uniform,
    /// `data.reason` names the precise [`Reason`]. For development and trusted clients.
    Detailed,
}

/// What the client is told: the JSON-RPC error object's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WireError {
    /// JSON-RPC `error.code`: always [`INVALID_PARAMS`].
    pub code: i32,
    /// JSON-RPC `error.message`: always [`REJECTION_MESSAGE`].
    pub message: &'static str,
    /// `error.data.reason`.
    pub reason: &'static str,
}

/// A rejected resume: the precise reason for the server, and the wire form for the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Rejection {
    reason: Reason,
    detail: ErrorDetail,
}

impl Rejection {
    /// A rejection for `reason`, shown to the client as `detail` allows.
    pub const fn new(reason: Reason, detail: ErrorDetail) -> Self {
        Self { reason, detail }
    }

    /// The precise reason. For logs and metrics.
    pub const fn reason(&self) -> Reason {
        self.reason
    }

    /// The JSON-RPC error the client receives.
    pub const fn wire(&self) -> WireError {
        WireError {
            code: INVALID_PARAMS,
            message: REJECTION_MESSAGE,
            reason: match self.detail {
                ErrorDetail::Uniform => UNIFORM_REASON,
                ErrorDetail::Detailed => self.reason.as_str(),
            },
        }
    }
}

/// Shows only what the client would see.
impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REJECTION_MESSAGE)
    }
}

impl core::error::Error for Rejection {}

/// Why a pause could not produce a token. These are server-side faults or limits, not
/// client input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum SealError {
    /// The binding is invalid.
    Binding(BindingError),
    /// The continuation, method and overhead do not fit the token buffer.
    TooLarge,
    /// The current key has reached its seal limit: rotate keys.
    KeyExhausted,
    /// The random number generator failed.
    Rng,
    /// The cipher failed.
    Crypto,
    /// `now + ttl` overflows.
    ClockOverflow,
    /// The chain is at its round cap: a token sealed now could never resume, so none is
    /// issued. Answer the request as a resume beyond the cap ([`Reason::RoundsExceeded`]).
    RoundsExhausted,
}

impl fmt::Display for SealError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Binding(e) => write!(f, "invalid binding: {e}"),
            Self::TooLarge => f.write_str("state does not fit the token buffer"),
            Self::KeyExhausted => f.write_str("current key reached its seal limit; rotate keys"),
            Self::Rng => f.write_str("random number generator failed"),
            Self::Crypto => f.write_str("aead seal failed"),
            Self::ClockOverflow => f.write_str("expiry time overflows"),
            Self::RoundsExhausted => {
                f.write_str("the resume chain is at its round cap; a token could never resume")
            }
        }
    }
}

impl core::error::Error for SealError {}

impl From<BindingError> for SealError {
    fn from(e: BindingError) -> Self {
        Self::Binding(e)
    }
}

/// Why a configuration was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ConfigError {
    /// The TTL must be greater than zero.
    ZeroTtl,
    /// The maximum number of rounds must be at least 1.
    ZeroMaxRounds,
    /// The audience is empty: choose [`Builder::without_audience`](crate::Builder::without_audience)
    /// to bind none.
    EmptyAudience,
    /// The audience is longer than [`MAX_AUDIENCE_LEN`](crate::limits::MAX_AUDIENCE_LEN).
    AudienceTooLong,
    /// The maximum lifetime is shorter than the TTL: the engine would refuse its own tokens.
    LifetimeBelowTtl,
    /// The engine would seal a format it is configured not to open (v1 sealing with v1 tokens
    /// refused or accepted only until a deadline).
    SealsRefusedFormat,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ZeroTtl => "ttl must be greater than 0 ms",
            Self::ZeroMaxRounds => "max rounds must be at least 1",
            Self::EmptyAudience => {
                "audience is empty (use without_audience() to bind none deliberately)"
            }
            Self::AudienceTooLong => "audience is longer than 255 bytes",
            Self::LifetimeBelowTtl => "max lifetime must be at least the ttl",
            Self::SealsRefusedFormat => {
                "an engine that seals v1 must accept v1 (AcceptV1::Always or the default)"
            }
        })
    }
}

impl core::error::Error for ConfigError {}

/// Why a binding was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum BindingError {
    /// The method is empty.
    EmptyMethod,
    /// The method or protocol version contains a NUL byte.
    NulByte,
    /// The method is longer than [`MAX_METHOD_LEN`](crate::limits::MAX_METHOD_LEN).
    MethodTooLong,
    /// The protocol version is longer than [`MAX_VERSION_LEN`](crate::limits::MAX_VERSION_LEN).
    VersionTooLong,
    /// The target is longer than [`MAX_TARGET_LEN`](crate::limits::MAX_TARGET_LEN).
    TargetTooLong,
    /// The issuer or subject is longer than [`MAX_PRINCIPAL_FIELD_LEN`](crate::limits::MAX_PRINCIPAL_FIELD_LEN).
    PrincipalTooLong,
    /// Valid, but its associated data is longer than the engine's AAD capacity (a
    /// compile-time parameter, see [`AadLimits`](crate::limits::AadLimits)).
    ExceedsAadCapacity,
}

impl fmt::Display for BindingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::EmptyMethod => "method is empty",
            Self::NulByte => "method or protocol version contains NUL",
            Self::MethodTooLong => "method is longer than 32 bytes",
            Self::VersionTooLong => "protocol version is longer than 32 bytes",
            Self::TargetTooLong => "target is longer than 1024 bytes",
            Self::PrincipalTooLong => "issuer or subject is longer than 255 bytes",
            Self::ExceedsAadCapacity => "binding does not fit the engine's AAD capacity",
        })
    }
}

impl core::error::Error for BindingError {}
