//! Each fast path of `number.rs` against the slow path (through a double) over many
//! literals.

use super::*;
use crate::Writer;

/// A small deterministic generator (xorshift64*), so the test needs no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> usize {
        usize::try_from(self.next() % n).unwrap()
    }
}

/// Appends `count` random digits (the first one non-zero when `lead` is false).
fn digits(rng: &mut Rng, out: &mut [u8; 128], len: &mut usize, count: usize, lead: bool) {
    for i in 0..count {
        let d = if i == 0 && !lead {
            1 + rng.below(9)
        } else {
            rng.below(10)
        };
        out[*len] = b'0' + u8::try_from(d).unwrap();
        *len += 1;
    }
}

/// A grammatical literal: sign, integer part (0 or up to 20 digits), optional fraction
/// (up to 25 digits, often with runs of zeros), optional exponent (up to ±330, or huge).
fn literal(rng: &mut Rng, out: &mut [u8; 128]) -> usize {
    let mut len = 0;
    let put = |out: &mut [u8; 128], len: &mut usize, b: &[u8]| {
        out[*len..*len + b.len()].copy_from_slice(b);
        *len += b.len();
    };
    if rng.below(3) == 0 {
        put(out, &mut len, b"-");
    }
    if rng.below(4) == 0 {
        put(out, &mut len, b"0");
    } else {
        let n = 1 + rng.below(20);
        digits(rng, out, &mut len, n, false);
    }
    if rng.below(3) != 0 {
        put(out, &mut len, b".");
        let zeros = if rng.below(3) == 0 { rng.below(12) } else { 0 };
        (0..zeros).for_each(|_| put(out, &mut len, b"0"));
        let n = 1 + rng.below(18);
        digits(rng, out, &mut len, n, true);
        if rng.below(4) == 0 {
            let zeros = rng.below(8);
            (0..zeros).for_each(|_| put(out, &mut len, b"0"));
        }
    }
    if rng.below(3) == 0 {
        put(out, &mut len, [b"e", b"E"][rng.below(2)]);
        put(out, &mut len, [&b""[..], b"+", b"-"][rng.below(3)]);
        let e = match rng.below(8) {
            0 => 290 + rng.below(40),
            1 => 1000 + rng.below(1 << 20),
            _ => rng.below(40),
        };
        let mut tmp = [0u8; 24];
        let mut w = Writer::new(&mut tmp);
        if rng.below(5) == 0 {
            w.raw(b"00");
        }
        w.u64(u64::try_from(e).unwrap());
        put(out, &mut len, w.as_bytes());
    }
    len
}

fn slow_write(lit: &[u8]) -> ([u8; 64], usize) {
    let mut buf = [0u8; 64];
    let mut w = Writer::new(&mut buf);
    write_number(to_f64(lit).unwrap(), &mut w).unwrap();
    let len = w.len();
    (buf, len)
}

fn check(lit: &[u8], taken: &mut [usize; 3]) {
    assert_eq!(grammar(lit, 0), Ok(lit.len()), "{lit:?}");
    let text = core::str::from_utf8(lit).unwrap();
    let path = if short_integer(lit) {
        0
    } else if Decimal::of(lit).is_some_and(|d| d.is_short()) {
        1
    } else {
        2
    };
    taken[path] += 1;
    let slow = exact_through_f64(lit);
    assert_eq!(exact(lit), slow, "exactness of {text}");
    if path < 2 {
        assert!(slow, "a fast path took the inexact {text}");
    }
    if slow {
        let mut buf = [0u8; 64];
        let mut w = Writer::new(&mut buf);
        write_literal(lit, &mut w).unwrap();
        let (want, len) = slow_write(lit);
        assert_eq!(w.as_bytes(), &want[..len], "canonical form of {text}");
    }
}

#[test]
fn fast_paths_agree_with_the_slow_path() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut taken = [0usize; 3];
    let mut buf = [0u8; 128];
    for _ in 0..300_000 {
        let len = literal(&mut rng, &mut buf);
        check(&buf[..len], &mut taken);
    }
    // Each path is exercised many times.
    assert!(taken.iter().all(|&n| n > 10_000), "{taken:?}");
}

#[test]
fn fast_path_edges() {
    let mut taken = [0usize; 3];
    for lit in [
        "0",
        "-0",
        "0.0",
        "-0.0",
        "0.000",
        "-0e5",
        "0e-999",
        "1",
        "-1",
        "21.5",
        "-21.50",
        "999999999999999",
        "-999999999999999",
        "99999999999999.9",
        "0.999999999999999",
        "1000000000000000",
        "9007199254740992",
        "9007199254740993",
        "0.1",
        "0.000001",
        "0.0000001",
        "0.00000123",
        "-0.0000012345",
        "1e21",
        "1e20",
        "123456789012345e6",
        "1.5e-7",
        "1.5e-6",
        "12e-7",
        "1e300",
        "9.99999999999999e299",
        "1e-300",
        "1e-301",
        "9.99999999999999e-301",
        "1e308",
        "1.7976931348623157e308",
        "5e-324",
        "1e-400",
        "1e400",
        "0.30000000000000004",
        "100000000000000000000",
        "100000000000000000000.0",
        "1000000000000000000000",
        "123.456e5",
        "0.5e1",
        "4.35",
        "2.675",
        "1.005",
        "1.015",
        "8.41",
        "0.07",
        "1.1e1",
        "33333333.33333333",
    ] {
        check(lit.as_bytes(), &mut taken);
    }
}
