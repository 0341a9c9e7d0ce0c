//! The subscription registry: many leases, one timer heap, one bounded executor.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mrtr_core::lease::{
    Action, CheckId, CheckRequest, CheckResult, ContextHandle, EndReason, Era, Failure, Lease,
    LeaseConfig, Phase, TimeoutPhase, stagger_ms,
};

use super::authorizer::{AppValue, Authorization, AuthorizationContext, Authorizer};
use super::counters::Counters;
use super::events::{Event, EventSink, Refused};
use super::executor::{Completion, Completions, Executor, Job, JobCell};
use super::target::{NotificationFilter, RequestId, Target, completion_result_json};
use crate::clock::MonotonicClock;

/// Identifies one subscription inside a registry. Never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SubscriptionKey(u64);

impl SubscriptionKey {
    /// The raw number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for SubscriptionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sub-{}", self.0)
    }
}

/// Registry limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegistryConfig {
    /// Lease rules (grant cap, lifetime, check timeout, stagger, 2025-era retries).
    pub lease: LeaseConfig,
    /// Worker threads that run checks (at least one).
    pub workers: usize,
    /// Checks that may wait for a worker; beyond it a check fails closed at once.
    pub queue_capacity: usize,
    /// Replacement workers for workers stuck in a hanging authorizer past its deadline.
    pub max_spare_workers: usize,
    /// Subscriptions held at once, pending ones included; beyond it new ones are refused.
    pub max_subscriptions: usize,
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            lease: LeaseConfig::DEFAULT,
            workers: 2,
            queue_capacity: 4_096,
            max_spare_workers: 2,
            max_subscriptions: 100_000,
        }
    }
}

struct Entry {
    lease: Lease,
    target: Target,
    evidence: Option<AppValue>,
    filter: Arc<NotificationFilter>,
    uris: Arc<[String]>,
    context: Option<AppValue>,
    job: Option<(CheckId, Arc<JobCell>)>,
    timer_at: Option<u64>,
}

/// Holds every subscription's lease, runs their checks on a bounded worker pool and drives
/// their timers from one heap keyed by next deadline.
///
/// Single-owner (`&mut self`); share it as `Arc<Mutex<Registry<_>>>`. Nothing here blocks
/// except [`wait_for_completions`](Self::wait_for_completions): authorizers run on the
/// registry's own threads. See the [module documentation](super) for the driving loop.
pub struct Registry<C> {
    clock: C,
    cfg: RegistryConfig,
    authorizer: Arc<dyn Authorizer>,
    executor: Executor,
    completions: Arc<Completions>,
    subs: HashMap<SubscriptionKey, Entry>,
    sessions: HashMap<Arc<str>, HashMap<Arc<str>, SubscriptionKey>>,
    timers: BinaryHeap<Reverse<(u64, SubscriptionKey)>>,
    zombies: Vec<(u64, Arc<JobCell>)>,
    outbox: Vec<Event>,
    counters: Counters,
    next_key: u64,
}

impl<C: MonotonicClock> Registry<C> {
    /// A registry reading `clock`, asking `authorizer`, with its worker threads started.
    pub fn new(clock: C, authorizer: Arc<dyn Authorizer>, cfg: RegistryConfig) -> Self {
        let completions = Arc::new(Completions::new());
        let executor = Executor::new(cfg.workers, cfg.queue_capacity, cfg.max_spare_workers);
        Self {
            clock,
            cfg,
            authorizer,
            executor,
            completions,
            subs: HashMap::new(),
            sessions: HashMap::new(),
            timers: BinaryHeap::new(),
            zombies: Vec::new(),
            outbox: Vec::new(),
            counters: Counters::default(),
            next_key: 0,
        }
    }

    /// Called (from any thread) whenever [`drive`](Self::drive) has new work: a check
    /// finished or an event is waiting. Use it to wake the driving task, e.g. with
    /// `tokio::sync::Notify::notify_one`. Keep it cheap and non-blocking. Set once.
    pub fn set_waker(&self, waker: impl Fn() + Send + Sync + 'static) {
        self.completions.set_waker(Arc::new(waker));
    }

    /// Starts a 2026-07-28 `subscriptions/listen` subscription: its initial check runs now;
    /// an [`Event::Acknowledged`] or [`Event::Rejected`] follows from [`drive`](Self::drive).
    /// Send nothing on the stream before the acknowledgment.
    pub fn listen(
        &mut self,
        id: RequestId,
        filter: NotificationFilter,
        evidence: Option<AppValue>,
    ) -> Result<SubscriptionKey, Refused> {
        self.admit()?;
        let key = self.new_key();
        // Clients reuse small request ids; the key keeps their staggers apart.
        let mut seed = id.seed_bytes();
        seed.extend_from_slice(&key.0.to_be_bytes());
        let uris: Arc<[String]> = filter.resource_subscriptions.clone().into();
        let target = Target::Listen(id);
        self.insert(key, Era::Listen, target, &seed, filter, uris, evidence);
        Ok(key)
    }

    /// Starts a 2025-era `resources/subscribe` grant owned by `session`: its initial check
    /// runs now. A rejection answers the request with an error and leaves the session alive.
    pub fn subscribe_resource(
        &mut self,
        session: &str,
        uri: &str,
        evidence: Option<AppValue>,
    ) -> Result<SubscriptionKey, Refused> {
        if let Some(key) = self.sessions.get(session).and_then(|m| m.get(uri)) {
            return Err(Refused::AlreadySubscribed(*key));
        }
        self.admit()?;
        let key = self.new_key();
        let session: Arc<str> = session.into();
        let uri: Arc<str> = uri.into();
        let mut seed = session.as_bytes().to_vec();
        seed.push(0);
        seed.extend_from_slice(uri.as_bytes());
        self.sessions
            .entry(session.clone())
            .or_default()
            .insert(uri.clone(), key);
        let uris: Arc<[String]> = vec![uri.to_string()].into();
        let target = Target::Resource { session, uri };
        let filter = NotificationFilter::default();
        self.insert(key, Era::Session, target, &seed, filter, uris, evidence);
        Ok(key)
    }

    /// `resources/unsubscribe`: ends the grant without calling the authorizer and without
    /// retiring the session. Returns whether it existed.
    pub fn unsubscribe_resource(&mut self, session: &str, uri: &str) -> bool {
        match self.sessions.get(session).and_then(|m| m.get(uri)).copied() {
            Some(key) => self.close(key),
            None => false,
        }
    }

    /// The client cancelled its listen, its stream broke, or the server is shutting the
    /// subscription down: forget it without calling the authorizer. Returns whether it
    /// existed.
    pub fn close(&mut self, key: SubscriptionKey) -> bool {
        let now = self.clock.now_ms();
        let Some(entry) = self.subs.get_mut(&key) else {
            return false;
        };
        if let Some(action) = entry.lease.close(now) {
            self.apply(now, key, action);
        }
        true
    }

    /// The session ended (deleted or expired): release all its grants, no authorizer call.
    /// Returns how many there were.
    pub fn close_session(&mut self, session: &str) -> usize {
        let keys: Vec<_> = self
            .sessions
            .get(session)
            .map(|m| m.values().copied().collect())
            .unwrap_or_default();
        keys.iter().filter(|k| self.close(**k)).count()
    }

    /// The application asks to re-check one subscription now: delivery is fenced at once.
    pub fn reconcile(&mut self, key: SubscriptionKey) -> bool {
        let now = self.clock.now_ms();
        let Some(entry) = self.subs.get_mut(&key) else {
            return false;
        };
        if let Some(action) = entry.lease.reconcile(now) {
            self.apply(now, key, action);
        }
        self.reschedule(key);
        true
    }

    /// Reconciles every subscription. Returns how many.
    pub fn reconcile_all(&mut self) -> usize {
        let keys: Vec<_> = self.subs.keys().copied().collect();
        keys.into_iter().filter(|k| self.reconcile(*k)).count()
    }

    /// The delivery gate: may a notification be sent on this subscription now?
    pub fn may_deliver(&self, key: SubscriptionKey) -> bool {
        let now = self.clock.now_ms();
        self.subs
            .get(&key)
            .is_some_and(|e| e.lease.may_deliver(now))
    }

    /// Applies finished checks and fires due timers, then hands the resulting events to
    /// `sink`. Call it when woken (see [`set_waker`](Self::set_waker)) and at
    /// [`next_deadline_ms`](Self::next_deadline_ms).
    pub fn drive(&mut self, sink: &mut impl EventSink) {
        let now = self.clock.now_ms();
        for completion in self.completions.drain() {
            self.apply_completion(now, completion);
        }
        let mut due = Vec::new();
        while let Some(&Reverse((at, key))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            if let Some(entry) = self.subs.get_mut(&key) {
                if entry.timer_at == Some(at) {
                    entry.timer_at = None;
                    due.push(key);
                }
            }
        }
        for key in due {
            self.fire(now, key);
        }
        self.reap_zombies(now);
        for event in self.outbox.drain(..) {
            sink.emit(event);
        }
    }

    /// When [`drive`](Self::drive) next has a timer to fire (monotonic ms), if ever.
    pub fn next_deadline_ms(&self) -> Option<u64> {
        let timer = self.timers.peek().map(|Reverse((at, _))| *at);
        let zombie = self.zombies.iter().map(|(at, _)| *at).min();
        match (timer, zombie) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// How long until [`next_deadline_ms`](Self::next_deadline_ms); zero if overdue.
    pub fn time_until_next_deadline(&self) -> Option<Duration> {
        let now = self.clock.now_ms();
        self.next_deadline_ms()
            .map(|at| Duration::from_millis(at.saturating_sub(now)))
    }

    /// Blocks (real time, at most `timeout`) until a finished check waits for
    /// [`drive`](Self::drive). For threads and tests; never call it on an async event loop.
    pub fn wait_for_completions(&self, timeout: Duration) -> bool {
        self.completions.wait(timeout)
    }

    /// Checks of live subscriptions whose result has not been applied yet (queued, running,
    /// or finished and waiting for [`drive`](Self::drive)).
    pub fn pending_checks(&self) -> usize {
        self.subs.values().filter(|e| e.job.is_some()).count()
    }

    /// Checks waiting for a worker.
    pub fn queued_checks(&self) -> usize {
        self.executor.queued()
    }

    /// A snapshot of the counters.
    pub fn counters(&self) -> Counters {
        Counters {
            active: self.subs.len() as u64,
            ..self.counters
        }
    }

    /// Subscriptions held (pending or established).
    pub fn len(&self) -> usize {
        self.subs.len()
    }

    /// Whether no subscription is held.
    pub fn is_empty(&self) -> bool {
        self.subs.is_empty()
    }

    /// A subscription's lease phase, while it is held.
    pub fn phase(&self, key: SubscriptionKey) -> Option<Phase> {
        self.subs.get(&key).map(|e| e.lease.phase())
    }

    /// A subscription's lease, while it is held (read-only, for diagnostics).
    pub fn lease(&self, key: SubscriptionKey) -> Option<&Lease> {
        self.subs.get(&key).map(|e| &e.lease)
    }

    /// The application context of a subscription's latest accepted grant.
    pub fn application_context(&self, key: SubscriptionKey) -> Option<AppValue> {
        self.subs.get(&key).and_then(|e| e.context.clone())
    }

    /// The monotonic clock the registry reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    fn admit(&self) -> Result<(), Refused> {
        if self.subs.len() >= self.cfg.max_subscriptions {
            Err(Refused::AtCapacity)
        } else {
            Ok(())
        }
    }

    fn new_key(&mut self) -> SubscriptionKey {
        self.next_key += 1;
        SubscriptionKey(self.next_key)
    }

    #[allow(clippy::too_many_arguments)]
    fn insert(
        &mut self,
        key: SubscriptionKey,
        era: Era,
        target: Target,
        seed: &[u8],
        filter: NotificationFilter,
        uris: Arc<[String]>,
        evidence: Option<AppValue>,
    ) {
        let now = self.clock.now_ms();
        let stagger = stagger_ms(seed, self.cfg.lease.max_stagger_ms);
        let (lease, first) = Lease::new(self.cfg.lease, era, stagger, now);
        let entry = Entry {
            lease,
            target,
            evidence,
            filter: Arc::new(filter),
            uris,
            context: None,
            job: None,
            timer_at: None,
        };
        self.subs.insert(key, entry);
        self.apply(now, key, first);
        self.reschedule(key);
    }

    /// Carries out an action and whatever it leads to.
    fn apply(&mut self, now: u64, key: SubscriptionKey, action: Action) {
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

    fn apply_completion(&mut self, now: u64, c: Completion) {
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
    fn fire(&mut self, now: u64, key: SubscriptionKey) {
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

    fn reap_zombies(&mut self, now: u64) {
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
        if let Some((_, cell)) = entry.job.take() {
            if self.executor.cancel(&cell) == Some(TimeoutPhase::Running) {
                let give_up_at = now.saturating_add(self.cfg.lease.check_timeout_ms);
                self.zombies.push((give_up_at, cell));
            }
        }
        if let Target::Resource { session, uri } = &entry.target {
            if let Some(uris) = self.sessions.get_mut(session) {
                uris.remove(uri);
                if uris.is_empty() {
                    self.sessions.remove(session);
                }
            }
        }
        Some(entry)
    }

    fn reschedule(&mut self, key: SubscriptionKey) {
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

impl<C> Drop for Registry<C> {
    fn drop(&mut self) {
        for entry in self.subs.values() {
            if let Some((_, cell)) = &entry.job {
                let _ = self.executor.cancel(cell);
            }
        }
    }
}

impl<C> fmt::Debug for Registry<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("subscriptions", &self.subs.len())
            .field("config", &self.cfg)
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}
