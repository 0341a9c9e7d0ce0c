//! Reading criterion's results and the measurement binaries' output, and writing
//! `BENCHMARKS.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::SIZES;

/// Median of one criterion benchmark, in nanoseconds, if it ran.
pub fn median_ns(criterion_dir: &Path, group: &str, id: &str, n: usize) -> Option<f64> {
    let path: PathBuf = [
        criterion_dir,
        Path::new(group),
        Path::new(id),
        Path::new(&n.to_string()),
    ]
    .iter()
    .collect::<PathBuf>()
    .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["median"]["point_estimate"].as_f64()
}

/// A duration in ns, printed with a unit that keeps 3 significant digits.
pub fn fmt_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.2} µs", ns / 1_000.0)
    } else {
        format!("{:.2} ms", ns / 1_000_000.0)
    }
}

/// `a / b` as `1.23×`, or `–` when either is missing.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "–".to_owned(),
    }
}

/// Criterion medians, looked up by (group, id, size).
pub struct Medians {
    dir: PathBuf,
}

impl Medians {
    /// Results under `dir` (criterion's output folder).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The median in ns.
    pub fn get(&self, group: &str, id: &str, n: usize) -> Option<f64> {
        median_ns(&self.dir, group, id, n)
    }

    /// The median, formatted, or `–`.
    pub fn cell(&self, group: &str, id: &str, n: usize) -> String {
        self.get(group, id, n).map_or("–".to_owned(), fmt_ns)
    }
}

/// Allocation counts per (group, row, size): (allocations, bytes) per operation.
#[derive(Default)]
pub struct Allocs(BTreeMap<(String, String, usize), (f64, f64)>);

impl Allocs {
    /// Parses the `allocs` binary's tab-separated output.
    pub fn parse(text: &str) -> Self {
        let mut map = BTreeMap::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if let [group, row, n, allocs, bytes] = f[..]
                && let (Ok(n), Ok(a), Ok(b)) = (n.parse(), allocs.parse(), bytes.parse())
            {
                map.insert((group.to_owned(), row.to_owned(), n), (a, b));
            }
        }
        Self(map)
    }

    /// `allocs (bytes)` for one row, or `–`.
    pub fn cell(&self, group: &str, row: &str, n: usize) -> String {
        match self.0.get(&(group.to_owned(), row.to_owned(), n)) {
            Some((a, _)) if *a == 0.0 => "0".to_owned(),
            Some((a, b)) if *a < 0.1 => format!("{a:.3} ({b:.0} B)"),
            Some((a, b)) => format!("{a:.1} ({b:.0} B)"),
            None => "–".to_owned(),
        }
    }
}

/// A markdown table: header cells, then rows.
pub fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        header.iter().map(|_| " --- |").collect::<String>()
    );
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out.push('\n');
}

/// Header cells: a first column, then one per continuation size.
pub fn size_header(first: &str) -> Vec<String> {
    std::iter::once(first.to_owned())
        .chain(SIZES.iter().map(|n| format!("{n} B")))
        .collect()
}
