//! The end-to-end results `ci/bench-e2e.sh` writes (one TSV file), and their part of the report.
//!
//! The file's first line is `#`, the CPU pinning used and a description of the runs; every
//! other line is one server at one connection count: name, connections, requests/s, round
//! trips/s, p50 µs, p99 µs, label. `pair` lines give one repetition's ratios against the
//! rmcp-codec server run right after it; `#instr`, `instr` and `cache` lines come from
//! `ci/bench-e2e-instr.sh`, `#cpu` and `cpu` lines from `ci/bench-e2e-cpu.sh` (see
//! [`crate::e2e::cpu`]), and `steal` lines from both timed scripts (see [`crate::e2e::steal`]).

use std::fmt::Write as _;

pub mod cpu;
pub mod steal;

use crate::report::table;
use cpu::Cpu;
use steal::{Steal, Suite};

/// The series `ci/bench-e2e.sh` runs under these names.
pub const MRTR: &str = "mrtr";
/// The same tool on plain rmcp with only what mrtr needs (`e2e-mrtr-rmcp`).
pub const MRTR_BARE: &str = "mrtr-bare";
/// The hosted server with AES-256-GCM and the OS nonce source.
pub const MRTR_GCM_OS: &str = "mrtr-gcm-os";
/// The same tool on rmcp with its built-in `RequestStateCodec`.
pub const RMCP_CODEC: &str = "rmcp-codec";
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

/// The bound of the end-to-end goal: mrtr within 5 % of the rmcp-codec server.
pub const WITHIN: f64 = 0.05;

/// How far one server's instruction count has moved between runs with one tokio worker (as a
/// fraction; `ci/bench-e2e-instr.sh` says how it was seen).
pub const COUNT_DRIFT: f64 = 0.002;

/// One server at one connection count.
#[derive(Clone, Debug)]
pub struct Run {
    /// Series name (`mrtr`, `mrtr-bare`, `mrtr-gcm-os`, `rmcp-codec`).
    pub name: String,
    /// Open connections (wrk `-c`).
    pub conns: u32,
    /// HTTP requests per second (each round trip is two requests).
    pub rps: f64,
    /// Completed pause-and-resume round trips per second.
    pub round_trips: f64,
    /// Median request latency, µs.
    pub p50_us: f64,
    /// 99th-percentile request latency, µs.
    pub p99_us: f64,
    /// What the series is.
    pub label: String,
}

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

/// One repetition of one mrtr series against the rmcp-codec server run right after it.
#[derive(Clone, Debug)]
pub struct Pair {
    /// Series name.
    pub name: String,
    /// Open connections.
    pub conns: u32,
    /// Round trips/s ÷ the rmcp-codec server's in the same repetition.
    pub throughput: f64,
    /// p50 latency ÷ the rmcp-codec server's in the same repetition.
    pub p50: f64,
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

/// Median, smallest and largest of a set of ratios.
pub type Spread = (f64, f64, f64);

/// The [`Spread`] of `values` (`None` when none is finite).
pub(crate) fn spread(values: &[f64]) -> Option<Spread> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let (first, last) = (*v.first()?, *v.last()?);
    let mid = v.len() / 2;
    let median = if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    };
    Some((median, first, last))
}

/// A whole end-to-end result file.
#[derive(Clone, Debug, Default)]
pub struct E2e {
    /// How the runs were made (pinning, seconds, repetitions), from the first line.
    pub setup: String,
    /// The measured runs, in file order.
    pub runs: Vec<Run>,
    /// How the instruction counts were made (`#instr` line).
    pub instr_setup: String,
    /// The instruction counts (`instr` lines), in file order.
    pub instr: Vec<Instr>,
    /// Each repetition's paired ratios (`pair` lines).
    pub pairs: Vec<Pair>,
    /// Simulated cache misses and mispredictions (`cache` lines), in file order.
    pub cache: Vec<Cache>,
    /// How the CPU times were measured (`#cpu` line).
    pub cpu_setup: String,
    /// CPU time per server and round (`cpu` lines), in file order.
    pub cpu: Vec<Cpu>,
    /// The machine's steal time during each timed run (`steal` lines), in file order.
    pub steal: Vec<Steal>,
}

impl E2e {
    /// Parses the file's text; lines that do not parse are skipped (an empty or missing file
    /// gives no runs, and the report says "not measured").
    pub fn parse(text: &str) -> Self {
        let mut out = Self::default();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            match f[..] {
                ["#", pin, how] => out.setup = format!("{how}; {pin}"),
                ["#instr", how] => out.instr_setup = how.to_owned(),
                ["#cpu", how] => out.cpu_setup = how.to_owned(),
                ["cpu", ..] => out.cpu.extend(Cpu::parse(&f)),
                ["steal", ..] => out.steal.extend(Steal::parse(&f)),
                ["instr", name, n, total, sha, label] => {
                    let count = (|| {
                        Some(Instr {
                            name: name.to_owned(),
                            round_trips: n.parse().ok()?,
                            instructions: total.parse().ok()?,
                            sha256_portable: sha.parse().ok()?,
                            label: label.to_owned(),
                        })
                    })();
                    out.instr.extend(count);
                }
                ["pair", name, conns, _rep, thr, p50] => {
                    let pair = (|| {
                        Some(Pair {
                            name: name.to_owned(),
                            conns: conns.parse().ok()?,
                            throughput: thr.parse().ok()?,
                            p50: p50.parse().ok()?,
                        })
                    })();
                    out.pairs.extend(pair);
                }
                ["cache", name, n, i1, d1, ll, bm] => {
                    let cache = (|| {
                        Some(Cache {
                            name: name.to_owned(),
                            round_trips: n.parse().ok()?,
                            i1: i1.parse().ok()?,
                            d1: d1.parse().ok()?,
                            ll: ll.parse().ok()?,
                            mispredicts: bm.parse().ok()?,
                        })
                    })();
                    out.cache.extend(cache);
                }
                [name, conns, rps, rt, p50, p99, label] => {
                    let run = (|| {
                        Some(Run {
                            name: name.to_owned(),
                            conns: conns.parse().ok()?,
                            rps: rps.parse().ok()?,
                            round_trips: rt.parse().ok()?,
                            p50_us: p50.parse().ok()?,
                            p99_us: p99.parse().ok()?,
                            label: label.to_owned(),
                        })
                    })();
                    out.runs.extend(run);
                }
                _ => {}
            }
        }
        out
    }

    /// The run of `name` at `conns` connections.
    pub fn get(&self, name: &str, conns: u32) -> Option<&Run> {
        self.runs
            .iter()
            .find(|r| r.name == name && r.conns == conns)
    }

    /// The connection counts measured, ascending.
    pub fn conns(&self) -> Vec<u32> {
        let mut c: Vec<u32> = self.runs.iter().map(|r| r.conns).collect();
        c.sort_unstable();
        c.dedup();
        c
    }

    /// Median, smallest and largest paired ratio (throughput, then p50) of `name` at `conns`.
    pub fn paired(&self, name: &str, conns: u32) -> Option<(Spread, Spread)> {
        let (thr, p50): (Vec<f64>, Vec<f64>) = self
            .pairs
            .iter()
            .filter(|p| p.name == name && p.conns == conns)
            .map(|p| (p.throughput, p.p50))
            .unzip();
        Some((spread(&thr)?, spread(&p50)?))
    }

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

    /// Goal rows (goal, measured, met?): per connection count, mrtr's throughput at least
    /// 95 % of the rmcp-codec server's and its p50 latency at most 105 % of it. `None` when
    /// nothing was measured.
    pub fn goals(&self) -> Vec<(String, String, Option<bool>)> {
        let conns = self.conns();
        if conns.is_empty() {
            return vec![(
                "end to end: hosted server with mrtr within 5 % of the rmcp-codec server \
                 (loopback HTTP)"
                    .to_owned(),
                "not measured in this run (`bash ci/bench-e2e.sh` failed or was skipped)"
                    .to_owned(),
                None,
            )];
        }
        conns
            .into_iter()
            .map(|c| {
                let goal = format!(
                    "end to end at {c} connection{}: hosted server with mrtr (default \
                     configuration) within 5 % of the rmcp-codec server in throughput and p50",
                    if c == 1 { "" } else { "s" }
                );
                match (self.get(MRTR, c), self.get(RMCP_CODEC, c)) {
                    (Some(m), Some(r)) => {
                        let thr = m.round_trips / r.round_trips;
                        let lat = m.p50_us / r.p50_us;
                        let mut measured = format!(
                            "{:.0} vs {:.0} round trips/s ({:.2}×), p50 {:.0} vs {:.0} µs \
                             ({:.2}×), p99 {:.0} vs {:.0} µs",
                            m.round_trips,
                            r.round_trips,
                            thr,
                            m.p50_us,
                            r.p50_us,
                            lat,
                            m.p99_us,
                            r.p99_us
                        );
                        if let Some(((_, lo, hi), (_, plo, phi))) = self.paired(MRTR, c) {
                            let _ = write!(
                                measured,
                                "; paired repetitions {lo:.2}–{hi:.2}× in throughput, \
                                 {plo:.2}–{phi:.2}× in p50"
                            );
                        }
                        measured.push_str(&self.steal_suffix(Suite::Wrk, c));
                        (
                            goal,
                            measured,
                            Some(thr >= 1.0 - WITHIN && lat <= 1.0 + WITHIN),
                        )
                    }
                    _ => (goal, "not measured".to_owned(), None),
                }
            })
            .collect()
    }

    /// The report's "End to end" section.
    pub fn section(&self, o: &mut String) {
        let _ = writeln!(o, "## End to end (loopback HTTP)\n");
        let _ = writeln!(
            o,
            "`ci/bench-e2e.sh` (run by `ci/bench.sh`): the `book_table` tool's pause and resume \
             over Streamable HTTP on 127.0.0.1, driven by `wrk` with `ci/bench-e2e.lua`. Each \
             connection loops: a fresh `tools/call` that answers `input_required` with a \
             `requestState`, then the retry with that exact token and a date (the server \
             opens, checks and spends the token and seals the next round's, asking for a \
             confirmation). Every response is checked (an unexpected one fails the run), so a \
             round trip is two requests and each token is resumed once. Servers: \
             `examples/hosted-server` in its default configuration (aws-lc AES-256-GCM-SIV, fast nonce \
             source, in-process replay cache, audience, argument binding) and with \
             AES-256-GCM and the OS nonce source; the same tool on plain rmcp 3.11 with mrtr \
             alone (`benches/src/bin/e2e_mrtr_rmcp.rs`: mrtr-rmcp's `Parameters` and \
             `PrecheckLayer` and the hosted default engine, compiling in the hosted server's \
             own `booking.rs`, without its authentication, session-owner and metrics layers, \
             to tell what mrtr costs apart from what the example adds; the goal is judged on \
             the hosted server); and the same tool on plain rmcp 3.11 with its \
             built-in `RequestStateCodec` (`benches/src/bin/e2e_rmcp_codec.rs`: HMAC-SHA256, \
             signed but not encrypted, no single use, no round cap), all of them stateless 2026-07-28 \
             over the same transport, each building the tool's two forms with rmcp's typed \
             schema builder (reading the same schemas from JSON through serde cost every server \
             about 76,000 instructions per round trip). Besides sealing, the hosted server does per request what \
             the comparison server does not: bearer authentication (a tower layer), a \
             `tracing` subscriber (INFO to stderr), the 2025-session owner layer, mrtr's \
             precheck layer (one more pass over the body, building no tree: the I-JSON and \
             `requestState` checks), the arguments' JCS digest, the replay record and \
             metrics. Its replay cache is given \
             room for 4 million ids (the default 100,000 covers 333 resumes/s at the 5-minute \
             TTL; past it resumes are refused, fail closed).\n"
        );
        if self.runs.is_empty() {
            let _ = writeln!(o, "Not measured in this run.\n");
            return;
        }
        let _ = writeln!(o, "Runs: {}.\n", self.setup);
        if let Some(steal) = self.steal_sentence(Suite::Wrk) {
            let _ = writeln!(o, "{steal}\n");
        }
        let rows: Vec<Vec<String>> = self
            .runs
            .iter()
            .map(|r| {
                let base = self.get(RMCP_CODEC, r.conns);
                let rel = base.map_or("–".to_owned(), |b| {
                    format!("{:.2}×", r.round_trips / b.round_trips)
                });
                vec![
                    r.label.clone(),
                    r.conns.to_string(),
                    format!("{:.0}", r.round_trips),
                    rel,
                    format!("{:.0}", r.p50_us),
                    format!("{:.0}", r.p99_us),
                ]
            })
            .collect();
        table(
            o,
            &[
                "server".into(),
                "connections".into(),
                "round trips/s".into(),
                "÷ rmcp-codec".into(),
                "p50 µs (per request)".into(),
                "p99 µs (per request)".into(),
            ],
            &rows,
        );
        self.pairs_section(o);
        self.cpu_section(o);
        self.instr_section(o);
    }

    /// The paired repetitions' spread.
    fn pairs_section(&self, o: &mut String) {
        let mut rows = Vec::new();
        for name in [MRTR, MRTR_BARE, MRTR_GCM_OS] {
            for c in self.conns() {
                let Some(((t, tlo, thi), (p, plo, phi))) = self.paired(name, c) else {
                    continue;
                };
                let label = self.get(name, c).map_or(name, |r| r.label.as_str());
                rows.push(vec![
                    label.to_owned(),
                    c.to_string(),
                    format!("{t:.2}× ({tlo:.2}–{thi:.2})"),
                    format!("{p:.2}× ({plo:.2}–{phi:.2})"),
                    self.steal_cell(Suite::Wrk, name, Some(c)),
                ]);
            }
        }
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(
            o,
            "Each repetition runs the servers back to back, so one repetition's mrtr ÷ \
             rmcp-codec ratio shares the machine's state of that moment. The spread of those \
             paired ratios shows how far one run can be off on this machine:\n"
        );
        table(
            o,
            &[
                "server".into(),
                "connections".into(),
                "round trips/s ÷ rmcp-codec, median (min–max)".into(),
                "p50 ÷ rmcp-codec, median (min–max)".into(),
                "during its runs: steal, other processes, median % (largest)".into(),
            ],
            &rows,
        );
    }

    /// The instruction counts' part of the section.
    fn instr_section(&self, o: &mut String) {
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

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "#\tserver on core 0, wrk on core 1\t6s per run\n\
        mrtr\t1\t4000\t2000\t240\t400\thosted\n\
        rmcp-codec\t1\t4100\t2050\t235\t380\tcodec\n\
        mrtr\t8\t9000\t4500\t800\t1900\thosted\n\
        rmcp-codec\t8\t10000\t5000\t700\t1500\tcodec\n\
        broken line\n";

    #[test]
    fn instruction_counts_compare_without_portable_sha256() {
        let text = format!(
            "{SAMPLE}#instr\tcallgrind, 10 round trips\n\
             instr\tmrtr\t10\t6300000\t70000\thosted\n\
             instr\trmcp-codec\t10\t6400000\t700000\tcodec\n\
             instr\tbroken\tten\t1\t1\tx\n"
        );
        let e = E2e::parse(&text);
        assert_eq!(e.instr.len(), 2);
        assert_eq!(e.instr("mrtr").map(Instr::per_round_trip), Some(623_000.0));
        assert_eq!(
            e.instr("rmcp-codec").map(Instr::per_round_trip),
            Some(570_000.0)
        );
        let (_, measured) = e.instr_row().unwrap();
        assert!(measured.contains("1.093×"), "{measured}");
        let mut o = String::new();
        e.section(&mut o);
        assert!(o.contains("callgrind, 10 round trips"), "{o}");
        assert!(E2e::parse(SAMPLE).instr_row().is_none());
    }

    #[test]
    fn lto_servers_are_compared_with_the_codec_built_the_same_way() {
        let text = format!(
            "{SAMPLE}#instr\tcallgrind, 10 round trips\n\
             instr\tmrtr\t10\t5300000\t70000\thosted\n\
             instr\tmrtr-bare\t10\t5150000\t70000\tbare\n\
             instr\trmcp-codec\t10\t5700000\t700000\tcodec\n\
             instr\tmrtr-lto\t10\t4900000\t70000\thosted lto\n\
             instr\tmrtr-bare-lto\t10\t4700000\t70000\tbare lto\n\
             instr\trmcp-codec-lto\t10\t5300000\t700000\tcodec lto\n\
             cache\tmrtr-lto\t10\t150000\t100000\t50\t90000\n\
             cache\trmcp-codec\t10\t100000\t80000\t40\t90000\n\
             cache\trmcp-codec-lto\t10\t120000\t80000\t40\t90000\n"
        );
        let e = E2e::parse(&text);
        assert_eq!(codec_for("mrtr-lto"), RMCP_CODEC_LTO);
        assert_eq!(codec_for("mrtr"), RMCP_CODEC);
        let note = e.lto_note().unwrap();
        // Without portable SHA: 523,000 / 500,000 without LTO, 483,000 / 460,000 with it.
        assert!(
            note.contains("from 500000 to 460000 instructions per round trip (-8.0 %)"),
            "{note}"
        );
        assert!(
            note.contains(
                "hosted server's ratio is 1.046× without it and 1.050× with it: the same within"
            ),
            "{note}"
        );
        // 508,000 / 500,000 = 1.016 against 463,000 / 460,000 = 1.0065.
        assert!(
            note.contains(
                "mrtr-alone server's ratio is 1.016× without it and 1.007× with it: narrower"
            ),
            "{note}"
        );
        let mut o = String::new();
        e.section(&mut o);
        assert!(
            o.contains("| hosted lto | 490000 | 7000 | 483000 | 1.050× |"),
            "{o}"
        );
        // I1 misses against the LTO codec's 12,000, not the plain codec's 10,000.
        assert!(o.contains("| hosted lto | 15000 (1.25×) |"), "{o}");
        assert!(E2e::parse(SAMPLE).lto_note().is_none());
    }

    #[test]
    fn the_token_length_bound_on_the_gap_is_reported() {
        let text = format!(
            "{SAMPLE}#instr\tcallgrind, 10 round trips\n\
             instr\tmrtr\t10\t5300000\t70000\thosted\n\
             instr\tmrtr-bare\t10\t5150000\t70000\tbare\n\
             instr\trmcp-codec\t10\t5600000\t700000\tcodec\n\
             instr\trmcp-codec-long\t10\t5700000\t740000\tlong\n"
        );
        let e = E2e::parse(&text);
        // codec 490,000; long 496,000 (+6,000); hosted 523,000 (+33,000); bare 508,000
        // (+18,000).
        let split = e.token_length_split().unwrap();
        assert!(
            split.contains("6000 instructions per round trip more"),
            "{split}"
        );
        // The long-token server's extra count also holds the codec's own work on the filler,
        // so it only bounds the token's share.
        assert!(split.contains("That is an upper bound"), "{split}");
        assert!(
            split.contains(
                "hosted server's 33000 more than the codec's, the token's length explains at \
                 most 18 %; at least the other 27000"
            ),
            "{split}"
        );
        assert!(
            split.contains(
                "mrtr-alone server's 18000 more than the codec's, the token's length explains \
                 at most 33 %; at least the other 12000"
            ),
            "{split}"
        );
        // The drift it quotes is the codec count's 0.2 %.
        assert!(
            split.contains("a 0.2 % move between runs is about 980 instructions"),
            "{split}"
        );
        let mut o = String::new();
        e.section(&mut o);
        assert!(o.contains("**Token length.**"), "{o}");
        // Without the long-token count there is no split.
        assert!(E2e::parse(SAMPLE).token_length_split().is_none());
    }

    #[test]
    fn parses_runs_and_judges_each_connection_count() {
        let e = E2e::parse(SAMPLE);
        assert_eq!(e.runs.len(), 4);
        assert_eq!(e.conns(), vec![1, 8]);
        let goals = e.goals();
        assert_eq!(goals.len(), 2);
        // 2000/2050 = 0.976 and 240/235 = 1.02: within 5 %.
        assert_eq!(goals[0].2, Some(true), "{}", goals[0].1);
        // 4500/5000 = 0.9: not within 5 %.
        assert_eq!(goals[1].2, Some(false), "{}", goals[1].1);
    }

    #[test]
    fn paired_repetitions_and_cache_counts_are_reported() {
        let text = format!(
            "{SAMPLE}pair\tmrtr\t8\t1\t0.8800\t1.1000\n\
             pair\tmrtr\t8\t2\t0.9300\t1.0500\n\
             pair\tmrtr\t8\t3\t0.9000\t1.0800\n\
             pair\tmrtr\t8\tbroken\n\
             #instr\tcallgrind, 10 round trips\n\
             instr\tmrtr\t10\t6300000\t70000\thosted\n\
             instr\trmcp-codec\t10\t6400000\t700000\tcodec\n\
             cache\tmrtr\t10\t150000\t100000\t50\t90000\n\
             cache\trmcp-codec\t10\t120000\t80000\t40\t90000\n\
             steal\twrk\tmrtr\t8\t1\t60\t1200\t120\n\
             steal\twrk\tmrtr\t8\t2\t0\t1200\t12\n\
             steal\twrk\tmrtr\t8\t3\t6\t1200\t24\n"
        );
        let e = E2e::parse(&text);
        assert_eq!(e.pairs.len(), 3);
        assert_eq!(e.steal.len(), 3);
        let ((t, tlo, thi), (p, _, _)) = e.paired("mrtr", 8).unwrap();
        assert_eq!((t, tlo, thi), (0.90, 0.88, 0.93));
        assert_eq!(p, 1.08);
        assert!(e.paired("mrtr", 1).is_none());
        let goals = e.goals();
        assert!(goals[1].1.contains("0.88–0.93×"), "{}", goals[1].1);
        // Steal 5 %, 0 % and 0.5 % of the three runs at 8 connections; other processes 10 %,
        // 1 % and 2 %.
        assert!(
            goals[1]
                .1
                .ends_with("; during the runs steal 0.5 % (5.0), other processes 2.0 % (10.0)"),
            "{}",
            goals[1].1
        );
        assert!(!goals[0].1.contains("steal"), "{}", goals[0].1);
        let mut o = String::new();
        e.section(&mut o);
        assert!(
            o.contains("| hosted | 8 | 0.90× (0.88–0.93) | 1.08× (1.05–1.10) | steal 0.5 % (5.0), other processes 2.0 % (10.0) |"),
            "{o}"
        );
        assert!(
            o.contains("a median 0.5 % (largest 5.0 %) of this machine's CPU time"),
            "{o}"
        );
        assert!(o.contains("Above 5 % a run competed"), "{o}");
        // 15,000 against 12,000 I1 misses per round trip.
        assert!(
            o.contains("| hosted | 15000 (1.25×) | 10000 (1.25×) | 5 (1.25×) | 9000 (1.00×) |"),
            "{o}"
        );
    }

    #[test]
    fn the_bare_series_is_reported_but_the_goal_is_the_hosted_servers() {
        let text = format!(
            "{SAMPLE}mrtr-bare\t8\t9800\t4900\t710\t1500\tbare\n\
             pair\tmrtr\t8\t1\t0.9000\t1.1400\n\
             pair\tmrtr-bare\t8\t1\t0.9800\t1.0100\n"
        );
        let e = E2e::parse(&text);
        // The bare server is within 5 % (4900/5000), the hosted one is not: the goal follows
        // the hosted server.
        let goals = e.goals();
        assert_eq!(goals[1].2, Some(false), "{}", goals[1].1);
        assert!(goals[1].1.starts_with("4500 vs 5000"), "{}", goals[1].1);
        let mut o = String::new();
        e.section(&mut o);
        assert!(
            o.contains("| bare | 8 | 4900 | 0.98× | 710 | 1500 |"),
            "{o}"
        );
        assert!(
            o.contains("| bare | 8 | 0.98× (0.98–0.98) | 1.01× (1.01–1.01) | – |"),
            "{o}"
        );
    }

    #[test]
    fn spread_takes_the_middle_of_an_even_count() {
        assert_eq!(spread(&[3.0, 1.0, 2.0, 4.0]), Some((2.5, 1.0, 4.0)));
        assert_eq!(spread(&[f64::NAN]), None);
        assert_eq!(spread(&[]), None);
    }

    #[test]
    fn nothing_measured_is_said_so() {
        let e = E2e::parse("");
        let goals = e.goals();
        assert_eq!(goals.len(), 1);
        assert_eq!(goals[0].2, None);
        let mut o = String::new();
        e.section(&mut o);
        assert!(o.contains("Not measured"), "{o}");
    }
}
