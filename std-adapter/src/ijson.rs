//! I-JSON (RFC 7493) checks on raw JSON text: what a parser forgets once it has built a map.
//!
//! The argument digest ([`crate::jcs`]) binds a token to the canonical form of the call's
//! arguments. Two requests the handler reads differently must never share a digest, and two
//! things break that once a JSON parser has built its values:
//!
//! * **duplicate member names**: `{"a":1,"a":2}` reads as `{"a":2}` in one parser and
//!   `{"a":1}` in another (RFC 8785 and RFC 7493 forbid them);
//! * **numbers a double does not carry**: `9007199254740993` and `9007199254740992` read as
//!   the same double, so their canonical forms are equal, while a handler reading integers
//!   sees two different amounts.
//!
//! [`check`] scans raw text (a request body, before any parser sees it) and reports the
//! first [`Violation`], with a JSON Pointer to where it is. A number passes when its value
//! survives the trip through a double: the canonical form prints exactly the value that was
//! written (`0.1`, `1.50`, `1e21`, `9007199254740992` pass; `9007199254740993`,
//! `3.141592653589793238` and `1e400` do not).
//!
//! ```
//! use mrtr_std::ijson::{self, ViolationKind};
//!
//! assert!(ijson::check(br#"{"amount": 9007199254740992, "price": 0.1}"#).is_ok());
//! let v = ijson::check(br#"{"params": {"arguments": {"amount": 9007199254740993}}}"#)
//!     .unwrap_err();
//! assert_eq!(v.kind(), ViolationKind::LossyNumber);
//! assert_eq!(v.path(), "/params/arguments/amount");
//! let v = ijson::check(br#"{"a": 1, "\u0061": 2}"#).unwrap_err();
//! assert_eq!((v.kind(), v.path()), (ViolationKind::DuplicateName, "/a"));
//! ```

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use crate::jcs;

/// Deepest nesting [`check`] follows (the whole message; the arguments' own limit for the
/// digest is [`jcs::MAX_DEPTH`]).
pub const MAX_DEPTH: usize = 128;

/// What is wrong with the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ViolationKind {
    /// Not JSON at all (or not a single JSON value).
    NotJson,
    /// An object holds two members with the same name (after unescaping).
    DuplicateName,
    /// A number whose value a double does not carry exactly.
    LossyNumber,
    /// A string escapes half of a surrogate pair: not Unicode text.
    LoneSurrogate,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

impl ViolationKind {
    /// A stable snake_case name for logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotJson => "not_json",
            Self::DuplicateName => "duplicate_name",
            Self::LossyNumber => "lossy_number",
            Self::LoneSurrogate => "lone_surrogate",
            Self::TooDeep => "too_deep",
        }
    }
}

/// The first I-JSON violation found, and where: a JSON Pointer (RFC 6901) to the offending
/// member or number. It names places, never values, so it is safe to log and to return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    kind: ViolationKind,
    path: String,
}

impl Violation {
    /// What is wrong.
    pub fn kind(&self) -> ViolationKind {
        self.kind
    }

    /// Where: a JSON Pointer (`""` is the whole text).
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ViolationKind::NotJson => "not a JSON value",
            ViolationKind::DuplicateName => "duplicate member name",
            ViolationKind::LossyNumber => "number not exactly representable as a double",
            ViolationKind::LoneSurrogate => "string with a lone surrogate",
            ViolationKind::TooDeep => "nested too deep",
        };
        if self.path.is_empty() {
            f.write_str(what)
        } else {
            write!(f, "{what} at {}", self.path)
        }
    }
}

impl std::error::Error for Violation {}

/// Checks that `text` is one I-JSON value: valid JSON, no duplicate member names, every
/// number carried exactly by a double, no lone surrogates, at most [`MAX_DEPTH`] deep.
pub fn check(text: &[u8]) -> Result<(), Violation> {
    scan(text).map(|_| ())
}

/// [`check`], learning on the way what a JSON-RPC request's envelope says: its `method` and
/// the shape of its `params.requestState`. One pass over the text, building no tree: names
/// and the method borrow the text unless they hold escapes.
///
/// ```
/// use mrtr_std::ijson::{self, Shape};
///
/// let raw = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call",
///               "params":{"name":"book","requestState":7}}"#;
/// let envelope = ijson::scan(raw)?;
/// assert_eq!(envelope.method.as_deref(), Some("tools/call"));
/// assert_eq!(envelope.request_state, Shape::Other);
/// # Ok::<(), ijson::Violation>(())
/// ```
pub fn scan(text: &[u8]) -> Result<Envelope<'_>, Violation> {
    // The common case passes without keeping a path; a violation is found again with one,
    // to say where it is.
    run::<false>(text).or_else(|_| run::<true>(text))
}

/// One scan of `text`; with `PATH`, the path to each value is kept, for the violation.
fn run<const PATH: bool>(text: &[u8]) -> Result<Envelope<'_>, Violation> {
    let mut scan = Scan::<PATH> {
        text,
        at: 0,
        names: Vec::with_capacity(16),
        path: Vec::new(),
        envelope: Envelope::default(),
    };
    scan.ws();
    if let Err(kind) = scan.value(0, Role::Message) {
        return Err(scan.violation(kind));
    }
    scan.ws();
    if scan.at != text.len() {
        return Err(scan.violation(ViolationKind::NotJson));
    }
    Ok(scan.envelope)
}

/// What [`scan`] found in a JSON-RPC message (an object; any other value has an empty
/// envelope).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Envelope<'a> {
    /// The `method` member, unescaped, when it is a string.
    pub method: Option<Cow<'a, str>>,
    /// The `requestState` member of `params` (when `params` is an object).
    pub request_state: Shape,
}

/// What kind of value a member holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shape {
    /// There is no such member.
    #[default]
    Absent,
    /// A string.
    String,
    /// Anything but a string (`null` included).
    Other,
}

/// Whether the JSON number literal `lit` keeps its value through a double: the canonical
/// (ECMAScript) form of the double it reads as denotes exactly the value written.
pub fn number_is_exact(lit: &str) -> bool {
    // Up to 15 digits, an integer is always exact (2^53 has 16).
    let digits = lit.strip_prefix('-').unwrap_or(lit);
    if digits.len() <= 15 && digits.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    match lit.parse::<f64>() {
        Ok(x) if x.is_finite() => decimal(lit) == decimal(&jcs::format_number(x)),
        _ => false,
    }
}

/// A decimal literal's value as (negative, significant digits, exponent n) with value
/// `0.digits × 10^n`; zero is `(false, "", 0)`. `None` if the exponent is absurd.
fn decimal(lit: &str) -> Option<(bool, String, i64)> {
    let (neg, rest) = match lit.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, lit),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = int.chars().chain(frac.chars()).collect();
    let lead = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0');
    if digits.is_empty() {
        return Some((false, String::new(), 0));
    }
    let n = i64::try_from(int.len()).ok()? - i64::try_from(lead).ok()? + exp;
    Some((neg, digits.to_owned(), n))
}

/// The high bit of every byte of a word.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Marks (with its high bit) each byte of the eight in `word` that ends or escapes a string
/// or is a control character: a quote, a backslash, or below 0x20. The lowest mark is exact
/// (the classic zero-byte test can mark a byte above a true one, never below), so
/// `trailing_zeros() / 8` is the offset of the first such byte; zero when there is none.
const fn specials(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const fn zeros(v: u64) -> u64 {
        v.wrapping_sub(ONES) & !v & HIGH
    }
    zeros(word ^ (ONES * b'"' as u64))
        | zeros(word ^ (ONES * b'\\' as u64))
        | (word.wrapping_sub(ONES * 0x20) & !word & HIGH)
}

/// Path segment of the value being scanned.
enum Seg<'a> {
    Name(Cow<'a, [u8]>),
    Index(usize),
}

/// The role a value plays in a JSON-RPC message, for [`Envelope`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Anything the envelope does not record.
    Plain,
    /// The whole message.
    Message,
    /// The message's `method`.
    Method,
    /// The message's `params`.
    Params,
    /// `params.requestState`.
    RequestState,
}

/// Objects with more members than this find duplicates through a hash set instead of
/// comparing each new name with every earlier one.
const LINEAR_NAMES: usize = 16;

struct Scan<'a, const PATH: bool> {
    text: &'a [u8],
    at: usize,
    /// Member names of the objects being scanned, innermost last, unescaped UTF-8 (no copies:
    /// a name without escapes borrows the text).
    names: Vec<Cow<'a, [u8]>>,
    /// Path to the value being scanned (kept only with `PATH`).
    path: Vec<Seg<'a>>,
    envelope: Envelope<'a>,
}

impl<'a, const PATH: bool> Scan<'a, PATH> {
    /// The violation `kind`, where the scan stands (its path is kept only with `PATH`). The
    /// scan functions return only the kind; [`run`] adds where.
    fn violation(&self, kind: ViolationKind) -> Violation {
        let mut path = String::new();
        for seg in &self.path {
            path.push('/');
            match seg {
                Seg::Index(i) => path.push_str(&i.to_string()),
                Seg::Name(name) => {
                    for c in String::from_utf8_lossy(name).chars() {
                        match c {
                            '~' => path.push_str("~0"),
                            '/' => path.push_str("~1"),
                            c => path.push(c),
                        }
                    }
                }
            }
        }
        Violation { kind, path }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Result<(), ViolationKind> {
        if self.peek() == Some(b) {
            self.at += 1;
            Ok(())
        } else {
            Err(ViolationKind::NotJson)
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), ViolationKind> {
        match self.text.get(self.at..self.at + word.len()) {
            Some(w) if w == word => {
                self.at += word.len();
                Ok(())
            }
            _ => Err(ViolationKind::NotJson),
        }
    }

    fn value(&mut self, depth: usize, role: Role) -> Result<(), ViolationKind> {
        if role == Role::RequestState {
            self.envelope.request_state = match self.peek() {
                Some(b'"') => Shape::String,
                _ => Shape::Other,
            };
        }
        match self.peek() {
            Some(b'{') => self.object(depth + 1, role),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => {
                let text = self.string(role == Role::Method)?;
                if role == Role::Method {
                    // The string was checked: it is UTF-8.
                    self.envelope.method = match text {
                        Cow::Borrowed(b) => std::str::from_utf8(b).ok().map(Cow::Borrowed),
                        Cow::Owned(v) => String::from_utf8(v).ok().map(Cow::Owned),
                    };
                }
                Ok(())
            }
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(ViolationKind::NotJson),
        }
    }

    fn object(&mut self, depth: usize, role: Role) -> Result<(), ViolationKind> {
        if depth > MAX_DEPTH {
            return Err(ViolationKind::TooDeep);
        }
        self.eat(b'{')?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        let base = self.names.len();
        let mut many: Option<HashSet<Cow<'a, [u8]>>> = None;
        loop {
            self.ws();
            let name = self.string(true)?;
            let child = match (role, &*name) {
                (Role::Message, b"method") => Role::Method,
                (Role::Message, b"params") => Role::Params,
                (Role::Params, b"requestState") => Role::RequestState,
                _ => Role::Plain,
            };
            if PATH {
                self.path.push(Seg::Name(name.clone()));
            }
            let seen = self.names.get(base..).unwrap_or_default();
            let duplicate = match &mut many {
                Some(set) => !set.insert(name.clone()),
                None if seen.len() < LINEAR_NAMES => seen.contains(&name),
                None => {
                    let mut set: HashSet<Cow<'a, [u8]>> = seen.iter().cloned().collect();
                    let duplicate = !set.insert(name.clone());
                    many = Some(set);
                    duplicate
                }
            };
            if duplicate {
                return Err(ViolationKind::DuplicateName);
            }
            if many.is_none() {
                self.names.push(name);
            }
            self.ws();
            self.eat(b':')?;
            self.ws();
            self.value(depth, child)?;
            if PATH {
                self.path.pop();
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    self.names.truncate(base);
                    return Ok(());
                }
                _ => return Err(ViolationKind::NotJson),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), ViolationKind> {
        if depth > MAX_DEPTH {
            return Err(ViolationKind::TooDeep);
        }
        self.eat(b'[')?;
        self.ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        let mut index = 0usize;
        loop {
            self.ws();
            if PATH {
                self.path.push(Seg::Index(index));
            }
            self.value(depth, Role::Plain)?;
            if PATH {
                self.path.pop();
            }
            index += 1;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(ViolationKind::NotJson),
            }
        }
    }

    /// Checks that the text between `from` and `to` is UTF-8.
    fn utf8(&self, from: usize, to: usize) -> Result<(), ViolationKind> {
        match self.text.get(from..to).map(std::str::from_utf8) {
            Some(Ok(_)) => Ok(()),
            _ => Err(ViolationKind::NotJson),
        }
    }

    /// A string, checked (JSON syntax, UTF-8, surrogates); its unescaped UTF-8 bytes when
    /// `decode` (else the result is empty). A string without escapes borrows the text.
    fn string(&mut self, decode: bool) -> Result<Cow<'a, [u8]>, ViolationKind> {
        self.eat(b'"')?;
        let text: &'a [u8] = self.text;
        let start = self.at;
        // Start of the run of plain bytes being scanned.
        let mut run = self.at;
        // Built only once an escape is met, and only when decoding.
        let mut out: Option<Vec<u8>> = None;
        // No byte of 0x80 or above so far: ASCII needs no UTF-8 check.
        let mut ascii = true;
        loop {
            // Plain bytes eight at a time (long strings: tokens, text), up to the first byte
            // that is not plain.
            while let Some(chunk) = text.get(self.at..self.at + 8) {
                let Ok(word) = <[u8; 8]>::try_from(chunk) else {
                    break;
                };
                let word = u64::from_le_bytes(word);
                let marks = specials(word);
                if marks != 0 {
                    // Bytes below the first mark are plain (at most 7 of them).
                    let plain = marks.trailing_zeros() / 8;
                    let below = (1u64 << (plain * 8)) - 1;
                    ascii &= word & below & HIGH == 0;
                    self.at += plain as usize;
                    break;
                }
                ascii &= word & HIGH == 0;
                self.at += 8;
            }
            let Some(b) = self.peek() else {
                return Err(ViolationKind::NotJson);
            };
            match b {
                b'"' => {
                    // Escapes are ASCII, so the text between the quotes is UTF-8 exactly when
                    // the unescaped string is.
                    if !ascii {
                        self.utf8(start, self.at)?;
                    }
                    let tail = text.get(run..self.at).unwrap_or_default();
                    self.at += 1;
                    return Ok(match out {
                        Some(mut bytes) => {
                            bytes.extend_from_slice(tail);
                            Cow::Owned(bytes)
                        }
                        None if decode => Cow::Borrowed(tail),
                        None => Cow::Borrowed(&[]),
                    });
                }
                b'\\' => {
                    let plain = text.get(run..self.at).unwrap_or_default();
                    self.at += 1;
                    let c = self.escape()?;
                    if decode {
                        let bytes = out.get_or_insert_with(Vec::new);
                        bytes.extend_from_slice(plain);
                        bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                    run = self.at;
                }
                0x00..=0x1f => return Err(ViolationKind::NotJson),
                _ => {
                    ascii &= b < 0x80;
                    self.at += 1;
                }
            }
        }
    }

    /// The character of an escape (the backslash already read).
    fn escape(&mut self) -> Result<char, ViolationKind> {
        let Some(e) = self.peek() else {
            return Err(ViolationKind::NotJson);
        };
        self.at += 1;
        Ok(match e {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode_escape()?,
            _ => return Err(ViolationKind::NotJson),
        })
    }

    fn hex4(&mut self) -> Result<u32, ViolationKind> {
        let digits = self
            .text
            .get(self.at..self.at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u32::from_str_radix(h, 16).ok());
        match digits {
            Some(v) => {
                self.at += 4;
                Ok(v)
            }
            None => Err(ViolationKind::NotJson),
        }
    }

    /// The character of a `\u` escape (the `\u` already read), joining a surrogate pair.
    fn unicode_escape(&mut self) -> Result<char, ViolationKind> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if self.text.get(self.at..self.at + 2) != Some(b"\\u") {
                    return Err(ViolationKind::LoneSurrogate);
                }
                self.at += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(ViolationKind::LoneSurrogate);
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(ViolationKind::LoneSurrogate),
            c => c,
        };
        char::from_u32(code).ok_or(ViolationKind::LoneSurrogate)
    }

    fn number(&mut self) -> Result<(), ViolationKind> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(ViolationKind::NotJson),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(ViolationKind::NotJson);
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(ViolationKind::NotJson);
            }
            self.digits();
        }
        // The literal is ASCII by construction.
        let lit = std::str::from_utf8(&self.text[start..self.at]).unwrap_or("");
        if number_is_exact(lit) {
            Ok(())
        } else {
            Err(ViolationKind::LossyNumber)
        }
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<ViolationKind> {
        check(text.as_bytes()).err().map(|v| v.kind())
    }

    #[test]
    fn numbers_pass_when_the_double_carries_their_value() {
        for ok in [
            "0",
            "-0",
            "0.0",
            "1.50",
            "0.1",
            "1e21",
            "1E+21",
            "100e-2",
            "9007199254740992",
            "-9007199254740992",
            "123456789012345",
            "333333333.3333333",
            "5e-324",
            "1.7976931348623157e308",
            "295147905179352830000",
        ] {
            assert!(number_is_exact(ok), "{ok}");
            assert_eq!(kind(ok), None, "{ok}");
        }
        for lossy in [
            "9007199254740993",
            "-9007199254740993",
            "18446744073709551615",
            "1152921504606846976", // 2^60 is a double, but JCS prints it 1152921504606847000
            "3.141592653589793238462643383279",
            "0.10000000000000000001",
            "4.9e-324",
            "1e400",
            "-1e400",
            "1e-400",
            "1e99999999999999999999",
        ] {
            assert!(!number_is_exact(lossy), "{lossy}");
            assert_eq!(kind(lossy), Some(ViolationKind::LossyNumber), "{lossy}");
        }
    }

    #[test]
    fn duplicate_names_compare_unescaped() {
        assert_eq!(kind(r#"{"a":1,"b":{"a":2}}"#), None);
        for dup in [
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,"\u0061":2}"#,
            r#"{"x":[{"é":1,"\u00e9":2}]}"#,
            r#"{"😀":1,"\ud83d\ude00":2}"#,
        ] {
            assert_eq!(kind(dup), Some(ViolationKind::DuplicateName), "{dup}");
        }
        let v = check(br#"{"p":{"a/b~c":{"k":1,"k":2}}}"#).unwrap_err();
        assert_eq!(v.path(), "/p/a~1b~0c/k");
        assert_eq!(
            v.to_string(),
            "duplicate member name at /p/a~1b~0c/k",
            "names places, never values"
        );
        let v = check(br#"[0, 1, {"n": 9007199254740993}]"#).unwrap_err();
        assert_eq!(v.path(), "/2/n");
    }

    #[test]
    fn anything_not_one_json_value_is_refused() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "-",
            "tru",
            "\"a",
            "{} {}",
            "[1 2]",
            "\"\t\"",
            "'a'",
            "\"\\x\"",
        ] {
            assert_eq!(kind(bad), Some(ViolationKind::NotJson), "{bad:?}");
        }
        assert_eq!(kind(r#""\ud800""#), Some(ViolationKind::LoneSurrogate));
        assert_eq!(kind(r#""\udc00x""#), Some(ViolationKind::LoneSurrogate));
        assert_eq!(
            kind(r#""\ud800\u0041""#),
            Some(ViolationKind::LoneSurrogate)
        );
        assert_eq!(kind(" { \"a\" : [ true , false , null ] } \n"), None);
    }

    #[test]
    fn depth_is_bounded() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(kind(&ok), None);
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(kind(&deep), Some(ViolationKind::TooDeep));
        // Far deeper than the limit: refused without recursing further.
        let very = "[".repeat(1_000_000);
        assert_eq!(kind(&very), Some(ViolationKind::TooDeep));
    }

    #[test]
    fn duplicates_are_found_in_objects_of_any_size() {
        // Below and above the size where the scan switches to a hash set, the duplicate first,
        // in the middle and last.
        for members in [2, LINEAR_NAMES - 1, LINEAR_NAMES, LINEAR_NAMES + 1, 200] {
            let names: Vec<String> = (0..members).map(|i| format!("\"k{i}\":{i}")).collect();
            let unique = format!("{{{}}}", names.join(","));
            assert_eq!(kind(&unique), None, "{members} members");
            for dup in [0, members / 2, members - 1] {
                let text = format!("{{{},\"k{dup}\":0}}", names.join(","));
                let v = check(text.as_bytes()).unwrap_err();
                assert_eq!(v.kind(), ViolationKind::DuplicateName, "{members}/{dup}");
                assert_eq!(v.path(), format!("/k{dup}"));
            }
        }
        // Names of sibling and nested objects never collide with each other.
        assert_eq!(
            kind(r#"{"a":{"a":{"a":1}},"b":{"a":2},"c":[{"a":1},{"a":2}]}"#),
            None
        );
    }

    #[test]
    fn the_envelope_names_method_and_request_state() {
        let env = scan(br#"{"id":1,"method":"tools/call","params":{"requestState":"t"}}"#).unwrap();
        assert_eq!(env.method.as_deref(), Some("tools/call"));
        assert_eq!(env.request_state, Shape::String);
        // Escaped names and values are read unescaped, as a parser reads them.
        let env =
            scan(br#"{"met\u0068od":"tools\/call","params":{"request\u0053tate":null}}"#).unwrap();
        assert_eq!(env.method.as_deref(), Some("tools/call"));
        assert_eq!(env.request_state, Shape::Other);
        for (text, method, state) in [
            (
                r#"{"method":7,"params":{"requestState":[]}}"#,
                None,
                Shape::Other,
            ),
            (
                r#"{"method":"m","params":[{"requestState":1}]}"#,
                Some("m"),
                Shape::Absent,
            ),
            (
                r#"{"method":"m","params":{"x":{"requestState":1}}}"#,
                Some("m"),
                Shape::Absent,
            ),
            (
                r#"{"requestState":1,"x":{"method":"m"}}"#,
                None,
                Shape::Absent,
            ),
            (
                r#"[{"method":"m","params":{"requestState":1}}]"#,
                None,
                Shape::Absent,
            ),
            (r#""method""#, None, Shape::Absent),
        ] {
            let env = scan(text.as_bytes()).unwrap();
            assert_eq!(
                (env.method.as_deref(), env.request_state),
                (method, state),
                "{text}"
            );
        }
    }

    #[test]
    fn strings_must_be_utf8_wherever_they_are() {
        for bad in [
            &b"\"\xff\""[..],
            b"{\"\xc3\":1}",
            b"{\"a\":\"x\\n\xe2\x82\"}",
        ] {
            assert_eq!(check(bad).unwrap_err().kind(), ViolationKind::NotJson);
        }
        assert!(check("{\"é\":\"\\u00e9 ünï\"}".as_bytes()).is_ok());
    }

    #[test]
    fn specials_are_found_at_every_offset_of_a_long_string() {
        let plain = "abcdefghijklmnopqrstuvwxyz0123456789-é_ü";
        for at in 0..plain.len() + 1 {
            if !plain.is_char_boundary(at) {
                continue;
            }
            let (head, tail) = plain.split_at(at);
            assert_eq!(kind(&format!("\"{head}{tail}\"")), None);
            assert_eq!(
                kind(&format!("\"{head}\\n{tail}\"")),
                None,
                "escape at {at}"
            );
            assert_eq!(
                kind(&format!("\"{head}\u{1}{tail}\"")),
                Some(ViolationKind::NotJson)
            );
            assert_eq!(
                kind(&format!("\"{head}\u{1f}{tail}\"")),
                Some(ViolationKind::NotJson)
            );
            assert_eq!(
                kind(&format!("\"{head}\"{tail}\"")),
                Some(ViolationKind::NotJson)
            );
            // Ends exactly here.
            assert_eq!(kind(&format!("[\"{head}\",1]")), None);
            let message = format!("{{\"method\":\"{head}\\/{tail}\"}}");
            let env = scan(message.as_bytes()).unwrap();
            assert_eq!(env.method.unwrap(), format!("{head}/{tail}"));
        }
    }

    #[test]
    fn the_first_special_byte_of_a_word_is_found_exactly() {
        let special = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
        // Every byte value at every offset, over plain, high and special backgrounds (a
        // special byte above the first must not move it).
        for background in [b'a', 0xc3, 0x7f, 0x20, b'"', 0x00, 0x1f, b'\\'] {
            for at in 0..8 {
                for b in 0u8..=255 {
                    let mut bytes = [b'x'; 8];
                    bytes[at] = b;
                    for byte in bytes.iter_mut().skip(at + 1) {
                        *byte = background;
                    }
                    let marks = specials(u64::from_le_bytes(bytes));
                    let first = bytes.iter().position(|&b| special(b));
                    let found = (marks != 0).then(|| marks.trailing_zeros() as usize / 8);
                    assert_eq!(found, first, "{bytes:?}");
                }
            }
        }
    }
}
