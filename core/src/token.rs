//! Token framing (format v1) and the fixed token buffer.
//!
//! ```text
//! offset      size  field
//! 0           1     format version (0x01)
//! 1           1     algorithm id (1 AES-256-GCM, 2 ChaCha20-Poly1305, 3 XChaCha20-Poly1305)
//! 2           1     key id length k (1..=16)
//! 3           k     key id
//! 3+k         n     nonce (n = 12, or 24 for XChaCha20-Poly1305)
//! 3+k+n       s     ciphertext of the state (see `state`)
//! 3+k+n+s     16    tag
//! ```
//!
//! The header (bytes `0..3+k`) is authenticated as the first part of the associated data.
//! The text form is the whole byte string in unpadded base64url. See `docs/token-format.md`.

use core::fmt;

use zeroize::Zeroize;

use crate::b64;
use crate::cipher::{MAX_NONCE_LEN, TAG_LEN};
use crate::key::MAX_KEY_ID_LEN;
use crate::state::{STATE_FIXED_LEN, max_state_len};

/// Token format version written by this build.
pub const FORMAT_VERSION: u8 = 1;

/// Offsets of the fixed header fields.
pub mod field {
    /// Format version byte.
    pub const VERSION: usize = 0;
    /// Algorithm id byte.
    pub const ALGORITHM: usize = 1;
    /// Key id length byte.
    pub const KEY_ID_LEN: usize = 2;
    /// First key id byte.
    pub const KEY_ID: usize = 3;
}

/// Longest header: fixed bytes plus the longest key id.
pub const MAX_HEADER_LEN: usize = field::KEY_ID + MAX_KEY_ID_LEN;

/// Shortest possible token in bytes (1-byte key id, 12-byte nonce, empty continuation,
/// 1-byte method).
pub const MIN_TOKEN_BYTES: usize = field::KEY_ID + 1 + 12 + STATE_FIXED_LEN + 1 + TAG_LEN;

/// Longest token text for a continuation of `continuation` bytes, whatever the key id length,
/// algorithm and method: the buffer size [`TokenBuf`] needs.
///
/// ```
/// use mrtr_core::token::{TokenBuf, token_len_for};
/// let buf: TokenBuf<{ token_len_for(256) }> = TokenBuf::new();
/// assert_eq!(buf.capacity(), 559);
/// ```
pub const fn token_len_for(continuation: usize) -> usize {
    b64::encoded_len(MAX_HEADER_LEN + MAX_NONCE_LEN + max_state_len(continuation) + TAG_LEN)
}

/// A fixed buffer of `N` bytes that holds one token: its text, and its bytes while sealing or
/// opening (both done in place). `N` is also the hard maximum token length: a longer token is
/// rejected before any decoding. Wiped on drop, since it may hold a decrypted state.
pub struct TokenBuf<const N: usize> {
    pub(crate) bytes: [u8; N],
}

impl<const N: usize> TokenBuf<N> {
    /// An empty (zeroed) buffer.
    pub const fn new() -> Self {
        Self { bytes: [0; N] }
    }

    /// The buffer size: the longest token text it accepts.
    pub const fn capacity(&self) -> usize {
        N
    }

    /// Wipes the buffer.
    pub fn wipe(&mut self) {
        self.bytes.zeroize();
    }

    /// Whether every byte is zero: true after a failed resume, which wipes the buffer, and
    /// after [`TokenBuf::wipe`]. Lets tests and audits observe the wipe.
    pub fn is_wiped(&self) -> bool {
        self.bytes.iter().fold(0u8, |acc, b| acc | b) == 0
    }
}

impl<const N: usize> Default for TokenBuf<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Drop for TokenBuf<N> {
    fn drop(&mut self) {
        self.wipe();
    }
}

impl<const N: usize> fmt::Debug for TokenBuf<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TokenBuf<{N}>(<redacted>)")
    }
}

/// A checked view of a decoded token's framing. Once built, no accessor can panic.
pub(crate) struct Frame {
    pub header_len: usize,
    pub nonce_len: usize,
    pub total: usize,
}

impl Frame {
    /// Checks the framing lengths of a decoded token of `total` bytes in `bytes`.
    /// Version and algorithm are checked by the caller, which knows what it accepts.
    pub fn new_checked(bytes: &[u8], nonce_len: usize) -> Option<Self> {
        let total = bytes.len();
        if total < MIN_TOKEN_BYTES {
            return None;
        }
        let k = bytes[field::KEY_ID_LEN] as usize;
        if k == 0 || k > MAX_KEY_ID_LEN {
            return None;
        }
        let header_len = field::KEY_ID + k;
        if total < header_len + nonce_len + STATE_FIXED_LEN + 1 + TAG_LEN {
            return None;
        }
        Some(Self {
            header_len,
            nonce_len,
            total,
        })
    }

    pub fn state_range(&self) -> core::ops::Range<usize> {
        self.header_len + self.nonce_len..self.total - TAG_LEN
    }
}
