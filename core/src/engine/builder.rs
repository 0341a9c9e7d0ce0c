//! The engine's configuration builder, and the audience choice it requires.

use core::fmt;

use heapless::String;

use crate::cipher::Cipher;
use crate::clock::Clock;
use crate::error::{ConfigError, ErrorDetail};
use crate::key::KeyRing;
use crate::limits::{MAX_AAD_LEN, MAX_AUDIENCE_LEN};
use crate::replay::{NoReplayCache, ReplayCache};
use crate::token::TokenFormat;

use super::rollout::{AcceptV1, V1Window};
use super::{Codec, DEFAULT_MAX_CLOCK_SKEW_MS, DEFAULT_MAX_ROUNDS, DEFAULT_TTL_MS};

/// The service identity v2 tokens are bound to: 1 to [`MAX_AUDIENCE_LEN`] bytes of UTF-8.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Audience(String<MAX_AUDIENCE_LEN>);

impl Audience {
    fn new(name: &str) -> Result<Self, ConfigError> {
        if name.is_empty() {
            return Err(ConfigError::EmptyAudience);
        }
        let mut s = String::new();
        s.push_str(name).map_err(|_| ConfigError::AudienceTooLong)?;
        Ok(Self(s))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Audience {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Builder state: the audience is not chosen yet, so [`Builder::build`] is not available.
/// Call [`Builder::audience`] or [`Builder::without_audience`].
#[derive(Debug)]
pub struct AudiencePending;

/// Builder state: the audience is chosen ([`Builder::audience`] or
/// [`Builder::without_audience`]); [`Builder::build`] validates it.
#[derive(Debug)]
pub struct AudienceChoice(Result<Option<Audience>, ConfigError>);

impl AudienceChoice {
    fn into_audience(self) -> Result<Option<Audience>, ConfigError> {
        self.0
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::AudienceChoice {}
}

/// Implemented only by [`AudienceChoice`]: a builder whose audience is chosen can build.
#[diagnostic::on_unimplemented(
    message = "the token audience is not chosen",
    label = "`build` needs an audience choice",
    note = "call `.audience(\"service-name\")` with this service's identity, or \
            `.without_audience()` to bind none, before `.build()`"
)]
pub trait ChosenAudience: sealed::Sealed {
    #[doc(hidden)]
    fn choice(self) -> AudienceChoice;
}

impl ChosenAudience for AudienceChoice {
    fn choice(self) -> AudienceChoice {
        self
    }
}

/// The plain settings a builder collects.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    ttl_ms: u64,
    /// `None`: the TTL.
    max_lifetime_ms: Option<u64>,
    max_clock_skew_ms: u64,
    max_rounds: u32,
    detail: ErrorDetail,
    seal_format: TokenFormat,
    accept_v1: AcceptV1,
}

/// The settings a built engine freezes, validated and resolved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Config {
    pub ttl_ms: u64,
    pub max_lifetime_ms: u64,
    pub max_clock_skew_ms: u64,
    pub max_rounds: u32,
    pub detail: ErrorDetail,
    pub seal_format: TokenFormat,
    pub v1: V1Window,
}

impl Settings {
    /// Validates the settings and resolves the defaults that depend on others, or on `now`
    /// (the v1 window).
    fn resolve(self, now: u64) -> Result<Config, ConfigError> {
        if self.ttl_ms == 0 {
            return Err(ConfigError::ZeroTtl);
        }
        if self.max_rounds == 0 {
            return Err(ConfigError::ZeroMaxRounds);
        }
        let max_lifetime_ms = self.max_lifetime_ms.unwrap_or(self.ttl_ms);
        if max_lifetime_ms < self.ttl_ms {
            return Err(ConfigError::LifetimeBelowTtl);
        }
        let v1 = V1Window::resolve(
            self.accept_v1,
            self.seal_format,
            now,
            max_lifetime_ms,
            self.max_clock_skew_ms,
        )?;
        Ok(Config {
            ttl_ms: self.ttl_ms,
            max_lifetime_ms,
            max_clock_skew_ms: self.max_clock_skew_ms,
            max_rounds: self.max_rounds,
            detail: self.detail,
            seal_format: self.seal_format,
            v1,
        })
    }
}

/// Builds an [`Codec`]; see [`Codec::builder`].
///
/// The audience must be chosen before [`Builder::build`]: [`Builder::audience`] binds every
/// token to this service's identity, [`Builder::without_audience`] deliberately binds none.
/// Forgetting both does not compile:
///
/// ```compile_fail
/// # use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
/// # use mrtr_core::{ManualClock, Codec};
/// # use mrtr_aes_gcm::Aes256Gcm;
/// # let ring: KeyRing<Aes256Gcm, 1> =
/// #     KeyRing::new(Key::new(KeyId::new("k1").unwrap(), SecretKey::from_bytes([7; 32])));
/// let clock = ManualClock::new(1_000_000);
/// let mrtr = Codec::builder(ring, &clock).build(); // error: the token audience is not chosen
/// ```
#[must_use]
pub struct Builder<C, Clk, R, const K: usize, const A: usize = MAX_AAD_LEN, Aud = AudiencePending> {
    keys: KeyRing<C, K>,
    clock: Clk,
    replay: R,
    settings: Settings,
    audience: Aud,
}

impl<C: Cipher, Clk: Clock, const K: usize> Codec<C, Clk, NoReplayCache, K> {
    /// Starts a configuration with the defaults: 5-minute TTL, 10 rounds, no replay cache,
    /// uniform errors. The audience has no default: choose it with [`Builder::audience`] or
    /// [`Builder::without_audience`].
    pub fn builder(keys: KeyRing<C, K>, clock: Clk) -> Builder<C, Clk, NoReplayCache, K> {
        Builder {
            keys,
            clock,
            replay: NoReplayCache,
            settings: Settings {
                ttl_ms: DEFAULT_TTL_MS,
                max_lifetime_ms: None,
                max_clock_skew_ms: DEFAULT_MAX_CLOCK_SKEW_MS,
                max_rounds: DEFAULT_MAX_ROUNDS,
                detail: ErrorDetail::Uniform,
                seal_format: TokenFormat::V2,
                accept_v1: AcceptV1::ForStartupWindow,
            },
            audience: AudiencePending,
        }
    }
}

impl<C: Cipher, Clk: Clock, R: ReplayCache, const K: usize, const A: usize, Aud>
    Builder<C, Clk, R, K, A, Aud>
{
    /// Binds every token this engine seals and opens to `audience`: this service's identity,
    /// set by the operator (the hosted server's name, a gateway's id). Services that share
    /// key material but not an audience refuse each other's tokens. 1 to
    /// [`MAX_AUDIENCE_LEN`] bytes of UTF-8, checked by [`Builder::build`].
    ///
    /// Binds the format v2 tokens this engine seals. v1 tokens, which it may still open
    /// during a rollout, carry no audience.
    pub fn audience(self, audience: &str) -> Builder<C, Clk, R, K, A, AudienceChoice> {
        self.choose(Audience::new(audience).map(Some))
    }

    /// Binds no audience: a deliberate choice for a service that shares its keys with no
    /// other service. Its tokens are bound to "no audience", which is not any audience: they
    /// never open on an engine built with [`Builder::audience`], nor the reverse.
    pub fn without_audience(self) -> Builder<C, Clk, R, K, A, AudienceChoice> {
        self.choose(Ok(None))
    }

    fn choose(
        self,
        audience: Result<Option<Audience>, ConfigError>,
    ) -> Builder<C, Clk, R, K, A, AudienceChoice> {
        Builder {
            keys: self.keys,
            clock: self.clock,
            replay: self.replay,
            settings: self.settings,
            audience: AudienceChoice(audience),
        }
    }

    /// Token lifetime in ms; must be > 0. Default [`DEFAULT_TTL_MS`].
    pub fn ttl_ms(mut self, ttl_ms: u64) -> Self {
        self.settings.ttl_ms = ttl_ms;
        self
    }

    /// The longest lifetime a token may claim, in ms: a token whose sealed
    /// `expires − issued` exceeds it is refused
    /// ([`Reason::LifetimeExceeded`](crate::Reason::LifetimeExceeded)), whichever node sealed
    /// it. Both times come from the sealing node's clock, so clock skew does not enter.
    ///
    /// Default: the TTL, so lowering the TTL also refuses tokens issued under the old, longer
    /// one. To lower it without refusing the tokens in flight, keep this at the old TTL for
    /// one old TTL. Must be at least the TTL ([`ConfigError::LifetimeBelowTtl`]): this
    /// engine opens its own tokens.
    pub fn max_lifetime_ms(mut self, max_lifetime_ms: u64) -> Self {
        self.settings.max_lifetime_ms = Some(max_lifetime_ms);
        self
    }

    /// How far, in ms, a token's issue time may lie after this engine's clock: a token issued
    /// later than `now + skew` is refused
    /// ([`Reason::IssuedInFuture`](crate::Reason::IssuedInFuture)). Default
    /// [`DEFAULT_MAX_CLOCK_SKEW_MS`] (60 s).
    ///
    /// With the maximum lifetime this bounds what any token has left to live, whichever node
    /// sealed it and however fast that node's clock: at most the maximum lifetime plus this
    /// skew.
    pub fn max_clock_skew_ms(mut self, max_clock_skew_ms: u64) -> Self {
        self.settings.max_clock_skew_ms = max_clock_skew_ms;
        self
    }

    /// Cap on handler invocations per chain; must be ≥ 1. Default [`DEFAULT_MAX_ROUNDS`].
    pub fn max_rounds(mut self, max_rounds: u32) -> Self {
        self.settings.max_rounds = max_rounds;
        self
    }

    /// Enforce single use with `replay`. Default: none (tokens are multi-use within the TTL).
    pub fn replay_cache<R2: ReplayCache>(self, replay: R2) -> Builder<C, Clk, R2, K, A, Aud> {
        Builder {
            keys: self.keys,
            clock: self.clock,
            replay,
            settings: self.settings,
            audience: self.audience,
        }
    }

    /// Sizes the associated-data buffer that [`Codec::pause`] and [`Codec::resume`] keep on the
    /// stack: `A2` bytes instead of the default [`MAX_AAD_LEN`] (1,882), typically
    /// [`AadLimits::capacity`](crate::limits::AadLimits::capacity) of the fields and audience
    /// the deployment serves. A binding whose [`Binding::aad_len`](crate::Binding::aad_len)
    /// with the engine's audience exceeds `A2` is refused as a whole: pausing it fails with
    /// [`BindingError::ExceedsAadCapacity`](crate::BindingError::ExceedsAadCapacity),
    /// resuming it with [`Reason::InvalidBinding`](crate::Reason::InvalidBinding). The tokens
    /// are the same bytes as with any other capacity.
    ///
    /// ```
    /// use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
    /// use mrtr_core::limits::AadLimits;
    /// use mrtr_core::{ManualClock, Codec};
    /// use mrtr_aes_gcm::Aes256Gcm;
    ///
    /// const AAD: usize = AadLimits {
    ///     target: 64,
    ///     principal_field: 64,
    ///     audience: 16,
    ///     ..AadLimits::DEFAULT
    /// }
    /// .capacity();
    /// let ring: KeyRing<Aes256Gcm, 1> =
    ///     KeyRing::new(Key::new(KeyId::new("k1")?, SecretKey::from_bytes([7; 32])));
    /// let clock = ManualClock::new(1_000_000);
    /// let mrtr = Codec::builder(ring, &clock)
    ///     .audience("gw-0042")
    ///     .aad_capacity::<AAD>()
    ///     .build()?;
    /// assert_eq!(mrtr.aad_capacity(), 301);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aad_capacity<const A2: usize>(self) -> Builder<C, Clk, R, K, A2, Aud> {
        Builder {
            keys: self.keys,
            clock: self.clock,
            replay: self.replay,
            settings: self.settings,
            audience: self.audience,
        }
    }

    /// The format [`Codec::pause`] seals. Default [`TokenFormat::V2`], the only format that
    /// binds the audience.
    ///
    /// [`TokenFormat::V1`] is for the first step of a rolling upgrade only: while nodes of an
    /// older build (which open v1 alone) still serve the same clients, upgraded nodes seal v1
    /// so that their tokens open everywhere; once no older build is left, they return to v2.
    /// A v1 token carries no audience, whatever [`Builder::audience`] says. An engine that
    /// seals v1 opens v1 ([`AcceptV1::Always`]; any other explicit [`Builder::accept_v1`] is
    /// refused with [`ConfigError::SealsRefusedFormat`]).
    pub fn seal_format(mut self, format: TokenFormat) -> Self {
        self.settings.seal_format = format;
        self
    }

    /// Which format v1 tokens this engine still opens. Default [`AcceptV1::ForStartupWindow`]:
    /// those presented within the maximum lifetime plus the clock skew after [`build`]
    /// (by default 5 min + 60 s), which is exactly as long as a v1 token sealed before this
    /// node started can live. A stop-and-start upgrade needs nothing more. A rolling upgrade
    /// during which older builds keep sealing v1 for longer sets [`AcceptV1::Until`] the end
    /// of the rollout plus one lifetime; [`AcceptV1::Never`] ends v1 at once.
    ///
    /// The default is a window rather than "until turned off" because v1 tokens carry no
    /// audience: as long as an engine opens them, a v1 token sealed by another service that
    /// shares the key opens too. The window closes that door without an operator's action,
    /// and no v1 token that could still be in flight from before the upgrade is refused.
    ///
    /// [`build`]: Builder::build
    pub fn accept_v1(mut self, accept: AcceptV1) -> Self {
        self.settings.accept_v1 = accept;
        self
    }

    /// How much of a rejection's cause the client sees. Default [`ErrorDetail::Uniform`].
    pub fn error_detail(mut self, detail: ErrorDetail) -> Self {
        self.settings.detail = detail;
        self
    }

    /// Validates and freezes the configuration. Available once the audience is chosen.
    pub fn build(self) -> Result<Codec<C, Clk, R, K, A>, ConfigError>
    where
        Aud: ChosenAudience,
    {
        let audience = self.audience.choice().into_audience()?;
        let config = self.settings.resolve(self.clock.now_ms())?;
        Ok(Codec {
            keys: self.keys,
            clock: self.clock,
            replay: self.replay,
            config,
            audience,
        })
    }
}
