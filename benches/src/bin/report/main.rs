//! Writes `BENCHMARKS.md` and its size-sweep chart from criterion's results and the
//! measurement binaries' output.
//!
//! Usage: `report CRITERION_DIR ALLOCS_TSV REPLAY_TSV E2E_TSV PAIRS_TSV MACHINE_MD OUT_MD
//! [AVX2_CRITERION_DIR]`.
//! The chart goes to `docs/bench/roundtrip.svg` beside `OUT_MD`. A missing input leaves its
//! section marked as not measured.
//!
//! `main` reads the inputs and writes the sections in order; each module writes one part of
//! the report, from the rows in [`rows`].

mod allocs;
mod chart;
mod goals;
mod limits;
mod replay;
mod rows;
mod timings;

use std::fmt::Write as _;

use mrtr_benches::e2e::E2e;
use mrtr_benches::paired::Pairs;
use mrtr_benches::peers;
use mrtr_benches::report::{Allocs, Medians};

use crate::replay::Replay;

/// The text of `path`, or nothing if it cannot be read (a missing input).
fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
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

    let chart_note = chart::note(&m, &peer_list, out_path);

    let mut o = String::new();
    let _ = writeln!(o, "# Benchmarks\n");
    let _ = writeln!(
        o,
        "Written by `ci/bench.sh` (do not edit by hand: rerun it). Times are criterion \
         **medians** of one run; ratios divide medians of the same run.\n"
    );
    o.push_str(&read(machine));
    o.push('\n');

    goals::section(&mut o, &m, &pairs, avx2.as_ref(), &replay, &e2e, &peer_list);
    goals::pairs_section(&mut o, &pairs, &pairs_text, &peer_list);

    timings::roundtrip(&mut o, &m, &peer_list, &chart_note);
    timings::fair_floor(&mut o, &m);
    timings::avx2(&mut o, &m, avx2.as_ref());
    timings::per_op(&mut o, &m, &peer_list);
    allocs::section(&mut o, &allocs, &peer_list);
    replay::section(&mut o, &replay);
    let _ = writeln!(o, "## Peers\n");
    for (id, d) in &peer_list {
        let _ = writeln!(o, "* `{id}`: {d}");
    }
    o.push('\n');

    e2e.section(&mut o);
    limits::section(&mut o, &m);
    o.push_str(NOTES);
    std::fs::write(out_path, o).expect("write report");
}

/// The closing section: how each table is measured.
const NOTES: &str = "
## How it is measured

* `benches/benches/aead.rs` (criterion): the raw AEADs. `benches/benches/tokens.rs`
  (criterion): mrtr per backend and nonce source, the fair floors, the parts (random draws,
  clock, associated data, base64url) and the peers. `src/bin/allocs.rs`: allocations under a
  counting global allocator. `src/bin/replay.rs`: replay caches (its own timing loop: threads
  and a live set do not fit criterion's model). `src/bin/report/` writes this file and the
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
