//! What a token is bound to, and the canonical associated data built from it.
//!
//! The associated data (AAD) authenticated with every token is, byte for byte:
//!
//! ```text
//! v2: header || audience || principal || method 0x00 protocolVersion 0x00 target
//! v1: header ||             principal || method 0x00 protocolVersion 0x00 target
//! ```
//!
//! * `header` is the token's own header (format version, algorithm id, key id length, key id);
//!   its first byte, the format version, selects the layout;
//! * `audience` (v2 only) is `0x00` for an engine built without one, or
//!   `0x01 || u16be(len audience) || audience` (1 to 255 bytes of UTF-8): the operator-set
//!   identity of the service that seals and opens the token;
//! * `principal` is `0x00` for an anonymous caller, or
//!   `0x01 || u16be(len issuer) || issuer || u16be(len subject) || subject`;
//! * `method NUL protocolVersion NUL target` is the seed's canonical form: the JSON-RPC method,
//!   the negotiated protocol version, and the operation target (tool name for `tools/call`,
//!   prompt name for `prompts/get`, resource URI for `resources/read`, empty otherwise).
//!
//! Every field before the target is self-delimiting (length-prefixed, or free of NUL and ended
//! by NUL), and the target runs to the end, so distinct field tuples always give distinct bytes.

use core::fmt;

use heapless::Vec;

use crate::error::BindingError;
use crate::limits::{HEADER_FIXED_LEN, MAX_HEADER_LEN, aad_len, audience_len, principal_len};
use crate::token::TokenFormat;

use crate::limits::{
    MAX_AAD_LEN, MAX_AUDIENCE_LEN, MAX_METHOD_LEN, MAX_PRINCIPAL_FIELD_LEN, MAX_TARGET_LEN,
    MAX_VERSION_LEN,
};

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

/// The request a token is bound to: method, protocol version, target and principal.
///
/// Built with [`Binding::new`], which validates every field, so a `Binding` always fits the
/// default associated-data buffer ([`MAX_AAD_LEN`]).
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

    /// Length of the associated data this binding produces for `audience` with the longest
    /// token header, in the longest format (v2; v1 has no audience field): an engine of AAD
    /// capacity `A` bound to `audience` accepts the binding when `aad_len(audience) <= A`.
    #[inline]
    pub fn aad_len(&self, audience: Option<&str>) -> usize {
        let principal = match self.principal {
            Principal::Anonymous => None,
            Principal::User { issuer, subject } => Some((issuer.len(), subject.len())),
        };
        aad_len(
            audience_len(audience.map(str::len)),
            principal_len(principal),
            self.method.len(),
            self.protocol_version.len(),
            self.target.len(),
        )
    }
}

/// A filled associated-data buffer of `CAP` bytes (default [`MAX_AAD_LEN`]).
///
/// The capacity is a compile-time parameter so that a microcontroller can size the buffer
/// (which lives on the stack during a seal or a resume) for the bindings it really serves,
/// from an [`AadLimits`](crate::limits::AadLimits); hosts keep the default, which holds every valid binding.
///
/// Only the bytes written are ever touched: the buffer is a `heapless::Vec`, so creating an
/// `Aad` does not zero its capacity (a typical binding fills about 80 of its 1.9 KiB).
pub struct Aad<const CAP: usize = MAX_AAD_LEN> {
    buf: Vec<u8, CAP>,
}

impl Aad {
    /// An empty buffer of the default capacity, to be filled in place with [`Aad::fill`].
    ///
    /// The buffer is large (about 1.9 KiB): on small stacks, keep one `Aad` in place and fill
    /// it rather than moving built values around (each move can cost a stack copy), or use a
    /// smaller capacity ([`Aad::empty`]).
    pub const fn new() -> Self {
        Self::empty()
    }

    /// Builds the canonical associated data for a token header, an audience and a binding,
    /// at the default capacity (see [`Aad::fill`]).
    pub fn build(header: &[u8], audience: Option<&str>, binding: &Binding<'_>) -> Option<Self> {
        let mut aad = Self::new();
        aad.fill(header, audience, binding)?;
        Some(aad)
    }
}

impl<const CAP: usize> Aad<CAP> {
    /// An empty buffer of capacity `CAP`: `Aad::<256>::empty()`.
    pub const fn empty() -> Self {
        Self { buf: Vec::new() }
    }

    /// The buffer's capacity in bytes.
    pub const fn capacity(&self) -> usize {
        CAP
    }

    /// Replaces the contents with the canonical associated data for `header`, `audience` and
    /// `binding`, in place, and returns the bytes. The header's first byte, the token format
    /// version, selects the layout: v2 binds the audience (`None`: bound as "no audience"),
    /// v1 has no audience field and takes only `None`.
    ///
    /// Returns `None`, leaving the buffer empty, if `header` is shorter or longer than a
    /// header can be or names an unknown format, if `audience` is empty, longer than
    /// [`MAX_AUDIENCE_LEN`] or given for v1, or if [`Binding::aad_len`] exceeds `CAP`: the
    /// capacity is judged with the longest header and the v2 layout, so whether a binding fits
    /// never depends on the key id or the format of a token.
    pub fn fill(
        &mut self,
        header: &[u8],
        audience: Option<&str>,
        binding: &Binding<'_>,
    ) -> Option<&[u8]> {
        self.buf.clear();
        if header.len() <= HEADER_FIXED_LEN
            || header.len() > MAX_HEADER_LEN
            || audience.is_some_and(|a| a.is_empty() || a.len() > MAX_AUDIENCE_LEN)
            || binding.aad_len(audience) > CAP
        {
            return None;
        }
        let format = TokenFormat::from_byte(header[0])?;
        if format == TokenFormat::V1 && audience.is_some() {
            return None;
        }
        if write(&mut self.buf, header, format, audience, binding).is_none() {
            // Unreachable: the capacity was checked above. Never leave a partial AAD.
            self.buf.clear();
            return None;
        }
        Some(self.as_bytes())
    }

    /// [`Aad::fill`] for a header of `format` and an audience the engine holds valid (a
    /// header it built or framed, an audience validated when it was built, `None` for v1):
    /// only the capacity is judged, as `fill` judges it. Out of line: the engine comes here
    /// only for bindings too long for its spare room (see `build_aad`), and its fast path
    /// stays small.
    #[inline(never)]
    fn fill_checked(
        &mut self,
        header: &[u8],
        format: TokenFormat,
        audience: Option<&str>,
        binding: &Binding<'_>,
    ) -> Option<&[u8]> {
        self.buf.clear();
        if binding.aad_len(audience) > CAP
            || write(&mut self.buf, header, format, audience, binding).is_none()
        {
            self.buf.clear();
            return None;
        }
        Some(self.as_bytes())
    }

    /// The associated-data bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }
}

/// The associated data of a seal or an open, for an engine of AAD capacity `CAP`: written into
/// `spare` (room the engine's token buffer does not use for this token) when it fits there,
/// which the usual binding does, else into `aad`. `header` is of `format` and `audience` valid
/// for it, as `Aad::fill_checked` takes them; `None` if the binding exceeds `CAP`, judged as
/// [`Aad::fill`] judges it.
///
/// The spare room is initialised memory the engine owns for the call, so nothing needs
/// zeroing and each field is one plain copy ([`crate::bytes::copy`]); `aad`, empty until
/// needed, is the fallback for bindings too long for the room left (what was written into the
/// room is cleared first).
#[inline]
pub(crate) fn build_aad<'s, const CAP: usize>(
    spare: &'s mut [u8],
    aad: &'s mut Aad<CAP>,
    header: &[u8],
    format: TokenFormat,
    audience: Option<&str>,
    binding: &Binding<'_>,
) -> Option<&'s [u8]> {
    // Every binding fits the default capacity (`Binding::new` bounds its fields, the engine
    // builder the audience, and `MAX_AAD_LEN` is the sum of the bounds): only a smaller
    // capacity needs the sum.
    if CAP < MAX_AAD_LEN && binding.aad_len(audience) > CAP {
        return None;
    }
    let room = spare.len();
    let mut front = Front { rest: &mut *spare };
    let fits = write(&mut front, header, format, audience, binding).is_some();
    let len = room - front.rest.len();
    if !fits {
        if let Some(partial) = spare.get_mut(..len) {
            partial.fill(0);
        }
        return aad.fill_checked(header, format, audience, binding);
    }
    let spare: &'s [u8] = spare;
    spare.get(..len)
}

/// Where [`write`] appends: an [`Aad`]'s vector, or the front of a plain buffer.
trait Sink {
    /// Appends `bytes`; `None` if they do not fit.
    fn put(&mut self, bytes: &[u8]) -> Option<()>;
}

impl<const CAP: usize> Sink for Vec<u8, CAP> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Option<()> {
        self.extend_from_slice(bytes).ok()
    }
}

/// A buffer filled from the front: `rest` is what is left of it.
struct Front<'a> {
    rest: &'a mut [u8],
}

impl Sink for Front<'_> {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) -> Option<()> {
        let (head, rest) = core::mem::take(&mut self.rest).split_at_mut_checked(bytes.len())?;
        crate::bytes::copy(head, bytes);
        self.rest = rest;
        Some(())
    }
}

/// Appends the canonical associated data to `out`, field by field (see the module
/// documentation). The header's format selects the layout; `audience` is `None` for v1.
#[inline]
fn write(
    out: &mut impl Sink,
    header: &[u8],
    format: TokenFormat,
    audience: Option<&str>,
    binding: &Binding<'_>,
) -> Option<()> {
    out.put(header)?;
    match (format, audience) {
        (TokenFormat::V1, _) => {}
        (TokenFormat::V2, None) => out.put(&[0x00])?,
        (TokenFormat::V2, Some(audience)) => put_tagged(out, 0x01, audience.as_bytes())?,
    }
    match binding.principal {
        Principal::Anonymous => out.put(&[0x00])?,
        Principal::User { issuer, subject } => {
            put_tagged(out, 0x01, issuer.as_bytes())?;
            out.put(&(subject.len() as u16).to_be_bytes())?;
            out.put(subject.as_bytes())?;
        }
    }
    out.put(binding.method.as_bytes())?;
    out.put(&[0x00])?;
    out.put(binding.protocol_version.as_bytes())?;
    out.put(&[0x00])?;
    out.put(binding.target.as_bytes())
}

/// `tag || u16be(len) || bytes`, the tag and the length in one append. Fields and audiences
/// are at most 255 bytes, so the length always fits a u16.
#[inline]
fn put_tagged(out: &mut impl Sink, tag: u8, bytes: &[u8]) -> Option<()> {
    let [hi, lo] = (bytes.len() as u16).to_be_bytes();
    out.put(&[tag, hi, lo])?;
    out.put(bytes)
}

impl<const CAP: usize> Default for Aad<CAP> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<const CAP: usize> fmt::Debug for Aad<CAP> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Aad")
            .field("len", &self.buf.len())
            .field("capacity", &CAP)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bindings() -> [Binding<'static>; 3] {
        let user = Principal::User {
            issuer: "https://idp.example",
            subject: "alice",
        };
        [
            Binding::new("tools/call", "2026-07-28", "book_table", user).unwrap(),
            Binding::new("prompts/get", "", "", Principal::Anonymous).unwrap(),
            Binding::new("resources/read", "2026-07-28", "file:///a/b", user).unwrap(),
        ]
    }

    /// Whatever room the engine has, `build_aad` gives exactly `Aad::fill`'s bytes: written in
    /// place when they fit the room, and through the fallback `Aad` when they do not.
    #[test]
    fn every_room_gives_the_canonical_bytes() {
        let v1 = [1, 4, 2, b'k', b'1'];
        let v2 = [2, 4, 8, b'k', b'2', b'0', b'2', b'6', b'-', b'1', b'1'];
        for binding in bindings() {
            for (header, format, audience) in [
                (&v1[..], TokenFormat::V1, None),
                (&v2[..], TokenFormat::V2, None),
                (&v2[..], TokenFormat::V2, Some("booking.example")),
            ] {
                let want = Aad::build(header, audience, &binding).unwrap();
                let bound = binding.aad_len(audience);
                for room in [0, 1, want.as_bytes().len(), bound - 1, bound, bound + 40] {
                    let mut spare = [0xa5u8; 400];
                    let mut fallback = Aad::new();
                    let got = build_aad(
                        &mut spare[..room],
                        &mut fallback,
                        header,
                        format,
                        audience,
                        &binding,
                    );
                    assert_eq!(
                        got,
                        Some(want.as_bytes()),
                        "{binding:?} {audience:?} {room}"
                    );
                    let in_place = room >= want.as_bytes().len();
                    assert_eq!(fallback.as_bytes().is_empty(), in_place, "{room}");
                    if in_place {
                        assert!(
                            spare[want.as_bytes().len()..].iter().all(|&b| b == 0xa5),
                            "{room}: nothing written past the associated data"
                        );
                    } else {
                        assert!(
                            spare[..room].iter().all(|&b| b == 0 || b == 0xa5),
                            "{room}: what did not fit is cleared"
                        );
                        assert!(spare[room..].iter().all(|&b| b == 0xa5), "{room}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_binding_over_the_capacity_is_refused_whatever_the_room() {
        let binding = bindings()[0];
        let header = [2, 4, 2, b'k', b'1'];
        let bound = binding.aad_len(None);
        let mut spare = [0u8; 400];
        let mut small = Aad::<64>::empty();
        assert!(bound > 64);
        let got = build_aad(
            &mut spare,
            &mut small,
            &header,
            TokenFormat::V2,
            None,
            &binding,
        );
        assert_eq!(got, None);
        let mut exact = Aad::<{ 19 + 1 + 1 + 2 + 19 + 2 + 5 + 10 + 1 + 10 + 1 + 10 }>::empty();
        assert_eq!(exact.capacity(), bound);
        let got = build_aad(
            &mut spare,
            &mut exact,
            &header,
            TokenFormat::V2,
            None,
            &binding,
        );
        assert!(got.is_some());
    }
}
