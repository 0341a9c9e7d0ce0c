//! The end-to-end CPU times `ci/bench-e2e-cpu.sh` writes, and their part of the report.
//!
//! Each `cpu` line is one server in one round: name, round, round trips, nanoseconds its
//! threads ran (user and kernel), user ticks, system ticks, label. Within a round the servers
//! ran one after another, so each is compared with the rmcp-codec server of its own round.

use std::fmt::Write as _;

use crate::e2e::steal::Suite;
use crate::e2e::{E2e, MRTR, RMCP_CODEC, Spread, spread};
use crate::report::table;

/// One server's CPU time over one round's round trips.
#[derive(Clone, Debug)]
pub struct Cpu {
    /// Series name.
    pub name: String,
    /// Which round (servers of the same round ran back to back).
    pub round: u32,
    /// Round trips driven.
    pub round_trips: u64,
    /// Nanoseconds the process's threads spent on a CPU for them.
    pub ns: u64,
    /// User-mode clock ticks in the same span (for the user/kernel split).
    pub user_ticks: u64,
    /// Kernel-mode clock ticks in the same span.
    pub sys_ticks: u64,
    /// What the series is.
    pub label: String,
}

impl Cpu {
    /// A `cpu` line's fields (split at tabs); `None` unless it has them all.
    pub fn parse(f: &[&str]) -> Option<Self> {
        let ["cpu", name, round, n, ns, user, sys, label] = *f else {
            return None;
        };
        Some(Self {
            name: name.to_owned(),
            round: round.parse().ok()?,
            round_trips: n.parse().ok()?,
            ns: ns.parse().ok()?,
            user_ticks: user.parse().ok()?,
            sys_ticks: sys.parse().ok()?,
            label: label.to_owned(),
        })
    }

    /// Microseconds on a CPU per round trip.
    pub fn us_per_round_trip(&self) -> f64 {
        self.ns as f64 / 1000.0 / self.round_trips.max(1) as f64
    }
}

impl E2e {
    /// The servers measured in CPU time, in file order, each once.
    fn cpu_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for c in &self.cpu {
            if !names.contains(&c.name.as_str()) {
                names.push(&c.name);
            }
        }
        names
    }

    /// Median, smallest and largest CPU time per round trip of `name` over its rounds, µs.
    pub fn cpu_time(&self, name: &str) -> Option<Spread> {
        let v: Vec<f64> = self
            .cpu
            .iter()
            .filter(|c| c.name == name)
            .map(Cpu::us_per_round_trip)
            .collect();
        spread(&v)
    }

    /// Median, smallest and largest of `name`'s CPU time per round trip ÷ the rmcp-codec
    /// server's in the same round.
    pub fn cpu_paired(&self, name: &str) -> Option<Spread> {
        let v: Vec<f64> = self
            .cpu
            .iter()
            .filter(|c| c.name == name)
            .filter_map(|c| {
                let base = self
                    .cpu
                    .iter()
                    .find(|b| b.name == RMCP_CODEC && b.round == c.round)?;
                Some(c.us_per_round_trip() / base.us_per_round_trip())
            })
            .collect();
        spread(&v)
    }

    /// The kernel's share of `name`'s CPU time, from its ticks over all rounds.
    pub fn cpu_kernel_share(&self, name: &str) -> Option<f64> {
        let (user, sys) = self
            .cpu
            .iter()
            .filter(|c| c.name == name)
            .fold((0, 0), |(u, s), c| (u + c.user_ticks, s + c.sys_ticks));
        (user + sys > 0).then(|| sys as f64 / (user + sys) as f64)
    }

    /// The reported (no target) row comparing CPU time per round trip, if measured.
    pub fn cpu_row(&self) -> Option<(String, String)> {
        let (m, _, _) = self.cpu_time(MRTR)?;
        let (r, _, _) = self.cpu_time(RMCP_CODEC)?;
        let (ratio, lo, hi) = self.cpu_paired(MRTR)?;
        Some((
            "(no target) end to end in CPU time per round trip (native, user and kernel, one \
             connection): hosted server with mrtr (default) ÷ the rmcp-codec server"
                .to_owned(),
            format!(
                "{m:.1} vs {r:.1} µs ({:+.1} µs); paired rounds {ratio:.2}× ({lo:.2}–{hi:.2})",
                m - r
            ),
        ))
    }

    /// The CPU times' part of the section.
    pub(crate) fn cpu_section(&self, o: &mut String) {
        let _ = writeln!(o, "### CPU time per round trip\n");
        let _ = writeln!(
            o,
            "`ci/bench-e2e-cpu.sh` (run by `ci/bench.sh`): the same round trips, sent one \
             after another by `ci/bench-e2e-drive.py` over one connection, each server running \
             natively with one tokio worker; the time its threads spent on a CPU (user and \
             kernel, from `/proc/PID/task/*/schedstat`) per round trip. It counts what the \
             instruction count leaves out (the kernel's loopback TCP and epoll work, native \
             cache misses and mispredictions, SHA-NI), and unlike throughput it leaves out \
             waiting for the client. It still moves with what else runs on the machine (other \
             work evicts the caches; on a virtual machine the host can preempt a CPU): on a \
             quiet machine the paired ratios of one run stayed within a few percent, and the \
             min–max columns show how quiet this run was. Each round drives every server in \
             turn; a server's ratio is taken against the rmcp-codec server of the same round. \
             This is what bounds the one-connection throughput; the goal is still judged on \
             wrk's throughput and p50 above.\n"
        );
        if self.cpu.is_empty() {
            let _ = writeln!(o, "Not measured in this run.\n");
            return;
        }
        let _ = writeln!(o, "Measured: {}.\n", self.cpu_setup);
        if let Some(steal) = self.steal_sentence(Suite::Cpu) {
            let _ = writeln!(o, "{steal}\n");
        }
        let base = self.cpu_time(RMCP_CODEC).map(|(m, _, _)| m);
        let rows: Vec<Vec<String>> = self
            .cpu_names()
            .into_iter()
            .filter_map(|name| {
                let (m, lo, hi) = self.cpu_time(name)?;
                let label = self.cpu.iter().find(|c| c.name == name)?.label.clone();
                let paired = match self.cpu_paired(name) {
                    Some((r, rlo, rhi)) if name != RMCP_CODEC => {
                        format!("{r:.3}× ({rlo:.3}–{rhi:.3})")
                    }
                    _ => "–".to_owned(),
                };
                let more = match base {
                    Some(b) if name != RMCP_CODEC => format!("{:+.1}", m - b),
                    _ => "–".to_owned(),
                };
                let kernel = self
                    .cpu_kernel_share(name)
                    .map_or("–".to_owned(), |k| format!("{:.0} %", k * 100.0));
                Some(vec![
                    label,
                    format!("{m:.1} ({lo:.1}–{hi:.1})"),
                    more,
                    paired,
                    kernel,
                    self.steal_cell(Suite::Cpu, name, None),
                ])
            })
            .collect();
        table(
            o,
            &[
                "server".into(),
                "CPU µs per round trip, median (min–max)".into(),
                "µs more than rmcp-codec (medians)".into(),
                "÷ rmcp-codec, paired median (min–max)".into(),
                "kernel share".into(),
                "during its rounds: steal, other processes, median % (largest)".into(),
            ],
            &rows,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "#cpu\t1000 round trips per server in each of 3 rounds\n\
        cpu\tmrtr\t1\t1000\t140000000\t60\t40\thosted\n\
        cpu\trmcp-codec\t1\t1000\t125000000\t55\t45\tcodec\n\
        cpu\tmrtr\t2\t1000\t150000000\t60\t40\thosted\n\
        cpu\trmcp-codec\t2\t1000\t120000000\t55\t45\tcodec\n\
        cpu\tmrtr\t3\t1000\t132000000\t60\t40\thosted\n\
        cpu\trmcp-codec\t3\t1000\t132000000\t55\t45\tcodec\n\
        cpu\tmrtr\tfour\t1000\t1\t1\t1\thosted\n\
        cpu\tmrtr\t5\t1000\t1\t1\thosted\n\
        steal\tcpu\tmrtr\t1\t1\t0\t100\t1\n\
        steal\tcpu\tmrtr\t1\t2\t1\t100\t1\n\
        steal\tcpu\tmrtr\t1\t3\t2\t100\t1\n";

    #[test]
    fn cpu_times_pair_each_round_with_the_codec_servers() {
        let e = E2e::parse(SAMPLE);
        // The two broken lines are skipped.
        assert_eq!(e.cpu.len(), 6);
        assert_eq!(e.cpu_time(MRTR), Some((140.0, 132.0, 150.0)));
        assert_eq!(e.cpu_time(RMCP_CODEC), Some((125.0, 120.0, 132.0)));
        // Rounds: 140/125 = 1.12, 150/120 = 1.25, 132/132 = 1.00.
        assert_eq!(e.cpu_paired(MRTR), Some((1.12, 1.0, 1.25)));
        assert_eq!(e.cpu_kernel_share(MRTR), Some(0.4));
        let (_, row) = e.cpu_row().unwrap();
        assert_eq!(
            row,
            "140.0 vs 125.0 µs (+15.0 µs); paired rounds 1.12× (1.00–1.25)"
        );
        let mut o = String::new();
        e.cpu_section(&mut o);
        assert!(o.contains("each of 3 rounds"), "{o}");
        assert!(
            o.contains("a median 1.0 % (largest 2.0 %) of this machine's CPU time"),
            "{o}"
        );
        assert!(
            o.contains(
                "| hosted | 140.0 (132.0–150.0) | +15.0 | 1.120× (1.000–1.250) | 40 % | steal 1.0 % (2.0), other processes 1.0 % (1.0) |"
            ),
            "{o}"
        );
        assert!(
            o.contains("| codec | 125.0 (120.0–132.0) | – | – | 45 % | – |"),
            "{o}"
        );
    }

    #[test]
    fn without_cpu_lines_the_section_says_not_measured() {
        let e = E2e::parse("");
        assert!(e.cpu_row().is_none());
        let mut o = String::new();
        e.cpu_section(&mut o);
        assert!(o.contains("Not measured in this run."), "{o}");
        // A server without a codec round to pair with has no ratio.
        let e = E2e::parse("cpu\tmrtr\t1\t10\t1000000\t1\t1\thosted\n");
        assert!(e.cpu_paired(MRTR).is_none());
        assert!(e.cpu_row().is_none());
    }
}
