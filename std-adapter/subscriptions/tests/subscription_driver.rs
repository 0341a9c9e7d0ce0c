//! The tokio driver for the subscription registry: admission before acknowledgment, refusals,
//! ending, delivery gating, close on drop, and targeted revocation.
#![cfg(feature = "tokio")]

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mrtr_std::caller::Caller;
use mrtr_std::clock::{ManualClock, MonotonicClock, StdMonotonicClock};
use mrtr_std::core::lease::EndReason;
use mrtr_subscriptions::{
    Admission, Authorization, AuthorizationContext, Grant, InvocationFeatures, ListenRefused,
    NotificationFilter, Registry, RegistryConfig, RegistryHandle, RequestId, Selector,
};

const WAIT: Duration = Duration::from_secs(20);

/// Allows callers admitted as subject "alice" while `allow` is set; counts calls;
/// takes `delay` to decide.
#[derive(Clone)]
struct Policy {
    allow: Arc<AtomicBool>,
    calls: Arc<AtomicUsize>,
    delay: Duration,
}

impl Policy {
    fn new(delay: Duration) -> Self {
        Self {
            allow: Arc::new(AtomicBool::new(true)),
            calls: Arc::default(),
            delay,
        }
    }

    fn registry<C: MonotonicClock + 'static>(&self, clock: C, cfg: RegistryConfig) -> Registry<C> {
        let p = self.clone();
        let authorizer = move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
            p.calls.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(p.delay);
            let alice = ctx.caller().subject() == Some("alice");
            Ok(if alice && p.allow.load(Ordering::SeqCst) {
                Authorization::Allowed(Grant::for_duration(ctx, Duration::from_secs(60)))
            } else {
                Authorization::Denied
            })
        };
        Registry::new(clock, Arc::new(authorizer), cfg)
    }
}

fn alice() -> Admission {
    Admission::of(Caller::user("https://idp.example", "alice"))
}

fn filter() -> NotificationFilter {
    NotificationFilter {
        tools_list_changed: true,
        ..Default::default()
    }
}

fn spawn(policy: &Policy, cfg: RegistryConfig) -> RegistryHandle<StdMonotonicClock> {
    RegistryHandle::spawn(policy.registry(StdMonotonicClock::new(), cfg))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_returns_only_after_the_initial_check_allows() {
    let policy = Policy::new(Duration::from_millis(150));
    let subs = spawn(&policy, RegistryConfig::default());
    let started = Instant::now();
    let listening =
        tokio::time::timeout(WAIT, subs.listen(RequestId::Number(1), filter(), alice()))
            .await
            .unwrap()
            .expect("alice is allowed");
    // The check ran (and took its time) before listen returned: admit before ack.
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(policy.calls.load(Ordering::SeqCst), 1);
    assert!(listening.may_deliver());
    let key = listening.key();
    assert_eq!(subs.with_registry(|r| r.len()), 1);
    assert!(subs.with_registry(|r| r.may_deliver(key)));
    assert!(format!("{listening:?}").contains(&format!("{key:?}")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_and_over_capacity_listens_are_refused_without_holding_a_slot() {
    let policy = Policy::new(Duration::ZERO);
    let cfg = RegistryConfig {
        max_subscriptions: 1,
        ..RegistryConfig::default()
    };
    let subs = spawn(&policy, cfg);
    let denied = subs
        .listen(RequestId::Number(1), filter(), Admission::anonymous())
        .await;
    assert_eq!(
        denied.err(),
        Some(ListenRefused::Refused(EndReason::Denied))
    );
    assert_eq!(subs.with_registry(|r| r.len()), 0);

    let held = subs
        .listen(RequestId::Number(2), filter(), alice())
        .await
        .unwrap();
    let calls = policy.calls.load(Ordering::SeqCst);
    let full = subs.listen(RequestId::Number(3), filter(), alice()).await;
    assert_eq!(full.err(), Some(ListenRefused::AtCapacity));
    assert_eq!(
        policy.calls.load(Ordering::SeqCst),
        calls,
        "no check at capacity"
    );
    assert_eq!(
        ListenRefused::AtCapacity.to_string(),
        "subscription capacity reached"
    );
    assert_eq!(
        ListenRefused::Refused(EndReason::Denied).to_string(),
        "subscription not authorized (denied)"
    );

    // Dropping the subscription frees its slot, without asking the authorizer.
    drop(held);
    assert_eq!(subs.with_registry(|r| r.len()), 0);
    assert_eq!(policy.calls.load(Ordering::SeqCst), calls);
    assert!(
        subs.listen(RequestId::Number(4), filter(), alice())
            .await
            .is_ok()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconciled_denial_ends_the_subscription_and_fences_delivery() {
    let policy = Policy::new(Duration::ZERO);
    let subs = spawn(&policy, RegistryConfig::default());
    let mut listening = subs
        .listen(RequestId::String("s".into()), filter(), alice())
        .await
        .unwrap();
    let mut other = subs
        .listen(RequestId::Number(2), filter(), alice())
        .await
        .unwrap();
    policy.allow.store(false, Ordering::SeqCst);
    assert_eq!(subs.reconcile_all(), 2);
    let reason = tokio::time::timeout(WAIT, listening.ended()).await.unwrap();
    assert_eq!(reason, EndReason::Denied);
    assert!(!listening.may_deliver());
    assert_eq!(
        tokio::time::timeout(WAIT, other.ended()).await.unwrap(),
        EndReason::Denied
    );
    assert_eq!(subs.with_registry(|r| r.len()), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadlines_drive_renewals_and_a_denied_renewal_ends_it() {
    let policy = Policy::new(Duration::ZERO);
    let clock = ManualClock::new(1_000);
    let subs = RegistryHandle::spawn(policy.registry(clock.clone(), RegistryConfig::default()));
    let mut listening = subs
        .listen(RequestId::Number(1), filter(), alice())
        .await
        .unwrap();
    let calls = policy.calls.load(Ordering::SeqCst);
    policy.allow.store(false, Ordering::SeqCst);
    // Step the clock from deadline to deadline (the driver, woken, runs what each calls
    // for) until the renewal check runs and is denied, before the grant expires.
    let mut steps = 0;
    let reason = loop {
        let deadline = subs
            .with_registry(|r| r.next_deadline_ms())
            .expect("a deadline");
        assert!(deadline < 1_000 + 60_000, "renewal due before expiry");
        clock.set(deadline);
        subs.with_registry(|_| ());
        if let Ok(reason) = tokio::time::timeout(Duration::from_secs(2), listening.ended()).await {
            break reason;
        }
        steps += 1;
        assert!(steps < 10, "never renewed");
    };
    assert_eq!(reason, EndReason::Denied);
    assert!(!listening.may_deliver());
    assert!(
        policy.calls.load(Ordering::SeqCst) > calls,
        "a renewal check ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_pending_listen_closes_the_subscription() {
    let policy = Policy::new(Duration::from_millis(300));
    let subs = spawn(&policy, RegistryConfig::default());
    let pending = tokio::time::timeout(
        Duration::from_millis(30),
        subs.listen(RequestId::Number(1), filter(), alice()),
    )
    .await;
    assert!(pending.is_err(), "the check should still be running");
    assert_eq!(subs.with_registry(|r| r.len()), 0, "closed when dropped");
    // The late decision is dropped quietly; the registry keeps working.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let listening = subs
        .listen(RequestId::Number(1), filter(), alice())
        .await
        .unwrap();
    assert!(listening.may_deliver());
    assert_eq!(subs.with_registry(|r| r.len()), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_task_stops_with_the_last_handle() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    let policy = Policy::new(Duration::ZERO);
    let subs = spawn(&policy, RegistryConfig::default());
    assert_eq!(metrics.num_alive_tasks(), before + 1);
    let listening = subs
        .listen(RequestId::Number(1), filter(), alice())
        .await
        .unwrap();
    let clone = subs.clone();
    drop(subs);
    drop(clone);
    // A subscription keeps the driver alive.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(metrics.num_alive_tasks(), before + 1);
    assert!(listening.may_deliver());
    drop(listening);
    let deadline = Instant::now() + WAIT;
    while metrics.num_alive_tasks() > before {
        assert!(Instant::now() < deadline, "the driver task never stopped");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_one_subject_through_the_handle_leaves_every_other_stream_alone() {
    let revoked: Arc<std::sync::Mutex<HashSet<String>>> = Arc::default();
    let r = revoked.clone();
    let authorizer = move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        std::thread::sleep(Duration::from_millis(1));
        let subject = ctx.caller().subject().map(str::to_owned);
        Ok(match subject {
            Some(s) if !r.lock().unwrap().contains(&s) => {
                Authorization::Allowed(Grant::for_duration(ctx, Duration::from_secs(60)))
            }
            _ => Authorization::Denied,
        })
    };
    let cfg = RegistryConfig {
        queue_capacity: 8,
        ..Default::default()
    };
    let registry = Registry::new(StdMonotonicClock::new(), Arc::new(authorizer), cfg);
    let subs = RegistryHandle::spawn(registry);
    let mut streams = Vec::new();
    for i in 0..60 {
        let subject = if i % 3 == 0 { "mallory" } else { "user" };
        let who = Admission::of(Caller::user("https://idp.example", subject));
        let listening = subs.listen(RequestId::Number(i), filter(), who).await;
        streams.push((subject, listening.unwrap()));
    }

    revoked.lock().unwrap().insert("mallory".into());
    assert_eq!(
        subs.reconcile_matching(&Selector::Subject("mallory".into())),
        20
    );
    for (subject, listening) in &mut streams {
        if *subject == "mallory" {
            let reason = tokio::time::timeout(WAIT, listening.ended()).await.unwrap();
            assert_eq!(reason, EndReason::Denied);
        } else {
            assert!(listening.may_deliver(), "{subject} keeps delivering");
        }
    }
    // A mass reconciliation through a queue of 8 fails none of the 40 left.
    assert_eq!(subs.reconcile_all(), 40);
    let start = Instant::now();
    while subs.with_registry(|r| r.pending_checks()) > 0 {
        assert!(start.elapsed() < WAIT, "the reconciliation never finished");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let c = subs.with_registry(|r| r.counters());
    assert_eq!((c.active, c.overloaded, c.ended_denied), (40, 0, 20));
    assert_eq!(c.reconciliation_checks, 60);
    assert!(
        streams
            .iter()
            .all(|(s, l)| *s == "mallory" || l.may_deliver())
    );
}
