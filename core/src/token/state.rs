//! The sealed state: the plaintext inside a token (state layout 1, used by every token format).
//!
//! ```text
//! offset  size  field
//! 0       1     state layout version (0x01)
//! 1       4     round, u32 big-endian (1 on the first pause)
//! 5       8     issued-at, ms since the Unix epoch, u64 big-endian
//! 13      8     expires-at, ms since the Unix epoch, u64 big-endian
//! 21      16    token id (random)
//! 37      32    argument digest
//! 69      1     method length m (1..=32)
//! 70      m     method (UTF-8)
//! 70+m    2     continuation length c, u16 big-endian
//! 72+m    c     continuation (opaque)
//! ```
//!
//! The state must end exactly after the continuation.

use core::ops::Range;

use crate::limits::{MAX_CONTINUATION_LEN, MAX_METHOD_LEN};

use crate::limits::{DIGEST_LEN, STATE_FIXED_LEN, TOKEN_ID_LEN};

/// State layout version written by this build.
pub const STATE_VERSION: u8 = 1;

/// A token's random id, used as the replay-cache key.
pub type TokenId = [u8; TOKEN_ID_LEN];
/// A digest of the call's arguments (SHA-256 of RFC 8785 canonical JSON in `mrtr-std`).
pub type ArgsDigest = [u8; DIGEST_LEN];

mod field {
    use core::ops::Range;
    pub const VERSION: usize = 0;
    pub const ROUND: Range<usize> = 1..5;
    pub const ISSUED_AT: Range<usize> = 5..13;
    pub const EXPIRES_AT: Range<usize> = 13..21;
    pub const TOKEN_ID: Range<usize> = 21..37;
    pub const ARGS: Range<usize> = 37..69;
    pub const METHOD_LEN: usize = 69;
    pub const METHOD: usize = 70;
}

/// The fields of a state to seal.
pub(crate) struct NewState<'a> {
    pub round: u32,
    pub issued_at: u64,
    pub expires_at: u64,
    pub token_id: TokenId,
    pub args: &'a ArgsDigest,
    pub method: &'a str,
    pub continuation: &'a [u8],
}

impl NewState<'_> {
    /// Encoded length, or `None` if the continuation exceeds a u16 length or the method its
    /// limit.
    #[inline]
    pub fn len(&self) -> Option<usize> {
        if self.continuation.len() > MAX_CONTINUATION_LEN || self.method.len() > MAX_METHOD_LEN {
            return None;
        }
        Some(STATE_FIXED_LEN + self.method.len() + self.continuation.len())
    }

    /// Writes the state into `out`, which is exactly [`NewState::len`] long.
    #[inline(always)]
    pub fn write(&self, out: &mut [u8]) {
        let m = self.method.len();
        let c = self.continuation.len();
        out[field::VERSION] = STATE_VERSION;
        out[field::ROUND].copy_from_slice(&self.round.to_be_bytes());
        out[field::ISSUED_AT].copy_from_slice(&self.issued_at.to_be_bytes());
        out[field::EXPIRES_AT].copy_from_slice(&self.expires_at.to_be_bytes());
        out[field::TOKEN_ID].copy_from_slice(&self.token_id);
        out[field::ARGS].copy_from_slice(self.args);
        // `len` bounded the method by MAX_METHOD_LEN and the continuation by u16::MAX.
        out[field::METHOD_LEN] = m as u8;
        crate::bytes::copy(
            &mut out[field::METHOD..field::METHOD + m],
            self.method.as_bytes(),
        );
        out[field::METHOD + m..field::METHOD + m + 2].copy_from_slice(&(c as u16).to_be_bytes());
        out[STATE_FIXED_LEN + m..].copy_from_slice(self.continuation);
    }
}

/// A checked, zero-copy view of a decrypted state. Once built, no accessor can panic.
///
/// The engine parses a state once and keeps the result; this type is public so that fuzzers
/// and audits can compare its parse with their own reading of the format.
#[derive(Clone, Copy)]
pub struct StateView<'a> {
    buf: &'a [u8],
    method_len: usize,
}

/// Where a checked state lies in a buffer: what [`StateView::new_checked`] learned, kept so the
/// same bytes are never parsed twice.
#[derive(Clone, Debug)]
pub(crate) struct Parsed {
    range: Range<usize>,
    method_len: usize,
}

impl Parsed {
    /// The view of the state in `bytes`, the buffer it was parsed from (unchanged since).
    #[inline]
    pub fn view<'a>(&self, bytes: &'a [u8]) -> StateView<'a> {
        StateView {
            buf: &bytes[self.range.clone()],
            method_len: self.method_len,
        }
    }
}

impl<'a> StateView<'a> {
    /// Checks every length and the version, then wraps `buf`.
    #[inline(always)]
    pub fn new_checked(buf: &'a [u8]) -> Option<Self> {
        if buf.len() < STATE_FIXED_LEN || buf[field::VERSION] != STATE_VERSION {
            return None;
        }
        let m = buf[field::METHOD_LEN] as usize;
        if m == 0 || m > MAX_METHOD_LEN || buf.len() < STATE_FIXED_LEN + m {
            return None;
        }
        let c = u16::from_be_bytes([buf[field::METHOD + m], buf[field::METHOD + m + 1]]) as usize;
        if buf.len() != STATE_FIXED_LEN + m + c {
            return None;
        }
        // Methods are ASCII in practice: `is_ascii` reads them a word at a time, where
        // `from_utf8` walks a string this short byte by byte. Either way exactly the UTF-8
        // methods pass.
        let method = &buf[field::METHOD..field::METHOD + m];
        if !method.is_ascii() {
            core::str::from_utf8(method).ok()?;
        }
        let view = Self { buf, method_len: m };
        if view.issued_at_ms() > view.expires_at_ms() || view.round() == 0 {
            return None;
        }
        Some(view)
    }

    /// What was learned about the state at `range` of its buffer, to rebuild this view later
    /// without parsing again.
    #[inline]
    pub(crate) fn parsed(&self, range: Range<usize>) -> Parsed {
        Parsed {
            range,
            method_len: self.method_len,
        }
    }

    #[inline]
    fn u64_at(&self, r: Range<usize>) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.buf[r]);
        u64::from_be_bytes(b)
    }

    /// The round this state was sealed in (1 on the first pause).
    #[inline]
    pub fn round(&self) -> u32 {
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.buf[field::ROUND]);
        u32::from_be_bytes(b)
    }

    /// When the token was sealed, ms since the Unix epoch.
    #[inline]
    pub fn issued_at_ms(&self) -> u64 {
        self.u64_at(field::ISSUED_AT)
    }

    /// When the token expires, ms since the Unix epoch.
    #[inline]
    pub fn expires_at_ms(&self) -> u64 {
        self.u64_at(field::EXPIRES_AT)
    }

    /// The token's random id.
    #[inline]
    pub fn token_id(&self) -> TokenId {
        let mut id = [0u8; TOKEN_ID_LEN];
        id.copy_from_slice(&self.buf[field::TOKEN_ID]);
        id
    }

    /// The argument digest sealed with the token.
    #[inline]
    pub fn args_digest(&self) -> &'a [u8] {
        &self.buf[field::ARGS]
    }

    /// The method the token was sealed for.
    #[inline]
    pub fn method(&self) -> &'a str {
        // Checked as UTF-8 in `new_checked`; the empty string is never returned for a view.
        core::str::from_utf8(self.method_bytes()).unwrap_or_default()
    }

    /// The method's bytes, for comparing without checking them as UTF-8 again (a byte-by-byte
    /// walk on a string this short).
    #[inline]
    pub fn method_bytes(&self) -> &'a [u8] {
        &self.buf[field::METHOD..field::METHOD + self.method_len]
    }

    /// The handler's continuation bytes.
    #[inline]
    pub fn continuation(&self) -> &'a [u8] {
        &self.buf[STATE_FIXED_LEN + self.method_len..]
    }
}
