//! Skipping through text that [`parse`](crate::parse) has already checked: whitespace,
//! strings, whole values and object members, word-at-a-time where it pays. Nothing here
//! validates; every function stays in bounds on any input.

/// Where the whitespace at `at` ends.
pub(crate) fn ws(text: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = text.get(at) {
        at += 1;
    }
    at
}

/// Bit 7 of each byte of `word` that is zero (and possibly of bytes above such a byte, which
/// only matters once one is zero).
const fn zero_bytes(word: u32) -> u32 {
    word.wrapping_sub(0x0101_0101) & !word & 0x8080_8080
}

/// How many leading bytes of `bytes`, taken four at a time, hold none of the bytes `stop`
/// says (at least, a multiple of four: the caller scans the rest byte by byte).
#[inline(always)]
pub(crate) fn clear_words(bytes: &[u8], stop: impl Fn(u32) -> u32) -> usize {
    let mut words = bytes.chunks_exact(4);
    let mut clear = 0;
    for chunk in words.by_ref() {
        let word = <[u8; 4]>::try_from(chunk).map_or(0, u32::from_le_bytes);
        if stop(word) != 0 {
            break;
        }
        clear += 4;
    }
    clear
}

/// Bit 7 set in some byte of `word` when one of its bytes is a quote or a backslash.
pub(crate) const fn quote_or_backslash(word: u32) -> u32 {
    zero_bytes(word ^ 0x2222_2222) | zero_bytes(word ^ 0x5c5c_5c5c)
}

/// In validated text: where the string literal whose quote is at `at` ends (past its
/// closing quote).
pub(crate) fn string_end(text: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    while let Some(rest) = text.get(i..) {
        let clear = clear_words(rest, quote_or_backslash);
        let Some(skip) = rest
            .get(clear..)
            .unwrap_or_default()
            .iter()
            .position(|&b| b == b'"' || b == b'\\')
        else {
            break;
        };
        i += clear + skip;
        if text.get(i) == Some(&b'"') {
            return i + 1;
        }
        // A backslash: skip it and the byte it escapes.
        i += 2;
    }
    text.len()
}

/// What [`value_end`] stops at inside a container: 1 for a quote, 2 for an opening bracket
/// or brace, 3 for a closing one, 0 for anything else.
const STRUCTURE: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'"' as usize] = 1;
    table[b'{' as usize] = 2;
    table[b'[' as usize] = 2;
    table[b'}' as usize] = 3;
    table[b']' as usize] = 3;
    table
};

/// In validated text: where the value at `at` ends.
pub(crate) fn value_end(text: &[u8], at: usize) -> usize {
    match text.get(at) {
        Some(b'"') => string_end(text, at),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut i = at;
            while let Some(rest) = text.get(i..) {
                let Some(skip) = rest.iter().position(|&b| STRUCTURE[usize::from(b)] != 0) else {
                    break;
                };
                i += skip;
                match text.get(i).map(|&b| STRUCTURE[usize::from(b)]) {
                    Some(1) => i = string_end(text, i),
                    Some(2) => {
                        depth += 1;
                        i += 1;
                    }
                    _ => {
                        depth = depth.saturating_sub(1);
                        i += 1;
                        if depth == 0 {
                            return i;
                        }
                    }
                }
            }
            text.len()
        }
        Some(b't' | b'n') => at + 4,
        Some(b'f') => at + 5,
        _ => {
            let rest = text.get(at..).unwrap_or_default();
            at + rest
                .iter()
                .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                .unwrap_or(rest.len())
        }
    }
}

/// One member of an object in validated text, by position.
#[derive(Clone, Copy)]
pub(crate) struct Member {
    /// The name's opening quote.
    pub name: usize,
    /// Past the name's closing quote.
    pub name_end: usize,
    /// The value's first byte.
    pub value: usize,
    /// Past the value.
    pub value_end: usize,
}

/// In validated text: where the next member's name starts at or after `at` (whitespace and
/// a comma skipped), or, at the end of the object, `Err` of where the object ends (past its
/// `}`).
pub(crate) fn name_at(text: &[u8], at: usize) -> Result<usize, usize> {
    let mut at = ws(text, at);
    if text.get(at) == Some(&b',') {
        at = ws(text, at + 1);
    }
    if text.get(at) != Some(&b'"') {
        return Err(at.saturating_add(1).min(text.len()));
    }
    Ok(at)
}

/// In validated text: the member whose name starts at or after `at` (see [`name_at`]).
pub(crate) fn member_at(text: &[u8], at: usize) -> Result<Member, usize> {
    let at = name_at(text, at)?;
    let name_end = string_end(text, at);
    let value = after_colon(text, name_end);
    Ok(Member {
        name: at,
        name_end,
        value,
        value_end: value_end(text, value),
    })
}

/// In validated text: where the value of the member whose name ends at `name_end` starts
/// (whitespace, the colon and whitespace skipped).
pub(crate) fn after_colon(text: &[u8], name_end: usize) -> usize {
    ws(text, ws(text, name_end) + 1)
}

/// The raw content of the string literal at `start..end` (without its quotes).
pub(crate) fn content(text: &[u8], start: usize, end: usize) -> &[u8] {
    text.get(start + 1..end.saturating_sub(1))
        .unwrap_or_default()
}
