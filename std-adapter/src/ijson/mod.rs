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

mod names;
mod numbers;
mod strings;
mod walker;

use std::borrow::Cow;
use std::fmt;

pub use numbers::number_is_exact;
#[cfg(test)]
pub(crate) use strings::PAUSABLE;
use walker::Seg;

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

/// A violation's kind as the scan's functions return it, one word wide: a
/// `Result<usize, Stop>` (where a value ends, or why the scan stops) comes back in two
/// registers, where one with the byte-wide [`ViolationKind`] goes through memory, and the
/// scan returns one for every value.
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

/// One scan of a text, from its first byte: the scan's functions take the position they
/// start at and return where they end. With `PATH`, the path to each value is kept, for the
/// violation.
struct Scan<'a, const PATH: bool> {
    text: &'a [u8],
    /// Member names of the objects being scanned, innermost last (an object past
    /// [`LINEAR_NAMES`] members keeps its later ones in its own hash set instead).
    ///
    /// [`LINEAR_NAMES`]: names::LINEAR_NAMES
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

/// The scanner as it was before the scan was made cheaper (frozen: a reference for the
/// differential tests, never changed but to keep it compiling).
#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests;
