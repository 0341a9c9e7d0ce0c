//! `ReplaySet<N>` and `SharedReplaySet<N>` under arbitrary clocks (time steps both ways):
//! the two agree exactly; an id accepted once is never accepted again while its expiry is
//! still ahead of the clock, whatever the clock did in between; `Full` only when every slot
//! holds a live entry; and a fresh id is refused as a replay only when its expiry is no later
//! than one already accepted (where forgotten ids may lie), never otherwise.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mrtr_core::TokenId;
use mrtr_core::replay::{ReplayCache, ReplayError, ReplaySet, SharedReplaySet};

const CAP: usize = 4;

#[derive(Arbitrary, Debug)]
struct Op {
    /// Index into a small palette of ids, so duplicates are common.
    id: u8,
    /// Last byte of the id, for ids that differ only at the end.
    tweak: bool,
    /// Time step in ms (signed: clocks can step back).
    step: i16,
    /// Lifetime of the token from the current time, in ms (may be negative: already expired).
    ttl: i16,
}

fuzz_target!(|ops: Vec<Op>| {
    let mut set = ReplaySet::<CAP>::new();
    let shared = SharedReplaySet::<CAP>::new();
    // A token's id comes with one expiry, sealed in it: the first op naming an id fixes it.
    let mut expiry_of: Vec<(TokenId, u64)> = Vec::new();
    let mut accepted: Vec<(TokenId, u64)> = Vec::new();
    let mut now: u64 = 1_000_000;
    for op in ops {
        now = now.saturating_add_signed(op.step as i64);
        let mut id = [op.id % 6; 16];
        id[15] ^= op.tweak as u8;
        let exp = match expiry_of.iter().find(|(i, _)| *i == id) {
            Some(&(_, e)) => e,
            None => {
                let e = now.saturating_add_signed(op.ttl as i64);
                expiry_of.push((id, e));
                e
            }
        };
        let got = set.check_and_record(&id, exp, now);
        assert_eq!(
            shared.check_and_record(&id, exp, now),
            got,
            "shared: {op:?}"
        );
        let spent = accepted.iter().any(|&(i, _)| i == id);
        match got {
            Ok(()) => {
                assert!(exp > now, "{op:?}: recorded an expired token at {now}");
                assert!(!spent, "{op:?}: accepted {id:?} again at {now}");
                accepted.push((id, exp));
            }
            Err(ReplayError::Full) => {
                // Every slot holds a live entry (the set drops expired ones first). More
                // accepted tokens may be live by now than the set holds: one forgotten while
                // the clock was ahead is live again after the clock stepped back.
                let live = accepted.iter().filter(|&&(_, e)| e > now).count();
                assert_eq!(set.len(), CAP, "{op:?}: Full with {} entries", set.len());
                assert!(live >= CAP, "{op:?}: Full with {live} live entries");
            }
            Err(ReplayError::Replayed) if !spent && exp > now => {
                let latest = accepted.iter().map(|&(_, e)| e).max();
                assert!(
                    latest.is_some_and(|l| exp <= l),
                    "{op:?}: a fresh id expiring after everything accepted was refused"
                );
            }
            Err(ReplayError::Replayed) => {}
            Err(e) => panic!("{op:?}: unexpected {e:?}"),
        }
        assert_eq!(set.len(), shared.len());
        assert!(set.len() <= CAP);
    }
});
