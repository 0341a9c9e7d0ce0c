//! The token and state byte formats (token formats v1 and v2, state layout 1), written from
//! their documentation.

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_core::Aad;
use mrtr_core::cipher::{Cipher, TAG_LEN};
use mrtr_core::key::SecretKey;

use crate::fixture;

/// Nonce length of AES-256-GCM.
pub const NONCE_LEN: usize = 12;
/// State bytes besides method and continuation.
pub const STATE_FIXED: usize = 72;
/// Longest method.
pub const MAX_METHOD: usize = 32;
/// Longest key id.
pub const MAX_KID: usize = 16;

/// The fields of a sealed state, as parsed by the oracle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub round: u32,
    pub issued_at: u64,
    pub expires_at: u64,
    pub token_id: [u8; 16],
    pub args: [u8; 32],
    pub method: String,
    pub continuation: Vec<u8>,
}

fn be<const L: usize>(b: &[u8]) -> [u8; L] {
    b.try_into().expect("fixed field")
}

/// Parses a state by the documented layout, independently of `StateView`.
pub fn parse_state(b: &[u8]) -> Option<State> {
    if b.len() < STATE_FIXED || b[0] != 1 {
        return None;
    }
    let m = b[69] as usize;
    if m == 0 || m > MAX_METHOD || b.len() < STATE_FIXED + m {
        return None;
    }
    let c = u16::from_be_bytes(be(&b[70 + m..72 + m])) as usize;
    if b.len() != STATE_FIXED + m + c {
        return None;
    }
    let state = State {
        round: u32::from_be_bytes(be(&b[1..5])),
        issued_at: u64::from_be_bytes(be(&b[5..13])),
        expires_at: u64::from_be_bytes(be(&b[13..21])),
        token_id: be(&b[21..37]),
        args: be(&b[37..69]),
        method: String::from_utf8(b[70..70 + m].to_vec()).ok()?,
        continuation: b[72 + m..].to_vec(),
    };
    (state.round != 0 && state.issued_at <= state.expires_at).then_some(state)
}

/// Encodes a state by the documented layout.
pub fn encode_state(s: &State) -> Vec<u8> {
    let mut out = vec![1u8];
    out.extend_from_slice(&s.round.to_be_bytes());
    out.extend_from_slice(&s.issued_at.to_be_bytes());
    out.extend_from_slice(&s.expires_at.to_be_bytes());
    out.extend_from_slice(&s.token_id);
    out.extend_from_slice(&s.args);
    out.push(s.method.len() as u8);
    out.extend_from_slice(s.method.as_bytes());
    out.extend_from_slice(&(s.continuation.len() as u16).to_be_bytes());
    out.extend_from_slice(&s.continuation);
    out
}

/// A token header: format `version`, AES-256-GCM, the key id.
pub fn header(version: u8, kid: &str) -> Vec<u8> {
    let mut h = vec![version, 1, kid.len() as u8];
    h.extend_from_slice(kid.as_bytes());
    h
}

/// What a token of this header is bound to on the fixture's engine: v2 binds the audience,
/// v1 has none.
pub fn audience(header: &[u8]) -> Option<&'static str> {
    (header[0] == 2).then_some(fixture::AUDIENCE)
}

/// Seals `state` as a complete decoded token of format `version` under `key`, bound to the
/// fixture's binding (and, in v2, its audience).
pub fn seal_token(
    version: u8,
    key: (&str, [u8; 32]),
    nonce: [u8; NONCE_LEN],
    state: &[u8],
) -> Vec<u8> {
    let header = header(version, key.0);
    let aad = Aad::build(&header, audience(&header), &fixture::binding()).expect("valid header");
    let cipher = Aes256Gcm::new(&SecretKey::from_bytes(key.1));
    let mut body = state.to_vec();
    let tag = cipher
        .seal_in_place(&nonce, aad.as_bytes(), &mut body)
        .expect("seal");
    let mut token = header;
    token.extend_from_slice(&nonce);
    token.extend_from_slice(&body);
    token.extend_from_slice(&tag);
    token
}

/// A decoded token's header, nonce, body and tag.
pub type Parts<'a> = (&'a [u8], &'a [u8], &'a [u8], &'a [u8; TAG_LEN]);

/// Splits a decoded token into header, nonce, body and tag, if its framing allows.
pub fn split(token: &[u8]) -> Option<Parts<'_>> {
    let k = *token.get(2)? as usize;
    let h = 3 + k;
    if token.len() < h + NONCE_LEN + TAG_LEN {
        return None;
    }
    let (header, rest) = token.split_at(h);
    let (nonce, rest) = rest.split_at(NONCE_LEN);
    let (body, tag) = rest.split_at(rest.len() - TAG_LEN);
    Some((header, nonce, body, tag.try_into().ok()?))
}

/// Opens a decoded token with the fixture key it names, through the backend seam.
/// `None` if the key id is unknown or authentication fails.
pub fn open_token(token: &[u8]) -> Option<Vec<u8>> {
    let (header, nonce, body, tag) = split(token)?;
    let kid = &header[3..];
    let key = [fixture::CURRENT, fixture::PREVIOUS]
        .into_iter()
        .find(|k| k.0.as_bytes() == kid)?;
    let aad = Aad::build(header, audience(header), &fixture::binding())?;
    let cipher = Aes256Gcm::new(&SecretKey::from_bytes(key.1));
    let mut plain = body.to_vec();
    cipher
        .open_in_place(nonce, aad.as_bytes(), &mut plain, tag)
        .ok()?;
    Some(plain)
}

/// Decodes strict unpadded base64url (canonical trailing bits), by the `base64` crate.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .ok()
}

/// Unpadded base64url, by the `base64` crate (the reference for the differential target).
pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
