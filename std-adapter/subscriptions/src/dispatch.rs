//! The registry's inner workings: carrying out lease actions, starting checks (handing them
//! to the executor, holding back reconciliations that do not fit, failing others that do not
//! fit as overloaded), applying finished checks, firing timers (telling a check timed out in
//! the queue from one timed out running), and retiring 2025-era sessions.

use std::cmp::Reverse;
use std::sync::Arc;

use mrtr_core::lease::{
    Action, CheckKind, CheckRequest, CheckResult, ContextHandle, EndReason, Failure, TimeoutPhase,
};

use super::authorizer::{Authorization, AuthorizationContext};
use super::events::Event;
use super::executor::{Completion, Job, JobCell};
use super::key::SubscriptionKey;
use super::registry::{Check, Entry, Registry};
use super::target::{Target, completion_result_json};
use mrtr_std::clock::MonotonicClock;

impl<C: MonotonicClock> Registry<C> {
    /// Carries out an action and whatever it leads to.
    pub(super) fn apply(&mut self, now: u64, key: SubscriptionKey, action: Action) {
        let mut next = Some(action);
        while let Some(action) = next.take() {
            next = match action {
                Action::StartCheck(req) => self.start_check(now, key, req),
                Action::Acknowledge { expires_at_ms } => {
                    if let Some(entry) = self.subs.get(&key) {
                        self.counters.on_acknowledged();
                        let target = entry.target.clone();
                        self.push_event(Event::Acknowledged {
                            key,
                            target,
                            expires_at_ms,
                        });
                    }
                    None
                }
                Action::Reject { reason, .. } => {
                    if let Some(entry) = self.remove(now, key) {
                        self.counters.on_rejected();
                        self.push_event(Event::Rejected {
                            key,
                            target: entry.target,
                            reason,
                        });
                    }
                    None
                }
                Action::EndStream { reason, .. } => {
                    if let Some(Entry {
                        target: Target::Listen(id),
                        ..
                    }) = self.remove(now, key)
                    {
                        self.counters.ended(reason);
                        let completion = completion_result_json(&id);
                        self.push_event(Event::Ended {
                            key,
                            id,
                            reason,
                            completion,
                        });
                    }
                    None
                }
                Action::RetireSession { reason, .. } => {
                    self.retire_session(now, key, reason);
                    None
                }
                Action::Release { .. } => {
                    if self.remove(now, key).is_some() {
                        self.counters.ended(EndReason::Closed);
                    }
                    None
                }
            };
        }
        self.reschedule(key);
    }

    fn start_check(&mut self, now: u64, key: SubscriptionKey, req: CheckRequest) -> Option<Action> {
        let entry = self.subs.get_mut(&key)?;
        let was_held = match entry.check.take() {
            Some(Check::Submitted(_, old)) => {
                // Superseded: cancel it; if it keeps running, give it up at its own deadline.
                if self.executor.cancel(&old) == Some(TimeoutPhase::Running) {
                    let give_up_at = now.saturating_add(self.cfg.lease.check_timeout_ms);
                    self.zombies.push((give_up_at, old));
                }
                false
            }
            Some(Check::Held(_)) => true,
            None => false,
        };
        self.counters.check_started(req.kind);
        if req.kind == CheckKind::Reconciliation {
            // Wait in line behind held checks, and leave half the queue to other checks.
            let full = self.executor.queued() >= self.reconcile_slots();
            if was_held || !self.backlog.is_empty() || full || !self.submit(now, key, req) {
                self.hold(now, key, req, was_held);
            }
            return None;
        }
        if self.submit(now, key, req) {
            return None;
        }
        // No room: the check never ran. The lease decides (initial: reject; established:
        // a transient failure, fenced and retried within the lease).
        self.counters.failure(Failure::Overloaded);
        let failed = CheckResult::Failed(Failure::Overloaded);
        let entry = self.subs.get_mut(&key)?;
        entry.lease.on_check_result(now, req.id, failed)
    }

    /// Holds a reconciliation back until the executor has room (see [`Registry::pump`]).
    /// A check that replaces a held one keeps its place in line.
    fn hold(&mut self, now: u64, key: SubscriptionKey, req: CheckRequest, in_line: bool) {
        let Some(entry) = self.subs.get_mut(&key) else {
            return;
        };
        entry.lease.hold(now, req.id);
        entry.check = Some(Check::Held(req));
        if !in_line {
            self.backlog.push_back(key);
            self.counters.on_held();
        }
    }

    /// Hands check `req` of `key` to the executor, issued at `now`. Returns whether the
    /// executor took it (no room: it did not).
    pub(super) fn submit(&mut self, now: u64, key: SubscriptionKey, req: CheckRequest) -> bool {
        let Some(entry) = self.subs.get_mut(&key) else {
            return false;
        };
        let ctx = AuthorizationContext {
            kind: req.kind,
            target: entry.target.clone(),
            caller: entry.caller.clone(),
            evidence: entry.evidence.clone(),
            application_context: entry.context.clone(),
            previous_expiry_ms: req.previous_expiry_ms,
            issued_at_ms: now,
            deadline_ms: req.deadline_ms,
            filter: entry.filter.clone(),
            resource_uris: entry.uris.clone(),
        };
        let cell = Arc::new(JobCell::new());
        let job = Job {
            cell: cell.clone(),
            key,
            check: req.id,
            ctx,
            authorizer: self.authorizer.clone(),
            completions: self.completions.clone(),
        };
        match self.executor.submit(job) {
            Ok(()) => {
                entry.check = Some(Check::Submitted(req.id, cell));
                true
            }
            Err(_) => false,
        }
    }

    pub(super) fn apply_completion(&mut self, now: u64, c: Completion) {
        let Some(entry) = self.subs.get_mut(&c.key) else {
            self.counters.stale_results += 1;
            return;
        };
        let submitted = matches!(&entry.check, Some(Check::Submitted(id, _)) if *id == c.check);
        let current = submitted && entry.lease.in_flight().is_some_and(|f| f.id == c.check);
        if !current {
            self.counters.stale_results += 1;
            return;
        }
        entry.check = None;
        let handle = ContextHandle(c.check.raw());
        let (result, value) = match c.outcome {
            Ok(Authorization::Allowed(grant)) => {
                self.counters.on_answer(true);
                let result = CheckResult::Allowed {
                    valid_until_ms: grant.valid_until_ms,
                    context: grant.context.as_ref().map(|_| handle),
                };
                (result, grant.context)
            }
            Ok(Authorization::Denied) => {
                self.counters.on_answer(false);
                (CheckResult::Denied, None)
            }
            Err(failure) => {
                self.counters.failure(failure);
                (CheckResult::Failed(failure), None)
            }
        };
        let action = entry.lease.on_check_result(now, c.check, result);
        match entry.lease.context() {
            Some(h) if h == handle => entry.context = value,
            None => entry.context = None,
            Some(_) => {}
        }
        match action {
            Some(action) => self.apply(now, c.key, action),
            None => self.reschedule(c.key),
        }
    }

    /// A timer fired: time out the check in flight (telling queued from running), then let
    /// the lease act.
    pub(super) fn fire(&mut self, now: u64, key: SubscriptionKey) {
        let Some(entry) = self.subs.get_mut(&key) else {
            return;
        };
        let timed_out = match (entry.lease.in_flight(), &entry.check) {
            (Some(in_flight), Some(check)) => {
                in_flight.id == check.id() && entry.lease.check_overdue(now)
            }
            _ => false,
        };
        if timed_out && let Some(check) = entry.check.take() {
            let id = check.id();
            let phase = match check {
                // Held back in the backlog: it never reached the executor.
                Check::Held(_) => TimeoutPhase::Queued,
                Check::Submitted(_, cell) => match self.executor.cancel(&cell) {
                    Some(TimeoutPhase::Queued) => TimeoutPhase::Queued,
                    _ => {
                        if self.executor.abandon(&cell) {
                            self.counters.on_abandoned();
                        }
                        TimeoutPhase::Running
                    }
                },
            };
            let failure = Failure::TimedOut(phase);
            self.counters.failure(failure);
            let result = CheckResult::Failed(failure);
            if let Some(action) = entry.lease.on_check_result(now, id, result) {
                self.apply(now, key, action);
            }
        }
        while let Some(entry) = self.subs.get_mut(&key) {
            match entry.lease.poll(now) {
                Some(action) => self.apply(now, key, action),
                None => break,
            }
        }
        self.reschedule(key);
    }

    pub(super) fn reap_zombies(&mut self, now: u64) {
        let executor = &self.executor;
        let counters = &mut self.counters;
        self.zombies.retain(|(at, cell)| {
            if !cell.is_pending() {
                return false;
            }
            if *at > now {
                return true;
            }
            if executor.abandon(cell) {
                counters.on_abandoned();
            }
            false
        });
    }

    fn retire_session(&mut self, now: u64, key: SubscriptionKey, reason: EndReason) {
        let Some(Entry {
            target: Target::Resource { session, .. },
            ..
        }) = self.remove(now, key)
        else {
            return;
        };
        self.counters.ended(reason);
        self.counters.on_session_retired(reason);
        let others: Vec<_> = self
            .sessions
            .get(&session)
            .map(|m| m.values().copied().collect())
            .unwrap_or_default();
        for other in &others {
            if let Some(entry) = self.subs.get_mut(other) {
                let _ = entry.lease.close(now);
            }
            self.remove(now, *other);
        }
        self.push_event(Event::SessionRetired {
            session,
            reason,
            trigger: key,
            released: others,
        });
    }

    /// Forgets a subscription, cancelling its check and dropping it from the indexes.
    fn remove(&mut self, now: u64, key: SubscriptionKey) -> Option<Entry> {
        let mut entry = self.subs.remove(&key)?;
        crate::obs::grant_removed(entry.target.kind(), 1);
        if let Some(Check::Submitted(_, cell)) = entry.check.take()
            && self.executor.cancel(&cell) == Some(TimeoutPhase::Running)
        {
            let give_up_at = now.saturating_add(self.cfg.lease.check_timeout_ms);
            self.zombies.push((give_up_at, cell));
        }
        let caller = &entry.caller;
        self.index.remove(key, caller, &entry.filter, &entry.uris);
        if let Target::Resource { session, uri } = &entry.target
            && let Some(uris) = self.sessions.get_mut(session)
        {
            uris.remove(uri);
            if uris.is_empty() {
                self.sessions.remove(session);
            }
        }
        Some(entry)
    }

    pub(super) fn reschedule(&mut self, key: SubscriptionKey) {
        let Some(entry) = self.subs.get_mut(&key) else {
            return;
        };
        let next = entry.lease.next_deadline();
        if next != entry.timer_at {
            entry.timer_at = next;
            if let Some(at) = next {
                self.timers.push(Reverse((at, key)));
            }
        }
    }

    fn push_event(&mut self, event: Event) {
        self.outbox.push(event);
        self.completions.wake();
    }
}
