//! The validating parser and the zero-copy [`Value`] it returns.

use crate::scan::{after_colon, content, member_at, name_at, string_end, value_end, ws};
use crate::string::{self, Chars};
use crate::{Error, Limits, MAX_DEPTH, number};

/// Parses `text` as one I-JSON value (RFC 7493), with whitespace around it allowed, and
/// checks all of it: syntax, UTF-8, nesting at most `limits.max_depth` arrays and objects
/// (the top-level container is depth 1; never more than [`MAX_DEPTH`]), at most
/// `limits.max_members` members per object, at most `limits.max_len` bytes, no duplicate
/// member names (compared after unescaping), no lone surrogates, every number exact through
/// a double ([`number_is_exact`](crate::number_is_exact)). The first violation, in text
/// order, is the error.
///
/// No accessor of the [`Value`] it returns can fail on its text's syntax afterwards.
///
/// Cost: one pass over the text. Each member name is hashed into a 128-bit filter of the
/// names of its object read so far; only a name whose bit is already set, or the first name
/// read after a nested object closed (the filter holds one object at a time), costs a
/// rescan of the members of its object before it (to find a duplicate, or to refill the
/// filter): at most `max_members` × the object's length per object. Stack: a fixed array
/// of [`MAX_DEPTH`] positions and a few words; no recursion.
///
/// ```
/// use mrtr_json::{Error, Limits, parse};
///
/// let v = parse(br#" {"a": [1, 2], "b": "x"} "#, &Limits::DEFAULT)?;
/// assert_eq!(v.raw(), br#"{"a": [1, 2], "b": "x"}"#);
/// assert_eq!(parse(br#"{"a": 1, "\u0061": 2}"#, &Limits::DEFAULT), Err(Error::DuplicateName));
/// assert_eq!(parse(b"9007199254740993", &Limits::DEFAULT), Err(Error::LossyNumber));
/// # Ok::<(), Error>(())
/// ```
pub fn parse<'a>(text: &'a [u8], limits: &Limits) -> Result<Value<'a>, Error> {
    if text.len() > limits.max_len {
        return Err(Error::TooLong);
    }
    let max_depth = limits.max_depth.min(MAX_DEPTH);
    // Where each open container starts, outermost first.
    let mut open = [0usize; MAX_DEPTH];
    let mut depth = 0usize;
    let mut names = Names::new();
    let start = ws(text, 0);
    let mut at = start;
    loop {
        // A value starts at `at`.
        let mut end = match text.get(at) {
            Some(&b) if b == b'{' || b == b'[' => {
                if depth >= max_depth {
                    return Err(Error::TooDeep);
                }
                *open.get_mut(depth).ok_or(Error::TooDeep)? = at;
                depth += 1;
                let first = ws(text, at + 1);
                let close = if b == b'{' { b'}' } else { b']' };
                if text.get(first) == Some(&close) {
                    depth -= 1;
                    first + 1
                } else {
                    at = if b == b'{' {
                        name(text, at, first, limits, &mut names)?
                    } else {
                        first
                    };
                    continue;
                }
            }
            Some(b'"') => checked_string(text, at)?,
            Some(b't') => literal(text, at, b"true")?,
            Some(b'f') => literal(text, at, b"false")?,
            Some(b'n') => literal(text, at, b"null")?,
            Some(b'-' | b'0'..=b'9') => {
                let end = number::grammar(text, at)?;
                let lit = text.get(at..end).unwrap_or_default();
                if !number::exact(lit) {
                    return Err(Error::LossyNumber);
                }
                end
            }
            _ => return Err(Error::NotJson),
        };
        // The value ended at `end`: close the containers it completes.
        loop {
            let Some(level) = depth.checked_sub(1) else {
                if ws(text, end) != text.len() {
                    return Err(Error::NotJson);
                }
                let value = text.get(start..end).ok_or(Error::NotJson)?;
                return Ok(Value { raw: value });
            };
            let container = open.get(level).copied().unwrap_or_default();
            let object = text.get(container) == Some(&b'{');
            let next = ws(text, end);
            match text.get(next) {
                Some(b',') => {
                    let item = ws(text, next + 1);
                    at = if object {
                        name(text, container, item, limits, &mut names)?
                    } else {
                        item
                    };
                    break;
                }
                Some(b'}') if object => {}
                Some(b']') if !object => {}
                _ => return Err(Error::NotJson),
            }
            depth = level;
            end = next + 1;
        }
    }
}

/// Checks the literal `word` at `at`; returns where it ends.
fn literal(text: &[u8], at: usize, word: &[u8]) -> Result<usize, Error> {
    match text.get(at..at + word.len()) {
        Some(w) if w == word => Ok(at + word.len()),
        _ => Err(Error::NotJson),
    }
}

/// How [`checked_string`] treats each byte: 0 plain ASCII, 1 the closing quote, 2 a
/// backslash, 3 a control character, 4 a byte of a multi-byte UTF-8 character.
const STRING_BYTE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b {
            0x00..=0x1f => 3,
            0x22 => 1,
            0x5c => 2,
            0x80.. => 4,
            _ => 0,
        };
        b += 1;
    }
    table
};

/// Checks the string at `at` (its opening quote): escapes, surrogate pairs, no control
/// characters, UTF-8. Returns where it ends.
fn checked_string(text: &[u8], at: usize) -> Result<usize, Error> {
    let mut i = at + 1;
    let mut high = false;
    loop {
        let rest = text.get(i..).unwrap_or_default();
        let skip = rest
            .iter()
            .position(|&b| STRING_BYTE[usize::from(b)] != 0)
            .ok_or(Error::NotJson)?;
        i += skip;
        match text.get(i).map(|&b| STRING_BYTE[usize::from(b)]) {
            Some(1) => break,
            Some(2) => {
                let (_, used) = string::escape(text.get(i + 1..).unwrap_or_default())?;
                i += 1 + used;
            }
            Some(4) => {
                high = true;
                i += 1;
            }
            _ => return Err(Error::NotJson),
        }
    }
    // Escapes are ASCII, so the raw content is UTF-8 exactly when the string is.
    if high && core::str::from_utf8(text.get(at + 1..i).unwrap_or_default()).is_err() {
        return Err(Error::NotJson);
    }
    Ok(i + 1)
}

/// What [`parse`] knows of the names of the object whose member it reads: which object,
/// how many members it has so far, and a 128-bit filter of their names' hashes. It holds
/// one object at a time (the innermost one whose name was read last); reading a name of
/// another object (the parent again, after a nested object) rebuilds it by one scan of the
/// members before that name.
struct Names {
    /// Where the object starts (`usize::MAX`: none yet).
    object: usize,
    /// Its members read so far.
    count: usize,
    /// Bit `hash % 128` set for each of their names.
    filter: [u32; 4],
}

impl Names {
    const fn new() -> Self {
        Self {
            object: usize::MAX,
            count: 0,
            filter: [0; 4],
        }
    }

    /// Where `hash` goes in the filter: a word and a bit.
    fn slot(hash: u32) -> (usize, u32) {
        ((hash >> 30) as usize, 1 << (hash >> 25 & 31))
    }

    fn add(&mut self, hash: u32) {
        let (word, bit) = Self::slot(hash);
        if let Some(w) = self.filter.get_mut(word) {
            *w |= bit;
        }
    }

    fn may_hold(&self, hash: u32) -> bool {
        let (word, bit) = Self::slot(hash);
        self.filter.get(word).is_some_and(|w| w & bit != 0)
    }
}

/// The member name at `at` of the object starting at `object`: checked, counted against
/// `limits.max_members` and compared with every earlier name of the object whose hash
/// matches (all of them, when `names` holds another object). Returns where the member's
/// value starts.
fn name(
    text: &[u8],
    object: usize,
    at: usize,
    limits: &Limits,
    names: &mut Names,
) -> Result<usize, Error> {
    if text.get(at) != Some(&b'"') {
        return Err(Error::NotJson);
    }
    let end = checked_string(text, at)?;
    let new = content(text, at, end);
    let hash = string::literal_hash(new);
    let rebuild = names.object != object;
    if rebuild {
        *names = Names::new();
    }
    if rebuild || names.may_hold(hash) {
        // The earlier members are validated text.
        let mut count = 0usize;
        let mut scan = object + 1;
        // Stop at this name: what follows it is not checked yet.
        while let Ok(earlier) = name_at(text, scan) {
            if earlier >= at {
                break;
            }
            let earlier_end = string_end(text, earlier);
            let old = content(text, earlier, earlier_end);
            count += 1;
            if string::literal_eq(old, new) {
                return Err(Error::DuplicateName);
            }
            if rebuild {
                names.add(string::literal_hash(old));
            }
            scan = value_end(text, after_colon(text, earlier_end));
        }
        names.object = object;
        names.count = count;
    }
    names.count += 1;
    names.add(hash);
    if names.count > limits.max_members {
        return Err(Error::TooManyMembers);
    }
    let colon = ws(text, end);
    if text.get(colon) != Some(&b':') {
        return Err(Error::NotJson);
    }
    Ok(ws(text, colon + 1))
}

/// What a JSON value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Kind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// A validated JSON value: a span of the text [`parse`] checked, read in place (no copy).
///
/// Every accessor reads the span again; none can panic, and on a value of another kind they
/// return `None` (or an empty iterator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Value<'a> {
    raw: &'a [u8],
}

impl<'a> Value<'a> {
    /// What the value is.
    pub fn kind(&self) -> Kind {
        match self.raw.first() {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b't' | b'f') => Kind::Bool,
            Some(b'n') => Kind::Null,
            _ => Kind::Number,
        }
    }

    /// The value's text, exactly as written (without the whitespace around it).
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The member `name` of an object (names compared after unescaping); `None` when absent
    /// or not an object. Reads the members in order: O(object length).
    pub fn get(&self, name: &str) -> Option<Value<'a>> {
        self.members().find(|(n, _)| n.str_eq(name)).map(|(_, v)| v)
    }

    /// `true` or `false`; `None` for any other value.
    pub fn as_bool(&self) -> Option<bool> {
        match self.raw {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        }
    }

    /// The number as an `f64` (exact: [`parse`] refused any number a double does not carry).
    pub fn as_f64(&self) -> Option<f64> {
        match self.kind() {
            Kind::Number => number::to_f64(self.raw),
            _ => None,
        }
    }

    /// The number as a `u64` when its value is a non-negative integer (written `7`, `7.0`
    /// or `7e0` alike) that a `u64` holds.
    pub fn as_u64(&self) -> Option<u64> {
        if self.kind() != Kind::Number {
            return None;
        }
        if let Some(n) =
            integer(self.raw).and_then(|(neg, m)| if neg && m != 0 { None } else { Some(m) })
        {
            return Some(n);
        }
        let x = self.as_f64()?;
        // 2^64 as a double; every double below it that is an integer casts exactly.
        ((0.0..18_446_744_073_709_551_616.0).contains(&x) && x == (x as u64) as f64)
            .then_some(x as u64)
    }

    /// The number as an `i64` when its value is an integer an `i64` holds.
    pub fn as_i64(&self) -> Option<i64> {
        if self.kind() != Kind::Number {
            return None;
        }
        if let Some((neg, m)) = integer(self.raw) {
            return if neg {
                0i64.checked_sub_unsigned(m)
            } else {
                i64::try_from(m).ok()
            };
        }
        let x = self.as_f64()?;
        ((-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x)
            && x == (x as i64) as f64)
            .then_some(x as i64)
    }

    /// A string without escapes, borrowed from the text; `None` for a string with escapes
    /// (use [`Value::unescape_into`] or [`Value::str_eq`]) and for any other value.
    pub fn as_str(&self) -> Option<&'a str> {
        let inner = self.string_content()?;
        if inner.contains(&b'\\') {
            return None;
        }
        core::str::from_utf8(inner).ok()
    }

    /// Whether the value is a string equal to `s`, escapes decoded.
    pub fn str_eq(&self, s: &str) -> bool {
        match self.string_content() {
            Some(inner) if !inner.contains(&b'\\') => inner == s.as_bytes(),
            Some(inner) => Chars::new(inner).eq(s.chars()),
            None => false,
        }
    }

    /// Decodes a string (escapes included) into `buf`; [`Error::BufferTooSmall`] when it
    /// does not fit, [`Error::WrongKind`] when the value is not a string.
    pub fn unescape_into<'b>(&self, buf: &'b mut [u8]) -> Result<&'b str, Error> {
        let inner = self.string_content().ok_or(Error::WrongKind)?;
        let mut len = 0usize;
        for c in Chars::new(inner) {
            let mut tmp = [0u8; 4];
            let bytes = c.encode_utf8(&mut tmp).as_bytes();
            let dst = buf
                .get_mut(len..len + bytes.len())
                .ok_or(Error::BufferTooSmall)?;
            dst.copy_from_slice(bytes);
            len += bytes.len();
        }
        core::str::from_utf8(buf.get(..len).unwrap_or_default()).map_err(|_| Error::NotJson)
    }

    /// The members of an object, in text order: `(name, value)`, the name a string
    /// [`Value`]. Empty for any other value.
    pub fn members(&self) -> Members<'a> {
        Members {
            text: if self.kind() == Kind::Object {
                self.raw
            } else {
                &[]
            },
            at: 1,
        }
    }

    /// The items of an array, in order. Empty for any other value.
    pub fn items(&self) -> Items<'a> {
        Items {
            text: if self.kind() == Kind::Array {
                self.raw
            } else {
                &[]
            },
            at: 1,
        }
    }

    /// The raw content of a string value.
    fn string_content(&self) -> Option<&'a [u8]> {
        match self.kind() {
            Kind::String => Some(content(self.raw, 0, self.raw.len())),
            _ => None,
        }
    }

    /// A value of validated text.
    pub(crate) fn new(raw: &'a [u8]) -> Self {
        Self { raw }
    }
}

/// A plain integer literal (no fraction or exponent) as sign and magnitude, if a `u64`
/// holds the magnitude.
fn integer(lit: &[u8]) -> Option<(bool, u64)> {
    let (neg, digits) = match lit.strip_prefix(b"-") {
        Some(d) => (true, d),
        None => (false, lit),
    };
    if digits.is_empty() {
        return None;
    }
    let mut m: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        m = m.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some((neg, m))
}

/// The members of an object: see [`Value::members`].
#[derive(Clone, Debug)]
pub struct Members<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Members<'a> {
    type Item = (Value<'a>, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let m = member_at(self.text, self.at).ok()?;
        self.at = m.value_end;
        let name = self.text.get(m.name..m.name_end)?;
        let value = self.text.get(m.value..m.value_end)?;
        Some((Value::new(name), Value::new(value)))
    }
}

/// The items of an array: see [`Value::items`].
#[derive(Clone, Debug)]
pub struct Items<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Items<'a> {
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut at = ws(self.text, self.at);
        match self.text.get(at) {
            Some(b',') => at = ws(self.text, at + 1),
            Some(b']') | None => return None,
            Some(_) => {}
        }
        // The opening bracket is skipped by starting at 1; a `]` right there ends.
        if matches!(self.text.get(at), Some(b']') | None) {
            return None;
        }
        let end = value_end(self.text, at);
        self.at = end;
        self.text.get(at..end).map(Value::new)
    }
}
