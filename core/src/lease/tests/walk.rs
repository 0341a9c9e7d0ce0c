//! Edge configurations and random event sequences checked against the invariants.

use super::*;

#[test]
fn zero_grant_cap_fails_closed() {
    let cfg = LeaseConfig {
        max_authorization_ms: 0,
        ..CFG
    };
    let (mut lease, first) = Lease::new(cfg, Era::Listen, 0, 0);
    let first = started(Some(first));
    let action = lease.on_check_result(0, first.id, allow(u64::MAX));
    assert!(matches!(action, Some(Action::Reject { .. })));
}

#[test]
fn saturating_times_do_not_panic() {
    let (mut lease, first) = Lease::new(CFG, Era::Session, u64::MAX, u64::MAX - 1);
    let first = started(Some(first));
    assert_eq!(first.deadline_ms, u64::MAX);
    let _ = lease.on_check_result(u64::MAX - 1, first.id, allow(u64::MAX));
    let _ = lease.poll(u64::MAX);
    assert_eq!(lease.check_invariants(u64::MAX), Ok(()));
}

/// A small deterministic generator for the random-walk test below.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_event_sequences_keep_invariants() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..300 {
        let era = if rng.next().is_multiple_of(2) {
            Era::Listen
        } else {
            Era::Session
        };
        let mut now = rng.next() % 1_000;
        let (mut lease, _) = Lease::new(CFG, era, rng.next() % 2_000, now);
        for _ in 0..200 {
            now += rng.next() % 20_000;
            let in_flight = lease.in_flight().map(|f| f.id);
            let before = lease.clone();
            match rng.next() % 8 {
                0 | 1 => {
                    let _ = lease.poll(now);
                }
                2 => {
                    let id = match in_flight {
                        Some(id) if !rng.next().is_multiple_of(4) => id,
                        _ => CheckId::from_raw(rng.next() % 8),
                    };
                    let result = match rng.next() % 6 {
                        0 => CheckResult::Denied,
                        1 => CheckResult::Failed(Failure::Error),
                        2 => CheckResult::Failed(Failure::Overloaded),
                        _ => allow(now.saturating_add(rng.next() % 120_000)),
                    };
                    let action = lease.on_check_result(now, id, result);
                    if Some(id) != in_flight {
                        assert_eq!(action, None);
                        assert_eq!(lease, before.clone_with_high_water(now));
                    }
                }
                3 => {
                    let _ = lease.reconcile(now);
                }
                4 if rng.next().is_multiple_of(10) => {
                    let _ = lease.close(now);
                }
                6 => {
                    if let Some(id) = in_flight {
                        let _ = lease.hold(now, id);
                    }
                }
                7 => {
                    if let Some(id) = in_flight {
                        let _ = lease.issue(now, id);
                    }
                }
                _ => {
                    // Time that goes backwards.
                    let _ = lease.poll(now.saturating_sub(rng.next() % 50_000));
                }
            }
            if let Err(broken) = lease.check_invariants(now) {
                panic!("{broken}: {lease:?}");
            }
            if before.is_ended() {
                assert_eq!(lease.end_reason(), before.end_reason());
            }
        }
    }
}
