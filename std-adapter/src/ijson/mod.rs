//! I-JSON (RFC 7493) checks on raw JSON text: what a parser forgets once it has built a map.
//!
//! The argument digest ([`crate::jcs`]) binds a token to the binding form of the call's
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

/// Deepest nesting [`check`] follows (the whole message; the arguments' own limit for the
/// digest is [`crate::jcs::MAX_DEPTH`]).
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
/// (ECMAScript) form of the double it reads as denotes exactly the value written. The test is
/// [`mrtr_json::number_is_exact`] (the no_std digest's own, with checked exponent
/// arithmetic); anything that is not a whole JSON number is not exact.
pub fn number_is_exact(lit: &str) -> bool {
    mrtr_json::number_is_exact(lit.as_bytes())
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

/// `path` as a JSON Pointer (RFC 6901): `~` and `/` in names escaped as `~0` and `~1`.
fn pointer(path: &[Seg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        out.push('/');
        match seg {
            Seg::Index(i) => out.push_str(&i.to_string()),
            Seg::Name(name) => {
                for c in String::from_utf8_lossy(name).chars() {
                    match c {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        c => out.push(c),
                    }
                }
            }
        }
    }
    out
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
        Violation {
            kind,
            path: pointer(&self.path),
        }
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
mod reference;

#[cfg(test)]
mod tests;
