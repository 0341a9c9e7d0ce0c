//! Unit tests of the quotas, timed by a ManualClock.

use std::net::IpAddr;

use super::table::SWEEP_BACKOFF_MS;
use super::*;
use crate::clock::ManualClock;
fn quotas(pauses: &str, resumes: &str, max_callers: usize) -> (Quotas<ManualClock>, ManualClock) {
    let clock = ManualClock::new(1_000);
    let config = QuotaConfig {
        pauses: Some(pauses.parse().unwrap()),
        resumes: Some(resumes.parse().unwrap()),
        max_callers,
    };
    (Quotas::with_clock(config, clock.clone()), clock)
}

fn user(s: &str) -> QuotaKey {
    QuotaKey::Caller(Caller::user("https://idp.test", s))
}

#[test]
fn limits_parse_and_refuse_nonsense() {
    let l: Limit = "20/100".parse().unwrap();
    assert_eq!((l.per_second(), l.burst()), (20.0, 100));
    let l: Limit = "0.5".parse().unwrap();
    assert_eq!((l.per_second(), l.burst()), (0.5, 1));
    assert_eq!("7".parse::<Limit>().unwrap().burst(), 7);
    for bad in [
        "", "0", "-1/2", "x/2", "3/0", "3/x", "inf/3", "NaN", "1/2/3",
    ] {
        let err = bad.parse::<Limit>().unwrap_err();
        assert!(err.to_string().contains("RATE[/BURST]"), "{bad}: {err}");
    }
    assert_eq!(l.to_string(), "0.5/s (burst 1)");
}

#[test]
fn a_bucket_allows_its_burst_then_its_rate_exactly() {
    let (q, clock) = quotas("1000/1000", "10/5", 100);
    let bob = user("bob");
    for _ in 0..5 {
        q.charge(&bob, Action::Resume).unwrap();
    }
    let e = q.charge(&bob, Action::Resume).unwrap_err();
    assert_eq!(e.limit_name(), "resumes_per_caller");
    assert_eq!(e.action(), Some(Action::Resume));
    assert_eq!(e.retry_after_ms(), 100);
    assert_eq!(
        e.to_string(),
        "quota exceeded: resumes per caller, 10/s (burst 5)"
    );
    assert_eq!(
        e.data(),
        serde_json::json!({"limit": "resumes_per_caller", "retryAfterMs": 100,
            "perSecond": 10.0, "burst": 5})
    );
    // A refusal spends nothing: 99 ms later still none, at 100 ms exactly one.
    clock.advance(99);
    assert_eq!(
        q.charge(&bob, Action::Resume).unwrap_err().retry_after_ms(),
        1
    );
    clock.advance(1);
    q.charge(&bob, Action::Resume).unwrap();
    assert!(q.charge(&bob, Action::Resume).is_err());
    // Over 10 s at full speed (every ms): exactly 100 more, the rate.
    let mut ok = 0;
    for _ in 0..10_000 {
        clock.advance(1);
        ok += usize::from(q.charge(&bob, Action::Resume).is_ok());
    }
    assert_eq!(ok, 100);
    // Pauses are a separate bucket.
    q.charge(&bob, Action::Pause).unwrap();
}

#[test]
fn callers_do_not_share_buckets() {
    let (q, _clock) = quotas("1/1", "1/2", 100);
    let (alice, bob) = (user("alice"), user("bob"));
    q.charge(&bob, Action::Resume).unwrap();
    q.charge(&bob, Action::Resume).unwrap();
    assert!(q.charge(&bob, Action::Resume).is_err());
    q.charge(&alice, Action::Resume).unwrap();
    q.charge(&alice, Action::Resume).unwrap();
    // Same subject, another issuer: another caller.
    q.charge(
        &QuotaKey::Caller(Caller::user("https://other.test", "bob")),
        Action::Resume,
    )
    .unwrap();
    // Anonymous callers by source: a /64 is one caller, IPv4-mapped is the IPv4 address.
    let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
    let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
    assert_eq!(QuotaKey::source(a), QuotaKey::source(b));
    let v4: IpAddr = "192.0.2.7".parse().unwrap();
    let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
    assert_eq!(QuotaKey::source(v4), QuotaKey::source(mapped));
    assert_ne!(QuotaKey::source(v4), QuotaKey::Caller(Caller::Anonymous));
    q.charge(&QuotaKey::source(a), Action::Resume).unwrap();
    q.charge(&QuotaKey::source(b), Action::Resume).unwrap();
    assert!(q.charge(&QuotaKey::source(a), Action::Resume).is_err());
}

#[test]
fn the_caller_table_is_bounded_and_drops_idle_callers_first() {
    // 16 callers at most (one per shard on average; the table is per shard).
    let (q, clock) = quotas("1/1", "1/1", 16);
    let mut admitted = Vec::new();
    let mut refused = None;
    for n in 0..1_000 {
        let key = user(&format!("u{n}"));
        match q.charge(&key, Action::Resume) {
            Ok(()) => admitted.push(key),
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let refused = refused.expect("the table filled up");
    assert_eq!(refused.limit_name(), "tracked_callers");
    assert!(refused.to_string().contains("16"), "{refused}");
    assert!(q.tracked() <= 16);
    // Tracked callers keep their state: an admitted caller is still out of tokens.
    assert!(q.charge(&admitted[0], Action::Resume).is_err());
    // Once their buckets refill, they are idle: new callers take their place.
    clock.advance(SWEEP_BACKOFF_MS);
    for n in 1_000..1_100 {
        let key = user(&format!("u{n}"));
        if q.charge(&key, Action::Resume).is_err() {
            // Its shard is full of callers that just took a token: wait and retry.
            clock.advance(SWEEP_BACKOFF_MS);
            q.charge(&key, Action::Resume).unwrap();
        }
    }
    assert!(q.tracked() <= 16, "{}", q.tracked());
}

#[test]
fn unlimited_actions_are_not_tracked() {
    let q = Quotas::with_clock(QuotaConfig::unlimited(), ManualClock::new(0));
    for _ in 0..1_000 {
        q.charge(&user("bob"), Action::Resume).unwrap();
    }
    assert_eq!(q.tracked(), 0);
}

#[test]
fn max_outstanding_is_burst_plus_rate_times_window() {
    let l: Limit = "100/200".parse().unwrap();
    assert_eq!(l.max_outstanding(300_000), 30_200);
    let l: Limit = "0.5/2".parse().unwrap();
    assert_eq!(l.max_outstanding(1_000), 3);
}
