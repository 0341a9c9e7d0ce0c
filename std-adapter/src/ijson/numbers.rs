//! Numbers: their JSON syntax, and whether a double carries their value exactly
//! ([`number_is_exact`]; short integers are exact without that test).

use super::{Scan, Stop};

/// Whether the JSON number literal `lit` keeps its value through a double: the canonical
/// (ECMAScript) form of the double it reads as denotes exactly the value written. The test is
/// [`mrtr_json::number_is_exact`] (the no_std digest's own, with checked exponent
/// arithmetic); anything that is not a whole JSON number is not exact.
pub fn number_is_exact(lit: &str) -> bool {
    mrtr_json::number_is_exact(lit.as_bytes())
}

impl<'a, const PATH: bool> Scan<'a, PATH> {
    /// The number at `start`, checked; returns where it ends.
    #[inline(always)]
    pub(super) fn number(&self, start: usize) -> Result<usize, Stop> {
        // A positive integer of up to 15 digits (ids, counts) is exact: read here, at once.
        let text = self.text;
        if let Some(b'1'..=b'9') = text.get(start) {
            let end = self.digits(start + 1);
            if end - start <= 15 && !matches!(text.get(end), Some(b'.' | b'e' | b'E')) {
                return Ok(end);
            }
        }
        self.any_number(start)
    }

    /// [`Scan::number`] past the short integers.
    #[inline(never)]
    fn any_number(&self, start: usize) -> Result<usize, Stop> {
        let mut at = start;
        if self.text.get(at) == Some(&b'-') {
            at += 1;
        }
        let int_start = at;
        match self.text.get(at) {
            Some(b'0') => at += 1,
            Some(b'1'..=b'9') => at = self.digits(at),
            _ => return Err(Stop::NotJson),
        }
        let int_len = at - int_start;
        let mut integer = true;
        if self.text.get(at) == Some(&b'.') {
            integer = false;
            if !matches!(self.text.get(at + 1), Some(b'0'..=b'9')) {
                return Err(Stop::NotJson);
            }
            at = self.digits(at + 1);
        }
        if let Some(b'e' | b'E') = self.text.get(at) {
            integer = false;
            at += 1;
            if let Some(b'+' | b'-') = self.text.get(at) {
                at += 1;
            }
            if !matches!(self.text.get(at), Some(b'0'..=b'9')) {
                return Err(Stop::NotJson);
            }
            at = self.digits(at);
        }
        // An integer of up to 15 digits is exact: number_is_exact's own first test, made
        // here without reading the literal again.
        if integer && int_len <= 15 {
            return Ok(at);
        }
        // The literal is ASCII by construction.
        let lit = std::str::from_utf8(self.text.get(start..at).unwrap_or_default());
        if number_is_exact(lit.unwrap_or("")) {
            Ok(at)
        } else {
            Err(Stop::LossyNumber)
        }
    }

    /// Where the digits at `at` end.
    fn digits(&self, mut at: usize) -> usize {
        while let Some(b'0'..=b'9') = self.text.get(at) {
            at += 1;
        }
        at
    }
}
