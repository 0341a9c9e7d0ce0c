//! Paired ratios: two operations timed in alternating short batches, so that whatever slows
//! the machine down for a while (the host's other guests, a neighbour's compile) slows both
//! sides of a ratio alike.
//!
//! Criterion measures each benchmark for a second or two, one after another, minutes apart: on
//! a shared virtual machine one side of a ratio can run in a quiet minute and the other in a
//! busy one. [`pair`] instead times a batch of `a`, then a batch of `b` (the order swapped
//! every round), many rounds over, and [`Summary`] gives the median of the per-round ratios
//! with their spread. `src/bin/pairs.rs` measures the goals' ratios this way and the report
//! judges those goals on them.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::e2e::spread;

/// One round of a pair: nanoseconds per call of `a` and of `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    /// `a`'s time per call.
    pub a_ns: f64,
    /// `b`'s time per call.
    pub b_ns: f64,
}

/// How many calls of `f` take about `target` (at least one).
fn calls_for<F: FnMut()>(f: &mut F, target: Duration) -> u64 {
    let mut n = 1u64;
    loop {
        let start = Instant::now();
        for _ in 0..n {
            f();
        }
        let took = start.elapsed();
        if took >= target / 4 || n >= 1 << 30 {
            let per = took.as_secs_f64() / n as f64;
            return ((target.as_secs_f64() / per.max(1e-12)) as u64).max(1);
        }
        n *= 2;
    }
}

/// Nanoseconds per call of `f`, over `n` calls.
fn time<F: FnMut()>(f: &mut F, n: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed().as_secs_f64() * 1e9 / n as f64
}

/// Times `a` and `b` in `rounds` rounds of one batch each (about `batch` long; `a` first in
/// even rounds, `b` first in odd ones), after a warm-up of both.
pub fn pair<A: FnMut(), B: FnMut()>(
    mut a: A,
    mut b: B,
    rounds: usize,
    batch: Duration,
) -> Vec<Round> {
    let na = calls_for(&mut a, batch);
    let nb = calls_for(&mut b, batch);
    (0..rounds)
        .map(|r| {
            if r % 2 == 0 {
                let a_ns = time(&mut a, na);
                Round {
                    a_ns,
                    b_ns: time(&mut b, nb),
                }
            } else {
                let b_ns = time(&mut b, nb);
                Round {
                    a_ns: time(&mut a, na),
                    b_ns,
                }
            }
        })
        .collect()
}

/// A pair's rounds, summed up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// How many rounds.
    pub rounds: usize,
    /// Median of the per-round ratios `a ÷ b`.
    pub ratio: f64,
    /// Smallest per-round ratio.
    pub min: f64,
    /// Largest per-round ratio.
    pub max: f64,
    /// Median time per call of `a`, ns.
    pub a_ns: f64,
    /// Median time per call of `b`, ns.
    pub b_ns: f64,
}

impl Summary {
    /// Sums up `rounds`; `None` without a usable round.
    pub fn of(rounds: &[Round]) -> Option<Self> {
        let ratios: Vec<f64> = rounds
            .iter()
            .filter(|r| r.b_ns > 0.0)
            .map(|r| r.a_ns / r.b_ns)
            .collect();
        let (ratio, min, max) = spread(&ratios)?;
        let median = |side: fn(&Round) -> f64| {
            let v: Vec<f64> = rounds.iter().map(side).collect();
            spread(&v).map(|(m, _, _)| m)
        };
        Some(Self {
            rounds: ratios.len(),
            ratio,
            min,
            max,
            a_ns: median(|r| r.a_ns)?,
            b_ns: median(|r| r.b_ns)?,
        })
    }

    /// The line `src/bin/pairs.rs` writes for the pair `a` ÷ `b` at `n` bytes.
    pub fn line(&self, a: &str, b: &str, n: usize) -> String {
        format!(
            "pair\t{a}\t{b}\t{n}\t{}\t{:.4}\t{:.4}\t{:.4}\t{:.1}\t{:.1}",
            self.rounds, self.ratio, self.min, self.max, self.a_ns, self.b_ns
        )
    }

    /// The same pair seen the other way round (`b` ÷ `a`).
    pub fn inverse(&self) -> Self {
        Self {
            rounds: self.rounds,
            ratio: 1.0 / self.ratio,
            min: 1.0 / self.max,
            max: 1.0 / self.min,
            a_ns: self.b_ns,
            b_ns: self.a_ns,
        }
    }
}

/// Every pair of a `pairs` file, by (a, b, bytes).
#[derive(Debug, Default)]
pub struct Pairs(BTreeMap<(String, String, usize), Summary>);

impl Pairs {
    /// Reads the lines [`Summary::line`] writes (others, and malformed ones, are skipped).
    pub fn parse(text: &str) -> Self {
        let mut map = BTreeMap::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let ["pair", a, b, n, rounds, ratio, min, max, a_ns, b_ns] = f[..] else {
                continue;
            };
            let num = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0);
            let (Ok(n), Ok(rounds)) = (n.parse::<usize>(), rounds.parse::<usize>()) else {
                continue;
            };
            let (Some(ratio), Some(min), Some(max), Some(a_ns), Some(b_ns)) =
                (num(ratio), num(min), num(max), num(a_ns), num(b_ns))
            else {
                continue;
            };
            let summary = Summary {
                rounds,
                ratio,
                min,
                max,
                a_ns,
                b_ns,
            };
            map.insert((a.to_owned(), b.to_owned(), n), summary);
        }
        Self(map)
    }

    /// The pair `a` ÷ `b` at `n` bytes, if it was measured.
    pub fn get(&self, a: &str, b: &str, n: usize) -> Option<Summary> {
        self.0.get(&(a.to_owned(), b.to_owned(), n)).copied()
    }

    /// Whether the file held no pair.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Of the `peers` paired with `id` at `n` bytes, the one that comes closest to (or beats)
/// mrtr: the largest mrtr ÷ peer ratio. `None` when none was paired.
pub fn closest_peer<'a>(
    pairs: &Pairs,
    id: &str,
    peers: impl IntoIterator<Item = &'a str>,
    n: usize,
) -> Option<(&'a str, Summary)> {
    peers
        .into_iter()
        .filter_map(|p| pairs.get(id, p, n).map(|s| (p, s)))
        .max_by(|a, b| a.1.ratio.total_cmp(&b.1.ratio))
}

/// `1.27× (1.21–1.35 over 31 rounds)`.
pub fn shown(s: &Summary) -> String {
    format!(
        "{:.2}× ({:.2}–{:.2} over {} rounds)",
        s.ratio, s.min, s.max, s.rounds
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_takes_the_median_ratio_not_the_ratio_of_medians() {
        // One slow round on each side, in different rounds: the per-round ratios stay near
        // 1.1 while the times swing.
        let rounds = [
            Round {
                a_ns: 110.0,
                b_ns: 100.0,
            },
            Round {
                a_ns: 330.0,
                b_ns: 300.0,
            },
            Round {
                a_ns: 121.0,
                b_ns: 110.0,
            },
            Round {
                a_ns: 440.0,
                b_ns: 100.0,
            },
            Round {
                a_ns: 99.0,
                b_ns: 90.0,
            },
        ];
        let s = Summary::of(&rounds).unwrap();
        assert_eq!(s.rounds, 5);
        assert!((s.ratio - 1.1).abs() < 1e-9, "{s:?}");
        assert!(
            (s.max - 4.4).abs() < 1e-9 && (s.min - 1.1).abs() < 1e-9,
            "{s:?}"
        );
        assert_eq!((s.a_ns, s.b_ns), (121.0, 100.0));
        let inv = s.inverse();
        assert!((inv.ratio - 1.0 / 1.1).abs() < 1e-9 && (inv.min - 1.0 / 4.4).abs() < 1e-9);
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn lines_read_back_and_bad_lines_are_skipped() {
        let s = Summary {
            rounds: 31,
            ratio: 1.2345,
            min: 1.1,
            max: 1.5,
            a_ns: 1180.0,
            b_ns: 955.9,
        };
        let text = format!(
            "# header\n{}\npair\tx\ty\t64\t3\tnan\t1\t1\t1\t1\npair\tshort\n{}\n",
            s.line("mrtr", "floor", 256),
            s.line("mrtr", "peer", 64)
        );
        let pairs = Pairs::parse(&text);
        assert_eq!(pairs.get("mrtr", "floor", 256), Some(s));
        assert_eq!(pairs.get("mrtr", "peer", 64), Some(s));
        assert_eq!(pairs.get("x", "y", 64), None);
        assert_eq!(pairs.get("mrtr", "floor", 64), None);
        assert!(Pairs::parse("").is_empty());
    }

    #[test]
    fn the_closest_peer_is_the_one_mrtr_beats_by_least() {
        let at = |ratio: f64| Summary {
            rounds: 3,
            ratio,
            min: ratio * 0.9,
            max: ratio * 1.1,
            a_ns: 100.0,
            b_ns: 100.0 / ratio,
        };
        let text = [
            at(0.5).line("m", "fast-peer", 64),
            at(0.1).line("m", "slow-peer", 64),
            at(1.2).line("m", "fast-peer", 256),
        ]
        .join("\n");
        let pairs = Pairs::parse(&text);
        let peers = ["slow-peer", "fast-peer", "unpaired"];
        let (p, s) = closest_peer(&pairs, "m", peers, 64).unwrap();
        assert_eq!((p, s.ratio), ("fast-peer", 0.5));
        assert_eq!(
            closest_peer(&pairs, "m", peers, 256).unwrap().0,
            "fast-peer"
        );
        assert!(closest_peer(&pairs, "m", peers, 1024).is_none());
        assert_eq!(shown(&at(0.5)), "0.50× (0.45–0.55 over 3 rounds)");
    }

    #[test]
    fn pair_runs_both_sides_in_every_round() {
        let (mut a_calls, mut b_calls) = (0u64, 0u64);
        let rounds = pair(
            || a_calls += 1,
            || b_calls += 1,
            5,
            Duration::from_micros(200),
        );
        assert_eq!(rounds.len(), 5);
        assert!(rounds.iter().all(|r| r.a_ns >= 0.0 && r.b_ns >= 0.0));
        // Calibration calls each side at least once, then every round runs a batch of each.
        assert!(a_calls >= 6 && b_calls >= 6, "{a_calls} {b_calls}");
    }
}
