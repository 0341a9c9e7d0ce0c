//! 2026-07-28 `subscriptions/listen` behaviour of the subscription registry, driven by a
//! manual monotonic clock. Checks run on real worker threads; every test waits for them
//! explicitly before moving the clock, so outcomes do not depend on scheduling.

mod support;
use support::registry::{Gate, settle};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mrtr_core::Clock;
use mrtr_std::caller::Caller;
use mrtr_std::clock::ManualClock;
use mrtr_std::core::lease::{CheckKind, EndReason, Failure};
use mrtr_subscriptions::{
    Admission, Authorization, AuthorizationContext, Authorizer, Event, Grant, InvocationFeatures,
    NotificationFilter, Registry, RegistryConfig, RequestId, SubscriptionKey, Target,
};

struct Harness {
    clock: ManualClock,
    reg: Registry<ManualClock>,
}

impl Harness {
    fn new(auth: impl Authorizer + 'static) -> Self {
        Self::with_config(auth, RegistryConfig::default())
    }

    fn with_config(auth: impl Authorizer + 'static, cfg: RegistryConfig) -> Self {
        let clock = ManualClock::new(1_000);
        let reg = Registry::new(clock.clone(), Arc::new(auth), cfg);
        Self { clock, reg }
    }

    /// Drives until no check is queued or running; returns the events.
    fn settle(&mut self) -> Vec<Event> {
        settle(&mut self.reg)
    }

    fn advance_to(&mut self, t: u64) -> Vec<Event> {
        self.clock.set(t);
        self.settle()
    }

    fn listen(&mut self, id: i64) -> SubscriptionKey {
        let filter = NotificationFilter {
            tools_list_changed: true,
            resource_subscriptions: vec!["file:///a".into()],
            ..Default::default()
        };
        self.reg
            .listen(RequestId::Number(id), filter, Admission::anonymous())
            .expect("admitted")
    }

    fn listen_established(&mut self, id: i64) -> SubscriptionKey {
        let key = self.listen(id);
        let events = self.settle();
        assert!(
            matches!(events.as_slice(), [Event::Acknowledged { key: k, .. }] if *k == key),
            "{events:?}"
        );
        key
    }

    fn renew_at(&self, key: SubscriptionKey) -> u64 {
        self.reg.lease(key).unwrap().renew_at_ms().unwrap()
    }

    fn expires_at(&self, key: SubscriptionKey) -> u64 {
        self.reg.lease(key).unwrap().expires_at_ms().unwrap()
    }
}

fn allow_for(secs: u64) -> impl Authorizer + 'static {
    move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        Ok(Authorization::Allowed(Grant::for_duration(
            ctx,
            Duration::from_secs(secs),
        )))
    }
}

/// Answers by check kind: initial checks allow for 60 s, later ones follow `later`.
fn initial_then(
    later: impl Fn(&AuthorizationContext) -> Result<Authorization, String> + Send + Sync + 'static,
) -> impl Authorizer + 'static {
    move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        if ctx.kind() == CheckKind::Initial {
            Ok(Authorization::Allowed(Grant::for_duration(
                ctx,
                Duration::from_secs(60),
            )))
        } else {
            later(ctx).map_err(Into::into)
        }
    }
}

fn ended(events: &[Event]) -> Option<(EndReason, &str)> {
    events.iter().find_map(|e| match e {
        Event::Ended {
            reason, completion, ..
        } => Some((*reason, completion.as_str())),
        _ => None,
    })
}

#[test]
fn initial_check_completes_before_acknowledgment() {
    let gate = Arc::new(Gate::default());
    let g = gate.clone();
    let mut h = Harness::new(move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        g.wait();
        Ok(Authorization::Allowed(Grant::for_duration(
            ctx,
            Duration::from_secs(60),
        )))
    });
    let key = h.listen(1);
    let mut events = Vec::new();
    h.reg.drive(&mut events);
    assert!(events.is_empty(), "nothing before the check completes");
    assert!(!h.reg.may_deliver(key));
    gate.open();
    let events = h.settle();
    assert!(
        matches!(events.as_slice(), [Event::Acknowledged { key: k, target: Target::Listen(RequestId::Number(1)), .. }] if *k == key)
    );
    assert!(h.reg.may_deliver(key));
}

#[test]
fn initial_denial_sends_no_acknowledgment() {
    let mut h = Harness::new(mrtr_subscriptions::DenyAll);
    let key = h.listen(1);
    let events = h.settle();
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(matches!(
        &events[0],
        Event::Rejected { key: k, reason: EndReason::Denied, .. } if *k == key
    ));
    assert!(!h.reg.may_deliver(key));
    assert_eq!(h.reg.counters().acknowledged, 0);
}

#[test]
fn initial_denial_holds_no_quota() {
    let cfg = RegistryConfig {
        max_subscriptions: 1,
        ..Default::default()
    };
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let mut h = Harness::with_config(
        move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
            if c.fetch_add(1, Ordering::SeqCst) == 0 {
                Ok(Authorization::Denied)
            } else {
                Ok(Authorization::Allowed(Grant::for_duration(
                    ctx,
                    Duration::from_secs(60),
                )))
            }
        },
        cfg,
    );
    h.listen(1);
    assert_eq!(
        h.reg.listen(
            RequestId::Number(9),
            NotificationFilter::default(),
            Admission::anonymous()
        ),
        Err(mrtr_subscriptions::Refused::AtCapacity),
        "a pending subscription holds its slot"
    );
    h.settle();
    assert_eq!(h.reg.len(), 0);
    h.listen_established(2);
}

#[test]
fn initial_error_rejects_without_acknowledgment() {
    let mut h = Harness::new(|_: &AuthorizationContext, _: &InvocationFeatures| {
        Err("directory unavailable".into())
    });
    h.listen(1);
    let events = h.settle();
    assert!(matches!(
        events.as_slice(),
        [Event::Rejected {
            reason: EndReason::CheckFailed(Failure::Error),
            ..
        }]
    ));
}

#[test]
fn context_carries_principal_evidence_filter_uris_and_deadline() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let mut h = Harness::new(move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        s.lock().unwrap().push((
            ctx.kind(),
            ctx.caller()
                .issuer()
                .zip(ctx.caller().subject())
                .map(|(i, s)| (i.to_owned(), s.to_owned())),
            ctx.evidence_as::<&str>().copied(),
            ctx.filter().tools_list_changed,
            ctx.resource_uris().to_vec(),
            ctx.previous_expiry_ms(),
            ctx.issued_at_ms(),
            ctx.deadline_ms(),
        ));
        Ok(Authorization::Allowed(Grant::for_duration(
            ctx,
            Duration::from_secs(60),
        )))
    });
    let filter = NotificationFilter {
        tools_list_changed: true,
        resource_subscriptions: vec!["file:///x".into()],
        ..Default::default()
    };
    let key = h
        .reg
        .listen(
            RequestId::Number(1),
            filter,
            Admission::of(Caller::user("idp", "alice")).with_evidence(Arc::new("scope-a")),
        )
        .unwrap();
    h.settle();
    let renew = h.renew_at(key);
    h.advance_to(renew);
    let seen = seen.lock().unwrap();
    let uris = vec!["file:///x".to_string()];
    let alice = Some(("idp".to_owned(), "alice".to_owned()));
    assert_eq!(
        seen[0],
        (
            CheckKind::Initial,
            alice.clone(),
            Some("scope-a"),
            true,
            uris.clone(),
            None,
            1_000,
            6_000
        )
    );
    let expiry = 1_000 + 60_000;
    assert_eq!(
        seen[1],
        (
            CheckKind::Renewal,
            alice,
            Some("scope-a"),
            true,
            uris,
            Some(expiry),
            renew,
            renew + 5_000
        )
    );
}

#[test]
fn renewal_at_half_lease() {
    let kinds = Arc::new(Mutex::new(Vec::new()));
    let k = kinds.clone();
    let mut h = Harness::new(move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        k.lock().unwrap().push((ctx.kind(), ctx.issued_at_ms()));
        Ok(Authorization::Allowed(Grant::for_duration(
            ctx,
            Duration::from_secs(60),
        )))
    });
    let key = h.listen_established(1);
    let renew = h.renew_at(key);
    assert!(
        (31_000..=32_000).contains(&renew),
        "half of 60 s plus a stagger ≤ 1 s: {renew}"
    );
    h.advance_to(renew - 1);
    assert_eq!(
        kinds.lock().unwrap().len(),
        1,
        "no renewal before it is due"
    );
    h.advance_to(renew);
    assert_eq!(
        kinds.lock().unwrap().as_slice(),
        &[(CheckKind::Initial, 1_000), (CheckKind::Renewal, renew)]
    );
    assert_eq!(h.expires_at(key), renew + 60_000);
    assert!(h.reg.may_deliver(key));
}

#[test]
fn clipped_lease() {
    let mut h = Harness::new(allow_for(3_600));
    let key = h.listen_established(1);
    assert_eq!(h.expires_at(key), 1_000 + 60_000);
}

#[test]
fn same_expiry_renewal_does_not_reschedule() {
    let mut h = Harness::new(|_: &AuthorizationContext, _: &InvocationFeatures| {
        Ok(Authorization::Allowed(Grant::until_ms(41_000)))
    });
    let key = h.listen_established(1);
    assert_eq!(h.expires_at(key), 41_000);
    let renew = h.renew_at(key);
    h.advance_to(renew);
    assert_eq!(h.reg.counters().renewal_checks, 1);
    assert_eq!(h.reg.lease(key).unwrap().renew_at_ms(), None);
    assert!(
        h.reg.may_deliver(key),
        "still delivering under the old lease"
    );
    assert!(h.advance_to(40_999).is_empty());
    let events = h.advance_to(41_000);
    let (reason, completion) = ended(&events).expect("stream ended");
    assert_eq!(reason, EndReason::Expired);
    assert_eq!(
        completion,
        r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":1}}"#
    );
    assert_eq!(h.reg.counters().renewal_checks, 1, "no further renewal");
    assert!(!h.reg.may_deliver(key));
}

#[test]
fn renewal_denial_ends_stream_with_tagged_completion() {
    let mut h = Harness::new(initial_then(|_| Ok(Authorization::Denied)));
    let key = h.listen_established(7);
    let renew = h.renew_at(key);
    let events = h.advance_to(renew);
    assert_eq!(
        ended(&events),
        Some((
            EndReason::Denied,
            r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":7}}"#
        ))
    );
    assert!(!h.reg.may_deliver(key));
    assert_eq!(h.reg.counters().ended_denied, 1);
    assert_eq!(h.reg.len(), 0);
}

#[test]
fn renewal_failure_ends_stream_as_check_failed() {
    let mut h = Harness::new(initial_then(|_| Err("backend down".into())));
    let key = h.listen_established(1);
    let events = h.advance_to(h.renew_at(key));
    assert_eq!(
        ended(&events).map(|e| e.0),
        Some(EndReason::CheckFailed(Failure::Error))
    );
    assert_eq!(h.reg.counters().ended_check_failed, 1);
}

#[test]
fn ordinary_renewal_keeps_delivering_while_it_runs() {
    let gate = Arc::new(Gate::default());
    let g = gate.clone();
    let mut h = Harness::new(move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        if ctx.kind() != CheckKind::Initial {
            g.wait();
        }
        Ok(Authorization::Allowed(Grant::for_duration(
            ctx,
            Duration::from_secs(60),
        )))
    });
    let key = h.listen_established(1);
    h.clock.set(h.renew_at(key));
    h.reg.drive(&mut Vec::new());
    assert_eq!(h.reg.pending_checks(), 1);
    assert!(h.reg.may_deliver(key));
    gate.open();
    h.settle();
    assert!(h.reg.may_deliver(key));
}

#[test]
fn reconciliation_fences_and_discards_stale_result() {
    let gate = Arc::new(Gate::default());
    let g = gate.clone();
    let mut h = Harness::new(move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        match ctx.kind() {
            // The renewal is slow, and would grant for an hour.
            CheckKind::Renewal => {
                g.wait();
                Ok(Authorization::Allowed(Grant::for_duration(
                    ctx,
                    Duration::from_secs(3_600),
                )))
            }
            _ => Ok(Authorization::Allowed(Grant::for_duration(
                ctx,
                Duration::from_secs(20),
            ))),
        }
    });
    let key = h.listen_established(1);
    let renew = h.renew_at(key);
    h.clock.set(renew);
    h.reg.drive(&mut Vec::new());
    assert!(h.reg.may_deliver(key));

    assert!(h.reg.reconcile(key));
    assert!(!h.reg.may_deliver(key), "fenced at once");
    gate.open();
    h.settle();
    assert_eq!(
        h.expires_at(key),
        renew + 20_000,
        "only the reconciliation's grant counts"
    );
    assert!(h.reg.may_deliver(key));
    assert_eq!(h.reg.counters().reconciliation_checks, 1);
}

#[test]
fn cancelled_check_cannot_extend_lease() {
    let gate = Arc::new(Gate::default());
    let g = gate.clone();
    let mut h = Harness::new(
        move |ctx: &AuthorizationContext, features: &InvocationFeatures| {
            match ctx.kind() {
                CheckKind::Initial => Ok(Authorization::Allowed(Grant::for_duration(
                    ctx,
                    Duration::from_secs(60),
                ))),
                // Ignores its cancellation and grants anyway.
                CheckKind::Renewal => {
                    g.wait();
                    assert!(features.cancellation().is_cancelled());
                    Ok(Authorization::Allowed(Grant::until_ms(u64::MAX)))
                }
                CheckKind::Reconciliation => Ok(Authorization::Denied),
            }
        },
    );
    let key = h.listen_established(1);
    h.clock.set(h.renew_at(key));
    h.reg.drive(&mut Vec::new());
    h.reg.reconcile(key);
    let events = h.settle();
    assert_eq!(ended(&events).map(|e| e.0), Some(EndReason::Denied));
    gate.open();
    // The superseded renewal finishes late; nothing revives the subscription.
    std::thread::sleep(Duration::from_millis(50));
    let events = h.settle();
    assert!(events.is_empty(), "{events:?}");
    assert!(!h.reg.may_deliver(key));
    assert!(h.reg.lease(key).is_none());
}

#[test]
fn reconciliation_failure_ends_with_its_reason() {
    let mut h = Harness::new(initial_then(|_| Err("policy store down".into())));
    let key = h.listen_established(1);
    h.reg.reconcile(key);
    let events = h.settle();
    assert_eq!(
        ended(&events).map(|e| e.0),
        Some(EndReason::ReconciliationFailed(Failure::Error))
    );
    assert_eq!(h.reg.counters().ended_reconciliation_failed, 1);
}

#[test]
fn reconcile_all_fences_every_subscription() {
    let mut h = Harness::new(allow_for(60));
    let a = h.listen_established(1);
    let b = h.listen_established(2);
    assert_eq!(h.reg.reconcile_all(), 2);
    assert!(!h.reg.may_deliver(a) && !h.reg.may_deliver(b));
    h.settle();
    assert!(h.reg.may_deliver(a) && h.reg.may_deliver(b));
}

#[test]
fn application_context_flows_to_the_next_check_and_absence_clears_it() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let mut h = Harness::new(move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        let previous = ctx.application_context_as::<u32>().copied();
        s.lock().unwrap().push(previous);
        let grant = Grant::for_duration(ctx, Duration::from_secs(60));
        Ok(Authorization::Allowed(match previous {
            None if ctx.kind() == CheckKind::Initial => grant.with_context(Arc::new(1u32)),
            Some(n) if n < 2 => grant.with_context(Arc::new(n + 1)),
            _ => grant,
        }))
    });
    let key = h.listen_established(1);
    for _ in 0..3 {
        let at = h.renew_at(key);
        h.advance_to(at);
    }
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        &[None, Some(1), Some(2), None]
    );
    assert!(h.reg.application_context(key).is_none());
}

#[test]
fn expiry_ends_stream_without_renewal_answer() {
    let gate = Arc::new(Gate::default());
    let g = gate.clone();
    let cfg = RegistryConfig {
        lease: mrtr_std::core::lease::LeaseConfig {
            max_authorization_ms: 8_000,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut h = Harness::with_config(
        move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
            if ctx.kind() != CheckKind::Initial {
                g.wait();
            }
            Ok(Authorization::Allowed(Grant::for_duration(
                ctx,
                Duration::from_secs(60),
            )))
        },
        cfg,
    );
    let key = h.listen_established(1);
    let expiry = h.expires_at(key);
    h.clock.set(h.renew_at(key));
    h.reg.drive(&mut Vec::new());
    h.clock.set(expiry);
    let mut events = Vec::new();
    h.reg.drive(&mut events);
    // The renewal's own 5 s deadline is after the expiry: the lease runs out first.
    assert_eq!(ended(&events).map(|e| e.0), Some(EndReason::Expired));
    gate.open();
}

#[test]
fn wall_clock_jump_cannot_stretch_lease() {
    // The application derives its grant from a wall clock ("session valid until 12:00").
    // The wall clock jumps back a day; the lease still ends on the monotonic schedule.
    let wall = ManualClock::new(1_700_000_000_000);
    let valid_until_wall = wall.get() + 90_000;
    let w = wall.clone();
    let mut h = Harness::new(move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        let left = valid_until_wall.saturating_sub(Clock::now_ms(&w));
        Ok(Authorization::Allowed(Grant::until_ms(
            ctx.issued_at_ms() + left,
        )))
    });
    let key = h.listen_established(1);
    assert_eq!(h.expires_at(key), 61_000, "capped at one minute");
    wall.set(wall.get() - 86_400_000);
    let renew = h.renew_at(key);
    h.advance_to(renew);
    assert_eq!(
        h.expires_at(key),
        renew + 60_000,
        "still capped: no day-long lease"
    );
    // Without another renewal the lease ends one minute later on the monotonic clock.
    assert!(h.reg.may_deliver(key));
    h.clock.set(renew + 60_000);
    assert!(!h.reg.may_deliver(key));
}

#[test]
fn closing_a_listen_never_calls_the_authorizer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let mut h = Harness::new(move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        c.fetch_add(1, Ordering::SeqCst);
        Ok(Authorization::Allowed(Grant::for_duration(
            ctx,
            Duration::from_secs(60),
        )))
    });
    let key = h.listen_established(1);
    assert!(h.reg.close(key));
    let events = h.advance_to(200_000);
    assert!(events.is_empty());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(h.reg.counters().closed, 1);
    assert!(!h.reg.close(key));
}

#[test]
fn waker_fires_when_a_check_finishes() {
    let woken = Arc::new(AtomicUsize::new(0));
    let mut h = Harness::new(allow_for(60));
    let w = woken.clone();
    h.reg.set_waker(move || {
        w.fetch_add(1, Ordering::SeqCst);
    });
    h.listen(1);
    h.settle();
    assert!(woken.load(Ordering::SeqCst) >= 1);
}

#[test]
fn many_subscriptions_renew_on_their_own_schedule() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let mut h = Harness::new(move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        if let Target::Listen(RequestId::Number(id)) = ctx.target() {
            l.lock()
                .unwrap()
                .push((*id, ctx.kind(), ctx.issued_at_ms()));
        }
        Ok(Authorization::Allowed(Grant::for_duration(
            ctx,
            Duration::from_secs(60),
        )))
    });
    let keys: Vec<_> = (0..300).map(|i| h.listen(i)).collect();
    h.settle();
    let expected: Vec<u64> = keys.iter().map(|k| h.renew_at(*k)).collect();
    // Walk the registry's own deadlines until every subscription renewed once.
    while log.lock().unwrap().len() < 600 {
        let next = h.reg.next_deadline_ms().expect("a deadline is pending");
        assert!(next <= 32_000, "renewals are all due within 31 s");
        h.advance_to(next);
    }
    let log = log.lock().unwrap();
    for (i, want) in expected.iter().enumerate() {
        let renewals: Vec<u64> = log
            .iter()
            .filter(|(id, kind, _)| *id == i as i64 && *kind == CheckKind::Renewal)
            .map(|(_, _, at)| *at)
            .collect();
        assert_eq!(renewals, vec![*want], "subscription {i}");
    }
    let distinct: std::collections::BTreeSet<_> = expected.iter().collect();
    assert!(
        distinct.len() > 200,
        "staggers spread renewals: {}",
        distinct.len()
    );
    assert!(keys.iter().all(|k| h.reg.may_deliver(*k)));
}
