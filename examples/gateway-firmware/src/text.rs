//! An owned copy of a token's text (one byte longer than any valid token), to keep or edit
//! after its buffer is reused.

use crate::TOKEN_CAP;

/// A token's text, copied out of its buffer.
#[derive(Clone)]
pub struct TokenText {
    bytes: [u8; TOKEN_CAP + 1],
    len: usize,
}

impl TokenText {
    /// Copies `token` (at most `TOKEN_CAP + 1` bytes).
    pub fn of(token: &str) -> Self {
        let mut bytes = [0; TOKEN_CAP + 1];
        let len = token.len().min(bytes.len());
        bytes[..len].copy_from_slice(&token.as_bytes()[..len]);
        Self { bytes, len }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The same text with the base64url character at `at` replaced by another one.
    pub fn flipped(&self, at: usize) -> Self {
        let mut t = self.clone();
        t.bytes[at] = if t.bytes[at] == b'A' { b'B' } else { b'A' };
        t
    }

    /// The first `len` characters.
    pub fn truncated(&self, len: usize) -> Self {
        let mut t = self.clone();
        t.len = len.min(self.len);
        t
    }

    /// The text padded with `A`s to one byte more than any token buffer of `TOKEN_CAP` takes.
    pub fn oversized(&self) -> Self {
        let mut t = self.clone();
        t.bytes[self.len..].fill(b'A');
        t.len = TOKEN_CAP + 1;
        t
    }
}
