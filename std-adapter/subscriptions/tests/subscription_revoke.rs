//! Revocation without collateral damage: targeted reconciliation by subject, principal,
//! resource, family and session, and a mass reconciliation through an executor queue far
//! smaller than the number of subscriptions. Manual monotonic clock; real worker threads,
//! waited for explicitly.

mod support;
use support::registry::{Gate, settle};

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mrtr_std::caller::Caller;
use mrtr_std::clock::ManualClock;
use mrtr_std::core::lease::{CheckKind, EndReason};
use mrtr_subscriptions::{
    Admission, Authorization, AuthorizationContext, Event, Family, Grant, InvocationFeatures,
    NotificationFilter, Registry, RegistryConfig, RequestId, Selector, SubscriptionKey,
};

const SUBSCRIPTIONS: usize = 2_000;
const SUBJECTS: usize = 40;

/// Denies revoked subjects (and anonymous callers); records the subject of every
/// reconciliation check it answers. With a gate, reconciliation checks wait for it to open.
#[derive(Clone, Default)]
struct Policy {
    revoked: Arc<Mutex<HashSet<String>>>,
    reconciled: Arc<Mutex<Vec<String>>>,
    gate: Option<Arc<Gate>>,
}

impl Policy {
    fn registry(&self, cfg: RegistryConfig) -> Registry<ManualClock> {
        let p = self.clone();
        let authorizer = move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
            let Some(subject) = ctx.caller().subject() else {
                return Ok(Authorization::Denied);
            };
            if ctx.kind() == CheckKind::Reconciliation {
                if let Some(gate) = &p.gate {
                    gate.wait();
                }
                p.reconciled.lock().unwrap().push(subject.to_owned());
            }
            if p.revoked.lock().unwrap().contains(subject) {
                return Ok(Authorization::Denied);
            }
            Ok(Authorization::Allowed(Grant::for_duration(
                ctx,
                Duration::from_secs(60),
            )))
        };
        Registry::new(ManualClock::new(1_000), Arc::new(authorizer), cfg)
    }

    fn revoke(&self, subject: &str) {
        self.revoked.lock().unwrap().insert(subject.to_owned());
    }

    fn reconciled(&self) -> Vec<String> {
        std::mem::take(&mut *self.reconciled.lock().unwrap())
    }
}

fn admission(subject: &str) -> Admission {
    Admission::of(Caller::user("https://idp.example", subject))
}

fn tiny(queue_capacity: usize) -> RegistryConfig {
    RegistryConfig {
        workers: 2,
        queue_capacity,
        ..Default::default()
    }
}

/// `SUBSCRIPTIONS` established listens, subject `s{i % SUBJECTS}` for the i-th, admitted in
/// batches that fit the queue. Returns the keys by subject.
fn populate(
    reg: &mut Registry<ManualClock>,
    batch: usize,
) -> BTreeMap<String, Vec<SubscriptionKey>> {
    let mut by_subject: BTreeMap<String, Vec<SubscriptionKey>> = BTreeMap::new();
    let mut acknowledged = 0;
    for start in (0..SUBSCRIPTIONS).step_by(batch) {
        for i in start..(start + batch).min(SUBSCRIPTIONS) {
            let subject = format!("s{}", i % SUBJECTS);
            let id = RequestId::Number(i as i64);
            let key = reg
                .listen(id, NotificationFilter::default(), admission(&subject))
                .unwrap();
            by_subject.entry(subject).or_default().push(key);
        }
        let events = settle(reg);
        acknowledged += events
            .iter()
            .filter(|e| matches!(e, Event::Acknowledged { .. }))
            .count();
    }
    assert_eq!(acknowledged, SUBSCRIPTIONS, "every listen was admitted");
    by_subject
}

/// The keys of the `Ended` events, with their reasons.
fn endings(events: &[Event]) -> BTreeMap<SubscriptionKey, EndReason> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Ended { key, reason, .. } => Some((*key, *reason)),
            _ => None,
        })
        .collect()
}

#[test]
fn revoking_one_subject_ends_exactly_its_streams() {
    let policy = Policy::default();
    let mut reg = policy.registry(tiny(8));
    let by_subject = populate(&mut reg, 8);
    policy.reconciled();
    let revoked = &by_subject["s7"];
    assert_eq!(revoked.len(), SUBSCRIPTIONS / SUBJECTS);

    policy.revoke("s7");
    let n = reg.reconcile_matching(&Selector::Subject("s7".into()));
    assert_eq!(n, revoked.len());
    for (subject, keys) in &by_subject {
        for key in keys {
            // Fenced at once; everyone else keeps delivering.
            assert_eq!(reg.may_deliver(*key), subject != "s7", "{subject} {key}");
        }
    }
    let events = settle(&mut reg);
    let ended = endings(&events);
    assert_eq!(ended.len(), events.len(), "only endings: {events:?}");
    assert_eq!(
        ended.keys().copied().collect::<BTreeSet<_>>(),
        revoked.iter().copied().collect::<BTreeSet<_>>(),
        "exactly s7's streams ended"
    );
    assert!(ended.values().all(|r| *r == EndReason::Denied));
    assert_eq!(reg.len(), SUBSCRIPTIONS - revoked.len());
    // Only s7 was re-checked: the others ran no check at all.
    let checked = policy.reconciled();
    assert_eq!(checked.len(), revoked.len());
    assert!(checked.iter().all(|s| s == "s7"));
    let c = reg.counters();
    assert_eq!((c.reconciliation_checks, c.overloaded), (50, 0));
    for (subject, keys) in by_subject.iter().filter(|(s, _)| *s != "s7") {
        assert!(keys.iter().all(|k| reg.may_deliver(*k)), "{subject}");
    }
}

#[test]
fn a_mass_reconcile_through_a_tiny_queue_fails_none() {
    let gate = Arc::new(Gate::default());
    let policy = Policy {
        gate: Some(gate.clone()),
        ..Default::default()
    };
    let mut reg = policy.registry(tiny(4));
    let by_subject = populate(&mut reg, 4);
    policy.revoke("s3");

    // The workers take two reconciliations and wait at the gate, so the queue stays full.
    assert_eq!(reg.reconcile_all(), SUBSCRIPTIONS);
    // Reconciliations fill at most half the queue; the rest wait their turn, fenced.
    assert!(reg.queued_checks() <= 2);
    assert!(
        reg.held_checks() >= SUBSCRIPTIONS - 4,
        "{}",
        reg.held_checks()
    );
    assert!(by_subject.values().flatten().all(|k| !reg.may_deliver(*k)));
    assert_eq!(reg.counters().overloaded, 0);

    gate.open();
    let events = settle(&mut reg);
    let ended = endings(&events);
    assert_eq!(ended.len(), events.len(), "only endings: {events:?}");
    assert_eq!(
        ended.keys().copied().collect::<BTreeSet<_>>(),
        by_subject["s3"].iter().copied().collect::<BTreeSet<_>>(),
        "exactly the revoked subject's streams ended"
    );
    assert!(ended.values().all(|r| *r == EndReason::Denied));
    let c = reg.counters();
    assert_eq!(c.overloaded, 0, "no check failed for lack of room");
    assert_eq!(c.reconciliation_checks, SUBSCRIPTIONS as u64);
    assert!(c.held >= (SUBSCRIPTIONS - 4) as u64);
    assert_eq!(c.ended_check_failed + c.ended_reconciliation_failed, 0);
    assert_eq!(reg.held_checks(), 0);
    for (subject, keys) in by_subject.iter().filter(|(s, _)| *s != "s3") {
        assert!(
            keys.iter().all(|k| reg.may_deliver(*k)),
            "{subject} delivers"
        );
    }
}

#[test]
fn selectors_pick_by_principal_resource_family_and_session() {
    let policy = Policy::default();
    let mut reg = policy.registry(RegistryConfig::default());
    let tools = NotificationFilter {
        tools_list_changed: true,
        ..Default::default()
    };
    let report = |also_prompts: bool| NotificationFilter {
        prompts_list_changed: also_prompts,
        resource_subscriptions: vec!["file:///r".into()],
        ..Default::default()
    };
    let alice_a = Admission::of(Caller::user("idp-a", "alice"));
    let alice_b = Admission::of(Caller::user("idp-b", "alice"));
    let bob = admission("bob");
    let k1 = reg.listen(RequestId::Number(1), tools, alice_a).unwrap();
    let k2 = reg
        .listen(RequestId::Number(2), report(false), alice_b)
        .unwrap();
    let k3 = reg.listen(RequestId::Number(3), report(true), bob).unwrap();
    let g1 = reg
        .subscribe_resource("sess-1", "file:///r", admission("carol"))
        .unwrap();
    let g2 = reg
        .subscribe_resource("sess-1", "file:///q", admission("carol"))
        .unwrap();
    settle(&mut reg);
    let all = [k1, k2, k3, g1, g2];
    assert!(all.iter().all(|k| reg.may_deliver(*k)));

    let cases: [(Selector, &[SubscriptionKey]); 8] = [
        (Selector::Subject("alice".into()), &[k1, k2]),
        (Selector::Caller(Caller::user("idp-a", "alice")), &[k1]),
        (Selector::Caller(Caller::user("idp-c", "alice")), &[]),
        (Selector::Resource("file:///r".into()), &[k2, k3, g1]),
        (Selector::Family(Family::ToolsListChanged), &[k1]),
        (Selector::Family(Family::PromptsListChanged), &[k3]),
        (Selector::Session("sess-1".into()), &[g1, g2]),
        (Selector::Subject("nobody".into()), &[]),
    ];
    for (selector, expected) in cases {
        let before = reg.counters().reconciliation_checks;
        assert_eq!(
            reg.reconcile_matching(&selector),
            expected.len(),
            "{selector:?}"
        );
        for key in all {
            let picked = expected.contains(&key);
            assert_eq!(reg.may_deliver(key), !picked, "{selector:?}: {key}");
        }
        settle(&mut reg);
        let after = reg.counters().reconciliation_checks;
        assert_eq!(after - before, expected.len() as u64, "{selector:?}");
        assert!(all.iter().all(|k| reg.may_deliver(*k)), "{selector:?}");
    }
    assert_eq!(reg.caller(k2), Some(&Caller::user("idp-b", "alice")));
}

#[test]
fn gone_subscriptions_leave_the_indexes() {
    let policy = Policy::default();
    let mut reg = policy.registry(RegistryConfig::default());
    let filter = NotificationFilter {
        tools_list_changed: true,
        resource_subscriptions: vec!["file:///r".into()],
        ..Default::default()
    };
    let closed = reg
        .listen(RequestId::Number(1), filter.clone(), admission("alice"))
        .unwrap();
    let denied = reg
        .listen(RequestId::Number(2), filter.clone(), admission("bob"))
        .unwrap();
    let anonymous = reg
        .listen(RequestId::Number(3), filter, Admission::anonymous())
        .unwrap();
    settle(&mut reg);
    assert!(reg.close(closed));
    policy.revoke("bob");
    assert_eq!(reg.reconcile_matching(&Selector::Subject("bob".into())), 1);
    let events = settle(&mut reg);
    assert!(matches!(events.as_slice(), [Event::Ended { key, .. }] if *key == denied));
    assert!(!reg.may_deliver(anonymous), "anonymous is never admitted");
    for selector in [
        Selector::Subject("alice".into()),
        Selector::Subject("bob".into()),
        Selector::Resource("file:///r".into()),
        Selector::Family(Family::ToolsListChanged),
    ] {
        assert_eq!(reg.reconcile_matching(&selector), 0, "{selector:?}");
    }
}
