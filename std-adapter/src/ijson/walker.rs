//! The walk over a text's structure: [`Scan`] from the first byte to the last, through
//! values, objects and arrays (their depth bounded by [`MAX_DEPTH`]), with the path to the
//! value being scanned kept as a JSON Pointer for the violation, and the roles that find a
//! JSON-RPC message's `method` and `params.requestState` for the [`Envelope`].

use std::borrow::Cow;
use std::collections::HashSet;

use super::names::head;
use super::strings::HIGH;
use super::{Envelope, MAX_DEPTH, Name, Scan, Shape, Stop, Violation, ViolationKind};

/// Where the whitespace at `at` ends.
#[inline(never)]
fn skip_ws(text: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = text.get(at) {
        at += 1;
    }
    at
}

/// Path segment of the value being scanned.
pub(super) enum Seg<'a> {
    Name(Cow<'a, [u8]>),
    Index(usize),
}

/// `path` as a JSON Pointer (RFC 6901): `~` and `/` in names escaped as `~0` and `~1`.
pub(super) fn pointer(path: &[Seg<'_>]) -> String {
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
pub(super) enum Role {
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

/// The `method` name's head.
const METHOD: u64 = head(b"method");
/// The `params` name's head.
const PARAMS: u64 = head(b"params");

impl<'a, const PATH: bool> Scan<'a, PATH> {
    pub(super) fn new(text: &'a [u8]) -> Self {
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
    pub(super) fn run(mut self) -> Result<Envelope<'a>, Violation> {
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
}
