//! What else ran while an end-to-end run was measured: the CPU time the hypervisor gave to
//! other work while this machine's virtual CPUs wanted to run (steal), and the CPU time of
//! processes other than the measured server and its load generator. On a shared virtual
//! machine these disturb an end-to-end run most, and unevenly (one server's run can lose a
//! fifth of its CPU while the next loses none), so the report puts them next to the ratios
//! they disturb.
//!
//! `ci/bench-e2e.sh` and `ci/bench-e2e-cpu.sh` write one `steal` line per measured run: the
//! suite (`wrk` or `cpu`), the series name, the connections, the repetition (or round), and
//! over the run the machine's stolen CPU ticks, all its CPU ticks and the busy ticks of the
//! other processes (all CPUs, from `/proc/stat` and `/proc/PID/stat`; `ci/lib.sh`).

use crate::e2e::{E2e, Spread, spread};

/// Steal or other processes above this share of the machine's CPU time during a run (as a
/// fraction) mark the run as disturbed. The bench script's own shell and the kernel's
/// threads stay well below it on a quiet machine.
pub const DISTURBED: f64 = 0.05;

/// Which measurement a steal reading belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// A throughput run (`ci/bench-e2e.sh`, wrk).
    Wrk,
    /// A CPU-time round (`ci/bench-e2e-cpu.sh`).
    Cpu,
}

/// What else ran during one measured run.
#[derive(Clone, Debug)]
pub struct Steal {
    /// Which measurement.
    pub suite: Suite,
    /// Series name.
    pub name: String,
    /// Open connections (1 for the CPU rounds).
    pub conns: u32,
    /// Repetition (throughput) or round (CPU time).
    pub rep: u32,
    /// CPU ticks stolen during the run, all CPUs.
    pub stolen: u64,
    /// All CPU ticks during the run, all CPUs.
    pub total: u64,
    /// Busy ticks of processes other than the server and its load generator.
    pub others: u64,
}

impl Steal {
    /// A `steal` line's fields (split at tabs); `None` unless it has them all.
    pub fn parse(f: &[&str]) -> Option<Self> {
        let ["steal", suite, name, conns, rep, stolen, total, others] = *f else {
            return None;
        };
        let suite = match suite {
            "wrk" => Suite::Wrk,
            "cpu" => Suite::Cpu,
            _ => return None,
        };
        Some(Self {
            suite,
            name: name.to_owned(),
            conns: conns.parse().ok()?,
            rep: rep.parse().ok()?,
            stolen: stolen.parse().ok()?,
            total: total.parse().ok()?,
            others: others.parse().ok()?,
        })
    }

    /// The stolen share of the run's CPU time (`None` for a run too short to tick).
    pub fn share(&self) -> Option<f64> {
        (self.total > 0).then(|| self.stolen as f64 / self.total as f64)
    }

    /// The other processes' share of the run's CPU time (`None` for a run too short to
    /// tick).
    pub fn others_share(&self) -> Option<f64> {
        (self.total > 0).then(|| self.others as f64 / self.total as f64)
    }
}

/// Which share of a run [`E2e::steal`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Share {
    /// Stolen by the hypervisor.
    Steal,
    /// Used by other processes on the machine.
    Others,
}

impl E2e {
    /// Median, smallest and largest `share` of the `suite`'s runs, of series `name` and at
    /// `conns` connections where given.
    pub fn steal(
        &self,
        suite: Suite,
        share: Share,
        name: Option<&str>,
        conns: Option<u32>,
    ) -> Option<Spread> {
        let v: Vec<f64> = self
            .steal
            .iter()
            .filter(|s| s.suite == suite)
            .filter(|s| name.is_none_or(|n| s.name == n))
            .filter(|s| conns.is_none_or(|c| s.conns == c))
            .filter_map(|s| match share {
                Share::Steal => s.share(),
                Share::Others => s.others_share(),
            })
            .collect();
        spread(&v)
    }

    /// Steal and other processes of those runs, each as "median % (largest)"; `None` without
    /// readings.
    fn disturbance(&self, suite: Suite, name: Option<&str>, conns: Option<u32>) -> Option<String> {
        let (s, _, shi) = self.steal(suite, Share::Steal, name, conns)?;
        let (o, _, ohi) = self.steal(suite, Share::Others, name, conns)?;
        Some(format!(
            "steal {:.1} % ({:.1}), other processes {:.1} % ({:.1})",
            s * 100.0,
            shi * 100.0,
            o * 100.0,
            ohi * 100.0
        ))
    }

    /// A table cell: [`E2e::disturbance`] of `name`'s runs, or "–" without readings.
    pub(crate) fn steal_cell(&self, suite: Suite, name: &str, conns: Option<u32>) -> String {
        self.disturbance(suite, Some(name), conns)
            .unwrap_or_else(|| "–".to_owned())
    }

    /// For a goal row: "; steal … , other processes …" of the runs at `conns`, or nothing.
    pub(crate) fn steal_suffix(&self, suite: Suite, conns: u32) -> String {
        self.disturbance(suite, None, Some(conns))
            .map_or(String::new(), |d| format!("; during the runs {d}"))
    }

    /// What the readings of `suite` say about its runs, as a sentence (`None` without
    /// readings).
    pub(crate) fn steal_sentence(&self, suite: Suite) -> Option<String> {
        let (s, _, shi) = self.steal(suite, Share::Steal, None, None)?;
        let (o, _, ohi) = self.steal(suite, Share::Others, None, None)?;
        let runs = match suite {
            Suite::Wrk => "runs",
            Suite::Cpu => "rounds",
        };
        let verdict = if shi > DISTURBED || ohi > DISTURBED {
            format!(
                "Above {:.0} % a run competed with other work, and unevenly (one server's run \
                 can lose far more than the next one's): these {runs}' ratios say less about \
                 the servers than a quiet run's, and the min–max columns show by how much.",
                DISTURBED * 100.0
            )
        } else {
            format!("Other work hardly touched these {runs}.")
        };
        Some(format!(
            "While these {runs} ran, the hypervisor gave a median {:.1} % (largest {:.1} %) of \
             this machine's CPU time to other work while its virtual CPUs wanted to run \
             (steal), and processes other than the measured server and what drove it used a \
             median {:.1} % (largest {:.1} %) of it (`/proc/stat`; clock ticks are sampled, so \
             a share of a short run is rough; the columns \"steal, other processes\" give \
             each server's). {verdict}",
            s * 100.0,
            shi * 100.0,
            o * 100.0,
            ohi * 100.0
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "steal\twrk\tmrtr\t1\t1\t12\t1200\t24\n\
        steal\twrk\trmcp-codec\t1\t1\t0\t1200\t0\n\
        steal\twrk\tmrtr\t1\t2\t240\t1200\t12\n\
        steal\twrk\tmrtr\t8\t1\t36\t1200\t600\n\
        steal\tcpu\tmrtr\t1\t1\t0\t100\t1\n\
        steal\tcpu\tmrtr\t1\t2\t1\t100\t2\n\
        steal\tcpu\tmrtr\t1\t3\t0\t0\t0\n\
        steal\tqemu\tmrtr\t1\t1\t0\t100\t0\n\
        steal\twrk\tmrtr\t1\t1\t12\t1200\n";

    fn close(got: Option<Spread>, want: Spread) {
        let (m, lo, hi) = got.unwrap();
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(
            near(m, want.0) && near(lo, want.1) && near(hi, want.2),
            "{got:?} vs {want:?}"
        );
    }

    #[test]
    fn steal_and_other_processes_are_read_per_suite_series_and_connections() {
        let e = E2e::parse(SAMPLE);
        // The unknown suite and the short line are skipped.
        assert_eq!(e.steal.len(), 7);
        // 12/1200 = 1 %, 240/1200 = 20 %.
        close(
            e.steal(Suite::Wrk, Share::Steal, Some("mrtr"), Some(1)),
            (0.105, 0.01, 0.2),
        );
        close(
            e.steal(Suite::Wrk, Share::Steal, None, None),
            (0.02, 0.0, 0.2),
        );
        close(
            e.steal(Suite::Wrk, Share::Others, Some("mrtr"), None),
            (0.02, 0.01, 0.5),
        );
        // A round too short to tick has no share.
        close(
            e.steal(Suite::Cpu, Share::Steal, None, None),
            (0.005, 0.0, 0.01),
        );
        assert_eq!(
            e.steal_cell(Suite::Wrk, "mrtr", Some(8)),
            "steal 3.0 % (3.0), other processes 50.0 % (50.0)"
        );
        assert_eq!(e.steal_cell(Suite::Wrk, "mrtr-bare", Some(8)), "–");
        assert_eq!(
            e.steal_suffix(Suite::Wrk, 8),
            "; during the runs steal 3.0 % (3.0), other processes 50.0 % (50.0)"
        );
        assert_eq!(e.steal_suffix(Suite::Wrk, 64), "");
        let wrk = e.steal_sentence(Suite::Wrk).unwrap();
        assert!(wrk.contains("a median 2.0 % (largest 20.0 %)"), "{wrk}");
        assert!(wrk.contains("competed with other work"), "{wrk}");
        let cpu = e.steal_sentence(Suite::Cpu).unwrap();
        assert!(cpu.contains("a median 0.5 % (largest 1.0 %)"), "{cpu}");
        assert!(
            cpu.contains("a median 1.5 % (largest 2.0 %) of it"),
            "{cpu}"
        );
        assert!(cpu.contains("hardly touched these rounds"), "{cpu}");
    }

    #[test]
    fn many_other_processes_alone_mark_the_runs_disturbed() {
        let e = E2e::parse("steal\tcpu\tmrtr\t1\t1\t0\t100\t30\n");
        let cpu = e.steal_sentence(Suite::Cpu).unwrap();
        assert!(cpu.contains("competed with other work"), "{cpu}");
    }

    #[test]
    fn without_steal_lines_nothing_is_said() {
        let e = E2e::parse("mrtr\t1\t100\t50\t10\t20\thosted\n");
        assert!(e.steal(Suite::Wrk, Share::Steal, None, None).is_none());
        assert!(e.steal_sentence(Suite::Wrk).is_none());
        assert_eq!(e.steal_cell(Suite::Cpu, "mrtr", None), "–");
    }
}
