//! Revocation at scale, in real time: 10,000 `subscriptions/listen` streams over 100 subjects,
//! an authorizer that takes 1 ms per check, the registry's default executor (2 workers, a
//! 4,096-slot queue) driven by its tokio handle, as the hosted server runs it.
//!
//! 1. Admit every stream (at most 1,000 initial checks outstanding, as a server's connection
//!    limits would keep them).
//! 2. Revoke one subject with a targeted reconciliation: report how many streams ended, whose,
//!    how long the call held the registry and how long until the last one ended.
//! 3. Revoke a second subject and reconcile *everything* (what the example server used to do
//!    on every revoke): report "overloaded" failures (a review saw 1,878 of 6,000 streams end
//!    that way), checks held back, streams ended, and how long it took.
//!
//! ```text
//! cargo run --release -p mrtr-std --example subscription_revoke [-- SUBS SUBJECTS AUTH_MS]
//! ```

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mrtr_std::caller::Caller;
use mrtr_std::clock::StdMonotonicClock;
use mrtr_std::core::lease::EndReason;
use mrtr_subscriptions::{
    Admission, Authorization, AuthorizationContext, Counters, Grant, InvocationFeatures,
    ListenRefused, NotificationFilter, Registry, RegistryConfig, RegistryHandle, RequestId,
    Selector, SubscriptionKey,
};
use tokio::sync::{Semaphore, mpsc};

type Handle = RegistryHandle<StdMonotonicClock>;
/// (subject, why, when) for every stream that ended.
type Ending = (usize, EndReason, Instant);

const ADMISSIONS_IN_FLIGHT: usize = 1_000;
const WAIT: Duration = Duration::from_secs(120);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let subs = args.first().copied().unwrap_or(10_000) as usize;
    let subjects = args.get(1).copied().unwrap_or(100).max(2) as usize;
    let auth_ms = args.get(2).copied().unwrap_or(1);
    let cfg = RegistryConfig::default();
    println!(
        "revocation run: {subs} listen streams over {subjects} subjects, authorizer {auth_ms} ms, \
         {} workers, executor queue {}, {} logical cores",
        cfg.workers,
        cfg.queue_capacity,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    let revoked: Arc<Mutex<HashSet<String>>> = Arc::default();
    let handle = RegistryHandle::spawn(Registry::new(
        StdMonotonicClock::new(),
        Arc::new(policy(revoked.clone(), auth_ms)),
        cfg,
    ));

    // 1. Admission.
    let started = Instant::now();
    let (ended_tx, mut ended) = mpsc::unbounded_channel();
    let keys = admit_all(&handle, subs, subjects, ended_tx).await;
    println!(
        "admitted {} of {subs} in {:.2} s",
        keys.len(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(keys.len(), subs, "every stream is admitted");

    // 2. Targeted revoke.
    let first = subjects / 6;
    let before = handle.with_registry(|r| r.counters());
    revoked.lock().unwrap().insert(subject_name(first));
    let t0 = Instant::now();
    let n = handle.reconcile_matching(&Selector::Subject(subject_name(first)));
    let call = t0.elapsed();
    let fenced = count_fenced(&handle, &keys);
    let endings = collect(&mut ended, n).await;
    let all_ended = t0.elapsed();
    settle(&handle).await;
    let after = handle.with_registry(|r| r.counters());
    println!(
        "targeted revoke of {}: reconciled {n}, fenced at once {fenced}, ended {} ({} of that \
         subject, {} others); call {:.0} us, last stream ended after {:.1} ms; checks run {}, \
         overloaded {}",
        subject_name(first),
        endings.len(),
        endings.iter().filter(|e| e.0 == first).count(),
        endings.iter().filter(|e| e.0 != first).count(),
        call.as_secs_f64() * 1e6,
        all_ended.as_secs_f64() * 1e3,
        after.reconciliation_checks - before.reconciliation_checks,
        after.overloaded - before.overloaded,
    );
    assert!(
        endings
            .iter()
            .all(|e| e.0 == first && e.1 == EndReason::Denied)
    );

    // 3. Mass reconcile with a second subject revoked.
    let second = subjects / 2;
    let before = after;
    revoked.lock().unwrap().insert(subject_name(second));
    let t0 = Instant::now();
    let n = handle.reconcile_all();
    let call = t0.elapsed();
    let peak_held = settle(&handle).await;
    let took = t0.elapsed();
    let after = handle.with_registry(|r| r.counters());
    let expected = keys.iter().filter(|(s, _)| *s == second).count();
    let endings = collect(&mut ended, expected).await;
    println!(
        "reconcile_all with {} revoked: reconciled {n}, overloaded {}, held back {} (peak \
         {peak_held}), ended {} ({} of that subject, {} others), other failures {}; call {:.1} \
         ms, all checks done after {:.2} s",
        subject_name(second),
        after.overloaded - before.overloaded,
        after.held - before.held,
        endings.len(),
        endings.iter().filter(|e| e.0 == second).count(),
        endings.iter().filter(|e| e.0 != second).count(),
        failures(&after) - failures(&before),
        call.as_secs_f64() * 1e3,
        took.as_secs_f64(),
    );
    assert!(
        endings
            .iter()
            .all(|e| e.0 == second && e.1 == EndReason::Denied)
    );
    assert_eq!(after.overloaded, 0, "no check failed for lack of room");

    // Nothing else ended, and everyone else still delivers.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stray = std::iter::from_fn(|| ended.try_recv().ok()).count();
    let revoked_keys = |s: usize| s == first || s == second;
    let live: Vec<_> = keys.iter().filter(|(s, _)| !revoked_keys(*s)).collect();
    let delivering =
        handle.with_registry(|r| live.iter().filter(|(_, k)| r.may_deliver(*k)).count());
    println!(
        "after both: {} streams held, {delivering} of {} unrevoked delivering, {stray} further \
         endings; total {:.2} s",
        handle.with_registry(|r| r.len()),
        live.len(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!((delivering, stray), (live.len(), 0));
}

/// Denies anonymous and revoked subjects; allows others for a minute. Takes `ms` per check.
fn policy(
    revoked: Arc<Mutex<HashSet<String>>>,
    ms: u64,
) -> impl Fn(
    &AuthorizationContext,
    &InvocationFeatures,
) -> Result<Authorization, mrtr_subscriptions::AuthorizeError>
+ Send
+ Sync
+ 'static {
    move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        std::thread::sleep(Duration::from_millis(ms));
        let Some(subject) = ctx.caller().subject() else {
            return Ok(Authorization::Denied);
        };
        if revoked.lock().unwrap().contains(subject) {
            return Ok(Authorization::Denied);
        }
        Ok(Authorization::Allowed(Grant::for_duration(
            ctx,
            Duration::from_secs(60),
        )))
    }
}

fn subject_name(i: usize) -> String {
    format!("s{i}")
}

/// Admits `subs` streams, subject `i % subjects` for the i-th; each one's task reports its
/// ending on `ended`. Returns (subject, key) of those admitted.
async fn admit_all(
    handle: &Handle,
    subs: usize,
    subjects: usize,
    ended: mpsc::UnboundedSender<Ending>,
) -> Vec<(usize, SubscriptionKey)> {
    let gate = Arc::new(Semaphore::new(ADMISSIONS_IN_FLIGHT));
    let (admitted_tx, mut admitted) = mpsc::unbounded_channel();
    for i in 0..subs {
        let permit = gate.clone().acquire_owned().await.expect("open");
        let (handle, ended, admitted_tx) = (handle.clone(), ended.clone(), admitted_tx.clone());
        tokio::spawn(async move {
            let subject = i % subjects;
            let who = Admission::of(Caller::user("https://idp.example", subject_name(subject)));
            let filter = NotificationFilter {
                resource_subscriptions: vec![format!("mrtr://reports/{subject}")],
                ..Default::default()
            };
            let result = handle
                .listen(RequestId::Number(i as i64), filter, who)
                .await;
            drop(permit);
            match result {
                Ok(mut listening) => {
                    let _ = admitted_tx.send(Ok((subject, listening.key())));
                    let reason = listening.ended().await;
                    let _ = ended.send((subject, reason, Instant::now()));
                }
                Err(refused) => {
                    let _ = admitted_tx.send(Err(refused));
                }
            }
        });
    }
    // Each task keeps its sender while its stream lives: count answers, not closed senders.
    let mut keys = Vec::with_capacity(subs);
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..subs {
        let Some(r) = admitted.recv().await else {
            break;
        };
        match r {
            Ok(k) => keys.push(k),
            Err(e) => *refused.entry(refusal(&e)).or_default() += 1,
        }
    }
    if !refused.is_empty() {
        println!("refused at admission: {refused:?}");
    }
    keys
}

fn refusal(e: &ListenRefused) -> String {
    match e {
        ListenRefused::Refused(reason) => reason.as_str().to_owned(),
        other => other.to_string(),
    }
}

/// How many of `keys` may not deliver right now.
fn count_fenced(handle: &Handle, keys: &[(usize, SubscriptionKey)]) -> usize {
    handle.with_registry(|r| keys.iter().filter(|(_, k)| !r.may_deliver(*k)).count())
}

/// Waits for `n` endings (or gives up after [`WAIT`]).
async fn collect(ended: &mut mpsc::UnboundedReceiver<Ending>, n: usize) -> Vec<Ending> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        match tokio::time::timeout(WAIT, ended.recv()).await {
            Ok(Some(e)) => out.push(e),
            _ => break,
        }
    }
    out
}

/// Waits until no check is outstanding; returns the most checks seen held back meanwhile.
async fn settle(handle: &Handle) -> usize {
    let start = Instant::now();
    let mut peak = 0;
    loop {
        let (pending, held) = handle.with_registry(|r| (r.pending_checks(), r.held_checks()));
        peak = peak.max(held);
        if pending == 0 || start.elapsed() > WAIT {
            return peak;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Checks that failed for any reason.
fn failures(c: &Counters) -> u64 {
    c.errors + c.panics + c.timed_out_queued + c.timed_out_running + c.overloaded
}
