//! mrtr-json (no_std, the gateway's digest) against mrtr-std (the host's): on generated raw
//! texts, the digest of the text read in place by `mrtr_json::parse` + `args_digest` equals
//! `mrtr_std::jcs::args_digest` of `serde_json::from_slice` of the same text after
//! `mrtr_std::ijson::check`, and both refuse the same texts for the same reason.
//!
//! The generators cover short and `\uXXXX` escapes (either case of hex), surrogate pairs,
//! lone surrogates, member names whose UTF-16 order is not their UTF-8 order (U+E000..U+FFFF
//! against supplementary characters), duplicates spelled differently, integers around 2^53,
//! over-precise decimals, exponents (up to absurd ones), negative zero, integers at the ends
//! of the 64-bit range (where a number's kind changes), doubles printed every way, nesting
//! around the depth limit of 64, whitespace, and broken texts.

use mrtr_json::{Limits, args_digest, parse};
use mrtr_std::{ijson, jcs};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// How many documents [`host_and_gateway_agree`] generates.
const CASES: u32 = 100_000;

/// [`CASES`], or `JSON_AGREE_CASES` from the environment (for a longer run).
fn cases() -> u32 {
    std::env::var("JSON_AGREE_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CASES)
}

/// The host's outcome: the I-JSON check of the raw text, then the digest of what serde_json
/// reads.
fn host(text: &[u8]) -> Result<[u8; 32], String> {
    if let Err(v) = ijson::check(text) {
        return Err(v.kind().as_str().to_owned());
    }
    // serde_json stops at 128 levels as well (counted its own way): too deep either way.
    let value: serde_json::Value = serde_json::from_slice(text).map_err(|e| {
        if e.to_string().contains("recursion limit") {
            "too_deep".to_owned()
        } else {
            format!("serde_json: {e}")
        }
    })?;
    jcs::args_digest(Some(&value)).map_err(|e| match e {
        jcs::JcsError::TooDeep => "too_deep".to_owned(),
        jcs::JcsError::LossyNumber | jcs::JcsError::NonFiniteNumber => "lossy_number".to_owned(),
        other => format!("{other:?}"),
    })
}

/// The gateway's outcome: the whole text checked as the host's check does (128 levels), the
/// digest of the value (64 levels within it).
fn gateway(text: &[u8]) -> Result<[u8; 32], String> {
    let limits = Limits {
        max_depth: 128,
        ..Limits::DEFAULT
    };
    let value = parse(text, &limits).map_err(|e| e.as_str().to_owned())?;
    args_digest(Some(value)).map_err(|e| e.as_str().to_owned())
}

/// A small, fast generator driven by proptest's seed: proptest's own combinators rebuild
/// and draw through boxed strategies for every node, about 1 ms a document in a debug build,
/// too slow for 100,000 documents; this draws each choice from an xorshift generator.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// `true` one time in `n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    fn ws(&mut self) -> &'static str {
        if self.one_in(3) {
            self.pick(&[" ", "\n  ", "\t", "\r\n"])
        } else {
            ""
        }
    }

    /// One piece of a string's raw text.
    fn piece(&mut self, out: &mut String) {
        const PLAIN: &[char] = &[
            'a',
            'b',
            'z',
            '1',
            'é',
            '€',
            '/',
            '\u{7f}',
            '\u{80}',
            '\u{2028}',
            '\u{d7ff}',
            '\u{e000}',
            '\u{fb33}',
            '\u{ffff}',
            '\u{10000}',
            '\u{1f600}',
            '\u{10ffff}',
            '"',
            '\\',
            '\u{1}',
            '\n',
        ];
        const SHORT: &[&str] = &["\\n", "\\t", "\\r", "\\b", "\\f", "\\/", "\\\"", "\\\\"];
        const BROKEN: &[&str] = &[
            "\\udc00",
            "\\ud800",
            "\\ud800\\u0041",
            "\\ud800\\ud800",
            "\\ud83dx",
            "\\x",
            "\\u12g4",
            "\u{1}",
            "\t",
        ];
        let c = match self.below(64) {
            0..=29 => self.pick(PLAIN),
            30..=39 => char::from_u32(self.below(0x11_0000) as u32).unwrap_or('?'),
            40..=47 => return out.push_str(self.pick(SHORT)),
            48..=55 => {
                let u = match self.below(3) {
                    0 => self.pick(&[0x61, 0xe9, 0x1f, 0x0, 0x22, 0x5c, 0xe000, 0xfb33, 0xffff]),
                    1 => self.below(0xd800),
                    _ => 0xe000 + self.below(0x2000),
                };
                if self.one_in(2) {
                    out.push_str(&format!("\\u{u:04X}"));
                } else {
                    out.push_str(&format!("\\u{u:04x}"));
                }
                return;
            }
            56..=62 => {
                let c = char::from_u32(0x10000 + self.below(0x10_0000) as u32).unwrap_or('😀');
                let mut units = [0u16; 2];
                c.encode_utf16(&mut units);
                out.push_str(&format!("\\u{:04x}\\u{:04X}", units[0], units[1]));
                return;
            }
            _ => return out.push_str(self.pick(BROKEN)),
        };
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }

    fn string(&mut self, out: &mut String) {
        out.push('"');
        for _ in 0..self.below(6) {
            self.piece(out);
        }
        out.push('"');
    }

    /// Member names from a small alphabet (so that duplicates happen, spelled differently
    /// too), with characters whose UTF-16 order is not their code point order.
    fn name(&mut self, out: &mut String) {
        const UNITS: &[&str] = &[
            "a",
            "\\u0061",
            "b",
            "é",
            "\\u00e9",
            "\u{e000}",
            "\\ue000",
            "\u{ffff}",
            "\u{1f600}",
            "\\ud83d\\ude00",
            "\u{10000}",
            "\\n",
            "\\u000a",
        ];
        if self.one_in(5) {
            return self.string(out);
        }
        out.push('"');
        for _ in 0..self.below(3) {
            out.push_str(self.pick(UNITS));
        }
        out.push('"');
    }

    fn number(&mut self, out: &mut String) {
        const TWO53: i128 = 1 << 53;
        const ODD: &[&str] = &[
            "-0",
            "-0.0",
            "0e5",
            "0.01e-9223372036854775808",
            "1e400",
            "-1e400",
            "1e-400",
            "5e-324",
            "4.9e-324",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            "333333333.33333329",
            "333333333.3333333",
            "1424953923781206.2",
            "1E30",
            "100e-2",
            // Around the 64-bit integer range, where serde_json's integers end and the
            // binding form's kinds must end with them.
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "-9223372036854776000",
            "10000000000000000000",
            "18446744073709551615",
            "18446744073709552000",
            "100000000000000000000",
            "1.0",
            "1e2",
            "01",
            "1.",
            "-",
            "+1",
            "1e",
            "2.e3",
        ];
        let text = match self.below(24) {
            0..=3 => (self.next() as i32).to_string(),
            4..=6 => {
                let v = TWO53 + self.below(80) as i128 - 40;
                if self.one_in(2) {
                    format!("-{v}")
                } else {
                    v.to_string()
                }
            }
            7 => self.next().to_string(),
            8 => (self.next() as i64).to_string(),
            9..=12 => {
                // Any double, printed as Rust prints it (shortest, exact) or otherwise.
                let x = f64::from_bits(self.next());
                if !x.is_finite() {
                    "1.5".to_owned()
                } else {
                    match self.below(4) {
                        0 => format!("{x}"),
                        1 => format!("{x:e}"),
                        2 => format!("{x:E}"),
                        _ => jcs::format_number(x),
                    }
                }
            }
            13..=21 => {
                // Decimal digits and exponents: exact or over-precise, in range or not.
                let mut s = String::new();
                if self.one_in(2) {
                    s.push('-');
                }
                let int = match self.below(4) {
                    0 => 0,
                    1 => 1 + self.below(9),
                    2 => self.next() >> self.below(64),
                    _ => (1 << 53) - 3 + self.below(6),
                };
                s.push_str(&int.to_string());
                if int != 0 {
                    s.push_str(&"0".repeat(self.below(4) as usize));
                }
                if self.one_in(2) {
                    let f = format!("{:020}", self.next());
                    s.push('.');
                    s.push_str(&f[..1 + self.below(20) as usize]);
                }
                if self.one_in(2) {
                    s.push_str(self.pick(&["e", "E", "e+", "E-", "e-"]));
                    let e = match self.below(5) {
                        0 => self.below(400).to_string(),
                        1 => "400".to_owned(),
                        2 => i64::MAX.to_string(),
                        3 => "9223372036854775808".to_owned(),
                        _ => format!("00{}", self.below(10)),
                    };
                    s.push_str(&e);
                }
                s
            }
            _ => self.pick(ODD).to_owned(),
        };
        out.push_str(&text);
    }

    fn leaf(&mut self, out: &mut String) {
        match self.below(11) {
            0 => out.push_str("null"),
            1 => out.push_str("true"),
            2 => out.push_str("false"),
            3..=6 => self.number(out),
            _ => self.string(out),
        }
    }

    /// A document of up to 24 steps: open a container, a leaf, or close one.
    fn value(&mut self, out: &mut String) {
        let top = self.one_in(2);
        out.push(if top { '{' } else { '[' });
        // Each open container: object?, and whether it has a member or item yet.
        let mut open = vec![(top, false)];
        for _ in 0..self.below(25) {
            let Some(&(object, started)) = open.last() else {
                break;
            };
            let step = self.below(9);
            if step < 2 {
                out.push_str(self.ws());
                out.push(if object { '}' } else { ']' });
                open.pop();
                continue;
            }
            if started {
                out.push(',');
            }
            if let Some(last) = open.last_mut() {
                last.1 = true;
            }
            out.push_str(self.ws());
            if object {
                self.name(out);
                out.push_str(self.ws());
                out.push(':');
                out.push_str(self.ws());
            }
            if step < 4 {
                let o = self.one_in(2);
                out.push(if o { '{' } else { '[' });
                open.push((o, false));
            } else {
                self.leaf(out);
                out.push_str(self.ws());
            }
        }
        while let Some((object, _)) = open.pop() {
            out.push(if object { '}' } else { ']' });
        }
    }

    /// A value nested around the digest's limit of 64 or the check's of 128 containers deep,
    /// with something after it.
    fn deep(&mut self, out: &mut String) {
        let depth = if self.one_in(2) {
            60 + self.below(10)
        } else {
            124 + self.below(8)
        };
        let bits = self.next();
        let object = |i: u64| bits >> (i % 64) & 1 == 1;
        out.push('[');
        for i in 0..depth {
            out.push_str(if object(i) { "{\"k\":" } else { "[" });
        }
        self.leaf(out);
        for i in (0..depth).rev() {
            out.push(if object(i) { '}' } else { ']' });
        }
        out.push(',');
        self.leaf(out);
        out.push(']');
    }

    /// A text: a value with whitespace around it, now and then broken (cut short, a byte
    /// changed or inserted, two values).
    fn text(&mut self) -> Vec<u8> {
        let mut doc = String::new();
        if self.one_in(20) {
            self.deep(&mut doc);
        } else {
            doc.push_str(self.ws());
            self.value(&mut doc);
            doc.push_str(self.ws());
        }
        let mut bytes = doc.into_bytes();
        let i = self.below(bytes.len() as u64 + 1) as usize;
        match self.below(40) {
            0 => bytes.truncate(i),
            1 if i < bytes.len() => bytes[i] = self.next() as u8,
            2 => bytes.insert(i, self.next() as u8),
            3 => bytes.extend_from_slice(b" 1"),
            _ => {}
        }
        bytes
    }
}

fn text() -> impl Strategy<Value = Vec<u8>> {
    any::<u64>().prop_map(|seed| Gen(seed | 1).text())
}

#[test]
fn host_and_gateway_agree() {
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        rng_algorithm: proptest::test_runner::RngAlgorithm::XorShift,
        ..Config::default()
    });
    let accepted = std::cell::Cell::new(0u32);
    let refused = std::cell::RefCell::new(std::collections::BTreeMap::<String, u32>::new());
    let result = runner.run(&text(), |bytes| {
        if std::env::var_os("JSON_AGREE_GEN_ONLY").is_some() {
            accepted.set(accepted.get() + 1);
            return Ok(());
        }
        let want = host(&bytes);
        let got = gateway(&bytes);
        prop_assert_eq!(&got, &want, "text: {:?}", String::from_utf8_lossy(&bytes));
        match want {
            Ok(_) => accepted.set(accepted.get() + 1),
            Err(reason) => *refused.borrow_mut().entry(reason).or_default() += 1,
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (accepted, refused) = (accepted.get(), refused.into_inner());
    let cases = cases();
    eprintln!("{cases} texts: {accepted} accepted, refused: {refused:?}");
    // The generators reach every outcome, and mostly produce documents that digest.
    assert!(accepted > cases / 2, "{accepted}");
    for reason in [
        "not_json",
        "duplicate_name",
        "lossy_number",
        "lone_surrogate",
        "too_deep",
    ] {
        assert!(
            refused.get(reason).is_some_and(|&n| n >= 20),
            "{reason}: {refused:?}"
        );
    }
}

#[test]
fn numbers_print_as_the_former_host_formatter_printed_them() {
    // The host's own ECMAScript formatter before it used mrtr-json's: the reference.
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut checked = 0;
    for i in 0..200_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Random bits, and doubles near powers of ten and integers (ties live there).
        let v = match i % 4 {
            0 => f64::from_bits(x),
            1 => (x % 1_000_000_000_000_000) as f64 / 4.0,
            2 => 10f64.powi((x % 600) as i32 - 300) * (1.0 + (x >> 40) as f64 / 16.0),
            _ => f64::from_bits(x & 0x800F_FFFF_FFFF_FFFF | ((x >> 52) % 100 + 1000) << 52),
        };
        if !v.is_finite() {
            continue;
        }
        assert_eq!(
            jcs::format_number(v),
            reference::format_es(v),
            "{:016x}",
            v.to_bits()
        );
        checked += 1;
    }
    assert!(checked > 150_000);
}

/// mrtr-std's formatter as it was before it used mrtr-json's `write_number` (frozen here as
/// the reference).
mod reference {
    /// ECMAScript `Number::toString(x)` for a finite double (ECMA-262, Number::toString).
    pub fn format_es(x: f64) -> String {
        if x == 0.0 {
            return "0".to_owned(); // also -0
        }
        let sign = if x < 0.0 { "-" } else { "" };
        let (digits, n) = shortest_digits(x.abs());
        let k = digits.len() as i32;
        let body = if k <= n && n <= 21 {
            format!("{digits}{}", "0".repeat((n - k) as usize))
        } else if 0 < n && n <= 21 {
            let (int, frac) = digits.split_at(n as usize);
            format!("{int}.{frac}")
        } else if -6 < n && n <= 0 {
            format!("0.{}{digits}", "0".repeat((-n) as usize))
        } else {
            let e = n - 1;
            let esign = if e < 0 { '-' } else { '+' };
            let (first, rest) = digits.split_at(1);
            if rest.is_empty() {
                format!("{first}e{esign}{}", e.abs())
            } else {
                format!("{first}.{rest}e{esign}{}", e.abs())
            }
        };
        format!("{sign}{body}")
    }

    /// Splits Rust's `{:e}` output "d.ddde-7" into its digits (no trailing zeros) and `n` such
    /// that the value is `0.digits × 10^n`.
    fn split_sci(sci: &str) -> (String, i32) {
        let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
        let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        while digits.len() > 1 && digits.ends_with('0') {
            digits.pop();
        }
        (digits, exp.parse::<i32>().unwrap_or(0) + 1)
    }

    /// The digits `s` and exponent `n` ECMAScript prints for a positive finite `x`: the fewest
    /// digits that read back as `x`; of two such, the closer to `x`; of two equally close, the
    /// one with an even last digit.
    fn shortest_digits(x: f64) -> (String, i32) {
        // Rust's `{:e}` gives the fewest digits that read back as `x`, and the closer of two.
        let (digits, n) = split_sci(&format!("{x:e}"));
        // Two candidates are equally close only when `x` is exactly their midpoint: its exact
        // decimal expansion is the shorter digits plus a final 5. (The cheap 41-digit check
        // filters; the full expansion, at most 767 significant digits, confirms.)
        let k = digits.len();
        let (near, near_n) = split_sci(&format!("{x:.40e}"));
        if near.len() != k + 1 || !near.ends_with('5') || near_n != n {
            return (digits, n);
        }
        let (exact, _) = split_sci(&format!("{x:.800e}"));
        if exact != near {
            return (digits, n);
        }
        let lower = exact[..k].to_owned();
        let Some(upper) = increment(&lower) else {
            return (digits, n);
        };
        let reads_back = |d: &str| format!("0.{d}e{n}").parse::<f64>().ok() == Some(x);
        let even = |d: &str| {
            d.bytes()
                .last()
                .is_some_and(|b| (b - b'0').is_multiple_of(2))
        };
        let (lower_ok, upper_ok) = (reads_back(&lower), reads_back(&upper));
        let mut pick = match (lower_ok, upper_ok) {
            (true, true) if even(&lower) => lower,
            (true, true) => upper,
            _ => return (digits, n),
        };
        while pick.len() > 1 && pick.ends_with('0') {
            pick.pop();
        }
        (pick, n)
    }

    /// Adds one to the last digit of a decimal digit string, `None` if that adds a digit.
    fn increment(digits: &str) -> Option<String> {
        let mut bytes = digits.as_bytes().to_vec();
        for b in bytes.iter_mut().rev() {
            if *b == b'9' {
                *b = b'0';
            } else {
                *b += 1;
                return String::from_utf8(bytes).ok();
            }
        }
        None
    }
}
