//! Single use: the replay-cache trait, a fixed-capacity replay set, and the record of what a
//! set has forgotten.
//!
//! With no replay cache (the default) a token may be resumed any number of times until it
//! expires. A replay cache records each accepted token id until the token's own expiry and
//! refuses it afterwards. A cache that cannot answer, or is full of live entries, refuses:
//! it fails closed.
//!
//! ## Clocks that jump
//!
//! Token expiry is wall-clock time, and wall clocks step in both directions (an NTP step, a
//! restored VM, an operator's fix). A cache forgets an id once its token has expired, so a
//! clock stepped back behind that expiry would make the spent token acceptable again. The
//! caches here therefore keep [`EvictedSpans`]: a few intervals of expiry times that together
//! cover the expiry of every id they have forgotten. A token whose expiry lies in one is
//! refused as a possible replay, whatever the clock does later. Eviction follows the clock
//! as it is, never a remembered "latest time", so after a forward jump that is corrected,
//! fresh tokens (whose expiries lie after every span built before the jump, and before the
//! spans of tokens minted during it) are accepted at once.

mod set;
mod spans;

pub use set::{ReplaySet, SharedReplaySet};
pub use spans::{DEFAULT_SPANS, EvictedSpans};

use crate::token::state::TokenId;

/// Why a replay cache refused a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ReplayError {
    /// The token id was already recorded and may still be live, or the token's expiry lies
    /// where the cache has forgotten ids (see [`EvictedSpans`]).
    Replayed,
    /// Full of live entries: refuse rather than forget one.
    Full,
    /// The store could not be reached or failed.
    Unavailable,
}

impl core::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::Replayed => "token already used",
            Self::Full => "replay store is full of live entries",
            Self::Unavailable => "replay store unavailable",
        })
    }
}

impl core::error::Error for ReplayError {}

/// Atomically checks that a token id is new and records it until `expires_at_ms`.
///
/// Implementations must make check-and-record one atomic step: of many concurrent calls with
/// the same id, exactly one may succeed. Once they forget an id, they must keep refusing it
/// even if the clock later steps back behind its expiry (see [`EvictedSpans`]).
pub trait ReplayCache {
    /// Records `id` until `expires_at_ms`, or refuses it.
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<(), ReplayError>;
}

impl<T: ReplayCache + ?Sized> ReplayCache for &T {
    fn check_and_record(&self, id: &TokenId, exp: u64, now: u64) -> Result<(), ReplayError> {
        (**self).check_and_record(id, exp, now)
    }
}

/// No replay cache: tokens are multi-use within their TTL (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoReplayCache;

impl ReplayCache for NoReplayCache {
    fn check_and_record(&self, _: &TokenId, _: u64, _: u64) -> Result<(), ReplayError> {
        Ok(())
    }
}
