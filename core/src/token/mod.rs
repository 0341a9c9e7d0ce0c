//! The token format: its versions, the header, the framing, and the fixed token buffer.
//!
//! ```text
//! offset      size  field
//! 0           1     format version (see `TokenFormat`)
//! 1           1     algorithm id (1 AES-256-GCM, 2 ChaCha20-Poly1305, 3 XChaCha20-Poly1305,
//!                   4 AES-256-GCM-SIV)
//! 2           1     key id length k (1..=16)
//! 3           k     key id
//! 3+k         n     nonce (n = 12, or 24 for XChaCha20-Poly1305)
//! 3+k+n       s     ciphertext of the state (see `state`)
//! 3+k+n+s     16    tag
//! ```
//!
//! The header (bytes `0..3+k`) is authenticated as the first part of the associated data
//! ([`crate::binding`]). The text form is the whole byte string in unpadded base64url. See
//! `docs/token-format.md`.
//!
//! Opening reads the header once and dispatches on its version byte, so every format this
//! build knows opens, whichever one it seals.

use core::fmt;
use core::ops::Range;

use zeroize::Zeroize;

use crate::b64;
use crate::cipher::Algorithm;
use crate::error::Reason;
use crate::key::KeyId;
use crate::limits::{HEADER_FIXED_LEN, MAX_KEY_ID_LEN, MAX_NONCE_LEN, STATE_FIXED_LEN, TAG_LEN};

pub(crate) mod state;

use crate::limits::MAX_HEADER_LEN;

/// A token format version: the first byte of every token, and so of its associated data.
///
/// A reader refuses a version it does not know; a new format always gets a new version
/// byte, so a token can never be read under another layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
#[repr(u8)]
pub enum TokenFormat {
    /// Format v1: the associated data binds header, principal, method, protocol version and
    /// target. Still opened during a rollout (see the engine builder); sealed only on
    /// request.
    V1 = 1,
    /// Format v2, sealed by default: v1's associated data plus the audience, the operator-set
    /// identity of the service (or an explicit "no audience").
    V2 = 2,
}

impl TokenFormat {
    /// The version byte.
    pub const fn byte(self) -> u8 {
        self as u8
    }

    /// The format a version byte names, if this build reads it.
    pub const fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            1 => Some(Self::V1),
            2 => Some(Self::V2),
            _ => None,
        }
    }
}

impl fmt::Display for TokenFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.byte())
    }
}

/// Length of the header for a key id of `key_id` bytes.
pub(crate) const fn header_len(key_id: usize) -> usize {
    HEADER_FIXED_LEN + key_id
}

/// Writes the header of a token of `format`, sealed with `algorithm` under key `key_id`, into
/// `out`, which is exactly [`header_len`]`(key_id.as_bytes().len())` long: straight into the
/// token bytes, where the associated data then reads it.
#[inline(always)]
pub(crate) fn write_header(
    out: &mut [u8],
    format: TokenFormat,
    algorithm: Algorithm,
    key_id: &KeyId,
) {
    let kid = key_id.as_bytes();
    let (fixed, id) = out.split_at_mut(HEADER_FIXED_LEN);
    // A `KeyId` holds 1..=MAX_KEY_ID_LEN bytes: its length fits the byte.
    fixed.copy_from_slice(&[format.byte(), algorithm.id(), kid.len() as u8]);
    crate::bytes::copy(id, kid);
}

/// A decoded token taken apart in place, every framing length checked: its format, the
/// header and key id, the nonce, the sealed state (to open in place) and the tag.
pub(crate) struct Frame<'a> {
    pub format: TokenFormat,
    pub header: &'a [u8],
    pub key_id: &'a [u8],
    pub nonce: &'a [u8],
    pub body: &'a mut [u8],
    pub tag: &'a [u8; TAG_LEN],
    /// Where `body` starts in the token bytes.
    pub body_start: usize,
}

impl<'a> Frame<'a> {
    /// Reads the header of decoded token `bytes` for a key ring of `algorithm`, and takes the
    /// token apart. Checks, in order (docs/token-format.md §2): at least the 3 fixed header
    /// bytes (`Malformed`, so a token of 1 or 2 bytes is malformed whatever its version byte),
    /// the version (`UnsupportedVersion`), the algorithm (`WrongAlgorithm`), then the key id
    /// length and room for key id, nonce, smallest state and tag (`Malformed`). The key id's
    /// characters are not checked: an id no key ring can hold is `UnknownKey` at the lookup.
    #[inline]
    pub fn read(bytes: &'a mut [u8], algorithm: Algorithm) -> Result<Self, Reason> {
        let [version, alg, k] = *bytes
            .first_chunk::<HEADER_FIXED_LEN>()
            .ok_or(Reason::Malformed)?;
        let format = TokenFormat::from_byte(version).ok_or(Reason::UnsupportedVersion)?;
        if alg != algorithm.id() {
            return Err(Reason::WrongAlgorithm);
        }
        let k = usize::from(k);
        if k == 0 || k > MAX_KEY_ID_LEN {
            return Err(Reason::Malformed);
        }
        let nonce_len = algorithm.nonce_len();
        let (header, rest) = bytes
            .split_at_mut_checked(header_len(k))
            .ok_or(Reason::Malformed)?;
        let (nonce, rest) = rest
            .split_at_mut_checked(nonce_len)
            .ok_or(Reason::Malformed)?;
        let (body, tag) = rest
            .split_last_chunk_mut::<TAG_LEN>()
            .ok_or(Reason::Malformed)?;
        if body.len() < STATE_FIXED_LEN + 1 {
            return Err(Reason::Malformed);
        }
        let header = &*header;
        Ok(Self {
            format,
            key_id: &header[HEADER_FIXED_LEN..],
            body_start: header.len() + nonce_len,
            header,
            nonce,
            body,
            tag,
        })
    }

    /// Where the state lies in the token bytes.
    #[inline]
    pub fn state_range(&self) -> Range<usize> {
        self.body_start..self.body_start + self.body.len()
    }
}

/// Longest token text for a continuation of `continuation` bytes, whatever the key id length,
/// algorithm, format and method: the buffer size [`TokenBuf`] needs.
///
/// ```
/// use mrtr_core::{TokenBuf, token_len_for};
/// let buf: TokenBuf<{ token_len_for(256) }> = TokenBuf::new();
/// assert_eq!(buf.capacity(), 559);
/// ```
#[inline]
pub const fn token_len_for(continuation: usize) -> usize {
    b64::encoded_len(
        MAX_HEADER_LEN + MAX_NONCE_LEN + crate::limits::max_state_len(continuation) + TAG_LEN,
    )
}

/// A fixed buffer of `N` bytes that holds one token: its text, and its bytes while sealing or
/// opening (both done in place). `N` is also the hard maximum token length: a longer token is
/// rejected before any decoding. Wiped on drop, since it may hold a decrypted state.
///
/// Word-aligned: the token text starts at the buffer's first byte, and checking it as UTF-8
/// (to hand it out as a `str`) reads a word at a time only from a word boundary; from any
/// other start it first walks up to 7 bytes one at a time.
#[repr(C, align(8))]
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
        // As a slice: `zeroize` clears a `[u8]` in one fill behind an optimisation barrier,
        // where an array (`[u8; N]: Zeroize` goes element by element) gets one volatile
        // store per byte.
        self.bytes.as_mut_slice().zeroize();
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
