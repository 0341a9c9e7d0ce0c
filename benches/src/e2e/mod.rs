//! The end-to-end results `ci/bench-e2e.sh` writes (one TSV file), and their part of the report.
//!
//! The file's first line is `#`, the CPU pinning used and a description of the runs; every
//! other line is one server at one connection count: name, connections, requests/s, round
//! trips/s, p50 µs, p99 µs, label. `pair` lines give one repetition's ratios against the
//! rmcp-codec server run right after it; `#instr`, `instr` and `cache` lines come from
//! `ci/bench-e2e-instr.sh` (see [`crate::e2e::instr`]), `#cpu` and `cpu` lines from
//! `ci/bench-e2e-cpu.sh` (see [`crate::e2e::cpu`]), and `steal` lines from both timed scripts
//! (see [`crate::e2e::steal`]).

use std::fmt::Write as _;

pub mod cpu;
pub mod instr;
pub mod steal;
#[cfg(test)]
mod tests;

use crate::report::table;
use cpu::Cpu;
use instr::{Cache, Instr};
use steal::{Steal, Suite};

/// The series `ci/bench-e2e.sh` runs under these names.
pub const MRTR: &str = "mrtr";
/// The same tool on plain rmcp with only what mrtr needs (`e2e-mrtr-rmcp`).
pub const MRTR_BARE: &str = "mrtr-bare";
/// The hosted server with AES-256-GCM and the OS nonce source.
pub const MRTR_GCM_OS: &str = "mrtr-gcm-os";
/// The same tool on rmcp with its built-in `RequestStateCodec`.
pub const RMCP_CODEC: &str = "rmcp-codec";

/// The bound of the end-to-end goal: mrtr within 5 % of the rmcp-codec server.
pub const WITHIN: f64 = 0.05;

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
}
