//! The bounded executor under misbehaving authorizers: panics, errors, hangs, timeouts in the
//! queue and in the authorizer, a full queue. Lease time is a manual clock; worker threads
//! are real and every test waits for them explicitly.

mod support;
use support::registry::{Gate, REAL_WAIT, settle};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mrtr_std::clock::ManualClock;
use mrtr_std::core::lease::{EndReason, Failure, TimeoutPhase};
use mrtr_subscriptions::{
    Admission, Authorization, AuthorizationContext, Authorizer, Event, Grant, InvocationFeatures,
    NotificationFilter, Registry, RegistryConfig, RequestId, SubscriptionKey, deny_all,
};

fn registry(
    auth: impl Authorizer + 'static,
    cfg: RegistryConfig,
) -> (ManualClock, Registry<ManualClock>) {
    let clock = ManualClock::new(0);
    let reg = Registry::new(clock.clone(), Arc::new(auth), cfg);
    (clock, reg)
}

fn listen(reg: &mut Registry<ManualClock>, id: i64) -> SubscriptionKey {
    reg.listen(
        RequestId::Number(id),
        NotificationFilter::default(),
        Admission::anonymous(),
    )
    .unwrap()
}

fn rejection(events: &[Event], key: SubscriptionKey) -> Option<EndReason> {
    events.iter().find_map(|e| match e {
        Event::Rejected { key: k, reason, .. } if *k == key => Some(*reason),
        _ => None,
    })
}

/// Ids of listens whose authorizer should block, and a channel announcing each blocked call.
fn blocking_on(
    ids: &'static [i64],
    gate: Arc<Gate>,
    started: mpsc::Sender<i64>,
) -> impl Authorizer + 'static {
    let started = Mutex::new(started);
    move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        if let mrtr_subscriptions::Target::Listen(RequestId::Number(id)) = ctx.target()
            && ids.contains(id)
        {
            let _ = started.lock().unwrap().send(*id);
            gate.wait();
        }
        Ok(Authorization::Allowed(Grant::for_duration(
            ctx,
            Duration::from_secs(60),
        )))
    }
}

#[test]
fn panicking_authorizer_fails_closed() {
    let (_, mut reg) = registry(
        |_: &AuthorizationContext, _: &InvocationFeatures| -> Result<Authorization, _> {
            panic!("authorizer bug")
        },
        RegistryConfig::default(),
    );
    let key = listen(&mut reg, 1);
    let events = settle(&mut reg);
    assert_eq!(
        rejection(&events, key),
        Some(EndReason::CheckFailed(Failure::Panicked))
    );
    assert_eq!(reg.counters().panics, 1);
    // The worker survived the panic and serves the next check.
    let again = listen(&mut reg, 2);
    let events = settle(&mut reg);
    assert_eq!(
        rejection(&events, again),
        Some(EndReason::CheckFailed(Failure::Panicked))
    );
}

#[test]
fn erroring_authorizer_fails_closed() {
    let (_, mut reg) = registry(
        |_: &AuthorizationContext, _: &InvocationFeatures| Err("secret-token-xyz rejected".into()),
        RegistryConfig::default(),
    );
    let key = listen(&mut reg, 1);
    let events = settle(&mut reg);
    assert_eq!(
        rejection(&events, key),
        Some(EndReason::CheckFailed(Failure::Error))
    );
    assert!(
        !format!("{events:?} {reg:?}").contains("secret-token-xyz"),
        "error text is not kept"
    );
}

#[test]
fn deny_all_is_shared_and_denies() {
    let (_, mut reg) = registry(
        |c: &AuthorizationContext, f: &InvocationFeatures| deny_all().authorize(c, f),
        RegistryConfig::default(),
    );
    let key = listen(&mut reg, 1);
    let events = settle(&mut reg);
    assert_eq!(rejection(&events, key), Some(EndReason::Denied));
    assert!(Arc::ptr_eq(&deny_all(), &deny_all()));
}

#[test]
fn timeout_while_queued_vs_running() {
    let gate = Arc::new(Gate::default());
    let (tx, rx) = mpsc::channel();
    let cfg = RegistryConfig {
        workers: 1,
        max_spare_workers: 0,
        ..Default::default()
    };
    let (clock, mut reg) = registry(blocking_on(&[1, 2], gate.clone(), tx), cfg);
    let running = listen(&mut reg, 1);
    assert_eq!(rx.recv_timeout(REAL_WAIT), Ok(1), "first check is running");
    let queued = listen(&mut reg, 2);
    assert_eq!(reg.queued_checks(), 1);

    clock.set(4_999);
    let mut events = Vec::new();
    reg.drive(&mut events);
    assert!(events.is_empty());
    clock.set(5_000);
    reg.drive(&mut events);
    assert_eq!(
        rejection(&events, running),
        Some(EndReason::CheckFailed(Failure::TimedOut(
            TimeoutPhase::Running
        )))
    );
    assert_eq!(
        rejection(&events, queued),
        Some(EndReason::CheckFailed(Failure::TimedOut(
            TimeoutPhase::Queued
        )))
    );
    assert_eq!(
        reg.queued_checks(),
        0,
        "the queued check was removed, never run"
    );
    let c = reg.counters();
    assert_eq!((c.timed_out_running, c.timed_out_queued), (1, 1));
    gate.open();
    assert!(
        rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "queued check never ran"
    );
}

#[test]
fn hanging_authorizer_cannot_stall_other_subscriptions() {
    let gate = Arc::new(Gate::default());
    let (tx, rx) = mpsc::channel();
    let cfg = RegistryConfig {
        workers: 1,
        max_spare_workers: 1,
        ..Default::default()
    };
    let (clock, mut reg) = registry(blocking_on(&[1], gate.clone(), tx), cfg);
    let hung = listen(&mut reg, 1);
    assert_eq!(rx.recv_timeout(REAL_WAIT), Ok(1));
    clock.set(5_000);
    let events = settle(&mut reg);
    assert_eq!(
        rejection(&events, hung),
        Some(EndReason::CheckFailed(Failure::TimedOut(
            TimeoutPhase::Running
        )))
    );
    assert_eq!(reg.counters().abandoned_workers, 1);
    // A spare worker took the hung one's place: the next subscription is served.
    let other = listen(&mut reg, 2);
    let events = settle(&mut reg);
    assert!(matches!(events.as_slice(), [Event::Acknowledged { key, .. }] if *key == other));
    gate.open();
}

#[test]
fn full_queue_fails_closed_at_once() {
    let gate = Arc::new(Gate::default());
    let (tx, rx) = mpsc::channel();
    let cfg = RegistryConfig {
        workers: 1,
        queue_capacity: 1,
        max_spare_workers: 0,
        ..Default::default()
    };
    let (_, mut reg) = registry(blocking_on(&[1], gate.clone(), tx), cfg);
    listen(&mut reg, 1);
    assert_eq!(rx.recv_timeout(REAL_WAIT), Ok(1));
    let waiting = listen(&mut reg, 2);
    let refused = listen(&mut reg, 3);
    let mut events = Vec::new();
    reg.drive(&mut events);
    assert_eq!(
        rejection(&events, refused),
        Some(EndReason::CheckFailed(Failure::Overloaded))
    );
    assert_eq!(reg.counters().overloaded, 1);
    gate.open();
    let events = settle(&mut reg);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Acknowledged { key, .. } if *key == waiting))
    );
}

#[test]
fn cancellation_token_is_set_when_a_check_is_superseded() {
    let seen_cancel = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Gate::default());
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let (s, g) = (seen_cancel.clone(), gate.clone());
    let (_, mut reg) = registry(
        move |ctx: &AuthorizationContext, f: &InvocationFeatures| {
            if ctx.kind() == mrtr_std::core::lease::CheckKind::Initial {
                let _ = tx.lock().unwrap().send(());
                g.wait();
                if f.cancellation().is_cancelled() {
                    s.fetch_add(1, Ordering::SeqCst);
                }
            }
            Ok(Authorization::Allowed(Grant::for_duration(
                ctx,
                Duration::from_secs(60),
            )))
        },
        RegistryConfig::default(),
    );
    let key = listen(&mut reg, 1);
    assert_eq!(rx.recv_timeout(REAL_WAIT), Ok(()), "initial check running");
    reg.reconcile(key);
    let events = settle(&mut reg);
    assert!(matches!(events.as_slice(), [Event::Acknowledged { .. }]));
    gate.open();
    for _ in 0..2_000 {
        if seen_cancel.load(Ordering::SeqCst) == 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(seen_cancel.load(Ordering::SeqCst), 1);
    assert_eq!(reg.counters().initial_checks, 1);
    assert_eq!(reg.counters().reconciliation_checks, 1);
    assert_eq!(reg.counters().acknowledged, 1);
}
