//! The per-subscription lease state machine.

use super::config::LeaseConfig;
use super::types::{
    Action, CheckId, CheckKind, CheckRequest, CheckResult, ContextHandle, EndReason, Era, Failure,
    TimeoutPhase,
};

/// Where a lease is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Phase {
    /// Waiting for the initial check: nothing acknowledged, nothing delivered.
    Pending,
    /// Acknowledged; delivering while not fenced and before expiry.
    Established,
    /// Finished for the given reason; every further event is ignored.
    Ended(EndReason),
}

/// The check currently in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct InFlight {
    /// Its id.
    pub id: CheckId,
    /// Its kind.
    pub kind: CheckKind,
    /// When it times out.
    pub deadline_ms: u64,
}

/// One subscription's authorization lease, driven by explicit monotonic times and events.
/// See the [module documentation](super) for the event API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub(super) cfg: LeaseConfig,
    pub(super) era: Era,
    pub(super) stagger_ms: u64,
    pub(super) phase: Phase,
    pub(super) end_of_life_ms: u64,
    /// The latest time seen: time never goes backwards inside the machine.
    pub(super) high_water_ms: u64,
    pub(super) next_id: u64,
    pub(super) in_flight: Option<InFlight>,
    pub(super) expires_at_ms: Option<u64>,
    pub(super) granted_at_ms: u64,
    pub(super) granted_by: Option<CheckId>,
    /// The newest reconciliation check: only a grant at least this new lifts its fence.
    pub(super) fence_floor: Option<CheckId>,
    pub(super) fenced: bool,
    pub(super) renew_at_ms: Option<u64>,
    pub(super) retry_at_ms: Option<u64>,
    pub(super) retry_kind: CheckKind,
    pub(super) failures: u8,
    pub(super) context: Option<ContextHandle>,
    /// The check the runtime holds back for lack of room ([`Lease::hold`]); it only counts
    /// while it is still the check in flight.
    pub(super) held: Option<CheckId>,
}

impl Lease {
    /// A new lease for a subscription created at `now_ms`, and the initial check to start.
    ///
    /// `stagger_ms` is usually [`stagger_ms`](super::stagger_ms) of the subscription's id; it
    /// is capped at `cfg.max_stagger_ms`.
    pub fn new(cfg: LeaseConfig, era: Era, stagger_ms: u64, now_ms: u64) -> (Self, Action) {
        let mut lease = Self {
            cfg,
            era,
            stagger_ms: stagger_ms.min(cfg.max_stagger_ms),
            phase: Phase::Pending,
            end_of_life_ms: now_ms.saturating_add(cfg.max_lifetime_ms),
            high_water_ms: now_ms,
            next_id: 0,
            in_flight: None,
            expires_at_ms: None,
            granted_at_ms: now_ms,
            granted_by: None,
            fence_floor: None,
            fenced: false,
            renew_at_ms: None,
            retry_at_ms: None,
            retry_kind: CheckKind::Renewal,
            failures: 0,
            context: None,
            held: None,
        };
        let first = lease.start_check(now_ms, CheckKind::Initial);
        (lease, first)
    }

    /// Applies the result of check `id`. A result for any check but the one in flight (a
    /// superseded, timed-out or unknown check) is stale: it is discarded and changes nothing.
    pub fn on_check_result(
        &mut self,
        now_ms: u64,
        id: CheckId,
        result: CheckResult,
    ) -> Option<Action> {
        let now = self.observe(now_ms);
        let check = match self.in_flight {
            Some(f) if f.id == id && !self.is_ended() => f,
            _ => return None,
        };
        if let Some(end) = self.expire_if_due(now) {
            return Some(end);
        }
        self.in_flight = None;
        if now >= check.deadline_ms && matches!(result, CheckResult::Allowed { .. }) {
            // A grant that arrives too late does not count.
            return self.failed(now, check, Failure::TimedOut(TimeoutPhase::Unknown));
        }
        match result {
            CheckResult::Allowed {
                valid_until_ms,
                context,
            } => {
                let effective = valid_until_ms
                    .min(now.saturating_add(self.cfg.max_authorization_ms))
                    .min(self.end_of_life_ms);
                if effective <= now {
                    self.failed(now, check, Failure::ExpiredGrant)
                } else {
                    self.granted(now, check, effective, context)
                }
            }
            CheckResult::Denied => Some(self.finish(EndReason::Denied)),
            CheckResult::Failed(failure) => self.failed(now, check, failure),
        }
    }

    /// The application asks to re-check now. Fences delivery at once, supersedes the check in
    /// flight (its result becomes stale) and starts a reconciliation check.
    pub fn reconcile(&mut self, now_ms: u64) -> Option<Action> {
        let now = self.observe(now_ms);
        if self.is_ended() {
            return None;
        }
        if let Some(end) = self.expire_if_due(now) {
            return Some(end);
        }
        if self.phase == Phase::Established {
            self.fenced = true;
        }
        self.retry_at_ms = None;
        let action = self.start_check(now, CheckKind::Reconciliation);
        if let Action::StartCheck(req) = action {
            self.fence_floor = Some(req.id);
        }
        Some(action)
    }

    /// The client unsubscribed, cancelled its listen or its stream closed. Ends the lease
    /// without calling the authorizer and without retiring a 2025-era session.
    pub fn close(&mut self, now_ms: u64) -> Option<Action> {
        self.observe(now_ms);
        if self.is_ended() {
            return None;
        }
        let cancel = self.clear(EndReason::Closed);
        Some(Action::Release { cancel })
    }

    /// The runtime has no room to run check `id` yet (its executor is full) and holds it back
    /// until it has: see [`issue`](Self::issue). The check stays in flight, so nothing else
    /// starts meanwhile, and delivery stays as it is: fenced for a reconciliation, under the
    /// old lease for a renewal.
    ///
    /// While held, an established lease's check deadline does not run (the check has not
    /// started; the lease's expiry still ends the subscription if the wait outlasts it). A
    /// pending lease's deadline keeps running, so an admission never waits forever.
    ///
    /// Returns whether `id` is the check in flight.
    pub fn hold(&mut self, now_ms: u64, id: CheckId) -> bool {
        self.observe(now_ms);
        let current = !self.is_ended() && self.in_flight.is_some_and(|f| f.id == id);
        if current {
            self.held = Some(id);
        }
        current
    }

    /// The runtime hands the held check `id` to its executor now: its deadline restarts at
    /// `now_ms` plus the check timeout. Returns the new deadline, or `None` when `id` is not
    /// a held check in flight, or (pending lease) its deadline has already passed.
    pub fn issue(&mut self, now_ms: u64, id: CheckId) -> Option<u64> {
        let now = self.observe(now_ms);
        if !self.is_held() || self.check_overdue(now) {
            return None;
        }
        let timeout = self.cfg.check_timeout_ms;
        let check = self.in_flight.as_mut().filter(|f| f.id == id)?;
        check.deadline_ms = now.saturating_add(timeout);
        self.held = None;
        Some(check.deadline_ms)
    }

    /// Whether the check in flight is held back by the runtime ([`hold`](Self::hold)).
    pub fn is_held(&self) -> bool {
        self.held.is_some() && self.held == self.in_flight.map(|f| f.id)
    }

    /// Whether the check in flight has run out of time at `now_ms` (never for a check held in
    /// an established lease: its deadline counts from [`issue`](Self::issue)).
    pub fn check_overdue(&self, now_ms: u64) -> bool {
        let now = now_ms.max(self.high_water_ms);
        self.deadline_runs() && self.in_flight.is_some_and(|f| now >= f.deadline_ms)
    }

    /// Fires whatever is due at `now_ms`: expiry, a check's timeout, a retry or a renewal.
    /// Returns one action at a time: call until it returns `None`.
    pub fn poll(&mut self, now_ms: u64) -> Option<Action> {
        let now = self.observe(now_ms);
        if self.is_ended() {
            return None;
        }
        if let Some(end) = self.expire_if_due(now) {
            return Some(end);
        }
        if let Some(check) = self.in_flight {
            if self.check_overdue(now) {
                return self.failed(now, check, Failure::TimedOut(TimeoutPhase::Unknown));
            }
            return None;
        }
        if self.retry_at_ms.is_some_and(|t| now >= t) {
            self.retry_at_ms = None;
            return Some(self.start_check(now, self.retry_kind));
        }
        if self.renew_at_ms.is_some_and(|t| now >= t) {
            self.renew_at_ms = None;
            return Some(self.start_check(now, CheckKind::Renewal));
        }
        None
    }

    /// The earliest instant at which [`poll`](Self::poll) has something to do; `None` once
    /// ended.
    pub fn next_deadline(&self) -> Option<u64> {
        if self.is_ended() {
            return None;
        }
        let mut next = self.expires_at_ms;
        let mut consider = |t: Option<u64>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        };
        match self.in_flight {
            Some(check) => consider(self.deadline_runs().then_some(check.deadline_ms)),
            None => {
                consider(self.retry_at_ms);
                consider(self.renew_at_ms);
            }
        }
        next
    }

    /// The delivery gate: established, not fenced and before expiry.
    pub fn may_deliver(&self, now_ms: u64) -> bool {
        let now = now_ms.max(self.high_water_ms);
        self.phase == Phase::Established
            && !self.fenced
            && self.expires_at_ms.is_some_and(|e| now < e)
    }

    /// The protocol generation.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Why the lease ended, once it has.
    pub fn end_reason(&self) -> Option<EndReason> {
        match self.phase {
            Phase::Ended(reason) => Some(reason),
            _ => None,
        }
    }

    /// The effective expiry in force (`None` before the first grant).
    pub fn expires_at_ms(&self) -> Option<u64> {
        self.expires_at_ms
    }

    /// When the next ordinary renewal is due, if one is scheduled.
    pub fn renew_at_ms(&self) -> Option<u64> {
        self.renew_at_ms
    }

    /// When the next 2025-era retry is due, if one is scheduled.
    pub fn retry_at_ms(&self) -> Option<u64> {
        self.retry_at_ms
    }

    /// The check in flight, if any (never more than one).
    pub fn in_flight(&self) -> Option<InFlight> {
        self.in_flight
    }

    /// Whether delivery is fenced (reconciliation pending, or a 2025-era failure).
    pub fn is_fenced(&self) -> bool {
        self.fenced
    }

    /// Consecutive transient failures so far (2025 era: any failed check; listen: checks
    /// that never ran). A success resets it.
    pub fn consecutive_failures(&self) -> u8 {
        self.failures
    }

    /// The application context of the latest accepted grant.
    pub fn context(&self) -> Option<ContextHandle> {
        self.context
    }

    /// This subscription's renewal stagger.
    pub fn stagger(&self) -> u64 {
        self.stagger_ms
    }

    /// The instant the subscription's lifetime ends.
    pub fn end_of_life_ms(&self) -> u64 {
        self.end_of_life_ms
    }

    /// Whether the lease has ended.
    pub fn is_ended(&self) -> bool {
        matches!(self.phase, Phase::Ended(_))
    }

    /// Whether the in-flight check's deadline counts: always, except for a check held back
    /// in an established lease.
    fn deadline_runs(&self) -> bool {
        !(self.is_held() && self.phase == Phase::Established)
    }

    fn observe(&mut self, now_ms: u64) -> u64 {
        self.high_water_ms = self.high_water_ms.max(now_ms);
        self.high_water_ms
    }

    /// Ends an established lease whose expiry has passed.
    fn expire_if_due(&mut self, now: u64) -> Option<Action> {
        let expiry = self
            .expires_at_ms
            .filter(|e| now >= *e && !self.is_ended())?;
        let reason = if expiry >= self.end_of_life_ms {
            EndReason::LifetimeEnded
        } else {
            EndReason::Expired
        };
        Some(self.finish(reason))
    }

    fn start_check(&mut self, now: u64, kind: CheckKind) -> Action {
        let id = CheckId::from_raw(self.next_id);
        self.next_id = self.next_id.saturating_add(1);
        let supersedes = self.in_flight.map(|f| f.id);
        let deadline_ms = now.saturating_add(self.cfg.check_timeout_ms);
        self.held = None;
        self.in_flight = Some(InFlight {
            id,
            kind,
            deadline_ms,
        });
        Action::StartCheck(CheckRequest {
            id,
            kind,
            deadline_ms,
            previous_expiry_ms: self.expires_at_ms,
            supersedes,
        })
    }

    fn granted(
        &mut self,
        now: u64,
        check: InFlight,
        effective: u64,
        context: Option<ContextHandle>,
    ) -> Option<Action> {
        self.context = context;
        self.failures = 0;
        self.retry_at_ms = None;
        self.granted_at_ms = now;
        self.granted_by = Some(check.id);
        self.fenced = false;
        let renew_at = self.renewal_time(now, effective);
        match self
            .expires_at_ms
            .filter(|_| self.phase == Phase::Established)
        {
            None => {
                self.phase = Phase::Established;
                self.expires_at_ms = Some(effective);
                self.renew_at_ms = Some(renew_at);
                Some(Action::Acknowledge {
                    expires_at_ms: effective,
                })
            }
            Some(previous) => {
                self.expires_at_ms = Some(effective);
                self.renew_at_ms = if effective > previous {
                    Some(renew_at)
                } else if check.kind == CheckKind::Reconciliation {
                    // A reconciliation is out of band: keep a renewal that was already due.
                    self.renew_at_ms.filter(|t| *t < effective)
                } else {
                    // A renewal that does not extend the expiry: the lease runs out.
                    None
                };
                None
            }
        }
    }

    /// Half the lease plus the stagger, the stagger capped at a quarter of the lease so the
    /// renewal always falls before expiry.
    fn renewal_time(&self, now: u64, expiry: u64) -> u64 {
        let lease = expiry.saturating_sub(now);
        now + lease / 2 + self.stagger_ms.min(lease / 4)
    }

    /// A check failed. The caller may leave it in flight: a terminal action then asks the
    /// runtime to cancel it.
    ///
    /// In an established lease a transient failure fences delivery and retries within the
    /// lease (after 50 ms, then 100 ms); the last permitted consecutive one ends it. Every
    /// failure is transient in the 2025 era; in a listen only a check that never ran is
    /// ([`Failure::never_ran`]): any other failed check ends the stream.
    fn failed(&mut self, now: u64, check: InFlight, failure: Failure) -> Option<Action> {
        let transient = self.era == Era::Session || failure.never_ran();
        match (self.phase, self.era) {
            (Phase::Established, _) if transient => {
                self.fenced = true;
                self.failures = self.failures.saturating_add(1);
                if self.failures >= self.cfg.max_consecutive_failures {
                    return Some(self.finish(EndReason::RetriesExhausted(failure)));
                }
                self.in_flight = None;
                self.renew_at_ms = None;
                self.retry_kind = match check.kind {
                    CheckKind::Reconciliation => CheckKind::Reconciliation,
                    _ => CheckKind::Renewal,
                };
                let delay = self.cfg.backoff_after(self.failures);
                self.retry_at_ms = Some(now.saturating_add(delay));
                None
            }
            (Phase::Established, Era::Listen) if check.kind == CheckKind::Reconciliation => {
                Some(self.finish(EndReason::ReconciliationFailed(failure)))
            }
            _ => Some(self.finish(EndReason::CheckFailed(failure))),
        }
    }

    /// Ends the lease and says how the runtime must tell the peer.
    fn finish(&mut self, reason: EndReason) -> Action {
        let was = self.phase;
        let cancel = self.clear(reason);
        match (was, self.era) {
            (Phase::Established, Era::Listen) => Action::EndStream { reason, cancel },
            (Phase::Established, Era::Session) => Action::RetireSession { reason, cancel },
            _ => Action::Reject { reason, cancel },
        }
    }

    fn clear(&mut self, reason: EndReason) -> Option<CheckId> {
        self.phase = Phase::Ended(reason);
        self.held = None;
        self.fenced = true;
        self.renew_at_ms = None;
        self.retry_at_ms = None;
        self.in_flight.take().map(|f| f.id)
    }
}
