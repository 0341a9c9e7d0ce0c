//! Writes `BENCHMARKS.md` from criterion's results and the measurement binaries' output.
//!
//! Usage: `report CRITERION_DIR ALLOCS_TSV REPLAY_TSV MACHINE_MD OUT_MD` (a missing input file
//! leaves its section marked as not measured).

use std::fmt::Write as _;

use mrtr_benches::SIZES;
use mrtr_benches::peers;
use mrtr_benches::report::{Allocs, Medians, fmt_ns, ratio, size_header, table};

/// mrtr rows: benchmark id, label, the id of its backend's raw AEAD floor.
const MRTR: [(&str, &str, &str); 5] = [
    ("mrtr-aes256gcm", "mrtr AES-256-GCM", "rustcrypto-aes256gcm"),
    (
        "mrtr-chacha20poly1305",
        "mrtr ChaCha20-Poly1305",
        "rustcrypto-chacha20poly1305",
    ),
    (
        "mrtr-xchacha20poly1305",
        "mrtr XChaCha20-Poly1305",
        "rustcrypto-xchacha20poly1305",
    ),
    (
        "mrtr-awslc-aes256gcm",
        "mrtr-aws-lc AES-256-GCM",
        "awslc-aes256gcm",
    ),
    (
        "mrtr-awslc-chacha20poly1305",
        "mrtr-aws-lc ChaCha20-Poly1305",
        "awslc-chacha20poly1305",
    ),
];

const FAST_RNG: &str = "mrtr-aes256gcm-userspace-rng";

/// Raw AEAD rows: id, label.
const AEADS: [(&str, &str); 7] = [
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
    ("ring-aes256gcm", "ring 0.17 AES-256-GCM"),
    ("ring-chacha20poly1305", "ring 0.17 ChaCha20-Poly1305"),
    ("awslc-aes256gcm", "aws-lc-rs 1 AES-256-GCM"),
    ("awslc-chacha20poly1305", "aws-lc-rs 1 ChaCha20-Poly1305"),
];

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

fn yes(ok: bool) -> &'static str {
    if ok { "**met**" } else { "**not met**" }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, crit, allocs, replay, machine, out_path] = &args[..] else {
        eprintln!("usage: report CRITERION_DIR ALLOCS_TSV REPLAY_TSV MACHINE_MD OUT_MD");
        std::process::exit(2);
    };
    let m = Medians::new(crit);
    let allocs = Allocs::parse(&read(allocs));
    let replay = Replay::parse(&read(replay));
    let peer_list: Vec<(&'static str, &'static str)> = peers::all()
        .iter()
        .map(|p| (p.id(), p.describe()))
        .collect();

    let mut o = String::new();
    let _ = writeln!(o, "# Benchmarks\n");
    let _ = writeln!(
        o,
        "Written by `ci/bench.sh` (do not edit by hand: rerun it). Times are criterion \
         **medians** of one run; ratios divide medians of the same run.\n"
    );
    o.push_str(&read(machine));
    o.push('\n');

    // Goals.
    let _ = writeln!(o, "## Goals\n");
    let mut rows = Vec::new();
    for (id, label, floor) in MRTR {
        let r = m.get("roundtrip", id, 256);
        let f = m.get("aead-roundtrip", floor, 256);
        let ok = matches!((r, f), (Some(r), Some(f)) if r / f <= 1.5);
        rows.push(vec![
            format!("{label}: seal+unseal at 256 B within 1.5× of its raw AEAD"),
            format!("{} vs floor {} = {}", cell(r), cell(f), ratio(r, f)),
            yes(ok).to_owned(),
        ]);
    }
    for n in [256, 1024] {
        for (id, label, _) in MRTR {
            let me = m.get("roundtrip", id, n);
            let worst = peer_list
                .iter()
                .filter_map(|(p, _)| m.get("roundtrip", p, n).map(|t| (*p, t)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let (text, ok) = match (me, worst) {
                (Some(me), Some((p, t))) => (
                    format!(
                        "{} vs fastest peer {p} {} (peer ÷ mrtr = {:.2}×; below 1× the peer is faster)",
                        fmt_ns(me),
                        fmt_ns(t),
                        t / me
                    ),
                    t > me,
                ),
                _ => ("not measured".to_owned(), false),
            };
            rows.push(vec![
                format!("{label}: faster than every peer at {n} B (seal+unseal)"),
                text,
                yes(ok).to_owned(),
            ]);
        }
    }
    let two = replay.get("inproc-2t-ops");
    let proposed = replay.get("proposed-2t-ops");
    rows.push(vec![
        "in-process replay cache ≥ 2 M check-and-record/s on 2 threads (≈1 M live)".to_owned(),
        match (two, proposed) {
            (Some(v), Some(p)) => format!(
                "mrtr-std MemoryReplayCache {:.2} M/s; proposed FIFO sketch {:.2} M/s",
                v / 1e6,
                p / 1e6
            ),
            (Some(v), None) => format!("{:.2} M/s", v / 1e6),
            _ => "not measured".to_owned(),
        },
        two.map_or("**not measured**", |v| yes(v >= 2e6)).to_owned(),
    ]);
    for (alg, ours, others) in [
        (
            "AES-256-GCM",
            "rustcrypto-aes256gcm",
            ["ring-aes256gcm", "awslc-aes256gcm"],
        ),
        (
            "ChaCha20-Poly1305",
            "rustcrypto-chacha20poly1305",
            ["ring-chacha20poly1305", "awslc-chacha20poly1305"],
        ),
    ] {
        let rc = m.get("aead-roundtrip", ours, 256);
        let mut parts = Vec::new();
        let mut trig = false;
        for other in others {
            let t = m.get("aead-roundtrip", other, 256);
            if let (Some(rc), Some(t)) = (rc, t) {
                trig |= rc / t >= 1.5;
            }
            parts.push(format!("{other} {} ({} faster)", cell(t), ratio(rc, t)));
        }
        rows.push(vec![
            format!("third backend rule, {alg} at 256 B: another implementation ≥ 1.5× faster than RustCrypto ({})", cell(rc)),
            parts.join("; "),
            if trig { "**triggered**" } else { "not triggered" }.to_owned(),
        ]);
    }
    table(
        &mut o,
        &["goal".into(), "measured".into(), "verdict".into()],
        &rows,
    );

    // Round trip.
    let _ = writeln!(o, "## Seal + unseal (round trip), median\n");
    let _ = writeln!(
        o,
        "mrtr: `pause` into a reused `TokenBuf<{{token_len_for(n)}}>` then `resume` of that text \
         (no replay cache), wall clock and OS RNG (`getrandom`, one call per seal) as in \
         `mrtr-std`. Floor: the backend's raw AEAD sealing and opening the n-byte continuation \
         in place (fixed nonce, no associated data). Peers: seal then open with their own API.\n"
    );
    let mut rows = Vec::new();
    for (id, label, _) in MRTR {
        rows.push(size_row(&m, "roundtrip", id, label));
    }
    rows.push(size_row(
        &m,
        "roundtrip",
        FAST_RNG,
        "(diagnostic) mrtr AES-256-GCM, userspace RNG instead of getrandom",
    ));
    for (id, label) in &AEADS[..3] {
        rows.push(size_row(
            &m,
            "aead-roundtrip",
            id,
            &format!("floor: {label}"),
        ));
    }
    for (id, _) in &peer_list {
        rows.push(size_row(&m, "roundtrip", id, &format!("peer: {id}")));
    }
    table(&mut o, &size_header("row"), &rows);

    let _ = writeln!(o, "### mrtr ÷ its own floor\n");
    let mut rows = Vec::new();
    for (id, label, floor) in MRTR {
        for (g, fg, what) in [
            ("roundtrip", "aead-roundtrip", "seal+unseal"),
            ("seal", "aead-seal", "seal"),
            ("unseal", "aead-open", "unseal"),
        ] {
            let mut r = vec![format!("{label} {what}")];
            for n in SIZES {
                r.push(ratio(m.get(g, id, n), m.get(fg, floor, n)));
            }
            rows.push(r);
        }
    }
    table(&mut o, &size_header("ratio"), &rows);

    let _ = writeln!(
        o,
        "### Each peer ÷ mrtr (seal+unseal; above 1× means mrtr is faster)\n"
    );
    let mut rows = Vec::new();
    for (p, _) in &peer_list {
        for (id, label, _) in MRTR {
            let mut r = vec![format!("{p} ÷ {label}")];
            for n in SIZES {
                r.push(ratio(m.get("roundtrip", p, n), m.get("roundtrip", id, n)));
            }
            rows.push(r);
        }
    }
    table(&mut o, &size_header("ratio"), &rows);

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
        let mut rows = Vec::new();
        for (id, label, _) in MRTR {
            rows.push(size_row(&m, g, id, label));
        }
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
    let mut rows = Vec::new();
    for (id, label) in AEADS {
        rows.push(size_row(&m, "aead-roundtrip", id, label));
    }
    table(&mut o, &size_header("implementation"), &rows);

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
    for (id, label, _) in MRTR {
        for g in ["seal", "unseal", "roundtrip", "cycle"] {
            rows.push(alloc_row(&allocs, g, id, &format!("{label} {g}")));
        }
    }
    for (id, label) in &AEADS[..3] {
        rows.push(alloc_row(
            &allocs,
            "aead-roundtrip",
            id,
            &format!("floor: {label}"),
        ));
    }
    for (id, _) in &peer_list {
        for g in ["seal", "unseal", "roundtrip"] {
            rows.push(alloc_row(&allocs, g, id, &format!("{id} {g}")));
        }
    }
    table(&mut o, &size_header("row"), &rows);

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

    o.push_str(&limits(&m));
    o.push_str(NOTES);
    std::fs::write(out_path, o).expect("write report");
}

const NOTES: &str = "
## How it is measured

* `benches/benches/aead.rs` (criterion): the raw AEADs. `benches/benches/tokens.rs`
  (criterion): mrtr per backend, the base64 diagnostic, the peers. `src/bin/allocs.rs`:
  allocations under a counting global allocator. `src/bin/replay.rs`: replay caches (its own
  timing loop: threads and a live set do not fit criterion's model). `src/bin/report.rs`
  writes this file from criterion's `estimates.json` medians and those outputs.
* Unseal rows cycle through 256 distinct tokens. Opening one token again and again lets the
  branch predictor learn its text and hides most of the decoder's cost (measured: 1.1 µs
  instead of 4 µs for mrtr AES-256-GCM at 256 B).
* mrtr uses `mrtr-std`'s `SystemClock` and `OsRng`, buffers sized by `token_len_for(n)`, a
  `tools/call` binding with an authenticated principal, a 10-byte method. The cycle rows lift
  the round cap (chains of millions of rounds) and use `mrtr-std`'s `MemoryReplayCache`.
* The floor seals the bare continuation: no framing, associated data, randomness or text
  encoding. Peers use their documented APIs; several check less than mrtr (see Peers).
* The RustCrypto ChaCha20-Poly1305 floor is slow on this machine: a profile shows the AVX2
  intrinsics of `chacha20` 0.10 and `poly1305` 0.9 as out-of-line calls
  (`_mm256_permutevar8x32_epi32`, `_mm256_add_epi64`, ...), not inlined into their backends.
  That is upstream; `mrtr-aws-lc` is the fast ChaCha20-Poly1305 on hosts.
* Third backend: the rule triggered, and it is `mrtr-aws-lc` (aws-lc-rs), not `ring`: the
  `Cipher` contract requires wiping the key schedule on drop, `ring` does no zeroization by
  design, and AWS-LC cleanses every `OPENSSL_malloc` allocation (its `EVP_AEAD_CTX`) on free.
";

fn cell(v: Option<f64>) -> String {
    v.map_or("–".to_owned(), fmt_ns)
}

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

fn alloc_row(a: &Allocs, group: &str, id: &str, label: &str) -> Vec<String> {
    std::iter::once(label.to_owned())
        .chain(SIZES.iter().map(|&n| a.cell(group, id, n)))
        .collect()
}

/// "What limits us", with this run's numbers.
fn limits(m: &Medians) -> String {
    let mut o = String::from("## What limits us (this run's numbers)\n\n");
    let n = 256;
    let os = m.get("roundtrip", "mrtr-aes256gcm", n);
    let fast = m.get("roundtrip", FAST_RNG, n);
    let floor = m.get("aead-roundtrip", "rustcrypto-aes256gcm", n);
    let core = m.get("b64-decode", "core", n);
    let table = m.get("b64-decode", "table", n);
    if let (Some(os), Some(fast), Some(floor), Some(core), Some(table)) =
        (os, fast, floor, core, table)
    {
        let rng = os - fast;
        let b64 = core - table;
        let _ = writeln!(
            o,
            "* mrtr AES-256-GCM at {n} B: a round trip costs {} against a raw-AEAD floor of {}.",
            fmt_ns(os),
            fmt_ns(floor)
        );
        let _ = writeln!(
            o,
            "* **Base64url decoding** (`mrtr_core::b64::decode_in_place`, table-driven with one \
             validity check) takes {} per token of this size when every token is new (as on a \
             server); the benchmark's own independent table decoder (`benches/src/b64_table.rs`, \
             same contract) takes {}: a difference of {} ({:+.0}% of the round trip).",
            fmt_ns(core),
            fmt_ns(table),
            fmt_ns(b64.abs()),
            100.0 * b64 / os
        );
        let _ = writeln!(
            o,
            "* **The OS RNG**: `mrtr-std`'s `OsRng` makes one `getrandom` system call per fill, \
             and `pause` draws the token id and nonce in one fill. With a userspace generator \
             swapped in, the round trip measured {} {} ({:.0}%).",
            fmt_ns(rng.abs()),
            if rng >= 0.0 {
                "faster: the system call's share"
            } else {
                "slower: within this shared machine's noise, the system call is not what limits us"
            },
            100.0 * rng.abs() / os
        );
        let (rng, b64) = (rng.max(0.0), b64.max(0.0));
        let rest = os - rng - b64;
        let _ = writeln!(
            o,
            "* Without those two, the round trip would be about {} = {:.1}× the floor. The rest \
             is work the floor does not do: sealing the {}-byte state (72 + method + \
             continuation bytes) rather than the bare continuation, authenticating ~100 bytes \
             of associated data twice, base64url encoding, building the associated data twice \
             (each time zeroing a {}-byte buffer), and two clock reads. A 1.5× bound against an \
             AEAD that neither frames nor encodes cannot be met by any text token; the \
             comparison that matters for users is the peer table.",
            fmt_ns(rest),
            rest / floor,
            72 + 10 + n,
            mrtr_core::binding::MAX_AAD_LEN
        );
    }
    o
}
