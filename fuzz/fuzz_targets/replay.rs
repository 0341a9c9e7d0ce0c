//! `ReplaySet<N>` and `SharedReplaySet<N>` against a plain model: expired entries go, a live
//! entry is never forgotten, a live duplicate is never accepted, and a set full of live
//! entries answers `Full`. Time may jump backwards (wall clocks do): independently of the
//! model, an id accepted once is never accepted again while its first expiry is still ahead
//! of the clock, whatever the clock did in between.
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

#[derive(Default)]
struct Model {
    live: Vec<(TokenId, u64)>,
    /// The latest time seen.
    high_water: u64,
}

impl Model {
    fn check_and_record(&mut self, id: &TokenId, exp: u64, now: u64) -> Result<(), ReplayError> {
        self.high_water = self.high_water.max(now);
        let now = self.high_water;
        self.live.retain(|&(_, e)| e > now);
        if exp <= now {
            return Err(ReplayError::Replayed);
        }
        if self.live.iter().any(|(i, _)| i == id) {
            return Err(ReplayError::Replayed);
        }
        if self.live.len() == CAP {
            return Err(ReplayError::Full);
        }
        self.live.push((*id, exp));
        Ok(())
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let mut set = ReplaySet::<CAP>::new();
    let shared = SharedReplaySet::<CAP>::new();
    let mut model = Model::default();
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
        let expected = model.check_and_record(&id, exp, now);
        assert_eq!(
            set.check_and_record(&id, exp, now),
            expected,
            "{op:?} at {now}"
        );
        assert_eq!(
            shared.check_and_record(&id, exp, now),
            expected,
            "shared: {op:?}"
        );
        if expected.is_ok() {
            let spent = accepted.iter().any(|&(i, e)| i == id && e > now);
            assert!(
                !spent,
                "{op:?}: accepted {id:?} again at {now} before its first expiry"
            );
            accepted.push((id, exp));
        }
        assert_eq!(set.len(), model.live.len());
        assert_eq!(shared.len(), model.live.len());
        assert!(set.len() <= CAP);
    }
});
