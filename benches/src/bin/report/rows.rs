//! The rows the report shows (mrtr's configurations, their fair floors, the raw AEADs) and
//! the helpers that turn one row's measurements into table cells.

use mrtr_benches::SIZES;
use mrtr_benches::report::{Medians, fmt_ns, ratio};

/// An mrtr configuration: benchmark id, label, fair-floor id, raw-AEAD id, chart colour.
pub(crate) struct Row {
    pub(crate) id: &'static str,
    pub(crate) label: &'static str,
    pub(crate) fair: &'static str,
    pub(crate) raw: &'static str,
    pub(crate) colour: usize,
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
pub(crate) const DEFAULT: &str = "mrtr-awslc-aes256gcmsiv-fastrng";

/// The same algorithm from RustCrypto (pure Rust), with the fast nonce source.
pub(crate) const RUSTCRYPTO_SIV: &str = "mrtr-aes256gcmsiv-fastrng";

/// mrtr-std's first default backend with the default nonce source (one system call per seal):
/// what a library user gets who picks AES-256-GCM.
pub(crate) const GCM_OS: &str = "mrtr-aes256gcm";

/// Every mrtr configuration measured, in the tables' order.
pub(crate) const MRTR: [Row; 8] = [
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
pub(crate) const GCM_FAST: &str = "mrtr-aes256gcm-fastrng";

/// Fair floors: id, label, chart colour (their backend's).
pub(crate) const FAIR: [(&str, &str, usize); 7] = [
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
pub(crate) const AEADS: [(&str, &str); 9] = [
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
pub(crate) const AVX2: [(&str, &str, &str); 6] = [
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

/// A goal's verdict cell.
pub(crate) fn verdict(ok: Option<bool>) -> String {
    match ok {
        Some(true) => "**met**",
        Some(false) => "**not met**",
        None => "**not measured**",
    }
    .to_owned()
}

/// A median as a table cell, or `–` if it was not measured.
pub(crate) fn cell(v: Option<f64>) -> String {
    v.map_or("–".to_owned(), fmt_ns)
}

/// A table row: `label`, then the median of `group`/`id` at each size.
pub(crate) fn size_row(m: &Medians, group: &str, id: &str, label: &str) -> Vec<String> {
    std::iter::once(label.to_owned())
        .chain(SIZES.iter().map(|&n| m.cell(group, id, n)))
        .collect()
}

/// A table row: `label`, then the median of `a` ÷ that of `b` at each size.
pub(crate) fn ratio_row(m: &Medians, label: &str, a: (&str, &str), b: (&str, &str)) -> Vec<String> {
    std::iter::once(label.to_owned())
        .chain(
            SIZES
                .iter()
                .map(|&n| ratio(m.get(a.0, a.1, n), m.get(b.0, b.1, n))),
        )
        .collect()
}
