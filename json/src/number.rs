//! Numbers: the JSON grammar, exactness through a double, ECMAScript printing.

use crate::{Error, Sink};

/// Where the JSON number starting at `at` ends (RFC 8259 grammar), or [`Error::NotJson`].
pub(crate) fn grammar(text: &[u8], at: usize) -> Result<usize, Error> {
    let digits = |mut at: usize| {
        while let Some(b'0'..=b'9') = text.get(at) {
            at += 1;
        }
        at
    };
    let mut at = at;
    if text.get(at) == Some(&b'-') {
        at += 1;
    }
    match text.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => at = digits(at + 1),
        _ => return Err(Error::NotJson),
    }
    if text.get(at) == Some(&b'.') {
        if !matches!(text.get(at + 1), Some(b'0'..=b'9')) {
            return Err(Error::NotJson);
        }
        at = digits(at + 1);
    }
    if let Some(b'e' | b'E') = text.get(at) {
        at += 1;
        if let Some(b'+' | b'-') = text.get(at) {
            at += 1;
        }
        if !matches!(text.get(at), Some(b'0'..=b'9')) {
            return Err(Error::NotJson);
        }
        at = digits(at);
    }
    Ok(at)
}

/// Whether a JSON number literal is an integer of at most 15 digits (always exact: 2^53 has
/// 16), the common case, read without a double.
fn short_integer(lit: &[u8]) -> bool {
    let digits = lit.strip_prefix(b"-").unwrap_or(lit);
    !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit)
}

/// Whether the JSON number literal `literal` keeps its value through a double: the canonical
/// (ECMAScript) form of the double it reads as denotes exactly the value written. `0.1`,
/// `1.50`, `1e21`, `-0` and `9007199254740992` are exact; `9007199254740993`,
/// `3.141592653589793238`, `1e400` and `1e-400` are not. Anything that is not a whole JSON
/// number (RFC 8259: no `+`, no leading `.`, no `NaN`) is not exact either.
///
/// The same test as `mrtr_std::ijson::number_is_exact`, with checked arithmetic on the
/// exponent: an exponent that does not fit an `i64` (or makes the decimal exponent
/// overflow, as in `0.01e-9223372036854775808`) is not exact.
///
/// ```
/// use mrtr_json::number_is_exact;
///
/// assert!(number_is_exact(b"9007199254740992"));
/// assert!(number_is_exact(b"0.1"));
/// assert!(!number_is_exact(b"9007199254740993"));
/// assert!(!number_is_exact(b"1e400"));
/// assert!(!number_is_exact(b"0.01e-9223372036854775808"));
/// ```
pub fn number_is_exact(literal: &[u8]) -> bool {
    if grammar(literal, 0) != Ok(literal.len()) {
        return false;
    }
    exact(literal)
}

/// [`number_is_exact`] of a literal already known to follow the grammar.
pub(crate) fn exact(lit: &[u8]) -> bool {
    if short_integer(lit) {
        return true;
    }
    if let Some(d) = Decimal::of(lit)
        && d.is_short()
    {
        return true;
    }
    exact_through_f64(lit)
}

/// [`exact`] the slow way: read the literal as a double, print it as ECMAScript does and
/// compare the values.
fn exact_through_f64(lit: &[u8]) -> bool {
    let Some(x) = to_f64(lit) else {
        return false;
    };
    if !x.is_finite() {
        return false;
    }
    let mut buf = ryu_js::Buffer::new();
    let printed = if x == 0.0 { "0" } else { buf.format_finite(x) };
    match (Decimal::of(lit), Decimal::of(printed.as_bytes())) {
        (Some(a), Some(b)) => a.same(&b),
        _ => false,
    }
}

/// The double a literal of the JSON grammar reads as (nearest, ties to even).
pub(crate) fn to_f64(lit: &[u8]) -> Option<f64> {
    core::str::from_utf8(lit).ok()?.parse::<f64>().ok()
}

/// The most significant digits [`Decimal::is_short`] accepts (C's `DBL_DIG`).
const SHORT_DIGITS: usize = 15;
/// The range of `n` [`Decimal::is_short`] accepts: `10^-301 <= |v| < 10^300`, far from
/// the subnormals (below `2.2·10^-308`) and from overflow (above `1.8·10^308`).
const SHORT_MIN_N: i64 = -300;
/// See [`SHORT_MIN_N`].
const SHORT_MAX_N: i64 = 300;

/// A decimal literal's value: `sign 0.d₁d₂…dₖ × 10^n` with `d₁` and `dₖ` non-zero (zero has
/// no digits, `n` = 0 and no sign).
struct Decimal<'a> {
    negative: bool,
    /// The literal's mantissa (integer part, `.`, fraction).
    mantissa: &'a [u8],
    /// Leading zero digits of the mantissa to skip.
    lead: usize,
    /// Significant digits.
    count: usize,
    n: i64,
}

impl<'a> Decimal<'a> {
    /// `None` when the exponent does not fit an `i64`, or `n` would overflow.
    fn of(lit: &'a [u8]) -> Option<Self> {
        let (negative, rest) = match lit.strip_prefix(b"-") {
            Some(rest) => (true, rest),
            None => (false, lit),
        };
        let (mantissa, exp) = match rest.iter().position(|&b| b == b'e' || b == b'E') {
            Some(i) => (rest.get(..i)?, parse_i64(rest.get(i + 1..)?)?),
            None => (rest, 0),
        };
        let int_len = mantissa
            .iter()
            .position(|&b| b == b'.')
            .unwrap_or(mantissa.len());
        let digits = || mantissa.iter().filter(|&&b| b != b'.');
        let total = digits().count();
        let lead = digits().take_while(|&&b| b == b'0').count();
        if lead == total {
            return Some(Self {
                negative: false,
                mantissa,
                lead: 0,
                count: 0,
                n: 0,
            });
        }
        let trail = digits().rev().take_while(|&&b| b == b'0').count();
        let n = i64::try_from(int_len)
            .ok()?
            .checked_sub(i64::try_from(lead).ok()?)?
            .checked_add(exp)?;
        Some(Self {
            negative,
            mantissa,
            lead,
            count: total - lead - trail,
            n,
        })
    }

    /// Whether the value has at most [`SHORT_DIGITS`] significant digits and a magnitude
    /// well inside the normal doubles (zero included): then it is exact through a double, and
    /// the double prints back as these digits.
    ///
    /// Why: such a value `v` rounds to a normal double `x` whose rounding interval (the
    /// values that read as `x`) is at most one ulp wide, at most `2^-52·x`; two distinct
    /// decimals of at most 15 significant digits are further apart than that (at least
    /// `10^-15` of the larger, relatively), so `v` is the only one in the interval. The
    /// shortest digits that read as `x` (what ECMAScript prints) lie in it and are at most as
    /// many as `v`'s: they are `v`'s digits. This is the guarantee behind C's `DBL_DIG` = 15.
    fn is_short(&self) -> bool {
        self.count == 0
            || (self.count <= SHORT_DIGITS && (SHORT_MIN_N..=SHORT_MAX_N).contains(&self.n))
    }

    /// Writes the value as ECMAScript's `Number::toString` prints the double it reads as,
    /// for a value [`Decimal::is_short`] accepts: its own significant digits, placed as
    /// ECMA-262 (Number::toString) places the shortest digits `d₁…dₖ` of `0.d₁…dₖ × 10^n`.
    fn write_short(&self, out: &mut impl Sink) {
        if self.count == 0 {
            out.write(b"0");
            return;
        }
        // At most 15 digits and an exponent of at most 3 digits: 15 + 4 + 21 zeros or
        // `0.` and 5 zeros, well within 48 bytes.
        let mut buf = [0u8; 48];
        let mut len = 0usize;
        let mut push = |b: u8| {
            if let Some(slot) = buf.get_mut(len) {
                *slot = b;
                len += 1;
            }
        };
        if self.negative {
            push(b'-');
        }
        let k = i64::try_from(self.count).unwrap_or(i64::MAX);
        let n = self.n;
        if (k..=21).contains(&n) {
            // An integer: the digits, then n - k zeros.
            self.digits().for_each(|&d| push(d));
            (k..n).for_each(|_| push(b'0'));
        } else if (1..=21).contains(&n) {
            // The point after the first n digits.
            for (i, &d) in (0..).zip(self.digits()) {
                if i == n {
                    push(b'.');
                }
                push(d);
            }
        } else if (-5..=0).contains(&n) {
            push(b'0');
            push(b'.');
            (n..0).for_each(|_| push(b'0'));
            self.digits().for_each(|&d| push(d));
        } else {
            // Exponential: d₁[.d₂…dₖ]e±(n-1).
            for (i, &d) in self.digits().enumerate() {
                if i == 1 {
                    push(b'.');
                }
                push(d);
            }
            push(b'e');
            let e = n - 1;
            push(if e < 0 { b'-' } else { b'+' });
            let e = e.unsigned_abs();
            let mut started = false;
            for scale in [100, 10, 1] {
                // A digit: the quotient is below 10 (|e| < 1000).
                let digit = (e / scale % 10) as u8;
                if started || digit != 0 || scale == 1 {
                    started = true;
                    push(b'0' + digit);
                }
            }
        }
        out.write(buf.get(..len).unwrap_or_default());
    }

    fn digits(&self) -> impl Iterator<Item = &u8> {
        self.mantissa
            .iter()
            .filter(|&&b| b != b'.')
            .skip(self.lead)
            .take(self.count)
    }

    fn same(&self, other: &Self) -> bool {
        self.negative == other.negative
            && self.n == other.n
            && self.count == other.count
            && self.digits().eq(other.digits())
    }
}

/// An exponent as Rust's `i64::from_str` reads it (optional sign, at least one digit), with
/// checked arithmetic: `None` when it does not fit.
fn parse_i64(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let d = i64::from(d - b'0');
        value = value.checked_mul(10)?;
        value = if negative {
            value.checked_sub(d)?
        } else {
            value.checked_add(d)?
        };
    }
    Some(value)
}

/// Writes `x` as ECMAScript's `Number::toString` prints it, as RFC 8785 (§3.2.2.3) requires:
/// `1e+21`, `0.000001`, `1e-7`, `4.5`, `-0` as `0`. A non-finite `x` has no canonical form:
/// [`Error::LossyNumber`], and nothing is written.
///
/// ```
/// use mrtr_json::{Writer, write_number};
///
/// let mut buf = [0u8; 32];
/// let mut w = Writer::new(&mut buf);
/// write_number(1e21, &mut w)?;
/// w.raw(b" ");
/// write_number(-0.0, &mut w)?;
/// w.raw(b" ");
/// write_number(333333333.33333329, &mut w)?;
/// assert_eq!(w.as_bytes(), b"1e+21 0 333333333.3333333");
/// assert!(write_number(f64::NAN, &mut w).is_err());
/// # Ok::<(), mrtr_json::Error>(())
/// ```
pub fn write_number(x: f64, out: &mut impl Sink) -> Result<(), Error> {
    if !x.is_finite() {
        return Err(Error::LossyNumber);
    }
    if x == 0.0 {
        out.write(b"0");
        return Ok(());
    }
    let mut buf = ryu_js::Buffer::new();
    out.write(buf.format_finite(x).as_bytes());
    Ok(())
}

/// Writes the canonical form of a validated (grammatical, exact) number literal.
pub(crate) fn write_literal(lit: &[u8], out: &mut impl Sink) -> Result<(), Error> {
    if short_integer(lit) {
        // No leading zeros in the grammar: the digits are canonical, but for `-0`.
        if lit == b"-0" {
            out.write(b"0");
        } else {
            out.write(lit);
        }
        return Ok(());
    }
    if let Some(d) = Decimal::of(lit)
        && d.is_short()
    {
        d.write_short(out);
        return Ok(());
    }
    write_number(to_f64(lit).ok_or(Error::NotJson)?, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactness() {
        for ok in [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "1",
            "1.0",
            "1.50",
            "100e-2",
            "1E2",
            "1e21",
            "0.1",
            "9007199254740992",
            "-9007199254740992",
            "1e+23",
            "5e-324",
            "1.7976931348623157e308",
            "295147905179352830000",
            "0e99999",
            "123456789012345",
            "0.000001",
        ] {
            assert!(number_is_exact(ok.as_bytes()), "{ok}");
        }
        for lossy in [
            "9007199254740993",
            "3.141592653589793238",
            "1e400",
            "-1e400",
            "1e-400",
            "333333333.33333329",
            "0.01e-9223372036854775808",
            "1e9223372036854775808",
            "0e99999999999999999999",
            "1e-9223372036854775808",
            "10e9223372036854775807",
            "+1",
            ".5",
            "1.",
            "01",
            "",
            "-",
            "1e",
            "NaN",
            "inf",
        ] {
            assert!(!number_is_exact(lossy.as_bytes()), "{lossy}");
        }
    }

    #[test]
    fn exponents_at_the_edges_of_i64() {
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"+00000000000000000000001"), Some(1));
        assert_eq!(parse_i64(b"+"), None);
        // n = int_len - lead + exp overflows: refused, no panic.
        assert!(Decimal::of(b"0.01e-9223372036854775808").is_none());
        assert!(Decimal::of(b"100e9223372036854775807").is_none());
    }
}

#[cfg(test)]
mod fast_paths;
