//! The scanner as it was before the scan was made cheaper (frozen: a reference for the
//! differential tests, never changed but to keep it compiling).

use std::borrow::Cow;
use std::collections::HashSet;

use super::names::LINEAR_NAMES;
use super::strings::{HIGH, specials};
use super::walker::{Role, Seg, pointer};
use super::{Envelope, MAX_DEPTH, Shape, Violation, ViolationKind, number_is_exact};

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
        Violation {
            kind,
            path: pointer(&self.path),
        }
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
