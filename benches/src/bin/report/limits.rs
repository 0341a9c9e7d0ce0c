//! The report's "What limits us" section: a configuration's distance to its fair floor,
//! split into the parts measured apart.

use std::fmt::Write as _;

use mrtr_benches::report::{Medians, fmt_ns};

use crate::rows::{DEFAULT, GCM_OS, MRTR};

/// The section, for the hosted default and for AES-256-GCM with OsRng.
pub(crate) fn section(o: &mut String, m: &Medians) {
    o.push_str("## What limits us (this run's numbers)\n\n");
    o.push_str(&limits(
        m,
        DEFAULT,
        "floor-awslc-aes256gcmsiv",
        (
            "rng-fast",
            "FastRng's fork and reseed checks over a plain ChaCha20 draw",
        ),
    ));
    o.push_str(&limits(
        m,
        GCM_OS,
        "floor-aes256gcm",
        ("rng-os", "OsRng's system call instead of a userspace draw"),
    ));
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
