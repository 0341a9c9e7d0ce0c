//! Subscription authorization leases: a per-subscription state machine driven by explicit
//! monotonic times and events. No threads, no allocation, no clock of its own.
//!
//! A subscription (a 2026-07-28 `subscriptions/listen` stream, or a 2025-era
//! `resources/subscribe` grant owned by a session) may deliver notifications only while it
//! holds a bounded lease from the application's authorizer. A [`Lease`] decides when checks
//! run, what their results mean and when the subscription must end; a runtime (for example
//! `mrtr-std`'s subscription registry) runs the checks and carries out the [`Action`]s.
//!
//! # The event API
//!
//! Every method takes the current time in milliseconds of a **monotonic** clock. The machine
//! keeps the largest time it has seen and uses that, so an earlier `now` (a clock that jumped
//! back) can never extend or revive a lease. Wall-clock time is never involved.
//!
//! | event | call | may return |
//! |---|---|---|
//! | subscription created | [`Lease::new`] | `StartCheck(Initial)` (always) |
//! | a check finished | [`Lease::on_check_result`] | `Acknowledge`, `Reject`, `EndStream`, `RetireSession`, or nothing |
//! | time passed | [`Lease::poll`] (repeat until `None`) | `StartCheck(Renewal)`, `EndStream`, `RetireSession`, `Reject` |
//! | application: re-check now | [`Lease::reconcile`] | `StartCheck(Reconciliation)` superseding the check in flight, or an end if already expired |
//! | runtime: no room to run the check yet | [`Lease::hold`], later [`Lease::issue`] | nothing (the deadline of a held check in an established lease counts from `issue`) |
//! | client closed / unsubscribed | [`Lease::close`] | `Release` (no authorizer call, no retirement) |
//!
//! Queries: [`Lease::may_deliver`] (the delivery gate), [`Lease::next_deadline`] (when to
//! call `poll` next), [`Lease::check_invariants`] (for fuzzers), and plain getters.
//!
//! Rules the machine enforces:
//!
//! * **Effective lease** = min(grant's `valid_until`, now + [`LeaseConfig::max_authorization_ms`],
//!   subscription start + [`LeaseConfig::max_lifetime_ms`]). A grant whose effective end is not
//!   after now is a failure ([`Failure::ExpiredGrant`]).
//! * **Renewal** is due at half the lease plus the subscription's stagger (at most
//!   [`LeaseConfig::max_stagger_ms`] and at most a quarter of the lease). A renewal that does
//!   not extend the expiry schedules no further renewal: the lease runs out.
//! * **Delivery gate**: established, not fenced, before expiry. An ordinary renewal keeps
//!   delivering under the old lease.
//! * **Reconciliation** fences delivery at once, supersedes the running check and starts a
//!   fresh one; only its result can lift the fence.
//! * **One check at a time.** Check ids grow by one per check; a result for any id but the
//!   one in flight, or arriving at/after the check's deadline, never grants anything.
//! * **Transient failures** of an established lease fence delivery and retry within the
//!   existing lease after 50 ms, then 100 ms; the third consecutive one ends it
//!   ([`EndReason::RetriesExhausted`]); a success resets the count.
//! * **Listen** ([`Era::Listen`]): the initial check precedes the acknowledgment; denial or
//!   failure rejects. Once established, denial, expiry or a failed check ends the stream;
//!   only a check that never ran ([`Failure::never_ran`]: the runtime was overloaded) is
//!   transient, since it says nothing about the subscription.
//! * **2025 era** ([`Era::Session`]): every failed check of an established grant is
//!   transient; denial, expiry or the third consecutive failure retires the session. Initial
//!   rejection and `close` never retire it.
//! * **Held checks**: a runtime whose executor is full may [`hold`](Lease::hold) a check
//!   (a reconciliation waiting its turn) and [`issue`](Lease::issue) it later; the check's
//!   timeout counts from then, and the lease's expiry bounds the wait.
//!
//! # Fuzzing
//!
//! Feed any sequence of the events above with arbitrary times, check ids and results, and call
//! [`Lease::check_invariants`] after each. Two more properties a harness can assert: a result
//! whose id is not [`Lease::in_flight`]'s leaves the lease unchanged (`Lease` is
//! `Clone + PartialEq`), and once ended, every event returns `None`.
//!
//! # Example
//!
//! ```
//! use mrtr_core::lease::{Action, CheckResult, Era, Lease, LeaseConfig, stagger_ms};
//!
//! let stagger = stagger_ms(b"listen-42", LeaseConfig::DEFAULT.max_stagger_ms);
//! let (mut lease, first) = Lease::new(LeaseConfig::DEFAULT, Era::Listen, stagger, 0);
//! let Action::StartCheck(check) = first else { unreachable!() };
//!
//! // The authorizer allows for 10 minutes; the lease is capped at 1 minute.
//! let allowed = CheckResult::Allowed { valid_until_ms: 600_000, context: None };
//! let ack = lease.on_check_result(10, check.id, allowed);
//! assert_eq!(ack, Some(Action::Acknowledge { expires_at_ms: 60_010 }));
//! assert!(lease.may_deliver(10));
//!
//! // Nothing to do until the renewal, near half the lease.
//! assert_eq!(lease.poll(20_000), None);
//! let due = lease.next_deadline().unwrap();
//! assert!((30_010..=31_010).contains(&due));
//! assert!(matches!(lease.poll(due), Some(Action::StartCheck(_))));
//! assert!(lease.may_deliver(due)); // still delivering under the old lease
//! assert_eq!(lease.check_invariants(due), Ok(()));
//! ```

mod config;
mod invariants;
mod machine;
mod types;

#[cfg(test)]
mod tests;

pub use config::{
    DEFAULT_CHECK_TIMEOUT_MS, DEFAULT_MAX_AUTHORIZATION_MS, DEFAULT_MAX_CONSECUTIVE_FAILURES,
    DEFAULT_MAX_LIFETIME_MS, DEFAULT_MAX_STAGGER_MS, DEFAULT_RETRY_BACKOFF_MS, LeaseConfig,
};
pub use machine::{InFlight, Lease, Phase};
pub use types::{
    Action, CheckId, CheckKind, CheckRequest, CheckResult, ContextHandle, EndReason, Era, Failure,
    TimeoutPhase,
};

/// A deterministic renewal stagger in `0..=max_ms` derived from a subscription's id bytes
/// (FNV-1a, then a 64-bit finalizer so that sequential ids spread evenly).
///
/// ```
/// use mrtr_core::lease::stagger_ms;
///
/// assert_eq!(stagger_ms(b"7", 1_000), stagger_ms(b"7", 1_000));
/// assert!(stagger_ms(b"7", 1_000) <= 1_000);
/// assert_eq!(stagger_ms(b"7", 0), 0);
/// ```
pub fn stagger_ms(id: &[u8], max_ms: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in id {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    match max_ms.checked_add(1) {
        Some(m) => h % m,
        None => h,
    }
}
