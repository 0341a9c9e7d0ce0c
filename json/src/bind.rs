//! The argument binding form of numbers: RFC 8785's, except that a number keeps the kind a
//! typed decoder gives it (integer or float).
//!
//! RFC 8785 writes `1`, `1.0` and `1e0` alike (`1`), and `-0` as `0`. A handler reading its
//! arguments with serde_json (`as_u64`, a `u32` field) or Python's `json` sees an integer for
//! `1` and a float (or a refusal) for `1.0`: the argument digest must tell them apart. So in
//! the binding form:
//!
//! * an **integer literal** (no `.`, `e` or `E`) other than `-0`, within the 64-bit integer
//!   range (`-2^63 ..= 2^64 - 1`, where serde_json reads it as an integer), is written as RFC
//!   8785 writes it: `1`, `100`, `0`, `9007199254740992`;
//! * any **other number** is a float: written as RFC 8785 writes it, then with `.0` appended
//!   when that text holds neither `.` nor `e`; a negative zero is `-0.0`. `1.0`→`1.0`,
//!   `1e2`→`100.0`, `-0`→`-0.0`, `1.5`→`1.5`, `1e21`→`1e+21`,
//!   `100000000000000000000`→`100000000000000000000.0` (beyond 2^64 - 1: serde_json reads it
//!   as a double).

use crate::{Error, Sink, number};

/// Whether a grammatical number literal binds as an integer: no fraction, no exponent, not
/// `-0`, and within `-2^63 ..= 2^64 - 1` (serde_json's `i64` and `u64`).
pub(crate) fn is_integer(lit: &[u8]) -> bool {
    if lit.iter().any(|&b| matches!(b, b'.' | b'e' | b'E')) {
        return false;
    }
    let (negative, digits) = match lit.strip_prefix(b"-") {
        Some(digits) => (true, digits),
        None => (false, lit),
    };
    // The grammar allows no leading zeros: the length orders the magnitudes.
    let limit: &[u8] = if negative {
        b"9223372036854775808"
    } else {
        b"18446744073709551615"
    };
    if negative && digits == b"0" {
        return false;
    }
    digits.len() < limit.len() || (digits.len() == limit.len() && digits <= limit)
}

/// A number's text on the stack: RFC 8785 prints a double in at most 25 bytes
/// (`-1.7976931348623157e+308`, `-0.0000033333333333333333`), plus `.0`.
struct Text {
    buf: [u8; 40],
    len: usize,
    overflow: bool,
}

impl Text {
    const fn new() -> Self {
        Self {
            buf: [0; 40],
            len: 0,
            overflow: false,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// Appends `.0` when the text is an integer's (no `.`, no `e`), and gives it to `out`.
    fn finish_float(&self, negative: bool, out: &mut impl Sink) -> Result<(), Error> {
        if self.overflow {
            return Err(Error::BufferTooSmall);
        }
        let text = self.as_bytes();
        if text == b"0" {
            out.write(if negative { b"-0.0" } else { b"0.0" });
        } else {
            out.write(text);
            if !text.iter().any(|&b| b == b'.' || b == b'e') {
                out.write(b".0");
            }
        }
        Ok(())
    }
}

impl Sink for Text {
    fn write(&mut self, bytes: &[u8]) {
        let end = self.len + bytes.len();
        match self.buf.get_mut(self.len..end) {
            Some(dst) if !self.overflow => {
                dst.copy_from_slice(bytes);
                self.len = end;
            }
            _ => self.overflow = true,
        }
    }
}

/// Writes the binding form of a validated (grammatical, exact) number literal.
pub(crate) fn write_literal(lit: &[u8], out: &mut impl Sink) -> Result<(), Error> {
    if is_integer(lit) {
        return number::write_literal(lit, out);
    }
    let mut text = Text::new();
    number::write_literal(lit, &mut text)?;
    text.finish_float(lit.first() == Some(&b'-'), out)
}

/// Writes the double `x` in its binding form, as a float: as [`write_number`] writes it
/// (ECMAScript's `Number::toString`), with `.0` appended when that has neither `.` nor `e`,
/// and `-0.0` for negative zero. This is how `mrtr_std::jcs` binds a number that
/// serde_json holds as a double. A non-finite `x`: [`Error::LossyNumber`], nothing written.
///
/// [`write_number`]: crate::write_number
///
/// ```
/// use mrtr_json::{Writer, write_float};
///
/// let mut buf = [0u8; 64];
/// let mut w = Writer::new(&mut buf);
/// for x in [1.0, 100.0, -0.0, 0.0, 1.5, 1e21, 1e-7] {
///     write_float(x, &mut w)?;
///     w.raw(b" ");
/// }
/// assert_eq!(w.as_bytes(), b"1.0 100.0 -0.0 0.0 1.5 1e+21 1e-7 ");
/// assert!(write_float(f64::INFINITY, &mut w).is_err());
/// # Ok::<(), mrtr_json::Error>(())
/// ```
pub fn write_float(x: f64, out: &mut impl Sink) -> Result<(), Error> {
    let mut text = Text::new();
    number::write_number(x, &mut text)?;
    text.finish_float(x.is_sign_negative(), out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Writer;

    fn bound(lit: &str, buf: &mut [u8; 64]) -> usize {
        let mut w = Writer::new(buf);
        write_literal(lit.as_bytes(), &mut w).unwrap();
        w.len()
    }

    #[test]
    fn the_rule_of_the_lead_examples() {
        for (lit, want) in [
            ("1", "1"),
            ("1.0", "1.0"),
            ("1e2", "100.0"),
            ("1E2", "100.0"),
            ("100", "100"),
            ("0", "0"),
            ("-0", "-0.0"),
            ("-0.0", "-0.0"),
            ("0.0", "0.0"),
            ("-0e5", "-0.0"),
            ("0e-3", "0.0"),
            ("1.5", "1.5"),
            ("1.50", "1.5"),
            ("1e21", "1e+21"),
            ("-1", "-1"),
            ("100e-2", "1.0"),
            ("9007199254740992", "9007199254740992"),
            // Exact integers (a double carries them) on both sides of the 64-bit range.
            ("10000000000000000000", "10000000000000000000"),
            ("-1000000000000000000", "-1000000000000000000"),
            ("100000000000000000000", "100000000000000000000.0"),
            ("-10000000000000000000", "-10000000000000000000.0"),
            ("1e-7", "1e-7"),
            ("-1.7976931348623157e308", "-1.7976931348623157e+308"),
            ("-0.0000033333333333333333", "-0.0000033333333333333333"),
        ] {
            let mut buf = [0u8; 64];
            let len = bound(lit, &mut buf);
            assert_eq!(&buf[..len], want.as_bytes(), "{lit}");
        }
    }

    #[test]
    fn the_integer_range_is_serde_jsons() {
        assert!(is_integer(b"0"));
        assert!(!is_integer(b"-0"));
        assert!(is_integer(b"18446744073709551615"));
        assert!(!is_integer(b"18446744073709551616"));
        assert!(!is_integer(b"99999999999999999999"));
        assert!(is_integer(b"-9223372036854775808"));
        assert!(!is_integer(b"-9223372036854775809"));
        assert!(is_integer(b"-999999999999999999"));
        assert!(!is_integer(b"1.0"));
        assert!(!is_integer(b"1e0"));
        assert!(!is_integer(b"1E0"));
    }
}
