//! An independent I-JSON oracle for the `ijson` target: a slow, recursive RFC 8259 validator
//! that unescapes every string into a `String`, finds duplicate member names with a
//! `HashSet`, and decides whether a number is exact through a double by another route than
//! the code under test ([`crate::decimal`]: serde_json's float parser, the standard library's
//! shortest and exact printing, and exact decimal comparisons).
//!
//! It reports the first violation in text order, as the scanners do: a violation inside a
//! string (a bad escape, a lone surrogate, a control character, the text ending) where it
//! is, and a string's UTF-8 once its closing quote is reached (escapes are ASCII, so the raw
//! content is UTF-8 exactly when the unescaped string is).

use std::collections::HashSet;

pub use crate::decimal::exact;

/// What is wrong with a text, as far as the oracle can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Not one JSON value.
    NotJson,
    /// Two members of one object with the same name after unescaping.
    DuplicateName,
    /// A number whose value the canonical form of its double does not denote.
    LossyNumber,
    /// A `\u` escape of half a surrogate pair.
    LoneSurrogate,
    /// Containers nested deeper than [`Rules::max_depth`].
    TooDeep,
    /// An object with more members than [`Rules::max_members`].
    TooManyMembers,
}

/// The bounds a scanner applies besides the I-JSON rules.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// Deepest nesting accepted; the top-level container is depth 1.
    pub max_depth: usize,
    /// Most members in one object (`None`: no bound).
    pub max_members: Option<usize>,
}

/// What an accepted text looked like.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Deepest nesting seen (0 for a scalar).
    pub depth: usize,
}

/// Validates `text` as one I-JSON value under `rules`; the first violation otherwise.
pub fn validate(text: &[u8], rules: &Rules) -> Result<Stats, Kind> {
    let mut p = Parser {
        text,
        at: 0,
        rules: *rules,
        stats: Stats::default(),
    };
    p.ws();
    p.value(0)?;
    p.ws();
    if p.at != text.len() {
        return Err(Kind::NotJson);
    }
    Ok(p.stats)
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
    rules: Rules,
    stats: Stats,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Result<(), Kind> {
        if self.peek() == Some(b) {
            self.at += 1;
            Ok(())
        } else {
            Err(Kind::NotJson)
        }
    }

    /// A value; `depth` is the nesting of the container it is in.
    fn value(&mut self, depth: usize) -> Result<(), Kind> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(drop),
            Some(b't') => self.word(b"true"),
            Some(b'f') => self.word(b"false"),
            Some(b'n') => self.word(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(Kind::NotJson),
        }
    }

    fn word(&mut self, w: &[u8]) -> Result<(), Kind> {
        if self.text.get(self.at..self.at + w.len()) == Some(w) {
            self.at += w.len();
            Ok(())
        } else {
            Err(Kind::NotJson)
        }
    }

    fn enter(&mut self, depth: usize) -> Result<(), Kind> {
        if depth > self.rules.max_depth {
            return Err(Kind::TooDeep);
        }
        self.stats.depth = self.stats.depth.max(depth);
        self.at += 1;
        self.ws();
        Ok(())
    }

    fn array(&mut self, depth: usize) -> Result<(), Kind> {
        self.enter(depth)?;
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.ws();
            self.value(depth)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Kind::NotJson),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), Kind> {
        self.enter(depth)?;
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        let mut names: HashSet<String> = HashSet::new();
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(Kind::NotJson);
            }
            let name = self.string()?;
            if !names.insert(name) {
                return Err(Kind::DuplicateName);
            }
            if self.rules.max_members.is_some_and(|m| names.len() > m) {
                return Err(Kind::TooManyMembers);
            }
            self.ws();
            self.eat(b':')?;
            self.ws();
            self.value(depth)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Kind::NotJson),
            }
        }
    }

    /// Four hex digits after `\u`.
    fn hex4(&mut self) -> Result<u32, Kind> {
        let digits = self.text.get(self.at..self.at + 4).ok_or(Kind::NotJson)?;
        let s = std::str::from_utf8(digits).map_err(|_| Kind::NotJson)?;
        if !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Kind::NotJson);
        }
        self.at += 4;
        u32::from_str_radix(s, 16).map_err(|_| Kind::NotJson)
    }

    /// The string at the quote, unescaped.
    fn string(&mut self) -> Result<String, Kind> {
        self.eat(b'"')?;
        let mut raw = Vec::new();
        loop {
            let b = self.peek().ok_or(Kind::NotJson)?;
            self.at += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    let e = self.peek().ok_or(Kind::NotJson)?;
                    self.at += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode()?,
                        _ => return Err(Kind::NotJson),
                    };
                    raw.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                0x00..=0x1f => return Err(Kind::NotJson),
                _ => raw.push(b),
            }
        }
        String::from_utf8(raw).map_err(|_| Kind::NotJson)
    }

    /// The character of a `\u` escape (its digits next), joining a surrogate pair.
    fn unicode(&mut self) -> Result<char, Kind> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if self.text.get(self.at..self.at + 2) != Some(b"\\u") {
                    return Err(Kind::LoneSurrogate);
                }
                self.at += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(Kind::LoneSurrogate);
                }
                0x10000 + (((first - 0xD800) << 10) | (second - 0xDC00))
            }
            0xDC00..=0xDFFF => return Err(Kind::LoneSurrogate),
            c => c,
        };
        char::from_u32(code).ok_or(Kind::LoneSurrogate)
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<(), Kind> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(Kind::NotJson),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(Kind::NotJson);
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(Kind::NotJson);
            }
        }
        let lit = std::str::from_utf8(&self.text[start..self.at]).map_err(|_| Kind::NotJson)?;
        if exact(lit) {
            Ok(())
        } else {
            Err(Kind::LossyNumber)
        }
    }
}

/// What serde_json's verdict says about a text the oracle judged.
///
/// serde_json (into a `Value`, its default features plus `float_roundtrip`) refuses what is
/// not JSON, lone surrogate escapes (it reads strings as `String`), numbers beyond a double's
/// range (`1e400`) and nesting past its recursion limit; it accepts duplicate names (the last
/// one wins) and numbers a double rounds (`9007199254740993`, `1e-400`).
pub fn serde_agrees(serde_ok: bool, oracle: Result<Stats, Kind>) -> bool {
    match (serde_ok, oracle) {
        (true, Ok(_)) => true,
        // Refused for nesting alone: serde_json stops at 128 levels.
        (false, Ok(stats)) => stats.depth >= SERDE_DEPTH,
        (true, Err(kind)) => matches!(
            kind,
            Kind::DuplicateName | Kind::LossyNumber | Kind::TooDeep | Kind::TooManyMembers
        ),
        // A lossy number may be one serde_json cannot read either (out of range), and a
        // violation the oracle saw first may hide syntax errors later in the text.
        (false, Err(_)) => true,
    }
}

/// The nesting at which serde_json's recursion limit refuses a text.
pub const SERDE_DEPTH: usize = 128;
