//! Writes `BENCHMARKS.md` and its size-sweep chart from criterion's results and the
//! measurement binaries' output.
//!
//! Usage: `report CRITERION_DIR ALLOCS_TSV REPLAY_TSV E2E_TSV MACHINE_MD OUT_MD
//! [AVX2_CRITERION_DIR]`.
//! The chart goes to `docs/bench/roundtrip.svg` beside `OUT_MD`. A missing input leaves its
//! section marked as not measured.

use std::fmt::Write as _;
use std::path::Path;

use mrtr_benches::SIZES;
use mrtr_benches::chart::{self, Kind, Series};
use mrtr_benches::e2e::E2e;
use mrtr_benches::paired::{self, Pairs};
use mrtr_benches::peers;
use mrtr_benches::report::{Allocs, Medians, fmt_ns, ratio, size_header, table};

/// An mrtr configuration: benchmark id, label, fair-floor id, raw-AEAD id, chart colour.
struct Row {
    id: &'static str,
    label: &'static str,
    fair: &'static str,
    raw: &'static str,
    colour: usize,
}

const fn row(
    id: &'static str,
    label: &'static str,
    fair: &'static str,
    raw: &'static str,
    colour: usize,
) -> Row {
    Row {
        id,
        label,
        fair,
        raw,
        colour,
    }
}

/// The hosted server's default configuration (`examples/hosted-server`): AES-256-GCM-SIV from
/// aws-lc-rs with the fast, fork-aware nonce source.
const DEFAULT: &str = "mrtr-awslc-aes256gcmsiv-fastrng";

/// The same algorithm from RustCrypto (pure Rust), with the fast nonce source.
const RUSTCRYPTO_SIV: &str = "mrtr-aes256gcmsiv-fastrng";

/// mrtr-std's first default backend with the default nonce source (one system call per seal):
/// what a library user gets who picks AES-256-GCM.
const GCM_OS: &str = "mrtr-aes256gcm";

const MRTR: [Row; 8] = [
    row(
        GCM_OS,
        "mrtr AES-256-GCM, OsRng (library default nonce source)",
        "floor-aes256gcm",
        "rustcrypto-aes256gcm",
        0,
    ),
    row(
        "mrtr-chacha20poly1305",
        "mrtr ChaCha20-Poly1305, OsRng",
        "floor-chacha20poly1305",
        "rustcrypto-chacha20poly1305",
        1,
    ),
    row(
        "mrtr-xchacha20poly1305",
        "mrtr XChaCha20-Poly1305, OsRng",
        "floor-xchacha20poly1305",
        "rustcrypto-xchacha20poly1305",
        2,
    ),
    row(
        "mrtr-awslc-aes256gcm",
        "mrtr-aws-lc AES-256-GCM, OsRng",
        "floor-awslc-aes256gcm",
        "awslc-aes256gcm",
        3,
    ),
    row(
        "mrtr-awslc-chacha20poly1305",
        "mrtr-aws-lc ChaCha20-Poly1305, OsRng",
        "floor-awslc-chacha20poly1305",
        "awslc-chacha20poly1305",
        4,
    ),
    row(
        "mrtr-aes256gcmsiv",
        "mrtr AES-256-GCM-SIV, OsRng",
        "floor-aes256gcmsiv",
        "rustcrypto-aes256gcmsiv",
        5,
    ),
    row(
        RUSTCRYPTO_SIV,
        "mrtr AES-256-GCM-SIV, fast RNG",
        "floor-aes256gcmsiv",
        "rustcrypto-aes256gcmsiv",
        6,
    ),
    row(
        DEFAULT,
        "mrtr-aws-lc AES-256-GCM-SIV, fast RNG (hosted default)",
        "floor-awslc-aes256gcmsiv",
        "awslc-aes256gcmsiv",
        7,
    ),
];

/// AES-256-GCM with the fast generator: what the system call costs GCM (not supported).
const GCM_FAST: &str = "mrtr-aes256gcm-fastrng";

/// Fair floors: id, label, chart colour (their backend's).
const FAIR: [(&str, &str, usize); 7] = [
    ("floor-aes256gcm", "fair floor: RustCrypto AES-256-GCM", 0),
    (
        "floor-chacha20poly1305",
        "fair floor: RustCrypto ChaCha20-Poly1305",
        1,
    ),
    (
        "floor-xchacha20poly1305",
        "fair floor: RustCrypto XChaCha20-Poly1305",
        2,
    ),
    ("floor-awslc-aes256gcm", "fair floor: aws-lc AES-256-GCM", 3),
    (
        "floor-awslc-chacha20poly1305",
        "fair floor: aws-lc ChaCha20-Poly1305",
        4,
    ),
    (
        "floor-aes256gcmsiv",
        "fair floor: RustCrypto AES-256-GCM-SIV",
        5,
    ),
    (
        "floor-awslc-aes256gcmsiv",
        "fair floor: aws-lc AES-256-GCM-SIV",
        7,
    ),
];

/// Raw AEAD rows: id, label.
const AEADS: [(&str, &str); 9] = [
    (
        "rustcrypto-aes256gcm",
        "RustCrypto aes-gcm 0.11 AES-256-GCM",
    ),
    (
        "rustcrypto-chacha20poly1305",
        "RustCrypto chacha20poly1305 0.11 ChaCha20-Poly1305",
    ),
    (
        "rustcrypto-xchacha20poly1305",
        "RustCrypto chacha20poly1305 0.11 XChaCha20-Poly1305",
    ),
    (
        "rustcrypto-aes256gcmsiv",
        "RustCrypto aes-gcm-siv 0.12 AES-256-GCM-SIV",
    ),
    ("ring-aes256gcm", "ring 0.17 AES-256-GCM"),
    ("ring-chacha20poly1305", "ring 0.17 ChaCha20-Poly1305"),
    ("awslc-aes256gcm", "aws-lc-rs 1 AES-256-GCM"),
    ("awslc-chacha20poly1305", "aws-lc-rs 1 ChaCha20-Poly1305"),
    ("awslc-aes256gcmsiv", "aws-lc-rs 1 AES-256-GCM-SIV"),
];

/// The rows the AVX2 build re-measures: (group, id, label).
const AVX2: [(&str, &str, &str); 6] = [
    (
        "aead-roundtrip",
        "rustcrypto-chacha20poly1305",
        "raw AEAD: RustCrypto ChaCha20-Poly1305",
    ),
    (
        "aead-roundtrip",
        "rustcrypto-xchacha20poly1305",
        "raw AEAD: RustCrypto XChaCha20-Poly1305",
    ),
    (
        "fairfloor",
        "floor-chacha20poly1305",
        "fair floor: ChaCha20-Poly1305",
    ),
    (
        "fairfloor",
        "floor-xchacha20poly1305",
        "fair floor: XChaCha20-Poly1305",
    ),
    (
        "roundtrip",
        "mrtr-chacha20poly1305",
        "mrtr ChaCha20-Poly1305, OsRng",
    ),
    (
        "roundtrip",
        "mrtr-xchacha20poly1305",
        "mrtr XChaCha20-Poly1305, OsRng",
    ),
];

/// Where the chart goes, relative to `BENCHMARKS.md`.
const CHART: &str = "docs/bench/roundtrip.svg";

struct Replay(Vec<(String, f64, String, String)>);

impl Replay {
    fn parse(text: &str) -> Self {
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

    fn get(&self, key: &str) -> Option<f64> {
        self.0.iter().find(|r| r.0 == key).map(|r| r.1)
    }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn verdict(ok: Option<bool>) -> String {
    match ok {
        Some(true) => "**met**",
        Some(false) => "**not met**",
        None => "**not measured**",
    }
    .to_owned()
}

fn cell(v: Option<f64>) -> String {
    v.map_or("–".to_owned(), fmt_ns)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (crit, allocs, replay, e2e, pairs, machine, out_path, avx2) = match &args[..] {
        [_, c, a, r, e, p, m, o] => (c, a, r, e, p, m, o, None),
        [_, c, a, r, e, p, m, o, x] => (c, a, r, e, p, m, o, Some(Medians::new(x))),
        _ => {
            eprintln!(
                "usage: report CRITERION_DIR ALLOCS_TSV REPLAY_TSV E2E_TSV PAIRS_TSV MACHINE_MD \
                 OUT_MD [AVX2_CRITERION_DIR]"
            );
            std::process::exit(2);
        }
    };
    let pairs_text = read(pairs);
    let pairs = Pairs::parse(&pairs_text);
    let m = Medians::new(crit);
    let allocs = Allocs::parse(&read(allocs));
    let replay = Replay::parse(&read(replay));
    let e2e = E2e::parse(&read(e2e));
    let peer_list: Vec<(&'static str, &'static str)> = peers::all()
        .iter()
        .map(|p| (p.id(), p.describe()))
        .collect();

    let chart_path = Path::new(out_path)
        .parent()
        .unwrap_or(Path::new("."))
        .join(CHART);
    let chart_note = match draw_chart(&m, &peer_list, &chart_path) {
        Ok(()) => format!("![Round trip by continuation size]({CHART})\n"),
        Err(e) => format!("(The chart could not be drawn: {e}.)\n"),
    };

    let mut o = String::new();
    let _ = writeln!(o, "# Benchmarks\n");
    let _ = writeln!(
        o,
        "Written by `ci/bench.sh` (do not edit by hand: rerun it). Times are criterion \
         **medians** of one run; ratios divide medians of the same run.\n"
    );
    o.push_str(&read(machine));
    o.push('\n');

    goals(&mut o, &m, &pairs, avx2.as_ref(), &replay, &e2e, &peer_list);
    pairs_section(&mut o, &pairs, &pairs_text, &peer_list);

    let _ = writeln!(o, "## Seal + unseal (round trip), median\n");
    o.push_str(&chart_note);
    let _ = writeln!(
        o,
        "\nmrtr: `pause` into a reused `TokenBuf<{{token_len_for(n)}}>` then `resume` of that \
         text (no replay cache), wall clock, and the nonce source named in the row: `OsRng` \
         (one `getrandom` system call per seal, mrtr-std's default) or `mrtr-std`'s \
         fork-aware `rng_fast::FastRng` (allowed with AES-256-GCM-SIV only; the hosted \
         server's default). Fair floor: see \"The fair floor\" below. Raw \
         AEAD: the backend's AEAD sealing and opening the bare n-byte continuation in place \
         (fixed nonce, no associated data). Peers: seal then open with their own API.\n"
    );
    let mut rows: Vec<Vec<String>> = MRTR
        .iter()
        .map(|r| size_row(&m, "roundtrip", r.id, r.label))
        .collect();
    rows.push(size_row(
        &m,
        "roundtrip",
        GCM_FAST,
        "(diagnostic, not supported) mrtr AES-256-GCM, fast RNG",
    ));
    for (id, label, _) in FAIR {
        rows.push(size_row(&m, "fairfloor", id, label));
    }
    for (id, label) in &AEADS[..4] {
        rows.push(size_row(
            &m,
            "aead-roundtrip",
            id,
            &format!("raw AEAD: {label}"),
        ));
    }
    for (id, _) in &peer_list {
        rows.push(size_row(&m, "roundtrip", id, &format!("peer: {id}")));
    }
    table(&mut o, &size_header("row"), &rows);

    let _ = writeln!(o, "### mrtr ÷ its fair floor (seal+unseal)\n");
    let rows: Vec<Vec<String>> = MRTR
        .iter()
        .map(|r| ratio_row(&m, r.label, ("roundtrip", r.id), ("fairfloor", r.fair)))
        .collect();
    table(&mut o, &size_header("ratio"), &rows);

    let _ = writeln!(
        o,
        "### mrtr ÷ its raw AEAD (seal+unseal; no text token can reach 1×)\n"
    );
    let rows: Vec<Vec<String>> = MRTR
        .iter()
        .map(|r| ratio_row(&m, r.label, ("roundtrip", r.id), ("aead-roundtrip", r.raw)))
        .collect();
    table(&mut o, &size_header("ratio"), &rows);

    let _ = writeln!(
        o,
        "### Each peer ÷ mrtr (seal+unseal; above 1× means mrtr is faster)\n"
    );
    let mut rows = Vec::new();
    for (p, _) in &peer_list {
        for r in MRTR
            .iter()
            .filter(|r| [DEFAULT, GCM_OS, RUSTCRYPTO_SIV].contains(&r.id))
        {
            rows.push(ratio_row(
                &m,
                &format!("{p} ÷ {}", r.label),
                ("roundtrip", p),
                ("roundtrip", r.id),
            ));
        }
    }
    table(&mut o, &size_header("ratio"), &rows);

    fair_floor_section(&mut o, &m);
    avx2_section(&mut o, &m, avx2.as_ref());

    for (g, title) in [
        ("seal", "Seal, median"),
        (
            "unseal",
            "Unseal (all resume checks, no replay cache), median",
        ),
        (
            "cycle",
            "Resume cycle (unseal + checks + replay record + seal of the next round), median",
        ),
    ] {
        let _ = writeln!(o, "## {title}\n");
        let mut rows: Vec<Vec<String>> = MRTR
            .iter()
            .map(|r| size_row(&m, g, r.id, r.label))
            .collect();
        if g != "cycle" {
            for (id, _) in &peer_list {
                rows.push(size_row(&m, g, id, &format!("peer: {id}")));
            }
        }
        table(&mut o, &size_header("row"), &rows);
    }

    let _ = writeln!(
        o,
        "## Raw AEAD implementations (seal + open in place), median\n"
    );
    let rows: Vec<Vec<String>> = AEADS
        .iter()
        .map(|(id, label)| size_row(&m, "aead-roundtrip", id, label))
        .collect();
    table(&mut o, &size_header("implementation"), &rows);

    let _ = writeln!(o, "## base64url, median per token\n");
    let _ = writeln!(
        o,
        "On the bytes and text of real AES-256-GCM tokens (a pool of 256, so the text differs \
         every call). Core is built as `mrtr-std` builds it, with its `simd` feature.\n"
    );
    let mut rows = Vec::new();
    for (g, id, label) in [
        (
            "b64-encode",
            "core-in-place",
            "encode: mrtr_core::b64::encode_in_place",
        ),
        (
            "b64-encode",
            "base64-simd",
            "encode: base64 0.23 SIMD engine, separate buffers",
        ),
        (
            "b64-encode",
            "base64-scalar",
            "encode: base64 0.23 scalar engine, separate buffers",
        ),
        ("b64-decode", "core", "decode: mrtr_core::b64::decode_into"),
        (
            "b64-decode",
            "base64-simd",
            "decode: base64 0.23 SIMD engine",
        ),
        (
            "b64-decode",
            "base64-scalar",
            "decode: base64 0.23 scalar engine",
        ),
    ] {
        rows.push(size_row(&m, g, id, label));
    }
    table(&mut o, &size_header("row"), &rows);

    allocs_section(&mut o, &allocs, &peer_list);

    let _ = writeln!(o, "## Replay caches\n");
    if replay.0.is_empty() {
        let _ = writeln!(o, "Not measured in this run (see the report).\n");
    } else {
        let rows: Vec<Vec<String>> = replay
            .0
            .iter()
            .map(|(_, v, unit, label)| vec![label.clone(), format!("{} {unit}", num(*v))])
            .collect();
        table(&mut o, &["measurement".into(), "value".into()], &rows);
    }

    let _ = writeln!(o, "## Peers\n");
    for (id, d) in &peer_list {
        let _ = writeln!(o, "* `{id}`: {d}");
    }
    o.push('\n');

    e2e.section(&mut o);
    o.push_str("## What limits us (this run's numbers)\n\n");
    o.push_str(&limits(
        &m,
        DEFAULT,
        "floor-awslc-aes256gcmsiv",
        (
            "rng-fast",
            "FastRng's fork and reseed checks over a plain ChaCha20 draw",
        ),
    ));
    o.push_str(&limits(
        &m,
        GCM_OS,
        "floor-aes256gcm",
        ("rng-os", "OsRng's system call instead of a userspace draw"),
    ));
    o.push_str(NOTES);
    std::fs::write(out_path, o).expect("write report");
}

fn goals(
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
fn pairs_section(o: &mut String, pairs: &Pairs, text: &str, peer_list: &[(&str, &str)]) {
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

fn fair_floor_section(o: &mut String, m: &Medians) {
    let _ = writeln!(o, "## The fair floor, and where mrtr's time goes\n");
    let _ = writeln!(
        o,
        "The fair floor (`benches/src/fair_floor.rs`) is the least any text token carrying the \
         same sealed state could do per round trip: one draw of token id and nonce from a plain \
         userspace CSPRNG (ChaCha20, no reseed or fork check), the backend's AEAD over the same \
         sealed-state bytes (72 + method + continuation) with the same associated data \
         (prebuilt), and the fastest base64url encode and decode here (`base64` 0.23's SIMD \
         engine) of the same token bytes. mrtr adds to that: the wall-clock read, writing the \
         state and header, building the associated data from the binding (twice per round \
         trip), the resume checks, and its nonce source.\n"
    );
    let _ = writeln!(o, "Parts, median per call:\n");
    let mut rows = Vec::new();
    for (id, n, label) in [
        (
            "rng-os",
            28,
            "28-byte draw, OsRng (getrandom system call; default)",
        ),
        (
            "rng-fast",
            28,
            "28-byte draw, FastRng (ChaCha20, fork-counter check, key-age check)",
        ),
        (
            "rng-chacha20",
            28,
            "28-byte draw, plain ChaCha20Rng (the fair floor's)",
        ),
        ("clock", 0, "wall-clock read (SystemClock::now_ms)"),
        (
            "aad-build",
            0,
            "associated data built from the binding, in place (Aad::fill)",
        ),
        (
            "precheck",
            598,
            "hosted precheck of the end-to-end resume body, 598 B (precheck_bytes: I-JSON and \
             envelope in one pass, no tree)",
        ),
        (
            "value-parse",
            598,
            "the same body parsed into a serde_json::Value (for scale)",
        ),
    ] {
        rows.push(vec![label.to_owned(), cell(m.get("parts", id, n))]);
    }
    for (g, id, label) in [
        ("b64-encode", "core-in-place", "base64url encode, core"),
        ("b64-encode", "base64-simd", "base64url encode, fastest"),
        ("b64-decode", "core", "base64url decode, core"),
        ("b64-decode", "base64-simd", "base64url decode, fastest"),
    ] {
        rows.push(vec![
            format!("{label} (256 B continuation token)"),
            cell(m.get(g, id, 256)),
        ]);
    }
    table(o, &["part".into(), "median".into()], &rows);
}

fn avx2_section(o: &mut String, m: &Medians, avx2: Option<&Medians>) {
    let _ = writeln!(o, "## ChaCha20-Poly1305 built with AVX2\n");
    let Some(a) = avx2 else {
        let _ = writeln!(o, "Not measured in this run.\n");
        return;
    };
    let _ = writeln!(
        o,
        "A second build of the benchmarks with `RUSTFLAGS=\"-C target-feature=+avx2\"` (its \
         own target directory), re-measuring the ChaCha20-Poly1305 rows. RustCrypto's \
         `chacha20` 0.10 and `poly1305` 0.9 detect AVX2 at run time, but their AVX2 helpers are \
         then called out of line; compiled for AVX2 they inline. A binary built this way \
         faults (SIGILL) on a CPU without AVX2, so it is a per-host build setting, not the \
         default. Each cell: portable → AVX2 build (speed-up).\n"
    );
    let rows: Vec<Vec<String>> = AVX2
        .iter()
        .map(|(g, id, label)| {
            std::iter::once((*label).to_owned())
                .chain(SIZES.iter().map(|&n| {
                    let (p, f) = (m.get(g, id, n), a.get(g, id, n));
                    format!("{} → {} ({})", cell(p), cell(f), ratio(p, f))
                }))
                .collect()
        })
        .collect();
    table(o, &size_header("row"), &rows);
}

fn allocs_section(o: &mut String, allocs: &Allocs, peer_list: &[(&str, &str)]) {
    let _ = writeln!(o, "## Heap allocations per operation\n");
    let _ = writeln!(
        o,
        "Counted by a global allocator in `benches/src/bin/allocs.rs`: allocations (and bytes \
         requested) per call, averaged over many calls after one warm-up call. The cycle rows run \
         the in-process replay cache in its steady state (20 000 warm-up cycles; ids expire as \
         fast as they are recorded): while its tables are still growing, their doubling \
         allocates, amortised.\n"
    );
    let mut rows = Vec::new();
    for r in &MRTR {
        for g in ["seal", "unseal", "roundtrip", "cycle"] {
            rows.push(alloc_row(allocs, g, r.id, &format!("{} {g}", r.label)));
        }
    }
    for (id, label) in &AEADS[..4] {
        rows.push(alloc_row(
            allocs,
            "aead-roundtrip",
            id,
            &format!("raw AEAD: {label}"),
        ));
    }
    for (id, _) in peer_list {
        for g in ["seal", "unseal", "roundtrip"] {
            rows.push(alloc_row(allocs, g, id, &format!("{id} {g}")));
        }
    }
    table(o, &size_header("row"), &rows);
}

fn draw_chart(m: &Medians, peer_list: &[(&str, &str)], path: &Path) -> Result<(), String> {
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

const NOTES: &str = "
## How it is measured

* `benches/benches/aead.rs` (criterion): the raw AEADs. `benches/benches/tokens.rs`
  (criterion): mrtr per backend and nonce source, the fair floors, the parts (random draws,
  clock, associated data, base64url) and the peers. `src/bin/allocs.rs`: allocations under a
  counting global allocator. `src/bin/replay.rs`: replay caches (its own timing loop: threads
  and a live set do not fit criterion's model). `src/bin/report.rs` writes this file and the
  chart (`plotters`, SVG) from criterion's `estimates.json` medians and those outputs.
* Unseal rows cycle through 256 distinct tokens. Opening one token again and again lets the
  branch predictor learn its text and hides part of the decoder's cost.
* mrtr uses `mrtr-std`'s `SystemClock`, buffers sized by `token_len_for(n)`, a `tools/call`
  binding with an authenticated principal, a 10-byte method, and core built with its `simd`
  feature (as `mrtr-std` builds it). The cycle rows lift the round cap (chains of millions of
  rounds) and use `mrtr-std`'s `MemoryReplayCache`.
* Peers use their documented APIs; several check less than mrtr (see Peers).
* Third backend (issue 7): the rule triggered, and it is `mrtr-aws-lc` (aws-lc-rs), not
  `ring`: the `Cipher` contract requires wiping the key schedule on drop, `ring` does no
  zeroization by design, and AWS-LC cleanses every `OPENSSL_malloc` allocation (its
  `EVP_AEAD_CTX`) on free.
";

fn num(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0} k", v / 1e3)
    } else {
        format!("{v:.1}")
    }
}

fn size_row(m: &Medians, group: &str, id: &str, label: &str) -> Vec<String> {
    std::iter::once(label.to_owned())
        .chain(SIZES.iter().map(|&n| m.cell(group, id, n)))
        .collect()
}

fn ratio_row(m: &Medians, label: &str, a: (&str, &str), b: (&str, &str)) -> Vec<String> {
    std::iter::once(label.to_owned())
        .chain(
            SIZES
                .iter()
                .map(|&n| ratio(m.get(a.0, a.1, n), m.get(b.0, b.1, n))),
        )
        .collect()
}

fn alloc_row(a: &Allocs, group: &str, id: &str, label: &str) -> Vec<String> {
    std::iter::once(label.to_owned())
        .chain(SIZES.iter().map(|&n| a.cell(group, id, n)))
        .collect()
}

/// "What limits us", with this run's numbers: one configuration's distance to its fair floor
/// at 256 B, split into the parts measured apart. `rng` names its nonce source's part and
/// what it costs over the floor's plain draw.
fn limits(m: &Medians, id: &str, fair: &str, rng: (&str, &str)) -> String {
    let mut o = String::new();
    let n = 256;
    let label = MRTR.iter().find(|r| r.id == id).map_or(id, |r| r.label);
    let me = m.get("roundtrip", id, n);
    let fair = m.get("fairfloor", fair, n);
    let os = m.get("parts", rng.0, 28);
    let chacha = m.get("parts", "rng-chacha20", 28);
    let clock = m.get("parts", "clock", 0);
    let aad = m.get("parts", "aad-build", 0);
    let enc = m
        .get("b64-encode", "core-in-place", n)
        .zip(m.get("b64-encode", "base64-simd", n));
    let dec = m
        .get("b64-decode", "core", n)
        .zip(m.get("b64-decode", "base64-simd", n));
    let (Some(me), Some(fair)) = (me, fair) else {
        let _ = writeln!(o, "* {label}: not measured in this run.");
        return o;
    };
    let gap = me - fair;
    let _ = writeln!(
        o,
        "* {label} at {n} B: a round trip costs {} against its fair floor of {} ({:.2}×): {} of \
         overhead.",
        fmt_ns(me),
        fmt_ns(fair),
        me / fair,
        fmt_ns(gap)
    );
    let mut parts = Vec::new();
    if let (Some(os), Some(chacha)) = (os, chacha) {
        parts.push((rng.1, os - chacha));
    }
    if let Some(c) = clock {
        parts.push((
            "two wall-clock reads (one per pause, one per resume)",
            2.0 * c,
        ));
    }
    if let Some(a) = aad {
        parts.push(("building the associated data twice", 2.0 * a));
    }
    if let Some((core, simd)) = enc {
        parts.push((
            "encoding in place (through a stack buffer) instead of into a second buffer",
            core - simd,
        ));
    }
    if let Some((core, simd)) = dec {
        parts.push(("core's decode call over the bare SIMD engine", core - simd));
    }
    let mut named = 0.0;
    for (what, ns) in &parts {
        named += ns;
        let _ = writeln!(
            o,
            "  * {what}: {} ({:.0}% of the overhead)",
            fmt_ns(ns.abs()),
            100.0 * ns / gap
        );
    }
    let rest = gap - named;
    if rest >= 0.0 {
        let _ = writeln!(
            o,
            "  * the rest (writing the state and header, the resume checks, copies and buffer \
             handling): {} ({:.0}%)",
            fmt_ns(rest),
            100.0 * rest / gap
        );
    } else {
        let _ = writeln!(
            o,
            "  * the parts measured apart add up to {}, more than the gap itself: medians taken \
             at different moments of a run on a loaded machine do not add up exactly, so no \
             remainder is estimated",
            fmt_ns(named)
        );
    }
    o
}
