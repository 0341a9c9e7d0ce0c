//! Strings and member names read from the text: the word-at-a-time search for the bytes that
//! end or escape a string ([`specials`]), short strings read in one load, escapes and `\u`
//! surrogate pairs, the UTF-8 of each string (or of the whole text at once), and the message's
//! `method` kept for the envelope.

use std::borrow::Cow;

use super::names::head;
use super::{Name, Scan, Stop};

/// The high bit of every byte of a word.
pub(super) const HIGH: u64 = 0x8080_8080_8080_8080;

/// Marks (with its high bit) each byte of the eight in `word` that ends or escapes a string
/// or is a control character: a quote, a backslash, or below 0x20. The lowest mark is exact
/// (the classic zero-byte test can mark a byte above a true one, never below), so
/// `trailing_zeros() / 8` is the offset of the first such byte; zero when there is none.
pub(super) const fn specials(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const fn zeros(v: u64) -> u64 {
        v.wrapping_sub(ONES) & !v & HIGH
    }
    zeros(word ^ (ONES * b'"' as u64))
        | zeros(word ^ (ONES * b'\\' as u64))
        | (word.wrapping_sub(ONES * 0x20) & !word & HIGH)
}

/// The string at `at` when its raw text is under eight bytes without an escape and the text
/// goes on for a word after its opening quote (most member names, and many values): where it
/// ends, its bytes as a little-endian word, and its length. `None` for any other string,
/// which the full scan reads.
#[inline(always)]
fn short_string(text: &[u8], at: usize) -> Option<(usize, u64, usize)> {
    let word = u64::from_le_bytes(*text.get(at + 1..)?.first_chunk::<8>()?);
    let marks = specials(word);
    if marks == 0 {
        return None;
    }
    let len = (marks.trailing_zeros() / 8) as usize;
    if (word >> (8 * len)) as u8 != b'"' {
        return None;
    }
    Some((at + len + 2, word & ((1 << (8 * len)) - 1), len))
}

/// The JSON-RPC methods that can pause (see [`crate::jsonrpc::Method`]), the ones whose
/// envelope matters.
pub(crate) const PAUSABLE: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// What [`Scan::rest_of_string`] found.
struct Rest {
    /// Just past the closing quote.
    next: usize,
    /// The string held escapes.
    escaped: bool,
}

impl<'a, const PATH: bool> Scan<'a, PATH> {
    /// Where the run of plain string bytes at `at` ends (eight at a time while the text has
    /// eight more): at a byte that is not plain, or within the text's last seven bytes.
    #[inline(always)]
    fn plain(&mut self, at: usize) -> usize {
        let mut seen = 0;
        let mut end = at;
        for chunk in self.text.get(at..).unwrap_or_default().chunks_exact(8) {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            seen |= word;
            let marks = specials(word);
            if marks != 0 {
                end += (marks.trailing_zeros() / 8) as usize;
                break;
            }
            end += 8;
        }
        self.bytes_seen |= seen;
        end
    }

    /// Checks the UTF-8 of a string's raw text (with `PATH`; without, [`Scan::message`]
    /// checks the whole text once).
    fn utf8(&self, start: usize, end: usize) -> Result<(), Stop> {
        match self.text.get(start..end).map(std::str::from_utf8) {
            Some(Ok(_)) => Ok(()),
            _ => Err(Stop::NotJson),
        }
    }

    /// A short string's UTF-8: checked with `PATH`, else noted for [`Scan::message`].
    #[inline(always)]
    fn short_checked(&mut self, start: usize, len: usize, bytes: u64) -> Result<(), Stop> {
        if PATH {
            self.utf8(start, start + len)
        } else {
            self.bytes_seen |= bytes;
            Ok(())
        }
    }

    /// The string at `at`, checked; returns where it ends.
    #[inline(always)]
    pub(super) fn string(&mut self, at: usize) -> Result<usize, Stop> {
        if let Some((next, bytes, len)) = short_string(self.text, at) {
            self.short_checked(at + 1, len, bytes)?;
            return Ok(next);
        }
        let start = at + 1;
        let end = self.plain(start);
        if self.text.get(end) == Some(&b'"') {
            if PATH {
                self.utf8(start, end)?;
            }
            return Ok(end + 1);
        }
        Ok(self.rest_of_string(start, end, false)?.next)
    }

    /// The member name at `at`, checked; returns where it ends, and the name.
    #[inline(always)]
    pub(super) fn name(&mut self, at: usize) -> Result<(usize, Name), Stop> {
        if let Some((next, head, len)) = short_string(self.text, at) {
            self.short_checked(at + 1, len, head)?;
            let name = Name {
                head,
                len,
                from: at + 1,
                escaped: false,
            };
            return Ok((next, name));
        }
        let start = at + 1;
        let mut end = self.plain(start);
        let next = if self.text.get(end) == Some(&b'"') {
            if PATH {
                self.utf8(start, end)?;
            }
            end + 1
        } else {
            let from = self.unescaped.len();
            let rest = self.rest_of_string(start, end, true)?;
            if rest.escaped {
                let bytes = self.unescaped.get(from..).unwrap_or_default();
                let name = Name {
                    head: head(bytes),
                    len: bytes.len(),
                    from,
                    escaped: true,
                };
                return Ok((rest.next, name));
            }
            end = rest.next - 1;
            rest.next
        };
        let len = end - start;
        // The head in one load where the text goes on for eight bytes (as it nearly always
        // does: a name is followed by at least `":` and a value).
        let head = match self.text.get(start..).and_then(|t| t.first_chunk::<8>()) {
            Some(word) if len >= 8 => u64::from_le_bytes(*word),
            Some(word) => u64::from_le_bytes(*word) & ((1 << (8 * len)) - 1),
            None => head(self.text.get(start..end).unwrap_or_default()),
        };
        let name = Name {
            head,
            len,
            from: start,
            escaped: false,
        };
        Ok((next, name))
    }

    /// The message's `method` string at `at`, kept in the envelope; returns where it ends.
    pub(super) fn method(&mut self, at: usize) -> Result<usize, Stop> {
        let start = at + 1;
        let end = self.plain(start);
        let mark = self.unescaped.len();
        let rest = self.rest_of_string(start, end, true)?;
        // The string was checked (or the whole text will be, before the envelope is used).
        self.envelope.method = if rest.escaped {
            String::from_utf8(self.unescaped.split_off(mark))
                .ok()
                .map(Cow::Owned)
        } else {
            let text: &'a [u8] = self.text;
            let raw = text.get(start..rest.next - 1).unwrap_or_default();
            // The methods that pause are named by constants, which need no UTF-8 check.
            match PAUSABLE.iter().find(|m| m.as_bytes() == raw) {
                Some(m) => Some(Cow::Borrowed(*m)),
                None => std::str::from_utf8(raw).ok().map(Cow::Borrowed),
            }
        };
        Ok(rest.next)
    }

    /// The rest of the string whose raw text starts at `start`, from `at` (its bytes before
    /// are plain): escapes, control characters, the text's last bytes. With `unescape`, a
    /// string holding escapes is appended unescaped to `unescaped`.
    #[inline(never)]
    fn rest_of_string(
        &mut self,
        start: usize,
        mut at: usize,
        unescape: bool,
    ) -> Result<Rest, Stop> {
        let text = self.text;
        // Start of the run of plain bytes since the last escape.
        let mut run = start;
        let mut escaped = false;
        loop {
            let Some(&b) = text.get(at) else {
                return Err(Stop::NotJson);
            };
            match b {
                b'"' => {
                    if PATH {
                        // Escapes are ASCII: the raw text is UTF-8 exactly when the
                        // unescaped string is.
                        self.utf8(start, at)?;
                    }
                    if escaped && unescape {
                        let tail = text.get(run..at).unwrap_or_default();
                        self.unescaped.extend_from_slice(tail);
                    }
                    return Ok(Rest {
                        next: at + 1,
                        escaped,
                    });
                }
                b'\\' => {
                    if unescape {
                        let plain = text.get(run..at).unwrap_or_default();
                        self.unescaped.extend_from_slice(plain);
                    }
                    escaped = true;
                    let c;
                    (at, c) = self.escape(at + 1)?;
                    if unescape {
                        let mut buf = [0; 4];
                        let bytes = c.encode_utf8(&mut buf).as_bytes();
                        self.unescaped.extend_from_slice(bytes);
                    }
                    run = at;
                }
                0x00..=0x1f => return Err(Stop::NotJson),
                // Plain, within the text's last seven bytes.
                _ => {
                    self.bytes_seen |= u64::from(b);
                    at += 1;
                }
            }
            at = self.plain(at);
        }
    }

    /// The escape at `at` (its backslash just before): where it ends, and its character.
    fn escape(&self, at: usize) -> Result<(usize, char), Stop> {
        let Some(&e) = self.text.get(at) else {
            return Err(Stop::NotJson);
        };
        let c = match e {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(at + 1),
            _ => return Err(Stop::NotJson),
        };
        Ok((at + 1, c))
    }

    /// The four hex digits at `at`, as a number.
    fn hex4(&self, at: usize) -> Result<u32, Stop> {
        let Some(digits) = self.text.get(at..).and_then(|t| t.first_chunk::<4>()) else {
            return Err(Stop::NotJson);
        };
        let mut value = 0;
        for &d in digits {
            let Some(v) = char::from(d).to_digit(16) else {
                return Err(Stop::NotJson);
            };
            value = (value << 4) | v;
        }
        Ok(value)
    }

    /// The `\u` escape whose digits are at `at`, joining a surrogate pair: where it ends, and
    /// its character.
    fn unicode_escape(&self, at: usize) -> Result<(usize, char), Stop> {
        let first = self.hex4(at)?;
        let mut at = at + 4;
        let code = match first {
            0xD800..=0xDBFF => {
                if self.text.get(at..at + 2) != Some(b"\\u") {
                    return Err(Stop::LoneSurrogate);
                }
                let second = self.hex4(at + 2)?;
                at += 6;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(Stop::LoneSurrogate);
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(Stop::LoneSurrogate),
            c => c,
        };
        match char::from_u32(code) {
            Some(c) => Ok((at, c)),
            None => Err(Stop::LoneSurrogate),
        }
    }
}
