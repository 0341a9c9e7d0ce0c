//! What a token is bound to, and the canonical associated data built from it.
//!
//! The associated data (AAD) authenticated with every token is, byte for byte:
//!
//! ```text
//! header || principal || method 0x00 protocolVersion 0x00 target
//! ```
//!
//! * `header` is the token's own header (format version, algorithm id, key id length, key id);
//! * `principal` is `0x00` for an anonymous caller, or
//!   `0x01 || u16be(len issuer) || issuer || u16be(len subject) || subject`;
//! * `method NUL protocolVersion NUL target` is the seed's canonical form: the JSON-RPC method,
//!   the negotiated protocol version, and the operation target (tool name for `tools/call`,
//!   prompt name for `prompts/get`, resource URI for `resources/read`, empty otherwise).
//!
//! Every field before the target is self-delimiting (length-prefixed, or free of NUL and ended
//! by NUL), and the target runs to the end, so distinct field tuples always give distinct bytes.

use core::fmt;

use crate::token::MAX_HEADER_LEN;

/// Longest JSON-RPC method name, in bytes.
pub const MAX_METHOD_LEN: usize = 32;
/// Longest protocol version string, in bytes.
pub const MAX_VERSION_LEN: usize = 32;
/// Longest target (tool name, prompt name or resource URI), in bytes.
pub const MAX_TARGET_LEN: usize = 1024;
/// Longest principal issuer or subject, in bytes.
pub const MAX_PRINCIPAL_FIELD_LEN: usize = 255;

const MAX_PRINCIPAL_LEN: usize = 1 + 2 * (2 + MAX_PRINCIPAL_FIELD_LEN);

/// Capacity of the associated-data buffer: the longest AAD any valid binding produces.
pub const MAX_AAD_LEN: usize =
    MAX_HEADER_LEN + MAX_PRINCIPAL_LEN + MAX_METHOD_LEN + 1 + MAX_VERSION_LEN + 1 + MAX_TARGET_LEN;

/// The caller a token belongs to.
///
/// `Anonymous` is an identity of its own: an anonymous token never opens for an authenticated
/// caller, nor the reverse, even one whose issuer and subject are empty.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Principal<'a> {
    /// No authenticated caller (auth disabled, or an unauthenticated request).
    Anonymous,
    /// An authenticated caller, identified by issuer and subject (for example JWT `iss`, `sub`).
    User {
        /// Who vouched for the caller.
        issuer: &'a str,
        /// The caller, as the issuer names it.
        subject: &'a str,
    },
}

impl fmt::Debug for Principal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Anonymous => f.write_str("Anonymous"),
            Self::User { issuer, subject } => f
                .debug_struct("User")
                .field("issuer", issuer)
                .field("subject", subject)
                .finish(),
        }
    }
}

/// Why a binding was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum BindingError {
    /// The method is empty.
    EmptyMethod,
    /// The method or protocol version contains a NUL byte.
    NulByte,
    /// The method is longer than [`MAX_METHOD_LEN`].
    MethodTooLong,
    /// The protocol version is longer than [`MAX_VERSION_LEN`].
    VersionTooLong,
    /// The target is longer than [`MAX_TARGET_LEN`].
    TargetTooLong,
    /// The issuer or subject is longer than [`MAX_PRINCIPAL_FIELD_LEN`].
    PrincipalTooLong,
}

impl fmt::Display for BindingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::EmptyMethod => "method is empty",
            Self::NulByte => "method or protocol version contains NUL",
            Self::MethodTooLong => "method is longer than 32 bytes",
            Self::VersionTooLong => "protocol version is longer than 32 bytes",
            Self::TargetTooLong => "target is longer than 1024 bytes",
            Self::PrincipalTooLong => "issuer or subject is longer than 255 bytes",
        })
    }
}

impl core::error::Error for BindingError {}

/// The request a token is bound to: method, protocol version, target and principal.
///
/// Built with [`Binding::new`], which validates every field, so a `Binding` always fits the
/// associated-data buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding<'a> {
    method: &'a str,
    protocol_version: &'a str,
    target: &'a str,
    principal: Principal<'a>,
}

impl<'a> Binding<'a> {
    /// Validates and builds a binding.
    pub fn new(
        method: &'a str,
        protocol_version: &'a str,
        target: &'a str,
        principal: Principal<'a>,
    ) -> Result<Self, BindingError> {
        if method.is_empty() {
            return Err(BindingError::EmptyMethod);
        }
        if method.len() > MAX_METHOD_LEN {
            return Err(BindingError::MethodTooLong);
        }
        if protocol_version.len() > MAX_VERSION_LEN {
            return Err(BindingError::VersionTooLong);
        }
        if method.as_bytes().contains(&0) || protocol_version.as_bytes().contains(&0) {
            return Err(BindingError::NulByte);
        }
        if target.len() > MAX_TARGET_LEN {
            return Err(BindingError::TargetTooLong);
        }
        if let Principal::User { issuer, subject } = principal
            && (issuer.len() > MAX_PRINCIPAL_FIELD_LEN || subject.len() > MAX_PRINCIPAL_FIELD_LEN)
        {
            return Err(BindingError::PrincipalTooLong);
        }
        Ok(Self {
            method,
            protocol_version,
            target,
            principal,
        })
    }

    /// The JSON-RPC method.
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> &'a str {
        self.protocol_version
    }

    /// The target: tool name, prompt name, resource URI, or empty.
    pub fn target(&self) -> &'a str {
        self.target
    }

    /// The caller.
    pub fn principal(&self) -> Principal<'a> {
        self.principal
    }
}

/// A filled associated-data buffer.
pub struct Aad {
    buf: [u8; MAX_AAD_LEN],
    len: usize,
}

impl Aad {
    /// An empty buffer, to be filled in place with [`Aad::fill`].
    ///
    /// The buffer is large (about 1.6 KiB): on small stacks, keep one `Aad` in place and fill
    /// it rather than moving built values around (each move can cost a stack copy).
    pub const fn new() -> Self {
        Self {
            buf: [0; MAX_AAD_LEN],
            len: 0,
        }
    }

    /// Builds the canonical associated data for a token header and a binding.
    ///
    /// Returns `None` only if `header` is longer than a valid header can be.
    pub fn build(header: &[u8], binding: &Binding<'_>) -> Option<Self> {
        let mut aad = Self::new();
        aad.fill(header, binding)?;
        Some(aad)
    }

    /// Replaces the contents with the canonical associated data for `header` and `binding`,
    /// in place, and returns the bytes.
    ///
    /// Returns `None` only if `header` is longer than a valid header can be.
    pub fn fill(&mut self, header: &[u8], binding: &Binding<'_>) -> Option<&[u8]> {
        if header.len() > MAX_HEADER_LEN {
            return None;
        }
        self.len = 0;
        self.put(header);
        match binding.principal {
            Principal::Anonymous => self.put(&[0x00]),
            Principal::User { issuer, subject } => {
                self.put(&[0x01]);
                self.put_prefixed(issuer.as_bytes());
                self.put_prefixed(subject.as_bytes());
            }
        }
        self.put(binding.method.as_bytes());
        self.put(&[0x00]);
        self.put(binding.protocol_version.as_bytes());
        self.put(&[0x00]);
        self.put(binding.target.as_bytes());
        Some(self.as_bytes())
    }

    /// The associated-data bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    // Binding::new bounds every field, so the sum always fits MAX_AAD_LEN; `get_mut` keeps
    // that an invariant rather than a panic site.
    fn put(&mut self, bytes: &[u8]) {
        if let Some(dst) = self.buf.get_mut(self.len..self.len + bytes.len()) {
            dst.copy_from_slice(bytes);
            self.len += bytes.len();
        }
    }

    fn put_prefixed(&mut self, bytes: &[u8]) {
        // Fields are at most 255 bytes, so the length always fits a u16.
        self.put(&(bytes.len() as u16).to_be_bytes());
        self.put(bytes);
    }
}

impl Default for Aad {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Aad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Aad")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}
