//! The tokio driver's 2025-era side: `resources/subscribe` grants owned by a session, admitted
//! before the answer, renewed whatever the connections do, released without an authorizer call
//! by unsubscribe or session close, and sessions retired (on the retirement channel) by a
//! denial or three consecutive failed checks. Real time, short leases.
#![cfg(feature = "tokio")]

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mrtr_std::caller::Caller;
use mrtr_std::clock::StdMonotonicClock;
use mrtr_std::core::lease::{CheckKind, EndReason, Failure, LeaseConfig, TimeoutPhase};
use mrtr_subscriptions::{
    Admission, Authorization, AuthorizationContext, Grant, InvocationFeatures, Registry,
    RegistryConfig, RegistryHandle, SubscribeRefused,
};

const WAIT: Duration = Duration::from_secs(20);
const ALLOW: u8 = 0;
const DENY: u8 = 1;
const HANG: u8 = 2;
const FAIL: u8 = 3;

/// Answers as `mode` says (allow for 4 s; deny; hang until cancelled; error); records the
/// kind of every check.
#[derive(Clone, Default)]
struct Policy {
    mode: Arc<AtomicU8>,
    calls: Arc<AtomicUsize>,
    kinds: Arc<Mutex<Vec<CheckKind>>>,
}

impl Policy {
    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    fn spawn(&self) -> RegistryHandle<StdMonotonicClock> {
        let p = self.clone();
        let authorizer = move |ctx: &AuthorizationContext, f: &InvocationFeatures| {
            p.calls.fetch_add(1, Ordering::SeqCst);
            p.kinds.lock().unwrap().push(ctx.kind());
            if ctx.caller().is_anonymous() {
                return Ok(Authorization::Denied);
            }
            match p.mode.load(Ordering::SeqCst) {
                ALLOW => Ok(Authorization::Allowed(Grant::for_duration(
                    ctx,
                    Duration::from_secs(4),
                ))),
                DENY => Ok(Authorization::Denied),
                HANG => {
                    while !f.cancellation().is_cancelled() {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err("cancelled".into())
                }
                _ => Err("backend unavailable".into()),
            }
        };
        let cfg = RegistryConfig {
            lease: LeaseConfig {
                check_timeout_ms: 150,
                ..LeaseConfig::DEFAULT
            },
            ..RegistryConfig::default()
        };
        RegistryHandle::spawn(Registry::new(
            StdMonotonicClock::new(),
            Arc::new(authorizer),
            cfg,
        ))
    }
}

fn alice() -> Admission {
    Admission::of(Caller::user("https://idp.example", "alice"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_answers_after_the_check_and_refusals_keep_the_session() {
    let policy = Policy::default();
    let subs = policy.spawn();
    let mut retired = subs.session_retirements().unwrap();
    assert!(subs.session_retirements().is_none(), "one taker only");
    let a = subs
        .subscribe_resource("s1", "file:///a", alice())
        .await
        .unwrap();
    assert!(subs.may_deliver(a));
    assert_eq!(policy.calls(), 1);
    // The same URI again: the same grant, no check.
    let again = subs.subscribe_resource("s1", "file:///a", alice()).await;
    assert_eq!(again, Ok(a));
    assert_eq!(policy.calls(), 1);
    // A denied and a failed initial check: refused, the session and its grant live on.
    policy.set(DENY);
    let denied = subs.subscribe_resource("s1", "file:///b", alice()).await;
    assert_eq!(denied, Err(SubscribeRefused::Refused(EndReason::Denied)));
    policy.set(FAIL);
    let failed = subs.subscribe_resource("s1", "file:///c", alice()).await;
    assert_eq!(
        failed,
        Err(SubscribeRefused::Refused(EndReason::CheckFailed(
            Failure::Error
        )))
    );
    assert!(subs.may_deliver(a));
    assert!(retired.try_recv().is_err());
    policy.set(ALLOW);
    assert!(
        subs.subscribe_resource("s1", "file:///b", alice())
            .await
            .is_ok()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsubscribe_and_close_call_no_authorizer_and_retire_nothing() {
    let policy = Policy::default();
    let subs = policy.spawn();
    let mut retired = subs.session_retirements().unwrap();
    let a = subs
        .subscribe_resource("s1", "file:///a", alice())
        .await
        .unwrap();
    let b = subs
        .subscribe_resource("s1", "file:///b", alice())
        .await
        .unwrap();
    let c = subs
        .subscribe_resource("s2", "file:///a", alice())
        .await
        .unwrap();
    let calls = policy.calls();
    assert!(subs.unsubscribe_resource("s1", "file:///a"));
    assert!(!subs.unsubscribe_resource("s1", "file:///a"));
    assert!(!subs.may_deliver(a) && subs.may_deliver(b));
    assert_eq!(subs.close_session("s1"), 1);
    assert!(!subs.may_deliver(b) && subs.may_deliver(c));
    assert_eq!(policy.calls(), calls, "no authorizer call");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(retired.try_recv().is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_renew_on_their_own_and_a_denial_retires_the_session() {
    let policy = Policy::default();
    let subs = policy.spawn();
    let mut retired = subs.session_retirements().unwrap();
    let a = subs
        .subscribe_resource("s1", "file:///a", alice())
        .await
        .unwrap();
    let b = subs
        .subscribe_resource("s1", "file:///b", alice())
        .await
        .unwrap();
    // 4 s grants renew at half the lease plus a stagger of at most a quarter: by 3.2 s
    // both were renewed, with no GET stream or request in between.
    tokio::time::sleep(Duration::from_millis(3_200)).await;
    assert!(subs.may_deliver(a) && subs.may_deliver(b));
    let renewals = policy
        .kinds
        .lock()
        .unwrap()
        .iter()
        .filter(|k| **k == CheckKind::Renewal)
        .count();
    assert!(renewals >= 2, "{renewals} renewals");
    policy.set(DENY);
    let gone = tokio::time::timeout(WAIT, retired.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&*gone.session, "s1");
    assert_eq!(gone.reason, EndReason::Denied);
    assert_eq!(gone.grants, 2);
    assert!(!subs.may_deliver(a) && !subs.may_deliver(b));
    assert_eq!(subs.close_session("s1"), 0, "already released");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_timed_out_renewals_retire_the_session() {
    let policy = Policy::default();
    let subs = policy.spawn();
    let mut retired = subs.session_retirements().unwrap();
    let a = subs
        .subscribe_resource("s1", "file:///a", alice())
        .await
        .unwrap();
    let before = policy.calls();
    policy.set(HANG);
    let gone = tokio::time::timeout(WAIT, retired.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        gone.reason,
        EndReason::RetriesExhausted(Failure::TimedOut(TimeoutPhase::Running))
    );
    assert_eq!(policy.calls() - before, 3, "three attempts, then retired");
    assert!(!subs.may_deliver(a));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_subscribe_releases_its_grant() {
    let policy = Policy::default();
    policy.set(HANG);
    let subs = policy.spawn();
    let pending = subs.subscribe_resource("s1", "file:///a", alice());
    assert!(
        tokio::time::timeout(Duration::from_millis(50), pending)
            .await
            .is_err()
    );
    assert_eq!(subs.with_registry(|r| r.len()), 0, "released on drop");
    policy.set(ALLOW);
    assert!(
        subs.subscribe_resource("s1", "file:///a", alice())
            .await
            .is_ok()
    );
}
