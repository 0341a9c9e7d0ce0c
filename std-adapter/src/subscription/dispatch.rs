//! The registry's inner workings: carrying out lease actions, applying finished checks,
//! firing timers (telling a check timed out in the queue from one timed out running), and
//! retiring 2025-era sessions.

use std::cmp::Reverse;
use std::sync::Arc;

use mrtr_core::lease::{
    Action, CheckRequest, CheckResult, ContextHandle, EndReason, Failure, TimeoutPhase,
};

use super::authorizer::{Authorization, AuthorizationContext};
use super::events::Event;
use super::executor::{Completion, Job, JobCell};
use super::registry::{Entry, Registry, SubscriptionKey};
use super::target::{Target, completion_result_json};
use crate::clock::MonotonicClock;

impl<C: MonotonicClock> Registry<C> {
    /// Carries out an action and whatever it leads to.
    pub(super) fn apply(&mut self, now: u64, key: SubscriptionKey, action: Action) {
        let mut next = Some(action);
        while let Some(action) = next.take() {
            next = match action {
                Action::StartCheck(req) => self.start_check(now, key, req),
                Action::Acknowledge { expires_at_ms } => {
                    if let Some(entry) = self.subs.get(&key) {
                        self.counters.acknowledged += 1;
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
                        self.counters.rejected += 1;
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
        if let Some((_, old)) = entry.job.take() {
            // Superseded: cancel it; if it keeps running, give it up at its own deadline.
            if self.executor.cancel(&old) == Some(TimeoutPhase::Running) {
                let give_up_at = now.saturating_add(self.cfg.lease.check_timeout_ms);
                self.zombies.push((give_up_at, old));
            }
        }
        self.counters.check_started(req.kind);
        let ctx = AuthorizationContext {
            kind: req.kind,
            target: entry.target.clone(),
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
                entry.job = Some((req.id, cell));
                None
            }
            Err(_) => {
                self.counters.failure(Failure::Overloaded);
                let failed = CheckResult::Failed(Failure::Overloaded);
                entry.lease.on_check_result(now, req.id, failed)
            }
        }
    }

    pub(super) fn apply_completion(&mut self, now: u64, c: Completion) {
        let Some(entry) = self.subs.get_mut(&c.key) else {
            self.counters.stale_results += 1;
            return;
        };
        let current = entry.job.as_ref().is_some_and(|(id, _)| *id == c.check)
            && entry.lease.in_flight().is_some_and(|f| f.id == c.check);
        if !current {
            self.counters.stale_results += 1;
            return;
        }
        entry.job = None;
        let handle = ContextHandle(c.check.raw());
        let (result, value) = match c.outcome {
            Ok(Authorization::Allowed(grant)) => {
                self.counters.allowed += 1;
                let result = CheckResult::Allowed {
                    valid_until_ms: grant.valid_until_ms,
                    context: grant.context.as_ref().map(|_| handle),
                };
                (result, grant.context)
            }
            Ok(Authorization::Denied) => {
                self.counters.denied += 1;
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
        let timed_out = match (entry.lease.in_flight(), &entry.job) {
            (Some(check), Some((id, _))) => check.id == *id && now >= check.deadline_ms,
            _ => false,
        };
        if timed_out && let Some((id, cell)) = entry.job.take() {
            let phase = match self.executor.cancel(&cell) {
                Some(TimeoutPhase::Queued) => TimeoutPhase::Queued,
                _ => {
                    if self.executor.abandon(&cell) {
                        self.counters.abandoned_workers += 1;
                    }
                    TimeoutPhase::Running
                }
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
                counters.abandoned_workers += 1;
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
        self.counters.sessions_retired += 1;
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

    /// Forgets a subscription, cancelling its check.
    fn remove(&mut self, now: u64, key: SubscriptionKey) -> Option<Entry> {
        let mut entry = self.subs.remove(&key)?;
        if let Some((_, cell)) = entry.job.take()
            && self.executor.cancel(&cell) == Some(TimeoutPhase::Running)
        {
            let give_up_at = now.saturating_add(self.cfg.lease.check_timeout_ms);
            self.zombies.push((give_up_at, cell));
        }
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
