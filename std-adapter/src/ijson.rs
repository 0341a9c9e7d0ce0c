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
/// and the method are not copied unless they hold escapes.
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
    // The common case passes on a scan that keeps no path and checks the UTF-8 of the whole
    // text at once. Only a text that fails is scanned again, keeping the path and checking
    // each string's UTF-8 where it ends, to report the first violation and where it is.
    match Scan::<false>::new(text).run() {
        Ok(envelope) => Ok(envelope),
        Err(_) => Scan::<true>::new(text).run(),
    }
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

/// Where the whitespace at `at` ends.
#[inline(never)]
fn skip_ws(text: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = text.get(at) {
        at += 1;
    }
    at
}

/// The first eight bytes of `bytes` as a little-endian word, zero-padded.
const fn head(bytes: &[u8]) -> u64 {
    let mut word = 0;
    let mut i = if bytes.len() < 8 { bytes.len() } else { 8 };
    while i > 0 {
        i -= 1;
        word = (word << 8) | bytes[i] as u64;
    }
    word
}

/// A violation's kind as the scan's functions return it, one word wide: a
/// `Result<usize, Stop>` (where a value ends, or why the scan stops) comes back in two
/// registers, where one with the byte-wide [`ViolationKind`] goes through memory, and the
/// scan returns one for every value (about 2 % fewer instructions for the bench bodies).
#[derive(Clone, Copy)]
#[repr(usize)]
enum Stop {
    NotJson,
    DuplicateName,
    LossyNumber,
    LoneSurrogate,
    TooDeep,
}

impl From<Stop> for ViolationKind {
    fn from(stop: Stop) -> Self {
        match stop {
            Stop::NotJson => Self::NotJson,
            Stop::DuplicateName => Self::DuplicateName,
            Stop::LossyNumber => Self::LossyNumber,
            Stop::LoneSurrogate => Self::LoneSurrogate,
            Stop::TooDeep => Self::TooDeep,
        }
    }
}

/// The JSON-RPC methods that can pause (see [`crate::jsonrpc::Method`]), the ones whose
/// envelope matters.
const PAUSABLE: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

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

/// A member name of an object being scanned, without a copy: a name without escapes is read
/// where it is in the text, an escaped one from [`Scan::unescaped`].
#[derive(Clone, Copy)]
struct Name {
    /// Its first eight bytes, zero-padded: with the length, this tells apart almost any two
    /// different names without reading either.
    head: u64,
    len: usize,
    /// Where its bytes start: in the text, or in `unescaped` when `escaped`.
    from: usize,
    escaped: bool,
}

/// What [`Scan::rest_of_string`] found.
struct Rest {
    /// Just past the closing quote.
    next: usize,
    /// The string held escapes.
    escaped: bool,
}

/// One scan of a text, from its first byte: the scan's functions take the position they
/// start at and return where they end. With `PATH`, the path to each value is kept, for the
/// violation.
struct Scan<'a, const PATH: bool> {
    text: &'a [u8],
    /// Member names of the objects being scanned, innermost last (an object past
    /// [`LINEAR_NAMES`] members keeps its later ones in its own hash set instead).
    names: Vec<Name>,
    /// Unescaped bytes of the escaped names in `names`, innermost last.
    unescaped: Vec<u8>,
    /// Every byte of every string so far, ORed: no high bit means the strings are ASCII.
    /// A word read past a string's end adds bytes of the text after it, which at worst asks
    /// for a needless UTF-8 check.
    bytes_seen: u64,
    /// Path to the value being scanned (kept only with `PATH`).
    path: Vec<Seg<'a>>,
    envelope: Envelope<'a>,
}

/// The `method` name's head.
const METHOD: u64 = head(b"method");
/// The `params` name's head.
const PARAMS: u64 = head(b"params");

impl<'a, const PATH: bool> Scan<'a, PATH> {
    fn new(text: &'a [u8]) -> Self {
        Self {
            text,
            names: Vec::with_capacity(16),
            unescaped: Vec::new(),
            bytes_seen: 0,
            path: Vec::new(),
            envelope: Envelope::default(),
        }
    }

    /// Scans the whole text.
    fn run(mut self) -> Result<Envelope<'a>, Violation> {
        match self.message() {
            Ok(()) => Ok(self.envelope),
            Err(stop) => Err(self.violation(stop.into())),
        }
    }

    fn message(&mut self) -> Result<(), Stop> {
        let at = self.ws(0);
        let at = self.value(at, 0, Role::Message)?;
        if self.ws(at) != self.text.len() {
            return Err(Stop::NotJson);
        }
        // Without `PATH` no string checked its UTF-8: the text split at ASCII quotes is UTF-8
        // exactly when the whole is, and the whole is ASCII (so UTF-8) when no string had a
        // high bit (every byte outside strings was JSON's own ASCII). With `PATH`, each
        // string was checked where it ends, so that the first violation is the one reported.
        if !PATH && self.bytes_seen & HIGH != 0 && std::str::from_utf8(self.text).is_err() {
            return Err(Stop::NotJson);
        }
        Ok(())
    }

    /// The violation `kind`, where the scan stands (its path is kept only with `PATH`).
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

    /// Where the whitespace at `at` ends.
    #[inline(always)]
    fn ws(&self, at: usize) -> usize {
        // Compact text has none: one test, and the loop only where there is some.
        match self.text.get(at) {
            Some(b' ' | b'\t' | b'\n' | b'\r') => skip_ws(self.text, at),
            _ => at,
        }
    }

    /// The colon after a member name at `at`, whitespace around it skipped; returns where
    /// the value starts.
    #[inline(always)]
    fn colon(&self, at: usize) -> Result<usize, Stop> {
        let at = match self.text.get(at) {
            Some(b':') => at + 1,
            _ => match self.text.get(self.ws(at)) {
                Some(b':') => self.ws(at) + 1,
                _ => return Err(Stop::NotJson),
            },
        };
        Ok(self.ws(at))
    }

    /// The value at `at` (its whitespace skipped); returns where it ends. `depth` counts the
    /// arrays and objects it is in.
    #[inline(always)]
    fn value(&mut self, at: usize, depth: usize, role: Role) -> Result<usize, Stop> {
        match self.text.get(at) {
            Some(b'"') if role == Role::Method => self.method(at),
            Some(b'"') => self.string(at),
            Some(b'{') => self.object(at, depth + 1, role),
            Some(b'[') => self.array(at, depth + 1),
            Some(b't') => self.literal(at, b"true"),
            Some(b'f') => self.literal(at, b"false"),
            Some(b'n') => self.literal(at, b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(at),
            _ => Err(Stop::NotJson),
        }
    }

    fn literal(&self, at: usize, word: &[u8]) -> Result<usize, Stop> {
        match self.text.get(at..at + word.len()) {
            Some(w) if w == word => Ok(at + word.len()),
            _ => Err(Stop::NotJson),
        }
    }

    fn object(&mut self, at: usize, depth: usize, role: Role) -> Result<usize, Stop> {
        if depth > MAX_DEPTH {
            return Err(Stop::TooDeep);
        }
        let mut at = self.ws(at + 1);
        if self.text.get(at) == Some(&b'}') {
            return Ok(at + 1);
        }
        let base = self.names.len();
        let unescaped_base = self.unescaped.len();
        let mut many: Option<HashSet<Cow<'a, [u8]>>> = None;
        loop {
            if self.text.get(at) != Some(&b'"') {
                return Err(Stop::NotJson);
            }
            let mark = self.unescaped.len();
            let name;
            (at, name) = self.name(at)?;
            let child = match role {
                Role::Plain => Role::Plain,
                _ => self.role(role, &name),
            };
            if PATH {
                self.path.push(Seg::Name(self.cow(&name)));
            }
            self.add(base, name, &mut many, mark)?;
            at = self.colon(at)?;
            if child == Role::RequestState {
                self.envelope.request_state = match self.text.get(at) {
                    Some(b'"') => Shape::String,
                    _ => Shape::Other,
                };
            }
            at = self.value(at, depth, child)?;
            if PATH {
                self.path.pop();
            }
            at = self.ws(at);
            match self.text.get(at) {
                Some(b',') => at = self.ws(at + 1),
                Some(b'}') => {
                    self.names.truncate(base);
                    self.unescaped.truncate(unescaped_base);
                    return Ok(at + 1);
                }
                _ => return Err(Stop::NotJson),
            }
        }
    }

    /// The role of the member `name` of an object playing `role` (not [`Role::Plain`]).
    #[inline(never)]
    fn role(&self, role: Role, name: &Name) -> Role {
        match role {
            Role::Message if self.is(name, METHOD, b"method") => Role::Method,
            Role::Message if self.is(name, PARAMS, b"params") => Role::Params,
            Role::Params if self.is(name, head(b"requestState"), b"requestState") => {
                Role::RequestState
            }
            _ => Role::Plain,
        }
    }

    /// Adds `name` to the names of the object whose names start at `base` in `names` (or
    /// are in `many`, past [`LINEAR_NAMES`]), refusing a duplicate. `mark`: the length of
    /// `unescaped` before the name.
    #[inline(always)]
    fn add(
        &mut self,
        base: usize,
        name: Name,
        many: &mut Option<HashSet<Cow<'a, [u8]>>>,
        mark: usize,
    ) -> Result<(), Stop> {
        // Past LINEAR_NAMES, names stay out of `names` (in `many`): the count stops there.
        let seen = self.names.get(base..).unwrap_or_default();
        if seen.len() >= LINEAR_NAMES {
            return self.add_many(base, name, many, mark);
        }
        for n in seen {
            if n.head == name.head && n.len == name.len && (n.len <= 8 || self.same(n, &name)) {
                return Err(Stop::DuplicateName);
            }
        }
        self.names.push(name);
        Ok(())
    }

    /// [`Scan::add`] past [`LINEAR_NAMES`] names: through the hash set.
    #[inline(never)]
    fn add_many(
        &mut self,
        base: usize,
        name: Name,
        many: &mut Option<HashSet<Cow<'a, [u8]>>>,
        mark: usize,
    ) -> Result<(), Stop> {
        let new = self.cow(&name);
        let set = match many {
            Some(set) => set,
            None => {
                let seen = self.names.get(base..).unwrap_or_default();
                many.insert(seen.iter().map(|n| self.cow(n)).collect())
            }
        };
        if !set.insert(new) {
            return Err(Stop::DuplicateName);
        }
        // The set holds its own copy.
        self.unescaped.truncate(mark);
        Ok(())
    }

    fn array(&mut self, at: usize, depth: usize) -> Result<usize, Stop> {
        if depth > MAX_DEPTH {
            return Err(Stop::TooDeep);
        }
        let mut at = self.ws(at + 1);
        if self.text.get(at) == Some(&b']') {
            return Ok(at + 1);
        }
        let mut index = 0usize;
        loop {
            if PATH {
                self.path.push(Seg::Index(index));
            }
            at = self.value(at, depth, Role::Plain)?;
            if PATH {
                self.path.pop();
            }
            index += 1;
            at = self.ws(at);
            match self.text.get(at) {
                Some(b',') => at = self.ws(at + 1),
                Some(b']') => return Ok(at + 1),
                _ => return Err(Stop::NotJson),
            }
        }
    }

    /// Whether `name` is `word` (`word_head` its [`head`]).
    fn is(&self, name: &Name, word_head: u64, word: &[u8]) -> bool {
        name.head == word_head
            && name.len == word.len()
            && (name.len <= 8 || self.bytes(name) == word)
    }

    /// Whether two names of the same head and length are the same.
    #[inline(never)]
    fn same(&self, a: &Name, b: &Name) -> bool {
        self.bytes(a) == self.bytes(b)
    }

    /// The unescaped bytes of `name`.
    fn bytes(&self, name: &Name) -> &[u8] {
        let store = if name.escaped {
            &self.unescaped[..]
        } else {
            self.text
        };
        store
            .get(name.from..name.from + name.len)
            .unwrap_or_default()
    }

    /// `name`'s bytes, borrowed from the text when it has no escapes.
    fn cow(&self, name: &Name) -> Cow<'a, [u8]> {
        if name.escaped {
            Cow::Owned(self.bytes(name).to_vec())
        } else {
            let text: &'a [u8] = self.text;
            Cow::Borrowed(
                text.get(name.from..name.from + name.len)
                    .unwrap_or_default(),
            )
        }
    }

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
    fn string(&mut self, at: usize) -> Result<usize, Stop> {
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
    fn name(&mut self, at: usize) -> Result<(usize, Name), Stop> {
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
    fn method(&mut self, at: usize) -> Result<usize, Stop> {
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

    /// The number at `start`, checked; returns where it ends.
    #[inline(always)]
    fn number(&self, start: usize) -> Result<usize, Stop> {
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

/// The scanner as it was before the scan was made cheaper (frozen: a reference for the
/// differential tests, never changed but to keep it compiling).
#[cfg(test)]
mod reference {
    use std::borrow::Cow;
    use std::collections::HashSet;

    use super::{
        Envelope, HIGH, MAX_DEPTH, Shape, Violation, ViolationKind, number_is_exact, specials,
    };

    /// What [`super::scan`] returned.
    pub(super) fn scan(text: &[u8]) -> Result<Envelope<'_>, Violation> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<ViolationKind> {
        check(text.as_bytes()).err().map(|v| v.kind())
    }

    /// The scan and the reference scanner it replaced give the same result on `text`.
    fn same_as_reference(text: &[u8]) -> Option<ViolationKind> {
        let new = scan(text);
        let old = reference::scan(text);
        assert_eq!(new, old, "{:?}", String::from_utf8_lossy(text));
        new.err().map(|v| v.kind())
    }

    /// A small deterministic generator (xorshift64), so that a failure is reproducible.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<'t>(&mut self, items: &[&'t [u8]]) -> &'t [u8] {
            items[self.below(items.len())]
        }
    }

    /// Raw string contents: plain, escaped, surrogates (paired, lone), UTF-8 (valid or not),
    /// control characters, long runs, and names that collide once unescaped.
    const STRINGS: &[&[u8]] = &[
        b"",
        b"a",
        b"\\u0061",
        b"b",
        b"method",
        b"met\\u0068od",
        b"params",
        b"par\\u0061ms",
        b"requestState",
        b"request\\u0053tate",
        b"tools/call",
        b"tools\\/call",
        b"prompts/get",
        b"resources/read",
        b"tools/list",
        b"\xc3\xa9",
        b"\\u00e9",
        b"\xf0\x9f\x98\x80",
        b"\\ud83d\\ude00",
        b"\\uD83D\\uDE00",
        b"\\ud800",
        b"\\udc00",
        b"\\ud800\\u0041",
        b"\\ud800x",
        b"\\ud83d\\ud83d",
        b"\\u00",
        b"\\u00g0",
        b"\\x",
        b"\\",
        b"\\\"",
        b"\\\\",
        b"\\b\\f\\n\\r\\t",
        b"\\u0000",
        b"\x01",
        b"\x1f",
        b"\t",
        b"\x7f",
        b"\xff",
        b"\xc3",
        b"\xe2\x82",
        b"\xed\xa0\x80",
        b"\xc0\x80",
        b"a/b~c",
        b"abcdefgh",
        b"abcdefghi",
        b"abcdefgh\\u0069",
        b"abcdefghij",
        b"abcdefgh\\u0069j",
        b"abcdefghiJ",
        b"io.modelcontextprotocol/protocolVersion",
        b"io.modelcontextprotocol/clientInfo",
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_ABCDEFGHIJKLMNOPQRSTU",
        b"x y z",
        b"\xc3\xa9t\xc3\xa9 \xe2\x82\xac",
    ];

    /// Number literals around every branch: small and long integers, the double's limits,
    /// exponents, and malformed ones.
    const NUMBERS: &[&[u8]] = &[
        b"0",
        b"-0",
        b"1",
        b"4",
        b"-7",
        b"0.1",
        b"1.50",
        b"1e21",
        b"1E+21",
        b"100e-2",
        b"123456789012345",
        b"-123456789012345",
        b"1234567890123456",
        b"9007199254740992",
        b"9007199254740993",
        b"-9007199254740993",
        b"18446744073709551615",
        b"1152921504606846976",
        b"295147905179352830000",
        b"3.141592653589793238",
        b"5e-324",
        b"4.9e-324",
        b"1.7976931348623157e308",
        b"1e400",
        b"-1e400",
        b"1e-400",
        b"1e99999999999999999999",
        b"01",
        b"1.",
        b"-",
        b"1e",
        b"1e+",
        b".5",
        b"+1",
        b"-a",
        b"1.e5",
        b"0x10",
        b"1_0",
    ];

    const SPACES: &[&[u8]] = &[
        b"",
        b"",
        b"",
        b" ",
        b"\n",
        b" \t\r\n ",
        b"\x0c",
        b"\xc2\xa0",
    ];

    const LITERALS: &[&[u8]] = &[b"true", b"false", b"null", b"tru", b"nul", b"fals", b"True"];

    fn push_space(rng: &mut Rng, out: &mut Vec<u8>) {
        // Mostly compact, sometimes spaced, rarely with a byte JSON does not allow there.
        let space = match rng.below(10) {
            0..=6 => &b""[..],
            7 | 8 => rng.pick(&SPACES[..6]),
            _ => rng.pick(SPACES),
        };
        out.extend_from_slice(space);
    }

    fn push_string(rng: &mut Rng, out: &mut Vec<u8>) {
        out.push(b'"');
        for _ in 0..1 + rng.below(2) {
            out.extend_from_slice(rng.pick(STRINGS));
        }
        out.push(b'"');
    }

    fn push_value(rng: &mut Rng, depth: usize, out: &mut Vec<u8>) {
        let kind = if depth >= 6 {
            rng.below(3)
        } else {
            rng.below(6)
        };
        match kind {
            0 => push_string(rng, out),
            1 => out.extend_from_slice(rng.pick(NUMBERS)),
            2 => out.extend_from_slice(rng.pick(LITERALS)),
            3 | 4 => {
                out.push(b'{');
                push_space(rng, out);
                let members = match rng.below(20) {
                    0 => 15 + rng.below(4),
                    _ => rng.below(5),
                };
                for i in 0..members {
                    if i > 0 {
                        out.push(b',');
                        push_space(rng, out);
                    }
                    push_string(rng, out);
                    push_space(rng, out);
                    out.push(b':');
                    push_space(rng, out);
                    push_value(rng, depth + 1, out);
                    push_space(rng, out);
                }
                out.push(b'}');
            }
            _ => {
                out.push(b'[');
                push_space(rng, out);
                for i in 0..rng.below(4) {
                    if i > 0 {
                        out.push(b',');
                        push_space(rng, out);
                    }
                    push_value(rng, depth + 1, out);
                    push_space(rng, out);
                }
                out.push(b']');
            }
        }
    }

    /// A JSON-RPC-like message: an envelope with method, params and requestState members
    /// (in any order, sometimes repeated or escaped) around generated values.
    fn message(rng: &mut Rng) -> Vec<u8> {
        let mut out = Vec::new();
        push_space(rng, &mut out);
        if rng.below(8) == 0 {
            push_value(rng, 0, &mut out);
            return out;
        }
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        out.extend_from_slice(rng.pick(NUMBERS));
        for _ in 0..1 + rng.below(3) {
            out.push(b',');
            push_space(rng, &mut out);
            match rng.below(5) {
                0 | 1 => {
                    out.extend_from_slice(rng.pick(&[b"\"method\"", b"\"met\\u0068od\""]));
                    out.push(b':');
                    match rng.below(4) {
                        0 => push_value(rng, 1, &mut out),
                        _ => push_string(rng, &mut out),
                    }
                }
                2 | 3 => {
                    out.extend_from_slice(b"\"params\":{\"name\":\"t\"");
                    for _ in 0..rng.below(3) {
                        out.push(b',');
                        match rng.below(3) {
                            0 => out.extend_from_slice(
                                rng.pick(&[b"\"requestState\"", b"\"request\\u0053tate\""]),
                            ),
                            _ => push_string(rng, &mut out),
                        }
                        out.push(b':');
                        push_value(rng, 2, &mut out);
                    }
                    out.push(b'}');
                }
                _ => {
                    push_string(rng, &mut out);
                    out.push(b':');
                    push_value(rng, 1, &mut out);
                }
            }
        }
        out.push(b'}');
        push_space(rng, &mut out);
        out
    }

    /// The end-to-end benchmark's fresh call and resume bodies.
    fn bench_bodies() -> [Vec<u8>; 2] {
        let fresh = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_table","arguments":{"party_size":4},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench-e2e","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}"#;
        let token: String = (0..280)
            .map(|i| {
                let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
                alphabet[i * 7 % 64] as char
            })
            .collect();
        let mut resume = fresh[..fresh.len() - 2].to_vec();
        resume.extend_from_slice(
            format!(
                r#","requestState":"{token}","inputResponses":{{"date":{{"action":"accept","content":{{"date":"2026-12-24"}}}}}}}}}}"#
            )
            .as_bytes(),
        );
        [fresh.to_vec(), resume]
    }

    #[test]
    fn the_pausable_methods_are_the_jsonrpc_ones() {
        let names: Vec<&str> = crate::jsonrpc::Method::ALL
            .iter()
            .map(|m| m.as_str())
            .collect();
        assert_eq!(names, PAUSABLE);
        for method in PAUSABLE {
            let text = format!(r#"{{"method":"{method}"}}"#);
            assert_eq!(
                scan(text.as_bytes()).unwrap().method.as_deref(),
                Some(method)
            );
        }
    }

    #[test]
    fn the_bench_bodies_pass_and_every_cut_or_changed_byte_is_judged_as_before() {
        for body in bench_bodies() {
            let env = scan(&body).unwrap();
            assert_eq!(env.method.as_deref(), Some("tools/call"));
            assert_eq!(same_as_reference(&body), None);
            for cut in 0..body.len() {
                same_as_reference(&body[..cut]);
            }
            for at in 0..body.len() {
                for b in [
                    b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b' ', 0xff, 1,
                ] {
                    let mut changed = body.clone();
                    changed[at] = b;
                    same_as_reference(&changed);
                    changed.insert(at, b);
                    same_as_reference(&changed);
                }
                let mut shorter = body.clone();
                shorter.remove(at);
                same_as_reference(&shorter);
            }
        }
    }

    #[test]
    fn generated_texts_are_judged_as_before() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut seen = HashSet::new();
        for _ in 0..20_000 {
            let text = message(&mut rng);
            seen.insert(same_as_reference(&text));
            // And a variant: cut short, or with one byte changed, added or removed.
            let mut variant = text.clone();
            let at = rng.below(text.len() + 1);
            match rng.below(4) {
                0 => variant.truncate(at),
                1 if at < text.len() => {
                    variant[at] = *rng
                        .pick(&[b"\"", b"\\", b"{", b"}", b",", b":", b"\xff"])
                        .first()
                        .unwrap_or(&b'x')
                }
                2 => variant.insert(
                    at,
                    *rng.pick(&[b"\"", b"{", b"[", b"1", b" "])
                        .first()
                        .unwrap_or(&b'x'),
                ),
                _ if at < text.len() => {
                    variant.remove(at);
                }
                _ => {}
            }
            seen.insert(same_as_reference(&variant));
        }
        // Every outcome came up: the generator reaches each branch the scans judge.
        for kind in [
            None,
            Some(ViolationKind::NotJson),
            Some(ViolationKind::DuplicateName),
            Some(ViolationKind::LossyNumber),
            Some(ViolationKind::LoneSurrogate),
        ] {
            assert!(seen.contains(&kind), "{kind:?} never came up");
        }
    }

    #[test]
    fn hand_written_texts_are_judged_as_before() {
        let mut texts: Vec<Vec<u8>> = [
            &b""[..],
            b" ",
            b"{}",
            b"[]",
            b"{ }",
            b"[ ]",
            b"{\"a\":1,}",
            b"[1,]",
            b"{,}",
            b"{\"a\"}",
            b"{\"a\":}",
            b"{\"a\" 1}",
            b"{\"a\":1 \"b\":2}",
            b"{1:2}",
            b"[1 2]",
            b"{} {}",
            b"\"abc",
            b"\"abc\\",
            b"\"abc\\u12",
            b"\"\\ud800\\",
            b"\"\\ud800\\u",
            b"\"\\ud800\\udc0",
            b"\"\\ud800\\udc00\"",
            b"\"\\udbff\\udfff\"",
            b"\"\\ud800\\ud800\"",
            b"\"\xff\\ud800\"",
            b"\"\\ud800\xff\"",
            b"{\"\xff\":1,\"\xff\":2}",
            b"{\"a\":\"\xff\",\"a\":1}",
            b"{\"a\":1,\"a\":\"\xff\"}",
            b"{\"a\":9007199254740993,\"a\":1}",
            b"{\"a\":1,\"\\u0061\":9007199254740993}",
            b"[9007199254740993, \"\\ud800\"]",
            b"{\"k\":{\"k\":{\"k\":1,\"k\":2}}}",
            b"{\"a~/b\":{\"c/d\":[0,1,{\"e\":1e400}]}}",
            b"{\"\\u00e9\":1,\"\xc3\xa9\":2}",
            b"{\"\\ud83d\\ude00\":1,\"\xf0\x9f\x98\x80\":2}",
            b"{\"abcdefghij\":1,\"abcdefgh\\u0069j\":2}",
            b"{\"abcdefghij\":1,\"abcdefghiJ\":2}",
            b"{\"abcdefgh\":1,\"abcdefgh\\u0000\":2}",
            b"{\"a\\u0000\":1,\"a\":2}",
            b"{\"\":1,\"\":2}",
            b"{\"method\":\"tools/call\",\"params\":{\"requestState\":1}}",
            b"{\"method\":\"tools\\/call\",\"params\":{\"requestState\":\"t\"}}",
            b"{\"method\":\"\\u0074ools/call\",\"params\":{\"requestState\":null}}",
            b"{\"method\":\"m\xc3\xa9\",\"params\":{\"x\":{\"requestState\":1}}}",
            b"{\"params\":[{\"requestState\":1}],\"method\":\"tools/call\"}",
            b"{\"params\":{\"requestState\":1},\"params\":{}}",
            b"{\"x\":{\"params\":{\"requestState\":1}},\"method\":7}",
            b"{\"params\":{\"a\":{}},\"b\":{\"requestState\":1}}",
            b"[{\"method\":\"tools/call\"}]",
            b"\"method\"",
            b"  true  ",
            b"nul",
            b"-",
            b"-0",
            b"00",
            b"1.0e+",
            b"\t\r\n{\"a\"\t:\r[\ntrue\t,\rnull ]\n}\t",
            b"\x0c{}",
            b"{}\x00",
        ]
        .iter()
        .map(|t| t.to_vec())
        .collect();
        // Deep nesting at and past the limit, with a violation at the bottom.
        for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1] {
            for bottom in [
                &b"1"[..],
                b"9007199254740993",
                b"{\"a\":1,\"a\":2}",
                b"\"\\ud800\"",
                b"x",
            ] {
                let mut arrays = b"[".repeat(depth);
                arrays.extend_from_slice(bottom);
                arrays.extend_from_slice(&b"]".repeat(depth));
                texts.push(arrays);
                let mut objects = b"{\"a\":".repeat(depth);
                objects.extend_from_slice(bottom);
                objects.extend_from_slice(&b"}".repeat(depth));
                texts.push(objects);
                let mut mixed = b"[{\"k\":".repeat(depth / 2);
                mixed.extend_from_slice(bottom);
                mixed.extend_from_slice(&b"}]".repeat(depth / 2));
                texts.push(mixed);
            }
        }
        texts.push(b"[".repeat(100_000));
        texts.push(b"{\"a\":".repeat(100_000));
        // Objects of many members, around the switch to a hash set and far past it, with a
        // duplicate (plain or escaped) first, in the middle and last, and in a nested object.
        for members in [15, 16, 17, 18, 1000, 1100] {
            let names: Vec<String> = (0..members).map(|i| format!("\"k{i}\":{i}")).collect();
            texts.push(format!("{{{}}}", names.join(",")).into_bytes());
            for dup in [0, 15, 16, members / 2, members - 1] {
                for name in [format!("k{dup}"), format!("\\u006b{dup}")] {
                    let text = format!("{{{},\"{name}\":0}}", names.join(","));
                    texts.push(text.clone().into_bytes());
                    texts.push(format!("[{{\"n\":{text},\"m\":1}}]").into_bytes());
                    texts.push(format!("{{\"{name}\":0,{}}}", names.join(",")).into_bytes());
                }
            }
            let escaped: Vec<String> = (0..members)
                .map(|i| format!("\"\\u006b{i}\":{{\"k{i}\":1}}"))
                .collect();
            texts.push(format!("{{{}}}", escaped.join(",")).into_bytes());
            texts.push(format!("{{{},\"k7\":1}}", escaped.join(",")).into_bytes());
        }
        for text in texts {
            same_as_reference(&text);
        }
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
