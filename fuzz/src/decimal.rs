//! Exactness of a JSON number through a double, decided with exact decimal arithmetic by
//! another route than the code under test (`mrtr_json::number_is_exact`, which compares the
//! literal with what `ryu_js` prints).
//!
//! A literal is exact when the canonical form of the double `x` it reads as (ECMA-262
//! `Number::toString`, as RFC 8785 prints numbers) denotes the value written. That form's
//! digits are the fewest, `k`, of any decimal that reads as `x`; among the `k`-digit decimals
//! that read as `x`, the one closest to `x`, and of two equally close, the even one. So a
//! non-zero written value `w` is exact when
//! * it reads as `x` (serde_json's correctly rounding parser, not `str::parse`),
//! * its significant digits are as few as the shortest that read as `x` (the standard
//!   library's shortest `{:e}` printing, which may break ties differently from ECMA-262 but
//!   has the same length),
//! * neither `k`-digit neighbour of `w` that also reads as `x` is closer to `x` (or as close
//!   with an even last digit where `w`'s is odd): decided by comparing `x` (its bits,
//!   `mantissa × 2^exponent`) with the midpoints in exact integer arithmetic.

use std::cmp::Ordering;

/// A decimal value `±0.d₁…dₖ × 10^n` with `d₁`, `dₖ` non-zero; zero is `(false, "", 0)`.
pub type Decimal = (bool, String, i128);

/// The exact value of the literal `mantissa` (digits with at most one `.`) times `10^exp`.
fn decimal(negative: bool, mantissa: &str, exp: i128) -> Decimal {
    let int_len = mantissa.find('.').unwrap_or(mantissa.len());
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let lead = digits.len() - digits.trim_start_matches('0').len();
    let significant = digits.trim_matches('0');
    if significant.is_empty() {
        return (false, String::new(), 0);
    }
    let n = int_len as i128 - lead as i128 + exp;
    (negative, significant.to_owned(), n)
}

/// Splits `±mantissa[eE]±exp` (a grammatical literal, or what `{:e}` prints); `None` when
/// the exponent does not fit an `i64`.
pub fn split(lit: &str) -> Option<Decimal> {
    let (negative, rest) = match lit.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, lit),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    Some(decimal(negative, mantissa, i128::from(exp)))
}

/// A non-negative integer, 32-bit limbs, least significant first.
struct Big(Vec<u32>);

impl Big {
    fn new(v: u64) -> Self {
        Self(vec![v as u32, (v >> 32) as u32])
    }

    fn mul(&mut self, f: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let p = u64::from(*limb) * u64::from(f) + carry;
            *limb = p as u32;
            carry = p >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    /// Times `2^e`.
    fn pow2(&mut self, mut e: u32) {
        while e > 0 {
            let s = e.min(31);
            self.mul(1 << s);
            e -= s;
        }
    }

    /// Times `10^e`.
    fn pow10(&mut self, mut e: u32) {
        while e > 0 {
            let s = e.min(9);
            self.mul(10u32.pow(s));
            e -= s;
        }
    }

    fn cmp(&self, other: &Self) -> Ordering {
        let trim = |v: &[u32]| v.len() - v.iter().rev().take_while(|&&l| l == 0).count();
        let (a, b) = (&self.0[..trim(&self.0)], &other.0[..trim(&other.0)]);
        a.len()
            .cmp(&b.len())
            .then_with(|| a.iter().rev().cmp(b.iter().rev()))
    }
}

/// Compares the finite positive double `x` with `0.digits × 10^n` (at most 19 digits)
/// exactly.
fn compare_exact(x: f64, digits: &str, n: i128) -> Ordering {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1 << 52) - 1);
    // x = mantissa × 2^e2; the decimal is d × 10^e10.
    let (mantissa, e2) = if field == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), field - 1075)
    };
    let Ok(d) = digits.parse::<u64>() else {
        return Ordering::Equal;
    };
    let e10 = i64::try_from(n).unwrap_or(i64::MAX) - digits.len() as i64;
    let (mut left, mut right) = (Big::new(mantissa), Big::new(d));
    let clamp = |e: i64| u32::try_from(e.max(0)).unwrap_or(u32::MAX);
    left.pow2(clamp(e2));
    right.pow2(clamp(-e2));
    right.pow10(clamp(e10));
    left.pow10(clamp(-e10));
    left.cmp(&right)
}

/// Normalizes digits that may start or end with zeros, keeping the value `0.digits × 10^n`.
fn normalize(digits: &str, n: i128) -> (String, i128) {
    let lead = digits.len() - digits.trim_start_matches('0').len();
    let d = digits.trim_matches('0');
    if d.is_empty() {
        (String::new(), 0)
    } else {
        (d.to_owned(), n - lead as i128)
    }
}

/// `digits` (a decimal integer's digits) plus or minus one.
fn step(digits: &str, up: bool) -> String {
    let mut d: Vec<u8> = digits.bytes().collect();
    let mut i = d.len();
    while i > 0 {
        i -= 1;
        match (up, d[i]) {
            (true, b'9') => d[i] = b'0',
            (false, b'0') => d[i] = b'9',
            (true, b) => {
                d[i] = b + 1;
                return String::from_utf8(d).unwrap_or_default();
            }
            (false, b) => {
                d[i] = b - 1;
                return String::from_utf8(d).unwrap_or_default();
            }
        }
    }
    // Carried out of the top (only upwards: `digits` is never all zeros).
    let mut out = String::from("1");
    out.push_str(std::str::from_utf8(&d).unwrap_or_default());
    out
}

/// The double `0.digits × 10^n` reads as, through serde_json.
fn read(digits: &str, n: i128) -> Option<f64> {
    serde_json::from_str::<f64>(&format!("0.{digits}e{n}")).ok()
}

/// Whether the JSON number literal `lit` (grammatical) keeps its value through a double, as
/// the module documentation defines it.
///
/// A documented rule of the code under test, kept here on purpose: an exponent that does not
/// fit an `i64` makes the literal not exact, even when its value is zero
/// (`0e99999999999999999999`). A non-zero value with such an exponent is out of a double's
/// range anyway.
pub fn exact(lit: &str) -> bool {
    let Some((_, digits, n)) = split(lit) else {
        return false;
    };
    if digits.is_empty() {
        // Zero reads as ±0, which prints as `0`: exact.
        return true;
    }
    let Ok(x) = serde_json::from_str::<f64>(lit) else {
        // serde_json refuses a literal beyond a double's range.
        return false;
    };
    if !x.is_finite() || x == 0.0 {
        return false;
    }
    let x = x.abs();
    // The shortest digits that read as x: as many as `w` has?
    let Some((_, shortest, _)) = split(&format!("{x:e}")) else {
        return false;
    };
    if shortest.len() != digits.len() {
        return false;
    }
    let k = digits.len() as i128;
    let odd = digits.bytes().last().is_some_and(|d| (d - b'0') % 2 == 1);
    // Which neighbour, if one, is closer: compare x with the midpoints.
    let beats = |neighbour: (String, i128), midpoint: (String, i128), above: bool| {
        let (nd, nn) = normalize(&neighbour.0, neighbour.1);
        // A neighbour with fewer digits (a carry, a trailing zero) cannot read as x: x's
        // shortest form has k digits.
        if nd.len() as i128 != k || read(&nd, nn) != Some(x) {
            return false;
        }
        let (md, mn) = normalize(&midpoint.0, midpoint.1);
        let side = compare_exact(x, &md, mn);
        let closer = if above {
            side == Ordering::Greater
        } else {
            side == Ordering::Less
        };
        closer || (side == Ordering::Equal && odd)
    };
    // Upward: w + 10^(n-k); midpoint digits `w5` at the same n.
    let up = step(&digits, true);
    let up_n = n + (up.len() as i128 - k);
    let upper = beats((up, up_n), (format!("{digits}5"), n), true);
    // Downward: w - 10^(n-k), or for w = 10^(n-1) the k-digit decimal below (9 at n-1);
    // midpoint `(w-1)5` at the same n, or `95` at n-1.
    let lower = if digits == "1" {
        beats(("9".into(), n - 1), ("95".into(), n - 1), false)
    } else {
        let down = step(&digits, false);
        let mid = format!("{down}5");
        beats((down, n), (mid, n), false)
    };
    !upper && !lower
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_comparison() {
        assert_eq!(compare_exact(0.5, "5", 0), Ordering::Equal);
        assert_eq!(compare_exact(0.1, "1", 0), Ordering::Greater);
        assert_eq!(compare_exact(0.1, "10000000000000001", 0), Ordering::Less);
        assert_eq!(compare_exact(5e-324, "5", -323), Ordering::Less);
        assert_eq!(compare_exact(1e300, "1", 301), Ordering::Greater);
        assert_eq!(
            compare_exact(1528222171763980.0 + 0.25, "152822217176398025", 16),
            Ordering::Equal
        );
    }

    #[test]
    fn exactness() {
        for ok in [
            "0",
            "-0",
            "1.50",
            "100e-2",
            "1e21",
            "0.1",
            "9007199254740992",
            "5e-324",
            "1.7976931348623157e308",
            // A tie of two 17-digit forms (…980.2 and …980.3, x = …980.25): the even one.
            "1528222171763980.2",
            "0.30000000000000004",
            "2.2250738585072014e-308",
            "123e-20",
        ] {
            assert!(exact(ok), "{ok}");
        }
        for lossy in [
            "1528222171763980.3",
            "9007199254740993",
            "3.141592653589793238",
            "1e400",
            "1e-400",
            "4.9e-324",
            "4.9406564584124654e-324",
            "0.01e-9223372036854775808",
            "0e99999999999999999999",
        ] {
            assert!(!exact(lossy), "{lossy}");
        }
    }
}
