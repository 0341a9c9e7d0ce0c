//! Scale run for the subscription registry: 10,000 subscriptions with 1-minute leases.
//!
//! Lease time is a manual clock advanced from deadline to deadline, so the renewal schedule
//! (and the largest number of renewals in any 100 ms window) is exact and reproducible.
//! Checks run on the registry's real worker pool (2 threads), and the process's CPU time
//! (user + system, all threads, from /proc/self/stat) is measured around the steady-state
//! renewals, giving the CPU cost per renewal of the whole path: timer heap, lease machine,
//! executor hand-off, authorizer call, result application.
//!
//! ```text
//! cargo run --release -p mrtr-std --example subscription_scale [-- SUBS MINUTES]
//! ```

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mrtr_core::lease::{Action, CheckResult, Era, Lease, LeaseConfig, stagger_ms};
use mrtr_std::clock::ManualClock;
use mrtr_std::core::lease::CheckKind;
use mrtr_subscriptions::{
    Admission, Authorization, AuthorizationContext, Grant, InvocationFeatures, NotificationFilter,
    Registry, RegistryConfig, RequestId, Target,
};

const WINDOW_MS: u64 = 100;

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let subs = args.first().copied().unwrap_or(10_000);
    let minutes = args.get(1).copied().unwrap_or(10);
    println!(
        "subscription scale run: {subs} subscriptions, 1-minute leases, {minutes} simulated minutes"
    );
    println!(
        "cpu: {} logical cores; CPU time from /proc/self/stat",
        cores()
    );
    println!();

    for (name, arrivals_over_ms, stagger) in [
        ("burst, stagger on ", 0, LeaseConfig::DEFAULT.max_stagger_ms),
        ("burst, stagger off", 0, 0),
        (
            "spread over 60 s  ",
            60_000,
            LeaseConfig::DEFAULT.max_stagger_ms,
        ),
    ] {
        let r = run_registry(subs, minutes * 60_000, arrivals_over_ms, stagger);
        println!(
            "{name}: renewals {:>7}  max in any {WINDOW_MS} ms window {:>6} (first round {:>6})  \
             cpu/renewal {:>6.2} us  wall {:>6.2} s",
            r.renewals, r.max_window, r.max_window_first_round, r.cpu_us_per_renewal, r.wall_s
        );
    }
    println!();
    let (n, ns) = core_only(subs, minutes * 60_000);
    println!("lease machine alone (no threads): {n} renewals, {ns:.0} ns/renewal");
}

struct Report {
    renewals: usize,
    max_window: usize,
    max_window_first_round: usize,
    cpu_us_per_renewal: f64,
    wall_s: f64,
}

fn run_registry(subs: u64, horizon_ms: u64, arrivals_over_ms: u64, stagger: u64) -> Report {
    let renewals = Arc::new(Mutex::new(Vec::with_capacity(subs as usize * 30)));
    let r = renewals.clone();
    let authorizer = move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
        if ctx.kind() == CheckKind::Renewal
            && let Target::Listen(RequestId::Number(id)) = ctx.target()
        {
            r.lock().unwrap().push((ctx.issued_at_ms(), *id));
        }
        Ok(Authorization::Allowed(Grant::for_duration(
            ctx,
            Duration::from_secs(60),
        )))
    };
    let cfg = RegistryConfig {
        lease: LeaseConfig {
            max_stagger_ms: stagger,
            ..LeaseConfig::DEFAULT
        },
        workers: 2,
        queue_capacity: subs as usize + 1,
        max_subscriptions: subs as usize,
        ..Default::default()
    };
    let clock = ManualClock::new(0);
    let mut reg = Registry::new(clock.clone(), Arc::new(authorizer), cfg);
    let mut events = Vec::new();
    let mut next_sub = 0u64;
    let arrival = |i: u64| arrivals_over_ms * i / subs;

    let mut cpu_start = None;
    let mut renewals_at_start = 0;
    let wall = Instant::now();
    loop {
        let next_arrival = (next_sub < subs).then(|| arrival(next_sub));
        let next = match (reg.next_deadline_ms(), next_arrival) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(t) => t,
                None => break,
            },
        };
        if next > horizon_ms {
            break;
        }
        clock.set(next);
        while next_sub < subs && arrival(next_sub) <= next {
            let id = RequestId::Number(next_sub as i64);
            reg.listen(id, NotificationFilter::default(), Admission::anonymous())
                .expect("capacity sized for the run");
            next_sub += 1;
        }
        loop {
            reg.drive(&mut events);
            events.clear();
            if reg.pending_checks() == 0 {
                break;
            }
            reg.wait_for_completions(Duration::from_secs(30));
        }
        // Steady state: every subscription acknowledged, renewals only.
        if cpu_start.is_none() && next_sub == subs && reg.counters().acknowledged == subs {
            cpu_start = Some(cpu_seconds());
            renewals_at_start = reg.counters().renewal_checks;
        }
    }
    let cpu = cpu_seconds() - cpu_start.unwrap_or(0.0);
    let measured = reg.counters().renewal_checks - renewals_at_start;
    let wall_s = wall.elapsed().as_secs_f64();
    assert_eq!(
        reg.len() as u64,
        subs,
        "every subscription survived its renewals"
    );

    let mut log = renewals.lock().unwrap().clone();
    log.sort_unstable();
    let times: Vec<u64> = log.iter().map(|(t, _)| *t).collect();
    // Each subscription's first renewal (the log is in time order).
    let mut seen = vec![false; subs as usize];
    let mut first_round = Vec::new();
    for (t, id) in &log {
        if let Some(s) = usize::try_from(*id).ok().and_then(|i| seen.get_mut(i))
            && !*s
        {
            *s = true;
            first_round.push(*t);
        }
    }
    Report {
        renewals: times.len(),
        max_window: max_in_window(&times, WINDOW_MS),
        max_window_first_round: max_in_window(&first_round, WINDOW_MS),
        cpu_us_per_renewal: cpu * 1e6 / measured.max(1) as f64,
        wall_s,
    }
}

/// The largest number of sorted instants in any half-open window `[t, t + width)`.
fn max_in_window(sorted: &[u64], width: u64) -> usize {
    let mut best = 0;
    let mut lo = 0;
    for hi in 0..sorted.len() {
        while sorted[hi] - sorted[lo] >= width {
            lo += 1;
        }
        best = best.max(hi - lo + 1);
    }
    best
}

/// The lease machine alone: `subs` leases renewed in a single thread until `horizon_ms`.
fn core_only(subs: u64, horizon_ms: u64) -> (u64, f64) {
    let cfg = LeaseConfig::DEFAULT;
    let mut leases: Vec<Lease> = (0..subs)
        .map(|i| {
            let stagger = stagger_ms(&i.to_be_bytes(), cfg.max_stagger_ms);
            let (mut lease, first) = Lease::new(cfg, Era::Listen, stagger, 0);
            if let Action::StartCheck(req) = first {
                let ok = CheckResult::Allowed {
                    valid_until_ms: 60_000,
                    context: None,
                };
                lease.on_check_result(0, req.id, ok);
            }
            lease
        })
        .collect();
    let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>> = leases
        .iter()
        .enumerate()
        .filter_map(|(i, l)| l.next_deadline().map(|d| std::cmp::Reverse((d, i))))
        .collect();
    let mut renewals = 0u64;
    let start = Instant::now();
    while let Some(std::cmp::Reverse((at, i))) = heap.pop() {
        if at > horizon_ms {
            break;
        }
        let lease = &mut leases[i];
        while let Some(action) = lease.poll(at) {
            if let Action::StartCheck(req) = action {
                renewals += 1;
                let ok = CheckResult::Allowed {
                    valid_until_ms: at + 60_000,
                    context: None,
                };
                lease.on_check_result(at, req.id, ok);
            }
        }
        if let Some(d) = lease.next_deadline() {
            heap.push(std::cmp::Reverse((d, i)));
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / renewals.max(1) as f64;
    (renewals, ns)
}

/// User + system CPU seconds of this process, all threads (Linux; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Field 3 (state) is index 0 here, so field n is index n - 3. USER_HZ is 100 on Linux.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
