//! The subscription registry: many leases, one timer heap, one bounded executor.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mrtr_core::lease::{CheckId, CheckRequest, Era, Lease, LeaseConfig, Phase, stagger_ms};

use super::admission::Admission;

use super::admission::AppValue;
use super::authorizer::Authorizer;
use super::counters::Counters;
use super::events::{Event, EventSink, Refused};
use super::executor::{Completions, Executor, JobCell};
use super::index::Index;
use super::key::SubscriptionKey;
use super::target::{NotificationFilter, RequestId, Target};
use mrtr_std::caller::Caller;
use mrtr_std::clock::MonotonicClock;

/// Registry limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegistryConfig {
    /// Lease rules (grant cap, lifetime, check timeout, stagger, 2025-era retries).
    pub lease: LeaseConfig,
    /// Worker threads that run checks (at least one).
    pub workers: usize,
    /// Checks that may wait for a worker. Reconciliations fill at most half of it and wait
    /// their turn (fenced) beyond that; an initial check that finds it full fails closed at
    /// once (the listen is refused), a renewal fails transiently (fenced, retried).
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

/// A subscription's check whose result has not been applied yet.
pub(super) enum Check {
    /// Held back for room in the executor queue (a reconciliation waiting its turn in the
    /// registry's backlog). Its deadline runs from when it is handed over.
    Held(CheckRequest),
    /// Handed to the executor: queued, running, or finished and waiting for `drive`.
    Submitted(CheckId, Arc<JobCell>),
}

impl Check {
    pub(super) fn id(&self) -> CheckId {
        match self {
            Self::Held(req) => req.id,
            Self::Submitted(id, _) => *id,
        }
    }
}

pub(super) struct Entry {
    pub(super) lease: Lease,
    pub(super) target: Target,
    pub(super) caller: Caller,
    pub(super) evidence: Option<AppValue>,
    pub(super) filter: Arc<NotificationFilter>,
    pub(super) uris: Arc<[String]>,
    pub(super) context: Option<AppValue>,
    pub(super) check: Option<Check>,
    pub(super) timer_at: Option<u64>,
}

/// Holds every subscription's lease, runs their checks on a bounded worker pool and drives
/// their timers from one heap keyed by next deadline.
///
/// Single-owner (`&mut self`); share it as `Arc<Mutex<Registry<_>>>`. Nothing here blocks
/// except [`wait_for_completions`](Self::wait_for_completions): authorizers run on the
/// registry's own threads. See the [module documentation](super) for the driving loop.
pub struct Registry<C> {
    pub(super) clock: C,
    pub(super) cfg: RegistryConfig,
    pub(super) authorizer: Arc<dyn Authorizer>,
    pub(super) executor: Executor,
    pub(super) completions: Arc<Completions>,
    pub(super) subs: HashMap<SubscriptionKey, Entry>,
    pub(super) sessions: HashMap<Arc<str>, HashMap<Arc<str>, SubscriptionKey>>,
    pub(super) index: Index,
    /// Held checks in the order they wait; a key whose check is no longer held is skipped.
    pub(super) backlog: VecDeque<SubscriptionKey>,
    pub(super) timers: BinaryHeap<Reverse<(u64, SubscriptionKey)>>,
    pub(super) zombies: Vec<(u64, Arc<JobCell>)>,
    pub(super) outbox: Vec<Event>,
    pub(super) counters: Counters,
    pub(super) next_key: u64,
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
            index: Index::default(),
            backlog: VecDeque::new(),
            timers: BinaryHeap::new(),
            zombies: Vec::new(),
            outbox: Vec::new(),
            counters: Counters::default(),
            next_key: 0,
        }
    }

    /// Called (from any thread) whenever [`drive`](Self::drive) has new work: a check
    /// finished or an event is waiting. Use it to wake the driving task, e.g. with
    /// `tokio::sync::Notify::notify_one`. Keep it cheap and non-blocking, and never lock the
    /// registry in it: it is also called from inside registry methods. Set once.
    pub fn set_waker(&self, waker: impl Fn() + Send + Sync + 'static) {
        self.completions.set_waker(Arc::new(waker));
    }

    /// Starts a 2026-07-28 `subscriptions/listen` subscription: its initial check runs now;
    /// an [`Event::Acknowledged`] or [`Event::Rejected`] follows from [`drive`](Self::drive).
    /// Send nothing on the stream before the acknowledgment. `admission` is what the server
    /// authenticated: its caller is indexed for [`reconcile_matching`](Self::reconcile_matching).
    pub fn listen(
        &mut self,
        id: RequestId,
        filter: NotificationFilter,
        admission: Admission,
    ) -> Result<SubscriptionKey, Refused> {
        self.admit()?;
        let key = self.new_key();
        // Clients reuse small request ids; the key keeps their staggers apart.
        let mut seed = id.seed_bytes();
        seed.extend_from_slice(&key.get().to_be_bytes());
        let uris: Arc<[String]> = filter.resource_subscriptions.clone().into();
        let target = Target::Listen(id);
        self.insert(key, Era::Listen, target, &seed, filter, uris, admission);
        Ok(key)
    }

    /// Starts a 2025-era `resources/subscribe` grant owned by `session`: its initial check
    /// runs now. A rejection answers the request with an error and leaves the session alive.
    pub fn subscribe_resource(
        &mut self,
        session: &str,
        uri: &str,
        admission: Admission,
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
        self.insert(key, Era::Session, target, &seed, filter, uris, admission);
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
        // Its check may have left room in the executor queue.
        self.pump();
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

    /// The delivery gate: may a notification be sent on this subscription now?
    pub fn may_deliver(&self, key: SubscriptionKey) -> bool {
        let now = self.clock.now_ms();
        self.subs
            .get(&key)
            .is_some_and(|e| e.lease.may_deliver(now))
    }

    /// The delivery gate of a 2025-era grant: does `session` hold one for `uri`, and may a
    /// notification be sent on it now? (`resources/subscribe` keeps its grants here only.)
    pub fn may_deliver_resource(&self, session: &str, uri: &str) -> bool {
        self.sessions
            .get(session)
            .and_then(|m| m.get(uri))
            .is_some_and(|k| self.may_deliver(*k))
    }

    /// How many sessions hold at least one 2025-era grant now.
    pub fn sessions_with_grants(&self) -> usize {
        self.sessions.values().filter(|m| !m.is_empty()).count()
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
            if let Some(entry) = self.subs.get_mut(&key)
                && entry.timer_at == Some(at)
            {
                entry.timer_at = None;
                due.push(key);
            }
        }
        for key in due {
            self.fire(now, key);
        }
        self.reap_zombies(now);
        self.pump();
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

    /// Checks of live subscriptions whose result has not been applied yet (held, queued,
    /// running, or finished and waiting for [`drive`](Self::drive)). O(n).
    pub fn pending_checks(&self) -> usize {
        self.subs.values().filter(|e| e.check.is_some()).count()
    }

    /// Checks waiting for a worker in the executor queue.
    pub fn queued_checks(&self) -> usize {
        self.executor.queued()
    }

    /// Checks held back in the registry until the executor queue has room (reconciliations
    /// waiting their turn, fenced). O(n).
    pub fn held_checks(&self) -> usize {
        let held = |e: &&Entry| matches!(e.check, Some(Check::Held(_)));
        self.subs.values().filter(held).count()
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

    /// The caller a subscription was admitted for, while it is held.
    pub fn caller(&self, key: SubscriptionKey) -> Option<&Caller> {
        self.subs.get(&key).map(|e| &e.caller)
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
        SubscriptionKey::new(self.next_key)
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
        admission: Admission,
    ) {
        let now = self.clock.now_ms();
        let stagger = stagger_ms(seed, self.cfg.lease.max_stagger_ms);
        let (lease, first) = Lease::new(self.cfg.lease, era, stagger, now);
        let (caller, evidence) = admission.into_parts();
        self.index.insert(key, &caller, &filter, &uris);
        crate::obs::grant_added(target.kind());
        let entry = Entry {
            lease,
            target,
            caller,
            evidence,
            filter: Arc::new(filter),
            uris,
            context: None,
            check: None,
            timer_at: None,
        };
        self.subs.insert(key, entry);
        self.apply(now, key, first);
        self.reschedule(key);
    }
}

impl<C> Drop for Registry<C> {
    fn drop(&mut self) {
        for entry in self.subs.values() {
            crate::obs::grant_removed(entry.target.kind(), 1);
            if let Some(Check::Submitted(_, cell)) = &entry.check {
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
