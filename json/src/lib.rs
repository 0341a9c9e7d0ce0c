#![doc = include_str!("../README.md")]
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bind;
mod canon;
mod number;
mod scan;
mod string;
mod value;
mod writer;

use core::fmt;

use sha2::{Digest, Sha256};

pub use bind::write_float;
pub use canon::{canonicalize, write_binding_form};
pub use number::{number_is_exact, write_number};
pub use string::{name_order, write_string};
pub use value::{Items, Kind, Members, Value, parse};
pub use writer::Writer;

/// The deepest nesting [`parse`] and [`canonicalize`] ever follow, whatever
/// [`Limits::max_depth`] says: the size of their fixed position stack (128 words; `canonicalize`
/// keeps one more, for its batch of sorted names).
pub const MAX_DEPTH: usize = 128;

/// Bounds on the text [`parse`] accepts and the values [`canonicalize`] writes. Every bound
/// exceeded is an [`Error`], never a wrong result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Limits {
    /// Deepest nesting of arrays and objects (the top-level container is depth 1), at most
    /// [`MAX_DEPTH`]: [`Error::TooDeep`].
    pub max_depth: usize,
    /// Most members in one object: [`Error::TooManyMembers`]. Canonicalization costs
    /// `O(members²)` per object, so this bounds its time.
    pub max_members: usize,
    /// Longest text, in bytes: [`Error::TooLong`].
    pub max_len: usize,
}

impl Limits {
    /// Depth 64 (as `mrtr_std::jcs::MAX_DEPTH`: the argument digest's own bound), 256
    /// members per object, texts up to `u32::MAX` bytes.
    pub const DEFAULT: Self = Self {
        max_depth: 64,
        max_members: 256,
        max_len: u32::MAX as usize,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why a text was refused or a value could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Error {
    /// Not JSON (syntax, UTF-8, control characters in strings), or not a single value.
    NotJson,
    /// Arrays and objects nested deeper than [`Limits::max_depth`].
    TooDeep,
    /// An object with more members than [`Limits::max_members`].
    TooManyMembers,
    /// A text longer than [`Limits::max_len`].
    TooLong,
    /// An object holds two members with the same name (after unescaping).
    DuplicateName,
    /// A number a double does not carry exactly (beyond ±2^53, over-precise, or out of a
    /// double's range such as `1e400`), or a non-finite double to write.
    LossyNumber,
    /// A string escapes half of a surrogate pair: not Unicode text.
    LoneSurrogate,
    /// The output buffer is too small.
    BufferTooSmall,
    /// The value is not of the kind the call needs (such as unescaping a number).
    WrongKind,
}

impl Error {
    /// A stable snake_case name for logs (the ones both crates have are
    /// `mrtr_std::ijson::ViolationKind::as_str`'s names).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotJson => "not_json",
            Self::TooDeep => "too_deep",
            Self::TooManyMembers => "too_many_members",
            Self::TooLong => "too_long",
            Self::DuplicateName => "duplicate_name",
            Self::LossyNumber => "lossy_number",
            Self::LoneSurrogate => "lone_surrogate",
            Self::BufferTooSmall => "buffer_too_small",
            Self::WrongKind => "wrong_kind",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotJson => "not a single JSON value",
            Self::TooDeep => "nested too deep",
            Self::TooManyMembers => "object with too many members",
            Self::TooLong => "text too long",
            Self::DuplicateName => "duplicate member name",
            Self::LossyNumber => "number not exactly representable as a double",
            Self::LoneSurrogate => "string with a lone surrogate",
            Self::BufferTooSmall => "buffer too small",
            Self::WrongKind => "value of another kind",
        })
    }
}

impl core::error::Error for Error {}

/// Where canonical or written bytes go: a running hash ([`Sha256`]), a [`Writer`], or
/// anything else.
pub trait Sink {
    /// Takes the next bytes.
    fn write(&mut self, bytes: &[u8]);
}

impl Sink for Sha256 {
    fn write(&mut self, bytes: &[u8]) {
        self.update(bytes);
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn write(&mut self, bytes: &[u8]) {
        (**self).write(bytes);
    }
}

/// The argument digest of a call: SHA-256 of the argument binding form
/// ([`write_binding_form`]: RFC 8785, numbers keeping their kind) of its `arguments`, where
/// absent and `null` count as `{}` (as `mrtr_std::jcs::args_digest`, byte for byte).
/// Written with [`Limits::DEFAULT`] (depth 64 within the arguments, 256 members per
/// object), straight into the hash: no buffer.
///
/// ```
/// use mrtr_json::{Limits, args_digest, parse};
///
/// let empty = args_digest(None)?;
/// assert_eq!(empty, args_digest(Some(parse(b"null", &Limits::DEFAULT)?))?);
/// assert_eq!(empty, args_digest(Some(parse(b" { } ", &Limits::DEFAULT)?))?);
/// let a = args_digest(Some(parse(br#"{"n": 1, "m": [1.50, 1E2]}"#, &Limits::DEFAULT)?))?;
/// let b = args_digest(Some(parse(br#"{"m":[1.5,1e2],"n":1}"#, &Limits::DEFAULT)?))?;
/// assert_eq!(a, b);
/// // A handler reads 1 and 1.0 differently (an integer, a float): so does the digest.
/// let c = args_digest(Some(parse(br#"{"m":[1.5,1e2],"n":1.0}"#, &Limits::DEFAULT)?))?;
/// assert_ne!(a, c);
/// # Ok::<(), mrtr_json::Error>(())
/// ```
pub fn args_digest(arguments: Option<Value<'_>>) -> Result<[u8; 32], Error> {
    let mut hasher = Hasher::new();
    match arguments {
        Some(value) if value.kind() != Kind::Null => {
            canon::write(value, &mut hasher, &Limits::DEFAULT, canon::Numbers::Kinds)?;
        }
        _ => hasher.write(b"{}"),
    }
    Ok(hasher.finish())
}

/// SHA-256 over SHA-2's block function, for [`args_digest`]: canonicalization writes many
/// short pieces (a quote, a colon), which this takes with a plain copy into its block.
struct Hasher {
    state: [u32; 8],
    block: [u8; 64],
    /// Bytes in `block`.
    len: usize,
    /// Bytes in the blocks already compressed.
    done: u64,
}

impl Hasher {
    fn new() -> Self {
        Self {
            state: [
                0x6a09_e667,
                0xbb67_ae85,
                0x3c6e_f372,
                0xa54f_f53a,
                0x510e_527f,
                0x9b05_688c,
                0x1f83_d9ab,
                0x5be0_cd19,
            ],
            block: [0; 64],
            len: 0,
            done: 0,
        }
    }

    fn compress(&mut self) {
        sha2::block_api::compress256(&mut self.state, core::slice::from_ref(&self.block));
        self.done = self.done.wrapping_add(64);
        self.len = 0;
    }

    /// The digest: the message, a 1 bit, zeros and the length in bits (FIPS 180-4, 5.1.1).
    fn finish(mut self) -> [u8; 32] {
        let bits = self.done.wrapping_add(self.len as u64).wrapping_mul(8);
        self.write(&[0x80]);
        if self.len > 56 {
            self.write(&[0; 8]);
        }
        if let Some(pad) = self.block.get_mut(self.len..56) {
            pad.fill(0);
        }
        if let Some(tail) = self.block.get_mut(56..) {
            tail.copy_from_slice(&bits.to_be_bytes());
        }
        self.compress();
        let mut digest = [0u8; 32];
        for (out, word) in digest.chunks_exact_mut(4).zip(self.state) {
            out.copy_from_slice(&word.to_be_bytes());
        }
        digest
    }
}

impl Sink for Hasher {
    fn write(&mut self, mut bytes: &[u8]) {
        loop {
            let room = self.block.get_mut(self.len..).unwrap_or_default();
            if bytes.len() < room.len() {
                // Short pieces: a copy loop beats a call to `memcpy`.
                for (dst, &b) in room.iter_mut().zip(bytes) {
                    *dst = b;
                }
                self.len += bytes.len();
                return;
            }
            let Some((now, rest)) = bytes.split_at_checked(room.len()) else {
                return;
            };
            room.copy_from_slice(now);
            bytes = rest;
            self.compress();
        }
    }
}
