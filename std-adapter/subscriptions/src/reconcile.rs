//! Reconciliation: re-checking one subscription, those a [`Selector`] picks, or all of them,
//! and the backlog that spreads a mass reconciliation through the bounded executor.
//!
//! A reconciliation fences delivery at once. Its check goes to the executor queue while
//! reconciliations fill less than half of it; beyond that it is *held* in the registry's
//! backlog, still fenced, and handed over as checks finish ([`Registry::pump`]). A held
//! check never fails as overloaded, and its timeout counts from when it is handed over, so a
//! reconciliation of every subscription takes as long as the workers need and fails none.
//! The other half of the queue stays free for initial checks and renewals.

use super::index::Selector;
use super::key::SubscriptionKey;
use super::registry::{Check, Registry};
use mrtr_std::clock::MonotonicClock;

impl<C: MonotonicClock> Registry<C> {
    /// The application asks to re-check one subscription now: delivery is fenced at once.
    /// Returns whether the subscription exists.
    pub fn reconcile(&mut self, key: SubscriptionKey) -> bool {
        let found = self.reconcile_one(key);
        self.pump();
        found
    }

    /// Reconciles every subscription (after a policy change that may affect anyone). Their
    /// checks are spread through the executor, never failed for lack of room. Returns how
    /// many. O(n log n) in the subscriptions held.
    pub fn reconcile_all(&mut self) -> usize {
        let mut keys: Vec<_> = self.subs.keys().copied().collect();
        self.reconcile_keys(&mut keys)
    }

    /// Reconciles the subscriptions `selector` picks (after revoking a subject, or a change
    /// to one resource, say), found through an index: O(k log k) for the k selected, whatever
    /// the number held. Others are untouched: they keep delivering and run no check.
    /// Returns how many were reconciled.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mrtr_std::clock::ManualClock;
    /// use mrtr_std::caller::Caller;
    /// use mrtr_subscriptions::{Admission, NotificationFilter, Registry,
    ///     RegistryConfig, RequestId, Selector, deny_all};
    ///
    /// let mut registry = Registry::new(ManualClock::new(0), deny_all(), RegistryConfig::default());
    /// let alice = Admission::of(Caller::user("https://idp.example", "alice"));
    /// let bob = Admission::of(Caller::user("https://idp.example", "bob"));
    /// let f = NotificationFilter::default();
    /// registry.listen(RequestId::Number(1), f.clone(), alice.clone()).unwrap();
    /// registry.listen(RequestId::Number(2), f.clone(), alice).unwrap();
    /// registry.listen(RequestId::Number(3), f, bob).unwrap();
    /// assert_eq!(registry.reconcile_matching(&Selector::Subject("alice".into())), 2);
    /// assert_eq!(registry.reconcile_matching(&Selector::Subject("carol".into())), 0);
    /// ```
    pub fn reconcile_matching(&mut self, selector: &Selector) -> usize {
        let mut keys = self.matching(selector);
        self.reconcile_keys(&mut keys)
    }

    /// The subscriptions `selector` picks, from the indexes.
    fn matching(&self, selector: &Selector) -> Vec<SubscriptionKey> {
        match selector {
            Selector::Subject(subject) => self.index.subject(subject).collect(),
            // Anonymous subscriptions are not indexed: there is no one to revoke.
            Selector::Caller(c) => self
                .index
                .subject(c.subject().unwrap_or_default())
                .filter(|k| self.subs.get(k).is_some_and(|e| &e.caller == c))
                .collect(),
            Selector::Resource(uri) => self.index.uri(uri).collect(),
            Selector::Family(family) => self.index.family(*family).collect(),
            Selector::Session(session) => self
                .sessions
                .get(session.as_str())
                .map(|uris| uris.values().copied().collect())
                .unwrap_or_default(),
        }
    }

    /// Reconciles `keys` oldest first (a deterministic order for the backlog).
    fn reconcile_keys(&mut self, keys: &mut [SubscriptionKey]) -> usize {
        keys.sort_unstable();
        let n = keys.iter().filter(|k| self.reconcile_one(**k)).count();
        self.pump();
        n
    }

    fn reconcile_one(&mut self, key: SubscriptionKey) -> bool {
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

    /// How many executor slots reconciliations may fill: half the queue, rounded up.
    pub(super) fn reconcile_slots(&self) -> usize {
        self.cfg.queue_capacity.div_ceil(2)
    }

    /// Hands held checks to the executor, oldest first, while reconciliations may take more
    /// of its queue. Their deadlines start now.
    pub(super) fn pump(&mut self) {
        if self.backlog.is_empty() {
            return;
        }
        let now = self.clock.now_ms();
        let slots = self.reconcile_slots();
        // Held checks that cannot be issued stay in line (at the front, in order).
        let mut overdue = Vec::new();
        while self.executor.queued() < slots {
            let Some(key) = self.backlog.pop_front() else {
                break;
            };
            let Some(entry) = self.subs.get_mut(&key) else {
                continue;
            };
            let Some(Check::Held(req)) = entry.check else {
                continue;
            };
            // `None`: a pending lease's deadline passed meanwhile; its timer rejects it.
            let Some(deadline_ms) = entry.lease.issue(now, req.id) else {
                overdue.push(key);
                continue;
            };
            let req = mrtr_core::lease::CheckRequest { deadline_ms, ..req };
            if !self.submit(now, key, req) {
                // Only a shutting-down executor refuses a job below its capacity.
                if let Some(entry) = self.subs.get_mut(&key) {
                    entry.lease.hold(now, req.id);
                }
                self.backlog.push_front(key);
                break;
            }
            self.reschedule(key);
        }
        for key in overdue.into_iter().rev() {
            self.backlog.push_front(key);
        }
    }
}
