//! What a pause and a resume return, and the round counter.

use crate::token::TokenFormat;
use crate::token::state::{StateView, TokenId};

/// The round a new token is sealed in. Only obtainable as [`Round::FIRST`] or from a resumed
/// token ([`Resumed::next_round`]), so a chain's count cannot be reset by mistake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Round(pub(super) u32);

impl Round {
    /// The first pause of a chain (round 1).
    pub const FIRST: Round = Round(1);

    /// The round number.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// The round after this one (`None` past `u32::MAX`, a chain no round cap allows).
    #[inline]
    pub const fn next(self) -> Option<Round> {
        match self.0.checked_add(1) {
            Some(n) => Some(Round(n)),
            None => None,
        }
    }
}

/// A freshly sealed token, borrowed from its [`TokenBuf`](crate::TokenBuf). `Debug` never shows the token.
pub struct Sealed<'b> {
    pub(super) text: &'b str,
    pub(super) token_id: TokenId,
    pub(super) expires_at_ms: u64,
    pub(super) round: Round,
    pub(super) format: TokenFormat,
}

impl<'b> Sealed<'b> {
    /// The token text for `requestState`. A bearer credential: never log it.
    #[inline]
    pub fn as_str(&self) -> &'b str {
        self.text
    }

    /// The token's random id.
    #[inline]
    pub fn token_id(&self) -> TokenId {
        self.token_id
    }

    /// When the token expires, ms since the Unix epoch.
    #[inline]
    pub fn expires_at_ms(&self) -> u64 {
        self.expires_at_ms
    }

    /// The round the token was sealed in.
    #[inline]
    pub fn round(&self) -> Round {
        self.round
    }

    /// The format the token was sealed in.
    #[inline]
    pub fn format(&self) -> TokenFormat {
        self.format
    }
}

impl core::fmt::Debug for Sealed<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sealed")
            .field("token", &"<redacted>")
            .field("len", &self.text.len())
            .field("format", &self.format)
            .field("round", &self.round.0)
            .field("expires_at_ms", &self.expires_at_ms)
            .finish()
    }
}

/// A token that passed the resume checks, borrowed from its [`TokenBuf`](crate::TokenBuf) (wiped on drop).
/// `Debug` never shows the continuation.
pub struct Resumed<'b> {
    pub(super) state: StateView<'b>,
    pub(super) format: TokenFormat,
}

impl<'b> Resumed<'b> {
    /// The format the token was sealed in (during a rollout, older formats still open).
    #[inline]
    pub fn format(&self) -> TokenFormat {
        self.format
    }

    /// The round the token was sealed in; this resume is handler invocation `round + 1`.
    #[inline]
    pub fn round(&self) -> u32 {
        self.state.round()
    }

    /// The round to seal in if this resumed call pauses again.
    #[inline]
    pub fn next_round(&self) -> Round {
        Round(self.state.round().saturating_add(1))
    }

    /// When the token was sealed, ms since the Unix epoch.
    #[inline]
    pub fn issued_at_ms(&self) -> u64 {
        self.state.issued_at_ms()
    }

    /// When the token expires, ms since the Unix epoch.
    #[inline]
    pub fn expires_at_ms(&self) -> u64 {
        self.state.expires_at_ms()
    }

    /// The token's random id (the replay-cache key).
    #[inline]
    pub fn token_id(&self) -> TokenId {
        self.state.token_id()
    }

    /// The method the token was sealed for.
    #[inline]
    pub fn method(&self) -> &'b str {
        self.state.method()
    }

    /// The handler's continuation bytes, as given to [`Codec::pause`](crate::Codec::pause).
    #[inline]
    pub fn continuation(&self) -> &'b [u8] {
        self.state.continuation()
    }
}

impl core::fmt::Debug for Resumed<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Resumed")
            .field("format", &self.format)
            .field("round", &self.round())
            .field("method", &self.method())
            .field("expires_at_ms", &self.expires_at_ms())
            .field("continuation", &"<redacted>")
            .finish()
    }
}
