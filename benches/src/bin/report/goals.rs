//! The report's "Goals" table (each goal, what this run measured and the verdict) and the
//! "Paired ratios" most of the goals are judged on.

use std::fmt::Write as _;

use mrtr_benches::SIZES;
use mrtr_benches::e2e::E2e;
use mrtr_benches::paired::{self, Pairs};
use mrtr_benches::report::{Medians, fmt_ns, ratio, table};

use crate::replay::Replay;
use crate::rows::{DEFAULT, GCM_OS, MRTR, RUSTCRYPTO_SIV, cell, verdict};

/// The "Goals" section.
pub(crate) fn section(
    o: &mut String,
    m: &Medians,
    pairs: &Pairs,
    avx2: Option<&Medians>,
    replay: &Replay,
    e2e: &E2e,
    peer_list: &[(&str, &str)],
) {
    let _ = writeln!(o, "## Goals\n");
    let mut rows = Vec::new();
    // Judged on the paired ratio (see "Paired ratios") when it was measured: criterion times
    // the two sides minutes apart, which on a shared machine can put them in different weather.
    let mut within = |label: &str, id: &str, fair: &str, bound: f64| {
        let r = m.get("roundtrip", id, 256);
        let f = m.get("fairfloor", fair, 256);
        let criterion = format!("{} vs fair floor {} = {}", cell(r), cell(f), ratio(r, f));
        let (text, ok) = match pairs.get(id, fair, 256) {
            Some(p) => (
                format!(
                    "paired: {}; criterion medians: {criterion}",
                    paired::shown(&p)
                ),
                Some(p.ratio <= bound),
            ),
            None => (criterion, r.zip(f).map(|(r, f)| r / f <= bound)),
        };
        rows.push(vec![
            format!("{label}: seal+unseal at 256 B within {bound}× of its fair floor"),
            text,
            verdict(ok),
        ]);
    };
    // The hosted default, every other aws-lc configuration and RustCrypto's GCM-SIV against
    // their own floors; AES-256-GCM with OsRng last (what the per-seal system call costs a GCM
    // configuration).
    let order = std::iter::once(DEFAULT)
        .chain(
            MRTR.iter()
                .map(|r| r.id)
                .filter(|id| id.starts_with("mrtr-awslc") && *id != DEFAULT),
        )
        .chain([RUSTCRYPTO_SIV, GCM_OS]);
    for id in order {
        if let Some(r) = MRTR.iter().find(|r| r.id == id) {
            within(r.label, r.id, r.fair, 1.25);
        }
    }
    for n in SIZES {
        let fastest = peer_list
            .iter()
            .filter_map(|(p, _)| m.get("roundtrip", p, n).map(|t| (*p, t)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        for (id, what) in [
            (DEFAULT, "hosted default (aws-lc AES-256-GCM-SIV, fast RNG)"),
            (RUSTCRYPTO_SIV, "pure-Rust AES-256-GCM-SIV, fast RNG"),
            (GCM_OS, "AES-256-GCM with OsRng"),
        ] {
            let closest = paired::closest_peer(pairs, id, peer_list.iter().map(|(p, _)| *p), n);
            let (text, ok) = match (closest, m.get("roundtrip", id, n), fastest) {
                (Some((p, s)), me, _) => (
                    format!(
                        "closest peer, paired: {p}, peer ÷ mrtr = {} (below 1× the peer is \
                         faster); criterion medians {} vs {}",
                        paired::shown(&s.inverse()),
                        cell(me),
                        cell(m.get("roundtrip", p, n))
                    ),
                    Some(s.ratio < 1.0),
                ),
                (None, Some(me), Some((p, t))) => (
                    format!(
                        "{} vs fastest peer {p} {} (peer ÷ mrtr = {:.2}×; below 1× the peer is \
                         faster)",
                        fmt_ns(me),
                        fmt_ns(t),
                        t / me
                    ),
                    Some(t > me),
                ),
                _ => ("not measured".to_owned(), None),
            };
            rows.push(vec![
                format!("{what} faster than every peer at {n} B (seal+unseal)"),
                text,
                verdict(ok),
            ]);
        }
    }
    for (goal, text, ok) in e2e.goals() {
        rows.push(vec![goal, text, verdict(ok)]);
    }
    if let Some((what, text)) = e2e.cpu_row() {
        rows.push(vec![what, text, "reported".to_owned()]);
    }
    if let Some((what, text)) = e2e.instr_row() {
        rows.push(vec![what, text, "reported".to_owned()]);
    }
    let portable = m.get("aead-roundtrip", "rustcrypto-chacha20poly1305", 256);
    let fast = avx2.and_then(|a| a.get("aead-roundtrip", "rustcrypto-chacha20poly1305", 256));
    rows.push(vec![
        "(no target) RustCrypto ChaCha20-Poly1305 raw AEAD at 256 B, `-C target-feature=+avx2` vs portable"
            .to_owned(),
        format!(
            "{} vs {} = {} faster",
            cell(fast),
            cell(portable),
            ratio(portable, fast)
        ),
        if fast.is_some() {
            "reported".to_owned()
        } else {
            verdict(None)
        },
    ]);
    let two = replay.get("inproc-2t-ops");
    rows.push(vec![
        "(issue 7) in-process replay cache ≥ 2 M check-and-record/s on 2 threads (≈1 M live)"
            .to_owned(),
        two.map_or("not measured".to_owned(), |v| {
            format!("mrtr-std MemoryReplayCache {:.2} M/s", v / 1e6)
        }),
        verdict(two.map(|v| v >= 2e6)),
    ]);
    table(
        o,
        &["goal".into(), "measured".into(), "verdict".into()],
        &rows,
    );
}

/// "Paired ratios": the goals' ratios measured by `src/bin/pairs.rs`, with how.
pub(crate) fn pairs_section(o: &mut String, pairs: &Pairs, text: &str, peer_list: &[(&str, &str)]) {
    let _ = writeln!(o, "## Paired ratios\n");
    let _ = writeln!(
        o,
        "`src/bin/pairs.rs` (run by `ci/bench.sh`) times each ratio the goals above judge as a \
         pair: a batch of mrtr's round trip, then a batch of the other side's (its fair floor, \
         or a peer), the order swapped every round, many rounds over; the ratio is the median \
         of the rounds' ratios. Criterion times the two sides one after the other, a minute or \
         more apart, and on a shared virtual machine the host's other work can slow one of \
         them and not the other (on 2026-12-03 criterion put aws-lc AES-256-GCM with OsRng at \
         1.17× its floor, less than its `getrandom` alone costs, where pairs measured 1.8×). \
         Pairs see the same weather on both sides, so the fair-floor and peer goals are judged \
         on them; the times in the other tables are criterion's.\n"
    );
    if pairs.is_empty() {
        let _ = writeln!(o, "Not measured in this run.\n");
        return;
    }
    for line in text.lines().filter(|l| l.starts_with('#')) {
        let shown = line.trim_start_matches('#').replace('\t', ": ");
        let _ = writeln!(o, "* {shown}");
    }
    o.push('\n');
    let rows: Vec<Vec<String>> = MRTR
        .iter()
        .filter_map(|r| pairs.get(r.id, r.fair, 256).map(|p| (r, p)))
        .map(|(r, p)| {
            vec![
                r.label.to_owned(),
                paired::shown(&p),
                fmt_ns(p.a_ns),
                fmt_ns(p.b_ns),
            ]
        })
        .collect();
    table(
        o,
        &[
            "mrtr ÷ its fair floor at 256 B".into(),
            "paired median (min–max)".into(),
            "mrtr, median of rounds".into(),
            "floor, median of rounds".into(),
        ],
        &rows,
    );
    let mut rows = Vec::new();
    for r in MRTR.iter() {
        for n in SIZES {
            let peers = peer_list.iter().map(|(p, _)| *p);
            if let Some((p, s)) = paired::closest_peer(pairs, r.id, peers, n) {
                rows.push(vec![
                    r.label.to_owned(),
                    n.to_string(),
                    p.to_owned(),
                    paired::shown(&s.inverse()),
                ]);
            }
        }
    }
    table(
        o,
        &[
            "mrtr configuration".into(),
            "bytes".into(),
            "closest peer".into(),
            "peer ÷ mrtr, paired median (min–max)".into(),
        ],
        &rows,
    );
}
