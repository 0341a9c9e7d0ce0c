//! RFC 8785 canonicalization of a validated value, without allocating.

use core::cmp::Ordering;

use crate::scan::{after_colon, content, name_at, string_end, value_end, ws};
use crate::value::Value;
use crate::{Error, Limits, MAX_DEPTH, Sink, bind, number, string};

/// How numbers are written: RFC 8785's way, or keeping their kind ([`crate::bind`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Numbers {
    /// As RFC 8785 writes them: `1.0` as `1`, `-0` as `0`.
    Rfc8785,
    /// As the argument binding writes them: `1.0` as `1.0`, `-0` as `-0.0`.
    Kinds,
}

/// Writes the RFC 8785 (JCS) canonical form of `value` to `out`: no whitespace, members of
/// each object sorted by their names' UTF-16 code units, strings with only `"`, `\` and
/// control characters escaped, numbers as ECMAScript prints doubles.
///
/// Refuses, with nothing more written after the error, arrays and objects nested deeper
/// than `limits.max_depth` relative to `value` (the value itself, when a container, is depth
/// 1; as `mrtr_std::jcs::MAX_DEPTH`), an object of more than `limits.max_members` members
/// and a value longer than `limits.max_len`. On error, `out` holds a prefix of the canonical
/// form: hash or discard it, never use it.
///
/// **Cost.** No allocation and no recursion: the stack holds one fixed array of
/// [`MAX_DEPTH`]` + 1` positions and a few words. The first `max_depth` positions hold the
/// member or item being written at each level; the others (65 with the default depth of 64,
/// at least one) hold a batch of member names of the object being written, sorted: the
/// smallest names greater than the last one written, found by one scan of the object. An
/// object of `n` members of total length `L` that fit one batch costs one scan of `L` bytes
/// and `O(n log n)` name comparisons; a larger one, one scan per batch (at most
/// `(max_members + 1)·L` byte steps, as with one scan per member). Writing a nested object
/// takes the batch over: its parent's next batch is found again by a scan, from the last
/// name written. The worst case for a text of length `T` is thus
/// `O(T · (max_members + 1) · depth)` byte steps, bounded by the limits; a typical
/// `tools/call` object (a dozen members, two levels) costs one scan of a few hundred bytes.
///
/// ```
/// use mrtr_json::{Limits, Writer, canonicalize, parse};
///
/// let v = parse(br#"{"b": [1.0, 2.50, 1e21], "a": "\u20ac\n"}"#, &Limits::DEFAULT)?;
/// let mut buf = [0u8; 64];
/// let mut w = Writer::new(&mut buf);
/// canonicalize(v, &mut w, &Limits::DEFAULT)?;
/// assert_eq!(w.as_bytes(), r#"{"a":"€\n","b":[1,2.5,1e+21]}"#.as_bytes());
/// # Ok::<(), mrtr_json::Error>(())
/// ```
pub fn canonicalize(value: Value<'_>, out: &mut impl Sink, limits: &Limits) -> Result<(), Error> {
    write(value, out, limits, Numbers::Rfc8785)
}

/// Writes the **argument binding form** of `value`: its RFC 8785 form ([`canonicalize`]),
/// except that every number keeps the kind a typed decoder gives it. An integer literal (no
/// `.`, `e`, `E`) other than `-0`, within `-2^63 ..= 2^64 - 1`, is written as RFC 8785
/// writes it; any other number is a float, written as RFC 8785 writes it with `.0` appended
/// when that text has neither `.` nor `e`, and `-0.0` for a negative zero. So `1` and `1.0`,
/// `100` and `1e2`, `0` and `-0` bind differently (a handler reading `as_u64()` sees them
/// differently), while `1.50` and `1.5`, `1E2` and `1e2`, `"\u0061"` and `"a"` still bind
/// alike. [`args_digest`](crate::args_digest) hashes this form. Same limits, errors and
/// cost as [`canonicalize`].
///
/// ```
/// use mrtr_json::{Limits, Writer, parse, write_binding_form};
///
/// let v = parse(br#"{"b": [1.0, 2.50, 1e2, 100, -0, 1e21], "a": 1}"#, &Limits::DEFAULT)?;
/// let mut buf = [0u8; 64];
/// let mut w = Writer::new(&mut buf);
/// write_binding_form(v, &mut w, &Limits::DEFAULT)?;
/// assert_eq!(w.as_bytes(), br#"{"a":1,"b":[1.0,2.5,100.0,100,-0.0,1e+21]}"#);
/// # Ok::<(), mrtr_json::Error>(())
/// ```
pub fn write_binding_form(
    value: Value<'_>,
    out: &mut impl Sink,
    limits: &Limits,
) -> Result<(), Error> {
    write(value, out, limits, Numbers::Kinds)
}

/// [`canonicalize`] or [`write_binding_form`], as `numbers` says.
pub(crate) fn write(
    value: Value<'_>,
    out: &mut impl Sink,
    limits: &Limits,
    numbers: Numbers,
) -> Result<(), Error> {
    let text = value.raw();
    if text.len() > limits.max_len {
        return Err(Error::TooLong);
    }
    let max_depth = limits.max_depth.min(MAX_DEPTH);
    // At each open level: the member name (objects) or item (arrays) being written. The
    // levels beyond `max_depth` are never used: they hold the batch of sorted names (at
    // least one position).
    let mut positions = [0usize; MAX_DEPTH + 1];
    let (path, spare) = positions.split_at_mut(max_depth);
    let mut batch = Batch::new(spare);
    // Bit `level` set: that level is an object.
    let mut objects: u128 = 0;
    let mut depth = 0usize;
    let mut at = 0usize;
    loop {
        // Write the value at `at`; `end`: where it ends, once written whole.
        let mut end = match text.get(at) {
            Some(b'{') => {
                if depth >= max_depth {
                    return Err(Error::TooDeep);
                }
                match batch.next_name(text, at, None, limits)? {
                    (None, close) => {
                        out.write(b"{}");
                        close
                    }
                    (Some(first), _) => {
                        *path.get_mut(depth).ok_or(Error::TooDeep)? = first;
                        objects |= 1 << depth;
                        depth += 1;
                        at = write_name(text, first, b"{\"", out)?;
                        continue;
                    }
                }
            }
            Some(b'[') => {
                if depth >= max_depth {
                    return Err(Error::TooDeep);
                }
                let first = ws(text, at + 1);
                if text.get(first) == Some(&b']') {
                    out.write(b"[]");
                    first + 1
                } else {
                    out.write(b"[");
                    *path.get_mut(depth).ok_or(Error::TooDeep)? = first;
                    objects &= !(1 << depth);
                    depth += 1;
                    at = first;
                    continue;
                }
            }
            Some(b'"') => string::write_literal_at(text, at, b"\"", b"\"", out)?,
            Some(b't') => {
                out.write(b"true");
                at + 4
            }
            Some(b'f') => {
                out.write(b"false");
                at + 5
            }
            Some(b'n') => {
                out.write(b"null");
                at + 4
            }
            Some(_) => {
                let end = value_end(text, at);
                let literal = text.get(at..end).unwrap_or_default();
                match numbers {
                    Numbers::Rfc8785 => number::write_literal(literal, out)?,
                    Numbers::Kinds => bind::write_literal(literal, out)?,
                }
                end
            }
            None => return Err(Error::NotJson),
        };
        // The value ending at `end` is written: go on with its container's next member or
        // item, or close the container.
        loop {
            let Some(level) = depth.checked_sub(1) else {
                return Ok(());
            };
            let current = path.get(level).copied().unwrap_or_default();
            if objects >> level & 1 == 1 {
                let start = container_start(text, path, objects, level);
                match batch.next_name(text, start, Some(current), limits)? {
                    (Some(next), _) => {
                        *path.get_mut(level).ok_or(Error::TooDeep)? = next;
                        at = write_name(text, next, b",\"", out)?;
                        break;
                    }
                    (None, close) => {
                        out.write(b"}");
                        end = close;
                    }
                }
            } else {
                let next = ws(text, end);
                if text.get(next) == Some(&b',') {
                    out.write(b",");
                    let item = ws(text, next + 1);
                    *path.get_mut(level).ok_or(Error::TooDeep)? = item;
                    at = item;
                    break;
                }
                out.write(b"]");
                end = next + 1;
            }
            depth = level;
        }
    }
}

/// Where the container at `level` starts: the value of the member or item being written one
/// level up (the whole text at level 0).
fn container_start(text: &[u8], path: &[usize], objects: u128, level: usize) -> usize {
    let Some(parent) = level.checked_sub(1) else {
        return 0;
    };
    let at = path.get(parent).copied().unwrap_or_default();
    if objects >> parent & 1 == 1 {
        after_colon(text, string_end(text, at))
    } else {
        at
    }
}

/// Writes the member name at `name` after `open` (`{"` or `,"`), and its closing quote and
/// colon; returns where its value starts.
fn write_name(text: &[u8], name: usize, open: &[u8], out: &mut impl Sink) -> Result<usize, Error> {
    let name_end = string::write_literal_at(text, name, open, b"\":", out)?;
    Ok(after_colon(text, name_end))
}

/// The members of one object to write next, in order: the positions of the smallest names
/// greater than the last one written, found by one scan of the object, as many as the
/// spare positions hold. An object whose members all fit is scanned once; a larger one once
/// per batch. Writing a nested object refills the batch with that object's names: its
/// parent's next batch is then found again by a scan, from the last name written.
struct Batch<'p> {
    /// Sorted name positions: `names[..len]`.
    names: &'p mut [usize],
    len: usize,
    /// The object the batch was taken from (where it starts), `usize::MAX` for none.
    object: usize,
    /// The next name of `names` to write.
    next: usize,
    /// Whether the object has no name beyond `names[len - 1]` (greater than the floor of
    /// the scan) that did not fit.
    complete: bool,
    /// Where the object ends.
    end: usize,
}

impl<'p> Batch<'p> {
    fn new(names: &'p mut [usize]) -> Self {
        Self {
            names,
            len: 0,
            object: usize::MAX,
            next: 0,
            complete: false,
            end: 0,
        }
    }

    /// In the object at `object`: the member with the smallest name greater than the name
    /// at `after` (the smallest of all without `after`), if any, and where the object ends.
    /// Counts the members and finds equal names whenever it scans.
    fn next_name(
        &mut self,
        text: &[u8],
        object: usize,
        after: Option<usize>,
        limits: &Limits,
    ) -> Result<(Option<usize>, usize), Error> {
        let last = self.next.checked_sub(1).and_then(|i| self.names.get(i));
        if self.object == object && last.copied() == after {
            if self.next < self.len {
                let name = self.names.get(self.next).copied();
                self.next += 1;
                return Ok((name, self.end));
            }
            if self.complete {
                return Ok((None, self.end));
            }
        }
        self.fill(text, object, after, limits)?;
        let first = self
            .names
            .get(..self.len)
            .and_then(<[usize]>::first)
            .copied();
        self.next = usize::from(first.is_some());
        Ok((first, self.end))
    }

    /// Scans the object at `object` for the smallest names greater than the name at `after`
    /// (all without `after`), as many as fit.
    fn fill(
        &mut self,
        text: &[u8],
        object: usize,
        after: Option<usize>,
        limits: &Limits,
    ) -> Result<(), Error> {
        let name_of = |at: usize| content(text, at, string_end(text, at));
        let floor = after.map(name_of);
        self.object = usize::MAX;
        self.len = 0;
        self.complete = true;
        let mut count = 0usize;
        let mut scan = object + 1;
        let end = loop {
            let at = match name_at(text, scan) {
                Ok(at) => at,
                Err(end) => break end,
            };
            count += 1;
            if count > limits.max_members {
                return Err(Error::TooManyMembers);
            }
            let name_end = string_end(text, at);
            let name = content(text, at, name_end);
            if floor.is_none_or(|f| string::literal_order(name, f).is_gt()) {
                self.insert(text, at)?;
            }
            scan = value_end(text, after_colon(text, name_end));
        };
        self.object = object;
        self.end = end;
        Ok(())
    }

    /// Puts the name `name` at `at` in its place among the sorted names, dropping the
    /// greatest when they are full.
    fn insert(&mut self, text: &[u8], at: usize) -> Result<(), Error> {
        let sorted = self.names.get(..self.len).unwrap_or_default();
        let place = match sorted.binary_search_by(|&p| order_at(text, p, at)) {
            Ok(_) => return Err(Error::DuplicateName),
            Err(place) => place,
        };
        if self.len == self.names.len() {
            self.complete = false;
            if place == self.len {
                return Ok(());
            }
            self.len -= 1;
        }
        let len = self.len;
        if let Some(shifted) = self.names.get_mut(place..=len) {
            shifted.copy_within(..shifted.len() - 1, 1);
            if let Some(first) = shifted.first_mut() {
                *first = at;
            }
            self.len += 1;
        }
        Ok(())
    }
}

/// [`string::literal_order`] of the names whose quotes are at `a` and `b` in validated text,
/// read only up to their first difference (a name ends at its closing quote, the only `"`
/// it holds unescaped).
fn order_at(text: &[u8], a: usize, b: usize) -> Ordering {
    let x = text.get(a + 1..).unwrap_or_default();
    let y = text.get(b + 1..).unwrap_or_default();
    let i = x
        .iter()
        .zip(y)
        .position(|(&p, &q)| p != q || p == b'"' || p == b'\\')
        .unwrap_or(usize::MAX);
    match (x.get(i), y.get(i)) {
        (Some(b'"'), Some(b'"')) => Ordering::Equal,
        // One name ends first: the other has at least one more character.
        (Some(b'"'), Some(_)) => Ordering::Less,
        (Some(_), Some(b'"')) => Ordering::Greater,
        (Some(&p), Some(&q)) if p != b'\\' && q != b'\\' => string::byte_order(p, q),
        // An escape: decode both names (from the start, simply).
        _ => string::literal_order(
            content(text, a, string_end(text, a)),
            content(text, b, string_end(text, b)),
        ),
    }
}
