//! Every size limit of the token format, in one place.
//!
//! Each is defined here once (a few constants are also re-exported where they are enforced,
//! for example [`crate::key::KEY_LEN`]). `docs/token-format.md` states the same numbers.
//!
//! The associated-data capacity is built from these pieces: [`AadLimits`] sums the limits of
//! a binding's fields and of the audience (plus the longest header and the separators), and
//! [`MAX_AAD_LEN`] is that sum at the defaults.

/// Length of every key, in bytes (256-bit keys for all supported algorithms).
pub const KEY_LEN: usize = 32;

/// Longest key id, in bytes. A key id is at least 1 byte.
pub const MAX_KEY_ID_LEN: usize = 16;

/// Length of every supported algorithm's authentication tag, in bytes.
pub const TAG_LEN: usize = 16;

/// Longest nonce any supported algorithm uses (XChaCha20-Poly1305), in bytes.
pub const MAX_NONCE_LEN: usize = 24;

/// Shortest nonce any supported algorithm uses, in bytes.
pub const MIN_NONCE_LEN: usize = 12;

/// Bytes of a header before the key id: format version, algorithm id, key id length.
pub const HEADER_FIXED_LEN: usize = 3;

/// Longest header: fixed bytes plus the longest key id.
pub const MAX_HEADER_LEN: usize = HEADER_FIXED_LEN + MAX_KEY_ID_LEN;

/// Longest JSON-RPC method name, in bytes. A method is at least 1 byte.
pub const MAX_METHOD_LEN: usize = 32;

/// Longest protocol version string, in bytes.
pub const MAX_VERSION_LEN: usize = 32;

/// Longest target (tool name, prompt name or resource URI), in bytes.
pub const MAX_TARGET_LEN: usize = 1024;

/// Longest principal issuer or subject, in bytes.
pub const MAX_PRINCIPAL_FIELD_LEN: usize = 255;

/// Size of a token's random id.
pub const TOKEN_ID_LEN: usize = 16;

/// Size of the argument digest.
pub const DIGEST_LEN: usize = 32;

/// Longest continuation: its length is a `u16` in the state.
pub const MAX_CONTINUATION_LEN: usize = u16::MAX as usize;

/// Bytes of state besides the method and the continuation.
pub const STATE_FIXED_LEN: usize = 72;

/// Longest state for a continuation of `continuation` bytes.
pub const fn max_state_len(continuation: usize) -> usize {
    STATE_FIXED_LEN + MAX_METHOD_LEN + continuation
}

/// Shortest possible token in bytes: a 1-byte key id, the shortest nonce, a state with a
/// 1-byte method and no continuation, and the tag.
pub const MIN_TOKEN_BYTES: usize =
    HEADER_FIXED_LEN + 1 + MIN_NONCE_LEN + STATE_FIXED_LEN + 1 + TAG_LEN;

/// Limits on each field of a binding and on the audience, whose sum (plus the longest token
/// header and the separators) sizes an associated-data buffer: [`AadLimits::capacity`].
///
/// [`Binding::new`](crate::Binding::new) always enforces [`AadLimits::DEFAULT`]. An engine
/// built with a smaller AAD capacity ([`crate::Builder::aad_capacity`]) refuses, as a whole,
/// any binding whose associated data would not fit
/// ([`Binding::aad_len`](crate::Binding::aad_len)); sizing that capacity from the fields a
/// deployment really sees keeps the buffer, and the stack of a seal or a resume, small on a
/// microcontroller:
///
/// ```
/// use mrtr_core::limits::{AadLimits, MAX_AAD_LEN};
/// // A gateway whose tool names and principal fields stay within 64 bytes, and whose
/// // audience (its gateway id) within 16.
/// const GATEWAY: usize = AadLimits {
///     target: 64,
///     principal_field: 64,
///     audience: 16,
///     ..AadLimits::DEFAULT
/// }
/// .capacity();
/// assert_eq!(GATEWAY, 301);
/// assert_eq!(AadLimits::DEFAULT.capacity(), MAX_AAD_LEN);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct AadLimits {
    /// Longest JSON-RPC method, in bytes.
    pub method: usize,
    /// Longest protocol version, in bytes.
    pub protocol_version: usize,
    /// Longest target, in bytes.
    pub target: usize,
    /// Longest principal issuer, and longest subject, in bytes (each).
    pub principal_field: usize,
    /// Longest audience, in bytes; 0 for an engine built without one.
    pub audience: usize,
}

impl AadLimits {
    /// The limits [`Binding::new`](crate::Binding::new) and the engine builder enforce:
    /// method 32, protocol version 32, target 1,024, issuer and subject 255 bytes each,
    /// audience 255.
    pub const DEFAULT: Self = Self {
        method: MAX_METHOD_LEN,
        protocol_version: MAX_VERSION_LEN,
        target: MAX_TARGET_LEN,
        principal_field: MAX_PRINCIPAL_FIELD_LEN,
        audience: MAX_AUDIENCE_LEN,
    };

    /// The longest associated data a binding within these limits produces, with the longest
    /// token header, in any token format: the AAD capacity that holds every such binding.
    pub const fn capacity(self) -> usize {
        let audience = if self.audience == 0 {
            None
        } else {
            Some(self.audience)
        };
        aad_len(
            audience_len(audience),
            principal_len(Some((self.principal_field, self.principal_field))),
            self.method,
            self.protocol_version,
            self.target,
        )
    }
}

/// The default capacity of the associated-data buffer: the longest AAD any valid binding and
/// audience produce ([`AadLimits::DEFAULT`]`.capacity()`, 1,882 bytes). Hosts use it.
pub const MAX_AAD_LEN: usize = AadLimits::DEFAULT.capacity();

/// Longest audience (the service identity a v2 token is bound to), in bytes. An audience is at
/// least 1 byte: "no audience" is a choice of its own, encoded differently.
pub const MAX_AUDIENCE_LEN: usize = 255;

/// Length of the associated data for fields of these encoded lengths, with the longest token
/// header. `audience` is the length of the encoded audience (format v2; v1 has none and is
/// shorter).
pub(crate) const fn aad_len(
    audience: usize,
    principal: usize,
    method: usize,
    protocol_version: usize,
    target: usize,
) -> usize {
    MAX_HEADER_LEN + audience + principal + method + 1 + protocol_version + 1 + target
}

/// Length of an encoded audience: `0x00` for none, or `0x01`, a `u16` length and the bytes.
pub(crate) const fn audience_len(audience: Option<usize>) -> usize {
    match audience {
        None => 1,
        Some(len) => 1 + 2 + len,
    }
}

/// Length of an encoded principal: `0x00`, or `0x01` and two length-prefixed fields.
pub(crate) const fn principal_len(fields: Option<(usize, usize)>) -> usize {
    match fields {
        None => 1,
        Some((issuer, subject)) => 1 + 2 + issuer + 2 + subject,
    }
}
