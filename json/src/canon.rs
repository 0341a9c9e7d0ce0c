//! RFC 8785 canonicalization of a validated value, without allocating.

use crate::value::{Value, content, member_at, name_at, string_end, value_end, ws};
use crate::{Error, Limits, MAX_DEPTH, Sink, number, string};

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
/// [`MAX_DEPTH`] positions (the member or item being written at each level) and a few
/// words. Members are emitted by selection: the next member of an object is the smallest name
/// greater than the last one written, found by rescanning the object. An object of `n`
/// members of total length `L` costs `n + 1` scans of `L` bytes (`O(n·L)`, at most
/// `(max_members + 1)·L`) plus `O(n²)` name comparisons; its nested values are scanned
/// again by each of those scans. The worst case for a text of length `T` is thus
/// `O(T · (max_members + 1) · depth)` byte steps, bounded by the limits; a typical
/// `tools/call` object (a dozen members, two levels) costs a few scans of a few hundred
/// bytes.
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
    let text = value.raw();
    if text.len() > limits.max_len {
        return Err(Error::TooLong);
    }
    let max_depth = limits.max_depth.min(MAX_DEPTH);
    // At each open level: the member name (objects) or item (arrays) being written.
    let mut path = [0usize; MAX_DEPTH];
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
                match select(text, at, None, limits)? {
                    (None, close) => {
                        out.write(b"{}");
                        close
                    }
                    (Some(first), _) => {
                        out.write(b"{");
                        *path.get_mut(depth).ok_or(Error::TooDeep)? = first;
                        objects |= 1 << depth;
                        depth += 1;
                        at = write_name(text, first, out)?;
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
            Some(b'"') => {
                let end = string_end(text, at);
                string::write_literal(content(text, at, end), out)?;
                end
            }
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
                number::write_literal(text.get(at..end).unwrap_or_default(), out)?;
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
                let start = container_start(text, &path, objects, level);
                match select(text, start, Some(current), limits)? {
                    (Some(next), _) => {
                        out.write(b",");
                        *path.get_mut(level).ok_or(Error::TooDeep)? = next;
                        at = write_name(text, next, out)?;
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
fn container_start(text: &[u8], path: &[usize; MAX_DEPTH], objects: u128, level: usize) -> usize {
    let Some(parent) = level.checked_sub(1) else {
        return 0;
    };
    let at = path.get(parent).copied().unwrap_or_default();
    if objects >> parent & 1 == 1 {
        member_at(text, at).map_or(at, |m| m.value)
    } else {
        at
    }
}

/// Writes the member name at `name` and its colon; returns where its value starts.
fn write_name(text: &[u8], name: usize, out: &mut impl Sink) -> Result<usize, Error> {
    let m = member_at(text, name).map_err(|_| Error::NotJson)?;
    string::write_literal(content(text, m.name, m.name_end), out)?;
    out.write(b":");
    Ok(m.value)
}

/// Scans the object at `object` for the member with the smallest name greater than the name
/// at `after` (the smallest of all without `after`): that name's position, if any, and where
/// the object ends. Counts the members and finds equal names on the way.
fn select(
    text: &[u8],
    object: usize,
    after: Option<usize>,
    limits: &Limits,
) -> Result<(Option<usize>, usize), Error> {
    let name_of = |at: usize| content(text, at, string_end(text, at));
    let floor = after.map(name_of);
    let mut best: Option<(usize, &[u8])> = None;
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
        let name = name_of(at);
        let above = floor.is_none_or(|f| string::literal_order(name, f).is_gt());
        if above {
            match best {
                Some((_, b)) => match string::literal_order(name, b) {
                    core::cmp::Ordering::Less => best = Some((at, name)),
                    core::cmp::Ordering::Equal => return Err(Error::DuplicateName),
                    core::cmp::Ordering::Greater => {}
                },
                None => best = Some((at, name)),
            }
        }
        let m = member_at(text, at).map_err(|_| Error::NotJson)?;
        scan = m.value_end;
    };
    Ok((best.map(|(at, _)| at), end))
}
