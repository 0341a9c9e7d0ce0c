//! [`EvictedSpans`]: where a replay cache has forgotten ids.

/// Spans a replay cache keeps by default ([`crate::replay::ReplaySet`] and `mrtr-std`'s
/// in-process cache, per shard).
pub const DEFAULT_SPANS: usize = 4;

/// At most `S` disjoint intervals of expiry times (ms since the Unix epoch, inclusive) that
/// together cover the expiry of every token id a replay cache has forgotten.
///
/// A cache forgets an id once its token has expired by the clock. If the clock later steps
/// back behind that expiry, the token is unexpired again and its id is no longer recorded;
/// the cache must still refuse it. It does so by refusing every token whose expiry lies in a
/// span ([`EvictedSpans::covers`]).
///
/// * **Never revives**: every forgotten expiry stays covered; when all `S` spans are taken,
///   the two closest neighbours (or the new point and its nearest span) merge, which only
///   widens what is covered.
/// * **Little collateral**: in steady operation all evictions fall in one span that ends at
///   the latest expiry forgotten, which is at most the current time, while a fresh token
///   expires a TTL after it. After a forward jump of the clock that is then corrected, the
///   tokens minted during the jump get a span of their own, far ahead, so fresh tokens after
///   the correction are accepted at once. (When real time reaches that span, tokens whose
///   expiry falls in it are refused for as long as the jump lasted: those are exactly the
///   expiries at which a spent token minted during the jump would become valid again.)
///
/// ```
/// use mrtr_core::replay::EvictedSpans;
/// let mut spans = EvictedSpans::<2>::new();
/// spans.insert(1_000);
/// spans.insert(1_200);          // joins the span [1000, 1200]
/// spans.insert(90_000_000);     // far away: a span of its own
/// assert!(spans.covers(1_100) && spans.covers(90_000_000));
/// assert!(!spans.covers(1_500) && !spans.covers(999));
/// spans.insert(5_000);          // no room: merges where the gap is smallest
/// assert!(spans.covers(1_100) && spans.covers(4_000) && spans.covers(90_000_000));
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EvictedSpans<const S: usize> {
    /// Sorted, disjoint `(lo, hi)` pairs; only the first `len` are in use.
    spans: [(u64, u64); S],
    len: usize,
}

impl<const S: usize> EvictedSpans<S> {
    /// No span: nothing forgotten yet.
    pub const fn new() -> Self {
        const { assert!(S >= 1, "EvictedSpans needs room for at least one span") };
        Self {
            spans: [(0, 0); S],
            len: 0,
        }
    }

    /// The spans in use, sorted, as inclusive `(lo, hi)` pairs.
    pub fn spans(&self) -> &[(u64, u64)] {
        self.spans.get(..self.len).unwrap_or(&[])
    }

    /// Whether no id has been forgotten.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `expires_at_ms` lies in a span: a token with this expiry may have been
    /// recorded and forgotten, so it must be refused.
    pub fn covers(&self, expires_at_ms: u64) -> bool {
        self.spans()
            .iter()
            .any(|&(lo, hi)| lo <= expires_at_ms && expires_at_ms <= hi)
    }

    /// Records that an id expiring at `expires_at_ms` was forgotten.
    pub fn insert(&mut self, expires_at_ms: u64) {
        let e = expires_at_ms;
        if self.covers(e) {
            return;
        }
        // First span that starts after `e` (none contains it).
        let at = self
            .spans()
            .iter()
            .position(|&(lo, _)| lo > e)
            .unwrap_or(self.len);
        if self.len < S {
            self.insert_at(at, (e, e));
            return;
        }
        // Full: either stretch the nearest neighbour over `e`, or merge the closest pair of
        // neighbours and give `e` a span of its own, whichever covers less new ground.
        let left = at.checked_sub(1).map(|i| (e - self.spans[i].1, i));
        let right = (at < self.len).then(|| (self.spans[at].0 - e, at));
        let stretch = match (left, right) {
            (Some(l), Some(r)) => Some(if l.0 <= r.0 { l } else { r }),
            (l, r) => l.or(r),
        };
        let pair = (0..self.len.saturating_sub(1))
            .map(|i| (self.spans[i + 1].0 - self.spans[i].1, i))
            .min();
        match (stretch, pair) {
            (Some((gap, _)), Some((pair_gap, j))) if pair_gap < gap => {
                self.spans[j].1 = self.spans[j + 1].1;
                self.remove_at(j + 1);
                let at = self
                    .spans()
                    .iter()
                    .position(|&(lo, _)| lo > e)
                    .unwrap_or(self.len);
                self.insert_at(at, (e, e));
            }
            (Some((_, i)), _) => {
                let span = &mut self.spans[i];
                span.0 = span.0.min(e);
                span.1 = span.1.max(e);
            }
            // S >= 1 and the set is full, so `e` always has a neighbour.
            (None, _) => {}
        }
    }

    fn insert_at(&mut self, at: usize, span: (u64, u64)) {
        let mut i = self.len;
        while i > at {
            self.spans[i] = self.spans[i - 1];
            i -= 1;
        }
        self.spans[at] = span;
        self.len += 1;
    }

    fn remove_at(&mut self, at: usize) {
        for i in at..self.len - 1 {
            self.spans[i] = self.spans[i + 1];
        }
        self.len -= 1;
    }
}

impl<const S: usize> Default for EvictedSpans<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const S: usize> core::fmt::Debug for EvictedSpans<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.spans()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_near_each_other_share_a_span_only_when_room_runs_out() {
        let mut s = EvictedSpans::<3>::new();
        for e in [10, 30, 22] {
            s.insert(e);
        }
        assert_eq!(s.spans(), &[(10, 10), (22, 22), (30, 30)]);
        s.insert(31); // full: 31 stretches its neighbour (gap 1) rather than merging a pair
        assert_eq!(s.spans(), &[(10, 10), (22, 22), (30, 31)]);
        s.insert(1_000); // far: the closest pair (gap 8) merges, 1000 gets its own span
        assert_eq!(s.spans(), &[(10, 10), (22, 31), (1_000, 1_000)]);
        s.insert(5); // stretches (10,10) down (gap 5 < smallest pair gap 12)
        assert_eq!(s.spans(), &[(5, 10), (22, 31), (1_000, 1_000)]);
    }

    #[test]
    fn every_forgotten_expiry_stays_covered() {
        let mut s = EvictedSpans::<2>::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut seen = [0u64; 500];
        for slot in seen.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *slot = x % 1_000_000;
            s.insert(*slot);
            let spans = s.spans();
            assert!(spans.windows(2).all(|w| w[0].1 < w[1].0), "{spans:?}");
            assert!(spans.iter().all(|&(lo, hi)| lo <= hi));
        }
        assert!(seen.iter().all(|&e| s.covers(e)));
    }

    #[test]
    fn one_span_holds_everything() {
        let mut s = EvictedSpans::<1>::new();
        s.insert(500);
        s.insert(100);
        s.insert(900);
        assert_eq!(s.spans(), &[(100, 900)]);
        assert!(!s.covers(99) && !s.covers(901));
    }
}
