//! The report's "Heap allocations per operation" section.

use std::fmt::Write as _;

use mrtr_benches::SIZES;
use mrtr_benches::report::{Allocs, size_header, table};

use crate::rows::{AEADS, MRTR};

/// The allocation counts of every mrtr configuration, the RustCrypto raw AEADs and the peers.
pub(crate) fn section(o: &mut String, allocs: &Allocs, peer_list: &[(&str, &str)]) {
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

/// A table row: `label`, then the allocations of `group`/`id` at each size.
fn alloc_row(a: &Allocs, group: &str, id: &str, label: &str) -> Vec<String> {
    std::iter::once(label.to_owned())
        .chain(SIZES.iter().map(|&n| a.cell(group, id, n)))
        .collect()
}
