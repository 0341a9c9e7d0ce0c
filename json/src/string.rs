//! Strings: escapes, their canonical form, and member-name order (UTF-16 code units).

use core::cmp::Ordering;

use crate::scan::{clear_words, quote_or_backslash};
use crate::{Error, Sink};

/// Writes `s` as an RFC 8785 string: between quotes, with only `"`, `\` and control characters
/// escaped (`\b \t \n \f \r`, otherwise `\u00xx` in lowercase hex), every other character as
/// its UTF-8.
///
/// ```
/// use mrtr_json::{Writer, write_string};
///
/// let mut buf = [0u8; 32];
/// let mut w = Writer::new(&mut buf);
/// write_string("a\"\u{1}/€", &mut w);
/// assert_eq!(w.as_bytes(), "\"a\\\"\\u0001/€\"".as_bytes());
/// ```
pub fn write_string(s: &str, out: &mut impl Sink) {
    out.write(b"\"");
    write_content(s.as_bytes(), out);
    out.write(b"\"");
}

/// Writes the bytes of a string (UTF-8, no escapes) escaped as RFC 8785 requires, without
/// the quotes: runs of plain bytes in one write.
fn write_content(bytes: &[u8], out: &mut impl Sink) {
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'"' || b == b'\\' || b < 0x20 {
            out.write(bytes.get(start..i).unwrap_or_default());
            write_escaped_ascii(b, out);
            start = i + 1;
        }
    }
    out.write(bytes.get(start..).unwrap_or_default());
}

/// The canonical escape of `"`, `\` or a control character `b`.
fn write_escaped_ascii(b: u8, out: &mut impl Sink) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short: &[u8] = match b {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        0x08 => b"\\b",
        b'\t' => b"\\t",
        b'\n' => b"\\n",
        0x0c => b"\\f",
        b'\r' => b"\\r",
        _ => {
            let hi = HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0');
            let lo = HEX.get(usize::from(b & 0xf)).copied().unwrap_or(b'0');
            out.write(&[b'\\', b'u', b'0', b'0', hi, lo]);
            return;
        }
    };
    out.write(short);
}

/// Writes one character in its canonical form (inside a string).
fn write_char(c: char, out: &mut impl Sink) {
    if c.is_ascii() {
        let b = c as u8;
        if b == b'"' || b == b'\\' || b < 0x20 {
            write_escaped_ascii(b, out);
        } else {
            out.write(&[b]);
        }
    } else {
        let mut buf = [0u8; 4];
        out.write(c.encode_utf8(&mut buf).as_bytes());
    }
}

/// Writes the canonical form of the string literal whose opening quote is at `at` in
/// validated text, between `open` and `close` (which hold its quotes, and any punctuation
/// around it): plain runs copied, escapes decoded and written canonically. Returns where
/// the literal ends (past its closing quote).
pub(crate) fn write_literal_at(
    text: &[u8],
    at: usize,
    open: &[u8],
    close: &[u8],
    out: &mut impl Sink,
) -> Result<usize, Error> {
    out.write(open);
    let mut i = at + 1;
    loop {
        // The plain run up to the next escape or the closing quote: JSON's raw strings hold
        // no other `"`, and no controls.
        let rest = text.get(i..).ok_or(Error::NotJson)?;
        let clear = clear_words(rest, quote_or_backslash);
        let skip = rest
            .get(clear..)
            .unwrap_or_default()
            .iter()
            .position(|&b| b == b'"' || b == b'\\')
            .ok_or(Error::NotJson)?;
        let stop = i + clear + skip;
        if stop > i {
            out.write(text.get(i..stop).unwrap_or_default());
        }
        if text.get(stop) == Some(&b'"') {
            out.write(close);
            return Ok(stop + 1);
        }
        let (c, used) = escape(text.get(stop + 1..).unwrap_or_default())?;
        write_char(c, out);
        i = stop + 1 + used;
    }
}

/// Decodes the escape whose text (after its backslash) starts `after`: the character and how
/// many bytes of `after` it used. A `\u` escape of a high surrogate must be followed by one of
/// a low surrogate ([`Error::LoneSurrogate`] otherwise), and the pair is one character.
pub(crate) fn escape(after: &[u8]) -> Result<(char, usize), Error> {
    let c = match after.first() {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => return unicode_escape(after),
        _ => return Err(Error::NotJson),
    };
    Ok((c, 1))
}

/// The value of four hex digits at the start of `bytes`.
fn hex4(bytes: &[u8]) -> Result<u32, Error> {
    let digits = bytes.first_chunk::<4>().ok_or(Error::NotJson)?;
    let mut value = 0;
    for &d in digits {
        let v = char::from(d).to_digit(16).ok_or(Error::NotJson)?;
        value = (value << 4) | v;
    }
    Ok(value)
}

/// A `\u` escape (`after` starts at its `u`), joining a surrogate pair.
fn unicode_escape(after: &[u8]) -> Result<(char, usize), Error> {
    let first = hex4(after.get(1..).unwrap_or_default())?;
    let (code, used) = match first {
        0xD800..=0xDBFF => {
            if after.get(5..7) != Some(b"\\u") {
                return Err(Error::LoneSurrogate);
            }
            let second = hex4(after.get(7..).unwrap_or_default())?;
            if !(0xDC00..=0xDFFF).contains(&second) {
                return Err(Error::LoneSurrogate);
            }
            (0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00), 11)
        }
        0xDC00..=0xDFFF => return Err(Error::LoneSurrogate),
        c => (c, 5),
    };
    char::from_u32(code)
        .map(|c| (c, used))
        .ok_or(Error::LoneSurrogate)
}

/// The characters of a validated string literal's raw content, escapes decoded. Stops early
/// (never panics) on text that is not valid, which validated text never is.
#[derive(Clone)]
pub(crate) struct Chars<'a> {
    rest: &'a [u8],
}

impl<'a> Chars<'a> {
    pub(crate) fn new(raw: &'a [u8]) -> Self {
        Self { rest: raw }
    }
}

impl Iterator for Chars<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        let (&b, tail) = self.rest.split_first()?;
        if b == b'\\' {
            let (c, used) = escape(tail).ok()?;
            self.rest = tail.get(used..)?;
            return Some(c);
        }
        if b < 0x80 {
            self.rest = tail;
            return Some(char::from(b));
        }
        let width = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        let (bytes, tail) = self.rest.split_at_checked(width)?;
        let c = core::str::from_utf8(bytes).ok()?.chars().next()?;
        self.rest = tail;
        Some(c)
    }
}

/// A key whose order is the UTF-16 code unit order of single characters: supplementary
/// characters (surrogate pairs, D800..DFFF) sort between U+D7FF and U+E000.
fn utf16_key(c: char) -> u32 {
    let c = u32::from(c);
    match c {
        0..=0xD7FF => c,
        0x10000.. => c - 0x10000 + 0xD800,
        _ => c + 0x11_0000,
    }
}

/// Compares two UTF-8 strings (as bytes) by their UTF-16 code units, without decoding: UTF-8
/// byte order is code point order, which differs from UTF-16 order only between a character
/// of U+E000..U+FFFF (lead byte EE or EF) and a supplementary one (lead byte F0..F4).
fn utf8_order(a: &[u8], b: &[u8]) -> Ordering {
    let Some(i) = a.iter().zip(b).position(|(x, y)| x != y) else {
        return a.len().cmp(&b.len());
    };
    match (a.get(i), b.get(i)) {
        (Some(&x), Some(&y)) => byte_order(x, y),
        _ => a.len().cmp(&b.len()),
    }
}

/// [`utf8_order`] of two UTF-8 strings whose first difference is the bytes `x` and `y`.
pub(crate) fn byte_order(x: u8, y: u8) -> Ordering {
    // Mid-character, both characters share their lead byte, so their class too.
    let high_bmp = |v: u8| v == 0xEE || v == 0xEF;
    let supplementary = |v: u8| v >= 0xF0;
    if (high_bmp(x) && supplementary(y)) || (supplementary(x) && high_bmp(y)) {
        y.cmp(&x)
    } else {
        x.cmp(&y)
    }
}

/// Orders member names as RFC 8785 sorts them: by their UTF-16 code units (so U+1F600, a
/// surrogate pair D83D DE00, sorts before U+E000, unlike in UTF-8 or code point order).
///
/// ```
/// use core::cmp::Ordering;
/// use mrtr_json::name_order;
///
/// assert_eq!(name_order("\u{1F600}", "\u{E000}"), Ordering::Less);
/// assert_eq!(name_order("a", "b"), Ordering::Less);
/// assert_eq!(name_order("ab", "a"), Ordering::Greater);
/// ```
pub fn name_order(a: &str, b: &str) -> Ordering {
    utf8_order(a.as_bytes(), b.as_bytes())
}

/// Where two validated string literals' raw contents first differ, or share a backslash:
/// the length of their common prefix free of escapes. That prefix ends at a character
/// boundary of both wherever one of them holds a backslash (an ASCII byte).
fn plain_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .zip(b)
        .position(|(&x, &y)| x != y || x == b'\\')
        .unwrap_or(a.len().min(b.len()))
}

/// [`name_order`] of two validated string literals' raw contents. Reads them up to their
/// first difference: escapes are decoded only from the first one met there on.
pub(crate) fn literal_order(a: &[u8], b: &[u8]) -> Ordering {
    let i = plain_prefix(a, b);
    match (a.get(i), b.get(i)) {
        (None, None) => Ordering::Equal,
        // The rest of the longer one is at least one more character.
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(&x), Some(&y)) if x != b'\\' && y != b'\\' => utf8_order(
            a.get(i..).unwrap_or_default(),
            b.get(i..).unwrap_or_default(),
        ),
        // An escape at a character boundary of both, after equal characters.
        _ => Chars::new(a.get(i..).unwrap_or_default())
            .map(utf16_key)
            .cmp(Chars::new(b.get(i..).unwrap_or_default()).map(utf16_key)),
    }
}

/// Whether two validated string literals' raw contents denote the same string.
pub(crate) fn literal_eq(a: &[u8], b: &[u8]) -> bool {
    let i = plain_prefix(a, b);
    match (a.get(i), b.get(i)) {
        (None, None) => true,
        (Some(&x), Some(&y)) if x == b'\\' || y == b'\\' => {
            Chars::new(a.get(i..).unwrap_or_default())
                .eq(Chars::new(b.get(i..).unwrap_or_default()))
        }
        // Different raw bytes (no escape there), or one string longer than the other.
        _ => false,
    }
}

/// A hash of the string a validated string literal's raw content denotes (escapes decoded:
/// equal strings, however escaped, hash alike).
pub(crate) fn literal_hash(raw: &[u8]) -> u32 {
    let step = |h: u32, b: u8| (h ^ u32::from(b)).wrapping_mul(0x9E37_79B1);
    let cut = raw.iter().position(|&b| b == b'\\').unwrap_or(raw.len());
    let (plain, escaped) = raw.split_at_checked(cut).unwrap_or((raw, &[]));
    let mut h = plain.iter().fold(0x811C_9DC5, |h, &b| step(h, b));
    for c in Chars::new(escaped) {
        let mut buf = [0u8; 4];
        h = c.encode_utf8(&mut buf).bytes().fold(h, step);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_is_utf16_order() {
        let samples = [
            '\0',
            'a',
            '\u{7f}',
            '\u{80}',
            '\u{7ff}',
            '\u{800}',
            '\u{d7ff}',
            '\u{e000}',
            '\u{fb33}',
            '\u{ffff}',
            '\u{10000}',
            '\u{1f600}',
            '\u{10ffff}',
        ];
        for a in samples {
            for b in samples {
                let (mut x, mut y) = ([0u16; 2], [0u16; 2]);
                let want = a
                    .encode_utf16(&mut x)
                    .iter()
                    .cmp(b.encode_utf16(&mut y).iter());
                assert_eq!(utf16_key(a).cmp(&utf16_key(b)), want, "{a:?} {b:?}");
                let (mut p, mut q) = ([0u8; 4], [0u8; 4]);
                let (p, q) = (a.encode_utf8(&mut p), b.encode_utf8(&mut q));
                assert_eq!(name_order(p, q), want, "{a:?} {b:?}");
            }
        }
    }
}
