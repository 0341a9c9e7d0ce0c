//! 2025-era `resources/subscribe` behaviour of the subscription registry: session-owned
//! resource URI grants, the retry budget and session retirement. Manual monotonic clock;
//! checks run on real workers and are waited for before the clock moves.

mod support;
use support::registry::settle;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mrtr_std::clock::ManualClock;
use mrtr_std::core::lease::{CheckKind, EndReason, Failure};
use mrtr_subscriptions::{
    Admission, Authorization, AuthorizationContext, Authorizer, Event, Grant, InvocationFeatures,
    Refused, Registry, RegistryConfig, SubscriptionKey, Target,
};

struct Harness {
    clock: ManualClock,
    reg: Registry<ManualClock>,
}

impl Harness {
    fn new(auth: impl Authorizer + 'static) -> Self {
        let clock = ManualClock::new(1_000);
        let reg = Registry::new(clock.clone(), Arc::new(auth), RegistryConfig::default());
        Self { clock, reg }
    }

    fn settle(&mut self) -> Vec<Event> {
        settle(&mut self.reg)
    }

    fn advance_to(&mut self, t: u64) -> Vec<Event> {
        self.clock.set(t);
        self.settle()
    }

    fn subscribe(&mut self, session: &str, uri: &str) -> (SubscriptionKey, Vec<Event>) {
        let key = self
            .reg
            .subscribe_resource(session, uri, Admission::anonymous())
            .expect("admitted");
        (key, self.settle())
    }

    fn subscribed(&mut self, session: &str, uri: &str) -> SubscriptionKey {
        let (key, events) = self.subscribe(session, uri);
        assert!(
            matches!(events.as_slice(), [Event::Acknowledged { key: k, .. }] if *k == key),
            "{events:?}"
        );
        key
    }

    fn renew_at(&self, key: SubscriptionKey) -> u64 {
        self.reg.lease(key).unwrap().renew_at_ms().unwrap()
    }

    fn retry_at(&self, key: SubscriptionKey) -> u64 {
        self.reg.lease(key).unwrap().retry_at_ms().unwrap()
    }
}

/// An authorizer that answers from a script, by call order, and records each call's kind and
/// issue time. Past the script it allows for 60 s.
#[derive(Clone, Default)]
struct Scripted {
    script: Arc<Mutex<Vec<&'static str>>>,
    calls: Arc<Mutex<Vec<(CheckKind, u64)>>>,
    /// When set, only this URI follows the script; others are always allowed.
    only_uri: Option<&'static str>,
}

impl Scripted {
    fn new(script: &[&'static str]) -> Self {
        let mut s: Vec<_> = script.to_vec();
        s.reverse();
        Self {
            script: Arc::new(Mutex::new(s)),
            ..Default::default()
        }
    }

    fn for_uri(uri: &'static str, script: &[&'static str]) -> Self {
        Self {
            only_uri: Some(uri),
            ..Self::new(script)
        }
    }

    fn calls(&self) -> Vec<(CheckKind, u64)> {
        self.calls.lock().unwrap().clone()
    }
}

impl Authorizer for Scripted {
    fn authorize(
        &self,
        ctx: &AuthorizationContext,
        _: &InvocationFeatures,
    ) -> Result<Authorization, mrtr_subscriptions::AuthorizeError> {
        let scripted = self
            .only_uri
            .is_none_or(|uri| ctx.resource_uris().iter().any(|u| u == uri));
        let step = if scripted {
            self.calls
                .lock()
                .unwrap()
                .push((ctx.kind(), ctx.issued_at_ms()));
            self.script.lock().unwrap().pop().unwrap_or("allow")
        } else {
            "allow"
        };
        match step {
            "allow" => Ok(Authorization::Allowed(Grant::for_duration(
                ctx,
                Duration::from_secs(60),
            ))),
            "deny" => Ok(Authorization::Denied),
            "error" => Err("transient".into()),
            "panic" => panic!("authorizer bug"),
            other => panic!("unknown script step {other}"),
        }
    }
}

fn retired(events: &[Event]) -> Option<(EndReason, &[SubscriptionKey])> {
    events.iter().find_map(|e| match e {
        Event::SessionRetired {
            reason, released, ..
        } => Some((*reason, released.as_slice())),
        _ => None,
    })
}

#[test]
fn three_consecutive_2025_failures_retire_session() {
    let auth = Scripted::for_uri("file:///a", &["allow", "error", "error", "error"]);
    let mut h = Harness::new(auth.clone());
    let a = h.subscribed("s1", "file:///a");
    let b = h.subscribed("s1", "file:///b");
    let renew = h.renew_at(a);
    assert!(h.advance_to(renew).is_empty());
    assert!(!h.reg.may_deliver(a), "a transient failure fences delivery");
    assert!(
        h.reg.may_deliver(b),
        "other grants of the session are unaffected so far"
    );
    assert!(h.advance_to(renew + 50).is_empty());
    let events = h.advance_to(renew + 150);
    let (reason, released) = retired(&events).expect("session retired");
    assert_eq!(reason, EndReason::RetriesExhausted(Failure::Error));
    assert_eq!(released, &[b]);
    assert!(!h.reg.may_deliver(a) && !h.reg.may_deliver(b));
    assert!(h.reg.is_empty());
    let c = h.reg.counters();
    assert_eq!(
        (c.sessions_retired, c.ended_retries_exhausted, c.errors),
        (1, 1, 3)
    );
    assert_eq!(auth.calls().len(), 4);
}

#[test]
fn retries_after_50_then_100_ms() {
    let auth = Scripted::new(&["allow", "error", "error", "allow"]);
    let mut h = Harness::new(auth.clone());
    let key = h.subscribed("s1", "file:///a");
    let renew = h.renew_at(key);
    h.advance_to(renew);
    assert_eq!(h.retry_at(key), renew + 50);
    h.advance_to(renew + 49);
    assert_eq!(auth.calls().len(), 2, "no retry before its backoff");
    h.advance_to(renew + 50);
    assert_eq!(h.retry_at(key), renew + 150);
    h.advance_to(renew + 150);
    let times: Vec<u64> = auth.calls().iter().map(|c| c.1).collect();
    assert_eq!(times, vec![1_000, renew, renew + 50, renew + 150]);
    assert!(h.reg.may_deliver(key));
}

#[test]
fn success_between_failures_resets_count() {
    let auth = Scripted::new(&[
        "allow", "error", "error", "allow", "error", "error", "allow",
    ]);
    let mut h = Harness::new(auth.clone());
    let key = h.subscribed("s1", "file:///a");
    for _ in 0..2 {
        let renew = h.renew_at(key);
        h.advance_to(renew);
        h.advance_to(h.retry_at(key));
        assert_eq!(h.reg.lease(key).unwrap().consecutive_failures(), 2);
        let events = h.advance_to(h.retry_at(key));
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(h.reg.lease(key).unwrap().consecutive_failures(), 0);
        assert!(h.reg.may_deliver(key));
    }
    assert_eq!(h.reg.counters().errors, 4);
    assert_eq!(h.reg.counters().sessions_retired, 0);
}

#[test]
fn explicit_2025_denial_retires_session() {
    let auth = Scripted::new(&["allow", "deny"]);
    let mut h = Harness::new(auth);
    let key = h.subscribed("s1", "file:///a");
    let events = h.advance_to(h.renew_at(key));
    assert!(matches!(
        events.as_slice(),
        [Event::SessionRetired { session, reason: EndReason::Denied, trigger, .. }]
            if &**session == "s1" && *trigger == key
    ));
}

#[test]
fn expired_2025_grant_retires_session() {
    // The renewal keeps the same end: no further renewal, and the grant runs out.
    let mut h = Harness::new(|_: &AuthorizationContext, _: &InvocationFeatures| {
        Ok(Authorization::Allowed(Grant::until_ms(20_000)))
    });
    let key = h.subscribed("s1", "file:///a");
    h.advance_to(h.renew_at(key));
    assert!(h.reg.may_deliver(key));
    let events = h.advance_to(20_000);
    assert_eq!(retired(&events).map(|r| r.0), Some(EndReason::Expired));
}

#[test]
fn panicking_2025_renewal_counts_as_a_failed_attempt() {
    let auth = Scripted::new(&["allow", "panic", "allow"]);
    let mut h = Harness::new(auth);
    let key = h.subscribed("s1", "file:///a");
    h.advance_to(h.renew_at(key));
    assert!(!h.reg.may_deliver(key));
    assert_eq!(h.reg.counters().panics, 1);
    h.advance_to(h.retry_at(key));
    assert!(h.reg.may_deliver(key));
}

#[test]
fn initial_subscribe_rejection_does_not_retire_session() {
    let auth = Scripted::new(&["allow", "deny", "error"]);
    let mut h = Harness::new(auth);
    let a = h.subscribed("s1", "file:///a");
    let (_, events) = h.subscribe("s1", "file:///b");
    assert!(matches!(
        events.as_slice(),
        [Event::Rejected {
            reason: EndReason::Denied,
            target: Target::Resource { .. },
            ..
        }]
    ));
    let (_, events) = h.subscribe("s1", "file:///c");
    assert!(matches!(
        events.as_slice(),
        [Event::Rejected {
            reason: EndReason::CheckFailed(Failure::Error),
            ..
        }]
    ));
    assert!(
        h.reg.may_deliver(a),
        "the session and its other grant live on"
    );
    assert_eq!(h.reg.counters().sessions_retired, 0);
    h.subscribed("s1", "file:///b");
}

#[test]
fn unsubscribe_never_calls_authorizer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let mut h = Harness::new(move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        c.fetch_add(1, Ordering::SeqCst);
        Ok(Authorization::Allowed(Grant::for_duration(
            ctx,
            Duration::from_secs(60),
        )))
    });
    let a = h.subscribed("s1", "file:///a");
    let b = h.subscribed("s1", "file:///b");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(h.reg.unsubscribe_resource("s1", "file:///a"));
    assert!(!h.reg.unsubscribe_resource("s1", "file:///a"));
    let events = h.settle();
    assert!(events.is_empty(), "no retirement: {events:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(!h.reg.may_deliver(a));
    assert!(h.reg.may_deliver(b));
    assert_eq!(h.reg.counters().sessions_retired, 0);
}

#[test]
fn unsubscribe_during_initial_check_never_retires() {
    let mut h = Harness::new(Scripted::new(&["error"]));
    let key = h
        .reg
        .subscribe_resource("s1", "file:///a", Admission::anonymous())
        .unwrap();
    assert!(h.reg.unsubscribe_resource("s1", "file:///a"));
    let events = h.settle();
    assert!(events.is_empty(), "{events:?}");
    assert!(h.reg.lease(key).is_none());
}

#[test]
fn duplicate_subscribe_is_refused_without_a_check() {
    let auth = Scripted::new(&[]);
    let mut h = Harness::new(auth.clone());
    let key = h.subscribed("s1", "file:///a");
    assert_eq!(
        h.reg
            .subscribe_resource("s1", "file:///a", Admission::anonymous()),
        Err(Refused::AlreadySubscribed(key))
    );
    assert_eq!(auth.calls().len(), 1);
    h.subscribed("s2", "file:///a");
}

#[test]
fn closing_a_session_releases_its_grants_quietly() {
    let auth = Scripted::new(&[]);
    let mut h = Harness::new(auth.clone());
    h.subscribed("s1", "file:///a");
    h.subscribed("s1", "file:///b");
    let other = h.subscribed("s2", "file:///a");
    assert_eq!(h.reg.close_session("s1"), 2);
    assert!(h.settle().is_empty());
    assert_eq!(h.reg.len(), 1);
    assert!(h.reg.may_deliver(other));
    assert_eq!(auth.calls().len(), 3);
}

#[test]
fn failed_reconciliation_fences_and_retries_within_the_lease() {
    let auth = Scripted::new(&["allow", "error", "allow"]);
    let mut h = Harness::new(auth.clone());
    let key = h.subscribed("s1", "file:///a");
    h.reg.reconcile(key);
    assert!(!h.reg.may_deliver(key));
    assert!(h.settle().is_empty());
    assert!(!h.reg.may_deliver(key));
    h.advance_to(h.retry_at(key));
    assert!(h.reg.may_deliver(key));
    let kinds: Vec<_> = auth.calls().iter().map(|c| c.0).collect();
    assert_eq!(
        kinds,
        [
            CheckKind::Initial,
            CheckKind::Reconciliation,
            CheckKind::Reconciliation
        ]
    );
}
