//! The report's size-sweep chart: every round-trip series drawn by `mrtr_benches::chart`.

use std::path::Path;

use mrtr_benches::SIZES;
use mrtr_benches::chart::{self, Kind, Series};
use mrtr_benches::report::Medians;

use crate::rows::{FAIR, MRTR};

/// Where the chart goes, relative to `BENCHMARKS.md`.
const CHART: &str = "docs/bench/roundtrip.svg";

/// Draws the chart beside `out_path` (at [`CHART`] relative to it); returns the report's
/// line for it: the image, or why it could not be drawn.
pub(crate) fn note(m: &Medians, peer_list: &[(&str, &str)], out_path: &str) -> String {
    let chart_path = Path::new(out_path)
        .parent()
        .unwrap_or(Path::new("."))
        .join(CHART);
    match draw(m, peer_list, &chart_path) {
        Ok(()) => format!("![Round trip by continuation size]({CHART})\n"),
        Err(e) => format!("(The chart could not be drawn: {e}.)\n"),
    }
}

fn draw(m: &Medians, peer_list: &[(&str, &str)], path: &Path) -> Result<(), String> {
    let ns = |g: &str, id: &str| -> [Option<f64>; 4] {
        let mut v = [None; 4];
        for (i, &n) in SIZES.iter().enumerate() {
            v[i] = m.get(g, id, n);
        }
        v
    };
    let mut series: Vec<Series> = MRTR
        .iter()
        .map(|r| Series {
            label: r.label.to_owned(),
            kind: Kind::Mrtr,
            colour: r.colour,
            ns: ns("roundtrip", r.id),
        })
        .collect();
    for (id, label, colour) in FAIR {
        series.push(Series {
            label: label.to_owned(),
            kind: Kind::Floor,
            colour,
            ns: ns("fairfloor", id),
        });
    }
    for (i, (id, _)) in peer_list.iter().enumerate() {
        series.push(Series {
            label: format!("peer: {id}"),
            kind: Kind::Peer,
            colour: i,
            ns: ns("roundtrip", id),
        });
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    chart::draw(
        path,
        "seal + unseal by continuation size (log-log)",
        &series,
    )
}
