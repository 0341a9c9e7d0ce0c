//! The rollout from token format v1 to v2: which v1 tokens an engine still opens.
//!
//! An engine seals v2 (unless told otherwise for the first step of a rolling upgrade, see
//! [`Builder::seal_format`](super::Builder::seal_format)) and opens v2 always. It opens v1
//! tokens as [`AcceptV1`] says; a v1 token it no longer opens is refused as
//! [`Reason::VersionRetired`](crate::Reason::VersionRetired) before any key is looked up.
//!
//! A v1 token carries no audience. While it is accepted, it is checked against everything
//! else a v2 token is: its key id, principal, method, protocol version and target (its
//! associated data), and its method, expiry, lifetime, issue time, round, argument digest
//! and replay record (its state). So during the window a v1 token sealed by another service
//! that shares the key would open here; turning v1 off ends that.

use crate::error::ConfigError;
use crate::token::TokenFormat;

/// Whether an engine still opens format v1 tokens (see [`Builder::accept_v1`](super::Builder::accept_v1)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum AcceptV1 {
    /// The default: open v1 tokens for the maximum lifetime plus the clock skew after the
    /// engine is built, exactly as long as a v1 token issued before this node started can
    /// live; refuse them afterwards. Built engines report it as [`AcceptV1::Until`].
    ForStartupWindow,
    /// Open v1 tokens while the clock reads earlier than this instant (ms since the Unix
    /// epoch): for a rollout that takes longer than one token lifetime (a fleet where older
    /// builds keep sealing v1 for a while).
    Until(u64),
    /// Open v1 tokens until the configuration changes. Required while this engine seals v1.
    Always,
    /// Refuse every v1 token: the rollout is over.
    Never,
}

/// A built engine's resolved v1 policy.
#[derive(Clone, Copy, Debug)]
pub(crate) enum V1Window {
    Always,
    Never,
    /// Open while `now` is earlier than this.
    Until(u64),
}

impl V1Window {
    /// Resolves `accept` for an engine built at `now` that seals `seal` and allows tokens
    /// `max_lifetime_ms` long and `max_clock_skew_ms` ahead.
    pub fn resolve(
        accept: AcceptV1,
        seal: TokenFormat,
        now: u64,
        max_lifetime_ms: u64,
        max_clock_skew_ms: u64,
    ) -> Result<Self, ConfigError> {
        Ok(match (seal, accept) {
            // An engine opens what it seals.
            (TokenFormat::V1, AcceptV1::ForStartupWindow | AcceptV1::Always) => Self::Always,
            (TokenFormat::V1, _) => return Err(ConfigError::SealsRefusedFormat),
            (_, AcceptV1::ForStartupWindow) => Self::Until(
                now.saturating_add(max_lifetime_ms)
                    .saturating_add(max_clock_skew_ms),
            ),
            (_, AcceptV1::Until(t)) => Self::Until(t),
            (_, AcceptV1::Always) => Self::Always,
            (_, AcceptV1::Never) => Self::Never,
        })
    }

    /// Whether a v1 token opens at `now`.
    pub fn opens(self, now: u64) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Until(t) => now < t,
        }
    }

    /// The policy as configured terms.
    pub fn accept(self) -> AcceptV1 {
        match self {
            Self::Always => AcceptV1::Always,
            Self::Never => AcceptV1::Never,
            Self::Until(t) => AcceptV1::Until(t),
        }
    }
}
