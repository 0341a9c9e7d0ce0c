//! The replay caches' measurements (`src/bin/replay.rs`'s output) and their section.

use std::fmt::Write as _;

use mrtr_benches::report::table;

/// The lines of `src/bin/replay.rs`: key, value, unit, label.
pub(crate) struct Replay(Vec<(String, f64, String, String)>);

impl Replay {
    /// Reads the lines; malformed ones are skipped.
    pub(crate) fn parse(text: &str) -> Self {
        Self(
            text.lines()
                .filter_map(|l| {
                    let f: Vec<&str> = l.split('\t').collect();
                    match f[..] {
                        [k, v, unit, label] => Some((
                            k.to_owned(),
                            v.parse().ok()?,
                            unit.to_owned(),
                            label.to_owned(),
                        )),
                        _ => None,
                    }
                })
                .collect(),
        )
    }

    /// The value under `key`, if measured.
    pub(crate) fn get(&self, key: &str) -> Option<f64> {
        self.0.iter().find(|r| r.0 == key).map(|r| r.1)
    }
}

/// The "Replay caches" section: every measurement, with its unit.
pub(crate) fn section(o: &mut String, replay: &Replay) {
    let _ = writeln!(o, "## Replay caches\n");
    if replay.0.is_empty() {
        let _ = writeln!(o, "Not measured in this run (see the report).\n");
    } else {
        let rows: Vec<Vec<String>> = replay
            .0
            .iter()
            .map(|(_, v, unit, label)| vec![label.clone(), format!("{} {unit}", num(*v))])
            .collect();
        table(o, &["measurement".into(), "value".into()], &rows);
    }
}

/// A value with 2 or 3 significant digits, in millions or thousands when large.
fn num(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0} k", v / 1e3)
    } else {
        format!("{v:.1}")
    }
}
