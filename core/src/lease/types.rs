//! The vocabulary of the lease machine: check ids and kinds, results, failures, end reasons
//! and the actions the machine asks its runtime to perform.

/// Which protocol generation owns the subscription.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Era {
    /// 2026-07-28 `subscriptions/listen`: one stream per subscription, ended with a tagged
    /// completion result.
    Listen,
    /// 2025-06-18 / 2025-11-25 `resources/subscribe`: a resource URI grant owned by the
    /// session. Transient renewal failures are retried; losing the grant retires the session.
    Session,
}

/// Why a check runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CheckKind {
    /// Before the subscription is acknowledged.
    Initial,
    /// Extends an established lease (or retries a failed renewal, 2025 era).
    Renewal,
    /// The application asked to re-check now: delivery is fenced until it passes.
    Reconciliation,
}

/// Identifies one check of one lease. Ids grow by one per check started; only the newest may
/// be in flight, so any other id is stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CheckId(u64);

impl CheckId {
    /// A check id from its raw number (for runtimes and fuzzers).
    pub const fn from_raw(raw: u64) -> Self {
        Self(raw)
    }

    /// The raw number.
    pub const fn raw(self) -> u64 {
        self.0
    }
}

/// An opaque handle to the application context a grant carried. The runtime keeps the value
/// and maps the handle to it; the machine only remembers which handle is current.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ContextHandle(pub u64);

/// What a check produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CheckResult {
    /// Allowed until `valid_until_ms` (monotonic). `context` replaces the previous application
    /// context; `None` clears it.
    Allowed {
        /// End of the grant, before the machine's caps.
        valid_until_ms: u64,
        /// The application context to remember, if any.
        context: Option<ContextHandle>,
    },
    /// Explicitly denied.
    Denied,
    /// No usable answer: fails closed.
    Failed(Failure),
}

/// Why a check produced no usable answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Failure {
    /// The authorizer returned an error.
    Error,
    /// The authorizer produced no result (a lost worker, a dropped reply).
    Missing,
    /// The authorizer panicked.
    Panicked,
    /// The check missed its deadline.
    TimedOut(TimeoutPhase),
    /// The runtime could not accept the check (executor queue full).
    Overloaded,
    /// Allowed, but the grant had already ended when it was applied.
    ExpiredGrant,
}

impl Failure {
    /// Whether the check failed without ever reaching the authorizer: the runtime could not
    /// accept it ([`Overloaded`](Self::Overloaded)) or it timed out still waiting for a
    /// worker ([`TimedOut(Queued)`](TimeoutPhase::Queued)). Such a failure says nothing about
    /// the subscription, only about the server's load, so an established lease treats it as
    /// transient in both eras (see [`Lease`](super::Lease)).
    ///
    /// ```
    /// use mrtr_core::lease::{Failure, TimeoutPhase};
    ///
    /// assert!(Failure::Overloaded.never_ran());
    /// assert!(Failure::TimedOut(TimeoutPhase::Queued).never_ran());
    /// assert!(!Failure::TimedOut(TimeoutPhase::Running).never_ran());
    /// assert!(!Failure::Error.never_ran());
    /// ```
    pub const fn never_ran(self) -> bool {
        matches!(
            self,
            Self::Overloaded | Self::TimedOut(TimeoutPhase::Queued)
        )
    }
}

/// Where a timed-out check was when its deadline passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TimeoutPhase {
    /// Still waiting for a worker.
    Queued,
    /// Running in the authorizer.
    Running,
    /// Not reported by the runtime: the machine's own deadline passed first.
    Unknown,
}

/// Why a subscription stopped. Kept for diagnostics; never sent to the client beyond the
/// generic completion (listen) or session retirement (2025 era).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EndReason {
    /// A check was explicitly denied.
    Denied,
    /// The lease ran out.
    Expired,
    /// The lease reached the end of the subscription's lifetime.
    LifetimeEnded,
    /// An initial or renewal check failed.
    CheckFailed(Failure),
    /// A reconciliation check failed (listen).
    ReconciliationFailed(Failure),
    /// The last of the permitted consecutive attempts failed transiently (2025 era: any
    /// failure; listen: a check that never ran, see [`Failure::never_ran`]).
    RetriesExhausted(Failure),
    /// The client or server closed the subscription (unsubscribe, cancelled listen, closed
    /// stream): no authorizer involved.
    Closed,
}

impl EndReason {
    /// A stable snake_case label for logs and metrics.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Denied => "denied",
            Self::Expired => "expired",
            Self::LifetimeEnded => "lifetime_ended",
            Self::CheckFailed(_) => "check_failed",
            Self::ReconciliationFailed(_) => "reconciliation_failed",
            Self::RetriesExhausted(_) => "retries_exhausted",
            Self::Closed => "closed",
        }
    }

    /// The failure behind the reason, if a check failed.
    pub const fn failure(self) -> Option<Failure> {
        match self {
            Self::CheckFailed(f) | Self::ReconciliationFailed(f) | Self::RetriesExhausted(f) => {
                Some(f)
            }
            _ => None,
        }
    }
}

/// A check the runtime must start now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CheckRequest {
    /// Report the result under this id.
    pub id: CheckId,
    /// Why the check runs.
    pub kind: CheckKind,
    /// After this instant the machine treats the check as timed out.
    pub deadline_ms: u64,
    /// The effective expiry in force before this check (`None` on the first check).
    pub previous_expiry_ms: Option<u64>,
    /// A running check this one replaces: cancel it; its result will be discarded.
    pub supersedes: Option<CheckId>,
}

/// What the runtime must do after an event.
///
/// Terminal actions carry `cancel`: the check still in flight, which the runtime should
/// cancel (its result would be discarded anyway).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Action {
    /// Start a check on the authorizer.
    StartCheck(CheckRequest),
    /// The initial check passed: acknowledge the subscription (listen: send
    /// `notifications/subscriptions/acknowledged`; 2025 era: answer `resources/subscribe`).
    Acknowledge {
        /// The effective expiry of the first lease.
        expires_at_ms: u64,
    },
    /// The initial check did not pass: reject the request, send no acknowledgment, release
    /// any quota. A 2025-era session stays alive.
    Reject {
        /// Denied or the failure.
        reason: EndReason,
        /// A check to cancel.
        cancel: Option<CheckId>,
    },
    /// Listen only: delivery is fenced; send the tagged completion result if the stream is
    /// still writable, then close it.
    EndStream {
        /// Why.
        reason: EndReason,
        /// A check to cancel.
        cancel: Option<CheckId>,
    },
    /// 2025 era only: the grant is lost; retire the owning session.
    RetireSession {
        /// Why.
        reason: EndReason,
        /// A check to cancel.
        cancel: Option<CheckId>,
    },
    /// Closed by the client or server ([`Lease::close`](super::Lease::close)): forget the
    /// subscription. No message, no authorizer call, no session retirement.
    Release {
        /// A check to cancel.
        cancel: Option<CheckId>,
    },
}
