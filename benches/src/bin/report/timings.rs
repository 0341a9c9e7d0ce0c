//! The report's tables of criterion medians: the round trip by continuation size and its
//! ratios, the fair floor's parts, the AVX2 build, and seal, unseal, cycle, raw AEAD and
//! base64url on their own.

use std::fmt::Write as _;

use mrtr_benches::SIZES;
use mrtr_benches::report::{Medians, ratio, size_header, table};

use crate::rows::{
    AEADS, AVX2, DEFAULT, FAIR, GCM_FAST, GCM_OS, MRTR, RUSTCRYPTO_SIV, cell, ratio_row, size_row,
};

/// "Seal + unseal (round trip)": the chart (`chart_note`), the medians of every row, then mrtr
/// against its fair floor, against its raw AEAD, and each peer against mrtr.
pub(crate) fn roundtrip(o: &mut String, m: &Medians, peer_list: &[(&str, &str)], chart_note: &str) {
    let _ = writeln!(o, "## Seal + unseal (round trip), median\n");
    o.push_str(chart_note);
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
        .map(|r| size_row(m, "roundtrip", r.id, r.label))
        .collect();
    rows.push(size_row(
        m,
        "roundtrip",
        GCM_FAST,
        "(diagnostic, not supported) mrtr AES-256-GCM, fast RNG",
    ));
    for (id, label, _) in FAIR {
        rows.push(size_row(m, "fairfloor", id, label));
    }
    for (id, label) in &AEADS[..4] {
        rows.push(size_row(
            m,
            "aead-roundtrip",
            id,
            &format!("raw AEAD: {label}"),
        ));
    }
    for (id, _) in peer_list {
        rows.push(size_row(m, "roundtrip", id, &format!("peer: {id}")));
    }
    table(o, &size_header("row"), &rows);

    let _ = writeln!(o, "### mrtr ÷ its fair floor (seal+unseal)\n");
    let rows: Vec<Vec<String>> = MRTR
        .iter()
        .map(|r| ratio_row(m, r.label, ("roundtrip", r.id), ("fairfloor", r.fair)))
        .collect();
    table(o, &size_header("ratio"), &rows);

    let _ = writeln!(
        o,
        "### mrtr ÷ its raw AEAD (seal+unseal; no text token can reach 1×)\n"
    );
    let rows: Vec<Vec<String>> = MRTR
        .iter()
        .map(|r| ratio_row(m, r.label, ("roundtrip", r.id), ("aead-roundtrip", r.raw)))
        .collect();
    table(o, &size_header("ratio"), &rows);

    let _ = writeln!(
        o,
        "### Each peer ÷ mrtr (seal+unseal; above 1× means mrtr is faster)\n"
    );
    let mut rows = Vec::new();
    for (p, _) in peer_list {
        for r in MRTR
            .iter()
            .filter(|r| [DEFAULT, GCM_OS, RUSTCRYPTO_SIV].contains(&r.id))
        {
            rows.push(ratio_row(
                m,
                &format!("{p} ÷ {}", r.label),
                ("roundtrip", p),
                ("roundtrip", r.id),
            ));
        }
    }
    table(o, &size_header("ratio"), &rows);
}

/// Seal, unseal and cycle on their own, the raw AEADs, and base64url.
pub(crate) fn per_op(o: &mut String, m: &Medians, peer_list: &[(&str, &str)]) {
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
        let mut rows: Vec<Vec<String>> =
            MRTR.iter().map(|r| size_row(m, g, r.id, r.label)).collect();
        if g != "cycle" {
            for (id, _) in peer_list {
                rows.push(size_row(m, g, id, &format!("peer: {id}")));
            }
        }
        table(o, &size_header("row"), &rows);
    }

    let _ = writeln!(
        o,
        "## Raw AEAD implementations (seal + open in place), median\n"
    );
    let rows: Vec<Vec<String>> = AEADS
        .iter()
        .map(|(id, label)| size_row(m, "aead-roundtrip", id, label))
        .collect();
    table(o, &size_header("implementation"), &rows);

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
        rows.push(size_row(m, g, id, label));
    }
    table(o, &size_header("row"), &rows);
}

/// "The fair floor, and where mrtr's time goes": what the floor does, and the medians of the
/// parts mrtr adds to it.
pub(crate) fn fair_floor(o: &mut String, m: &Medians) {
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

/// "ChaCha20-Poly1305 built with AVX2": each row's portable median against the AVX2 build's.
pub(crate) fn avx2(o: &mut String, m: &Medians, avx2: Option<&Medians>) {
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
