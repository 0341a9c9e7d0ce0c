//! Lease limits: grant cap, subscription lifetime, check timeout, stagger and the retry
//! budget for transient failures.

/// Default cap on one grant: 1 minute.
pub const DEFAULT_MAX_AUTHORIZATION_MS: u64 = 60_000;
/// Default subscription lifetime: 24 hours after it started.
pub const DEFAULT_MAX_LIFETIME_MS: u64 = 24 * 60 * 60 * 1_000;
/// Default time a check may take before it fails closed: 5 seconds.
pub const DEFAULT_CHECK_TIMEOUT_MS: u64 = 5_000;
/// Default upper bound of the per-subscription renewal stagger: 1 second.
pub const DEFAULT_MAX_STAGGER_MS: u64 = 1_000;
/// Default retry delays after the first and second consecutive transient failure.
pub const DEFAULT_RETRY_BACKOFF_MS: [u64; 2] = [50, 100];
/// Default budget: the third consecutive transient failure ends the lease.
pub const DEFAULT_MAX_CONSECUTIVE_FAILURES: u8 = 3;

/// The limits every [`Lease`](super::Lease) applies. All times are milliseconds of a monotonic
/// clock.
///
/// Every value is accepted: a zero grant cap makes every grant "already expired" (the check
/// fails closed), a zero retry budget ends an established lease on its first transient failure.
///
/// ```
/// use mrtr_core::lease::LeaseConfig;
///
/// let cfg = LeaseConfig { max_authorization_ms: 30_000, ..LeaseConfig::DEFAULT };
/// assert_eq!(cfg.check_timeout_ms, 5_000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LeaseConfig {
    /// Cap on one grant, from the moment the result is applied.
    pub max_authorization_ms: u64,
    /// The subscription ends this long after it started, whatever the grants say.
    pub max_lifetime_ms: u64,
    /// A check without a result this long after it was started fails closed.
    pub check_timeout_ms: u64,
    /// Upper bound of the renewal stagger (see [`stagger_ms`](super::stagger_ms)).
    pub max_stagger_ms: u64,
    /// Delay before the retry after the n-th consecutive transient failure (the last entry
    /// repeats when the budget is larger than the table). Transient: any failed check in the
    /// 2025 era; in a listen, a check that never ran.
    pub retry_backoff_ms: [u64; 2],
    /// This many consecutive transient failures end the lease (2025 era: retire the
    /// session; listen: end the stream).
    pub max_consecutive_failures: u8,
}

impl LeaseConfig {
    /// The protocol defaults: 1 minute grants, 24 hour lifetime, 5 s check timeout, 1 s
    /// stagger, retries after 50 ms then 100 ms, three failed attempts at most.
    pub const DEFAULT: Self = Self {
        max_authorization_ms: DEFAULT_MAX_AUTHORIZATION_MS,
        max_lifetime_ms: DEFAULT_MAX_LIFETIME_MS,
        check_timeout_ms: DEFAULT_CHECK_TIMEOUT_MS,
        max_stagger_ms: DEFAULT_MAX_STAGGER_MS,
        retry_backoff_ms: DEFAULT_RETRY_BACKOFF_MS,
        max_consecutive_failures: DEFAULT_MAX_CONSECUTIVE_FAILURES,
    };

    /// The delay before the retry that follows the `failures`-th consecutive failure.
    pub(crate) fn backoff_after(&self, failures: u8) -> u64 {
        let last = self.retry_backoff_ms.len() - 1;
        let i = usize::from(failures.saturating_sub(1)).min(last);
        self.retry_backoff_ms[i]
    }
}

impl Default for LeaseConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}
