//! The end-to-end instruction counts `ci/bench-e2e-instr.sh` writes, and their part of the
//! report.
//!
//! Each `instr` line is one server's count under callgrind: name, round trips, user-space
//! instructions, of which in SHA-256's portable compression, label; each `cache` line the
//! same round trips' simulated cache misses and mispredicted branches. Every server is
//! compared with the rmcp-codec server built the same way ([`codec_for`]).

use std::fmt::Write as _;

use crate::e2e::{E2e, MRTR, MRTR_BARE, RMCP_CODEC};
use crate::report::table;

/// The rmcp-codec server with filler in its state, so its token is as long as mrtr's
/// (counted in instructions only).
pub const RMCP_CODEC_LONG: &str = "rmcp-codec-long";

/// The suffix of a server built with fat LTO and one codegen unit (counted in instructions
/// only); each is compared with [`RMCP_CODEC_LTO`], the codec server built the same way.
pub const LTO_SUFFIX: &str = "-lto";
/// The rmcp-codec server built with fat LTO and one codegen unit.
pub const RMCP_CODEC_LTO: &str = "rmcp-codec-lto";

/// The codec server a server's instruction and cache counts are compared with: the one built
/// the same way.
pub fn codec_for(name: &str) -> &'static str {
    if name.ends_with(LTO_SUFFIX) {
        RMCP_CODEC_LTO
    } else {
        RMCP_CODEC
    }
}

/// How far one server's instruction count has moved between runs with one tokio worker (as a
/// fraction; `ci/bench-e2e-instr.sh` says how it was seen).
pub const COUNT_DRIFT: f64 = 0.002;

/// One server's instruction count (`ci/bench-e2e-instr.sh`, callgrind).
#[derive(Clone, Debug)]
pub struct Instr {
    /// Series name.
    pub name: String,
    /// Round trips counted.
    pub round_trips: u64,
    /// User-space instructions of the whole process for them.
    pub instructions: u64,
    /// Of which in SHA-256's portable compression (valgrind hides SHA-NI; natively it is
    /// a small fraction of this).
    pub sha256_portable: u64,
    /// What the series is.
    pub label: String,
}

impl Instr {
    /// Instructions per round trip, without portable SHA-256.
    pub fn per_round_trip(&self) -> f64 {
        self.instructions.saturating_sub(self.sha256_portable) as f64
            / self.round_trips.max(1) as f64
    }
}

/// One server's simulated cache misses and branch mispredictions (callgrind's `--cache-sim`
/// and `--branch-sim`) over the counted round trips.
#[derive(Clone, Debug)]
pub struct Cache {
    /// Series name.
    pub name: String,
    /// Round trips counted.
    pub round_trips: u64,
    /// First-level instruction cache misses.
    pub i1: u64,
    /// First-level data cache misses (reads and writes).
    pub d1: u64,
    /// Last-level misses (instructions and data).
    pub ll: u64,
    /// Mispredicted branches (conditional and indirect).
    pub mispredicts: u64,
}

impl Cache {
    /// The four counts per round trip, in field order.
    fn per_round_trip(&self) -> [f64; 4] {
        let n = self.round_trips.max(1) as f64;
        [self.i1, self.d1, self.ll, self.mispredicts].map(|v| v as f64 / n)
    }
}

impl E2e {
    /// The instruction count of `name`.
    pub fn instr(&self, name: &str) -> Option<&Instr> {
        self.instr.iter().find(|i| i.name == name)
    }

    /// `name`'s instructions per round trip (without portable SHA-256) ÷ those of the codec
    /// server built the same way ([`codec_for`]), if both were counted.
    pub fn instr_ratio(&self, name: &str) -> Option<f64> {
        let base = self.instr(codec_for(name))?.per_round_trip();
        (base > 0.0).then_some(())?;
        Some(self.instr(name)?.per_round_trip() / base)
    }

    /// The reported (no target) row comparing instructions per round trip, if counted.
    pub fn instr_row(&self) -> Option<(String, String)> {
        let (m, r) = (self.instr(MRTR)?, self.instr(RMCP_CODEC)?);
        Some((
            "(no target) end to end in instructions per round trip (callgrind, without \
             portable SHA-256): hosted server with mrtr (default) ÷ the rmcp-codec server"
                .to_owned(),
            format!(
                "{:.0} vs {:.0} = {:.3}× ({:+.0} per round trip)",
                m.per_round_trip(),
                r.per_round_trip(),
                m.per_round_trip() / r.per_round_trip(),
                m.per_round_trip() - r.per_round_trip()
            ),
        ))
    }
    /// The instruction counts' part of the section.
    pub(crate) fn instr_section(&self, o: &mut String) {
        let _ = writeln!(o, "### Instructions per round trip\n");
        let drift = COUNT_DRIFT * 100.0;
        let _ = writeln!(
            o,
            "`ci/bench-e2e-instr.sh` (run by `ci/bench.sh`): the same round trips, sent one \
             after another by `ci/bench-e2e-drive.py`, each server run under valgrind's \
             callgrind; the whole process's user-space instructions from the first measured \
             request to the last, after a warm-up. Each server runs one tokio worker, as in \
             the pinned throughput runs (with a worker per core, the idle one's spinning moved \
             a count by up to about 1.5 % between runs; with one, by about {drift:.1} %). Unlike \
             throughput, the count hardly moves with the machine's load, but it leaves out \
             kernel time, cache misses and waiting. \
             Valgrind hides the SHA extensions, so SHA-256 runs its portable code there (the \
             rmcp server's HMAC, mrtr's argument digest) while natively it uses SHA-NI; the \
             comparison column leaves SHA-256's portable compression out of both. Natively \
             SHA-NI's compression runs about 190 instructions per 64-byte block (`objdump` of \
             `sha2`'s `x86_sha::compress`), and the rmcp server hashes about 20 blocks per \
             round trip to mrtr's 2, so leaving SHA out favours the rmcp server by about 3,000 \
             instructions per round trip.\n"
        );
        if self.instr.is_empty() {
            let _ = writeln!(o, "Not measured in this run.\n");
            return;
        }
        let _ = writeln!(o, "Counted: {}.\n", self.instr_setup);
        let rows: Vec<Vec<String>> = self
            .instr
            .iter()
            .map(|i| {
                let n = i.round_trips.max(1);
                vec![
                    i.label.clone(),
                    (i.instructions / n).to_string(),
                    (i.sha256_portable / n).to_string(),
                    format!("{:.0}", i.per_round_trip()),
                    self.instr_ratio(&i.name)
                        .map_or("–".to_owned(), |r| format!("{r:.3}×")),
                ]
            })
            .collect();
        table(
            o,
            &[
                "server".into(),
                "instructions per round trip".into(),
                "of which portable SHA-256".into(),
                "without it".into(),
                "÷ rmcp-codec built the same way (without it)".into(),
            ],
            &rows,
        );
        if let Some(lto) = self.lto_note() {
            let _ = writeln!(o, "{lto}\n");
        }
        if let Some(split) = self.token_length_split() {
            let _ = writeln!(o, "{split}\n");
        }
        self.cache_section(o);
    }

    /// At most how much of each mrtr server's difference from the rmcp-codec server
    /// (instructions per round trip, without portable SHA-256) the length of its token
    /// explains, as the long-token codec server bounds it, and the rest. `None` without those
    /// counts.
    pub fn token_length_split(&self) -> Option<String> {
        let codec = self.instr(RMCP_CODEC)?.per_round_trip();
        let long = self.instr(RMCP_CODEC_LONG)?.per_round_trip() - codec;
        let mut text = format!(
            "**Token length.** mrtr's token is longer than the codec's: it carries a token id \
             (single use), the argument digest, issue and expiry times, the round, the method, \
             a nonce and an encryption tag. The codec server with filler making its token as \
             long as mrtr's counts {long:.0} instructions per round trip more than without. \
             That is an upper bound on what a longer token costs rmcp's own parsing and \
             serializing: it also holds the codec's own work on the filler (writing it into \
             the state, encoding it, and decoding and parsing it back; its HMAC is left out \
             with SHA-256). Callgrind's inclusive counts put most of rmcp's part in \
             serializing the response; parsing the request hardly grows with the token."
        );
        for (name, what) in [(MRTR, "hosted server"), (MRTR_BARE, "mrtr-alone server")] {
            if let Some(i) = self.instr(name) {
                let gap = i.per_round_trip() - codec;
                let share = if gap > 0.0 { long / gap * 100.0 } else { 0.0 };
                let _ = write!(
                    text,
                    " Of the {what}'s {gap:.0} more than the codec's, the token's length \
                     explains at most {share:.0} %; at least the other {:.0} is mrtr's code and \
                     the server's own layers.",
                    gap - long
                );
            }
        }
        let _ = write!(
            text,
            " The split is approximate: a {:.1} % move between runs is about {:.0} \
             instructions per round trip here.",
            COUNT_DRIFT * 100.0,
            codec * COUNT_DRIFT
        );
        Some(text)
    }

    /// What fat LTO does to the instruction counts and their ratios, if the -lto servers
    /// were counted.
    pub fn lto_note(&self) -> Option<String> {
        let codec = self.instr(RMCP_CODEC)?.per_round_trip();
        let codec_lto = self.instr(RMCP_CODEC_LTO)?.per_round_trip();
        let mut text = format!(
            "**Link-time optimization.** The rows ending \"fat LTO\" are the same servers built \
             with `lto = \"fat\"` and `codegen-units = 1` (the workspace's release profile \
             has neither), each compared with the codec server built the same way. LTO takes \
             the codec server from {codec:.0} to {codec_lto:.0} instructions per round trip \
             ({:+.1} %).",
            (codec_lto / codec - 1.0) * 100.0
        );
        for (name, what) in [(MRTR, "hosted server"), (MRTR_BARE, "mrtr-alone server")] {
            let lto = format!("{name}{LTO_SUFFIX}");
            if let (Some(plain), Some(linked)) = (self.instr_ratio(name), self.instr_ratio(&lto)) {
                // Both ratios move with both counts' drift.
                let verdict = if linked < plain * (1.0 - 2.0 * COUNT_DRIFT) {
                    "narrower"
                } else if linked > plain * (1.0 + 2.0 * COUNT_DRIFT) {
                    "wider"
                } else {
                    "the same within the counts' drift"
                };
                let _ = write!(
                    text,
                    " The {what}'s ratio is {plain:.3}× without it and {linked:.3}× with it: \
                     {verdict}."
                );
            }
        }
        Some(text)
    }

    /// The simulated cache misses and mispredictions.
    fn cache_section(&self, o: &mut String) {
        if self.cache.is_empty() {
            return;
        }
        let _ = writeln!(
            o,
            "The same runs, through callgrind's cache and branch-predictor simulation (a \
             generic model, not this CPU's counters; repeatable like the instruction count). \
             Each miss or misprediction costs several to hundreds of cycles, which is why the \
             throughput gap can be wider than the instruction gap (each server's ratio is to the \
             codec server built the same way):\n"
        );
        let base = |name: &str| {
            self.cache
                .iter()
                .find(|c| c.name == codec_for(name))
                .map(Cache::per_round_trip)
        };
        let label = |name: &str| {
            self.instr(name)
                .map_or(name.to_owned(), |i| i.label.clone())
        };
        let rows: Vec<Vec<String>> = self
            .cache
            .iter()
            .map(|c| {
                let mine = c.per_round_trip();
                let mut row = vec![label(&c.name)];
                for (k, v) in mine.iter().enumerate() {
                    let rel = base(&c.name)
                        .filter(|b| b[k] > 0.0)
                        .map_or(String::new(), |b| format!(" ({:.2}×)", v / b[k]));
                    row.push(format!("{v:.0}{rel}"));
                }
                row
            })
            .collect();
        table(
            o,
            &[
                "server".into(),
                "I1 misses per round trip".into(),
                "D1 misses".into(),
                "last-level misses".into(),
                "mispredicted branches".into(),
            ],
            &rows,
        );
    }
}
