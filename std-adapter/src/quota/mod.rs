//! Per-caller quotas, so that no caller can starve the others: token buckets (a rate and a
//! burst) on pauses (tokens sealed for `input_required`) and on resumes (requests carrying a
//! `requestState`), kept per caller.
//!
//! A caller is a [`QuotaKey`]: the authenticated principal, or for anonymous callers the
//! source address (IPv6 by its /64). A bucket starts full (`burst`), each action takes one
//! token, and tokens come back at `rate` per second up to `burst`. An action without a token
//! is refused with [`Exceeded`], which names the limit and says when a token is back.
//!
//! **Why resumes**: each resume records its token id in the replay store until the token
//! expires. With a resume quota charged *before* the token is opened (so the answer cannot
//! depend on whether the token is valid: no oracle), one caller holds at most
//! `burst + rate × TTL` ids in the store ([`Limit::max_outstanding`]). Size the store for the
//! callers you expect at once times that, and no single caller can fill it
//! (`docs/operations.md`, "Quotas and sizing").
//!
//! **Bounded memory**: at most [`QuotaConfig::max_callers`] callers are tracked. A bucket
//! that has refilled to its burst is the same as no bucket, so those are dropped when room is
//! needed; if every tracked caller is still active, a new caller is refused
//! (`"tracked_callers"`, fail closed) until one refills. Time is a [`MonotonicClock`](crate::clock::MonotonicClock)
//! ([`crate::clock::ManualClock`] in tests), so a wall clock that steps changes nothing.
//!
//! ```
//! use mrtr_std::caller::Caller;
//! use mrtr_std::clock::ManualClock;
//! use mrtr_std::quota::{Action, Limit, QuotaConfig, QuotaKey, Quotas};
//!
//! let clock = ManualClock::new(0);
//! let config = QuotaConfig {
//!     resumes: Some("2/3".parse()?), // 2 a second, bursts of 3
//!     ..QuotaConfig::default()
//! };
//! let quotas = Quotas::with_clock(config, clock.clone());
//! let bob = QuotaKey::Caller(Caller::user("https://idp.example", "bob"));
//! for _ in 0..3 {
//!     quotas.charge(&bob, Action::Resume)?;
//! }
//! let refused = quotas.charge(&bob, Action::Resume).unwrap_err();
//! assert_eq!(refused.to_string(), "quota exceeded: resumes per caller, 2/s (burst 3)");
//! assert_eq!(refused.retry_after_ms(), 500);
//! // Another caller is not affected.
//! quotas.charge(&QuotaKey::Caller(Caller::user("https://idp.example", "alice")), Action::Resume)?;
//! clock.advance(500);
//! quotas.charge(&bob, Action::Resume)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use crate::caller::Caller;

mod table;
#[cfg(test)]
mod tests;

pub use table::Quotas;

/// The JSON-RPC error code of a refusal by a quota (implementation-defined range; not one of
/// the codes the MCP specification assigns).
pub const QUOTA_EXCEEDED_CODE: i32 = -32029;

/// What a quota limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// A token sealed for an `input_required` result.
    Pause,
    /// A request carrying a `requestState` (charged before the token is opened).
    Resume,
}

impl Action {
    /// The limit's name on the wire and in metrics: `pauses_per_caller`, `resumes_per_caller`.
    pub const fn limit_name(self) -> &'static str {
        match self {
            Self::Pause => "pauses_per_caller",
            Self::Resume => "resumes_per_caller",
        }
    }

    const fn label(self) -> &'static str {
        match self {
            Self::Pause => "pauses per caller",
            Self::Resume => "resumes per caller",
        }
    }
}

/// A rate (per second) and a burst: a token bucket's parameters. Parsed from `RATE[/BURST]`
/// (`"20/100"`, `"0.5/2"`, `"20"`: the burst defaults to the rate rounded up, at least 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    per_second: f64,
    burst: u32,
}

/// A limit that is not a positive, finite rate with a burst of at least 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitError(String);

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid quota {:?}: expected RATE[/BURST], a rate per second above 0 (e.g. 20 or 0.5) and a whole burst of at least 1",
            self.0
        )
    }
}

impl std::error::Error for LimitError {}

impl Limit {
    /// `per_second` tokens a second, at most `burst` at once.
    pub fn new(per_second: f64, burst: u32) -> Result<Self, LimitError> {
        if !(per_second.is_finite() && per_second > 0.0 && per_second <= 1e9 && burst >= 1) {
            return Err(LimitError(format!("{per_second}/{burst}")));
        }
        Ok(Self { per_second, burst })
    }

    /// Tokens a second.
    pub fn per_second(&self) -> f64 {
        self.per_second
    }

    /// Most tokens at once.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// The most actions one caller can make within `window_ms`: `burst + rate × window`. For
    /// resumes and a window of one token lifetime, the most ids one caller keeps in the replay
    /// store at once.
    pub fn max_outstanding(&self, window_ms: u64) -> u64 {
        let refill = (self.per_second * window_ms as f64 / 1000.0).ceil();
        u64::from(self.burst).saturating_add(refill as u64)
    }
}

impl FromStr for Limit {
    type Err = LimitError;

    fn from_str(s: &str) -> Result<Self, LimitError> {
        let bad = || LimitError(s.to_owned());
        let (rate, burst) = match s.split_once('/') {
            Some((r, b)) => (r, Some(b)),
            None => (s, None),
        };
        let rate: f64 = rate.trim().parse().map_err(|_| bad())?;
        let burst = match burst {
            Some(b) => b.trim().parse().map_err(|_| bad())?,
            None if rate.is_finite() && rate > 0.0 => (rate.ceil() as u32).max(1),
            None => return Err(bad()),
        };
        Self::new(rate, burst).map_err(|_| bad())
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/s (burst {})", self.per_second, self.burst)
    }
}

/// Whom a quota is kept for.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum QuotaKey {
    /// A caller: an authenticated one by its principal; [`Caller::Anonymous`] is the one quota
    /// all anonymous callers share whose address is unknown (stdio, or no address given).
    Caller(Caller),
    /// An anonymous caller, by source address (an IPv6 address by its /64 prefix, which one
    /// host usually holds whole).
    Source(IpAddr),
}

impl From<Caller> for QuotaKey {
    fn from(caller: Caller) -> Self {
        Self::Caller(caller)
    }
}

impl QuotaKey {
    /// An anonymous caller from `addr` (IPv6 cut to its /64; IPv4-mapped IPv6 read as IPv4).
    pub fn source(addr: IpAddr) -> Self {
        match addr {
            IpAddr::V4(_) => Self::Source(addr),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Self::Source(IpAddr::V4(v4)),
                None => {
                    let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                    Self::Source(IpAddr::V6(prefix.into()))
                }
            },
        }
    }
}

impl fmt::Debug for QuotaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Caller(caller) => write!(f, "Caller({caller:?})"),
            Self::Source(addr) => write!(f, "Source({addr})"),
        }
    }
}

/// The quotas and the size of the caller table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuotaConfig {
    /// Pauses per caller (`None`: unlimited).
    pub pauses: Option<Limit>,
    /// Resumes per caller (`None`: unlimited; then one caller can fill the replay store).
    pub resumes: Option<Limit>,
    /// Most callers tracked at once.
    pub max_callers: usize,
}

impl QuotaConfig {
    /// The default limit of each action: 100 a second, bursts of 200. A caller then holds at
    /// most 30,200 ids in the replay store at the 5-minute TTL.
    pub const DEFAULT_LIMIT: Limit = Limit {
        per_second: 100.0,
        burst: 200,
    };

    /// The default number of callers tracked at once.
    pub const DEFAULT_MAX_CALLERS: usize = 100_000;

    /// No quota at all.
    pub const fn unlimited() -> Self {
        Self {
            pauses: None,
            resumes: None,
            max_callers: Self::DEFAULT_MAX_CALLERS,
        }
    }
}

impl Default for QuotaConfig {
    /// [`QuotaConfig::DEFAULT_LIMIT`] for both actions, [`QuotaConfig::DEFAULT_MAX_CALLERS`].
    fn default() -> Self {
        Self {
            pauses: Some(Self::DEFAULT_LIMIT),
            resumes: Some(Self::DEFAULT_LIMIT),
            max_callers: Self::DEFAULT_MAX_CALLERS,
        }
    }
}

/// Why an action was refused: which limit, and when to try again.
#[derive(Clone, Debug, PartialEq)]
pub struct Exceeded {
    kind: ExceededKind,
    retry_after_ms: u64,
}

#[derive(Clone, Debug, PartialEq)]
enum ExceededKind {
    Rate(Action, Limit),
    Callers(usize),
}

impl Exceeded {
    /// The limit's name: `pauses_per_caller`, `resumes_per_caller` or `tracked_callers`.
    pub fn limit_name(&self) -> &'static str {
        match self.kind {
            ExceededKind::Rate(action, _) => action.limit_name(),
            ExceededKind::Callers(_) => "tracked_callers",
        }
    }

    /// The action refused by a rate limit (`None`: the caller table was full).
    pub fn action(&self) -> Option<Action> {
        match self.kind {
            ExceededKind::Rate(action, _) => Some(action),
            ExceededKind::Callers(_) => None,
        }
    }

    /// In how many ms the caller may try again.
    pub fn retry_after_ms(&self) -> u64 {
        self.retry_after_ms
    }

    /// The error's `data` on the wire: `{"limit": ..., "retryAfterMs": ...}`, with the rate
    /// and burst of a rate limit.
    pub fn data(&self) -> serde_json::Value {
        let mut data = serde_json::json!({
            "limit": self.limit_name(),
            "retryAfterMs": self.retry_after_ms,
        });
        match self.kind {
            ExceededKind::Rate(_, limit) => {
                data["perSecond"] = serde_json::json!(limit.per_second);
                data["burst"] = serde_json::json!(limit.burst);
            }
            ExceededKind::Callers(max) => data["max"] = serde_json::json!(max),
        }
        data
    }
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ExceededKind::Rate(action, limit) => {
                write!(f, "quota exceeded: {}, {limit}", action.label())
            }
            ExceededKind::Callers(max) => write!(
                f,
                "quota exceeded: callers tracked at once, {max} (all active)"
            ),
        }
    }
}

impl std::error::Error for Exceeded {}
