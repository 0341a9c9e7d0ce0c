//! The argument digest on the target: every vector of `tests/vectors/args-digest.json`
//! (turned into constants by build.rs) through `mrtr_json::parse` and `args_digest`, byte for
//! byte as the host computes it (or refused for the same reason), and the cost of the digest
//! of a typical `tools/call` request (`measure: op=args_digest` line, next to the
//! `op=seal` lines of [`crate::measure`]).

use mrtr_json::{Error, Limits, Value, args_digest, parse};

use crate::arch::Timer;
use crate::check;
use crate::report::Report;
use crate::stack;

/// What a vector expects.
pub enum Expected {
    /// Digested: the SHA-256 of its binding form (RFC 8785, numbers keeping their kind).
    Digest([u8; 32]),
    /// Refused, for the reason named (`mrtr_json::Error::as_str`).
    Refused(&'static str),
}

include!(concat!(env!("OUT_DIR"), "/args_digest.rs"));

/// The gateway reads whole messages: the arguments' own 64 levels (the digest's bound) plus
/// room for the envelope, as the host's check allows 128.
const LIMITS: Limits = Limits {
    max_depth: 128,
    ..Limits::DEFAULT
};

/// A typical `tools/call` request (309 bytes, 9 arguments).
const REQUEST: &str = r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"thermostat.schedule","arguments":{"zone":"living room","celsius":21.5,"from":"2026-11-30T07:00:00Z","until":"2026-11-30T22:30:00Z","days":["mon","tue","wed","thu","fri"],"eco":true,"fan":"auto","priority":3,"note":"caf\u00e9 \"winter\" plan"}}}"#;

/// Parses `text` whole and digests it as arguments.
#[inline(never)]
fn digest_of(text: &str) -> Result<[u8; 32], Error> {
    args_digest(Some(parse(text.as_bytes(), &LIMITS)?))
}

/// Parses a whole request and digests its `params.arguments`, as the transport does.
#[inline(never)]
fn request_digest(request: &str) -> Result<[u8; 32], Error> {
    let message: Value<'_> = parse(request.as_bytes(), &LIMITS)?;
    let arguments = message.get("params").and_then(|p| p.get("arguments"));
    args_digest(arguments)
}

/// Runs every vector and measures one request's digest.
pub fn check(report: &mut Report, timer: &mut Timer) {
    defmt::println!("-- argument digest (mrtr-json, RFC 8785 with number kinds)");
    let mut passed = 0usize;
    for (name, arguments, expected) in ARGS_DIGEST_VECTORS {
        let got = digest_of(arguments);
        let ok = match (expected, got) {
            (Expected::Digest(want), Ok(digest)) => digest == *want,
            (Expected::Refused(reason), Err(e)) => e.as_str() == *reason,
            _ => false,
        };
        passed += usize::from(ok);
        match got {
            Ok(_) => {
                check!(report, ok, "args digest vector {=str}: digest", name);
            }
            Err(e) => {
                check!(
                    report,
                    ok,
                    "args digest vector {=str}: refused {=str}",
                    name,
                    e.as_str()
                );
            }
        }
    }
    check!(
        report,
        passed == ARGS_DIGEST_VECTORS.len(),
        "{=usize}/{=usize} argument digest vectors agree with the host",
        passed,
        ARGS_DIGEST_VECTORS.len()
    );

    let ((digest, cost), depth) = stack::peak(|| timer.measure(|| request_digest(REQUEST)));
    check!(
        report,
        digest.is_ok(),
        "measured request parsed and its arguments digested"
    );
    match (depth, cost) {
        (Some(d), Some(c)) => defmt::println!(
            "   measure: op=args_digest request={=usize} stack={=usize} ticks={=u32} instructions={=u32}",
            REQUEST.len(),
            d,
            c.ticks,
            c.instructions
        ),
        _ => defmt::println!(
            "   measure: op=args_digest out of range (stack {}, cost {})",
            depth,
            cost
        ),
    }
}
