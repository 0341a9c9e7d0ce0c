//! What the documented check order says a resume must answer.

use mrtr_core::Reason;

use crate::fixture::{self, MAX_LIFETIME_MS, MAX_ROUNDS, MAX_SKEW_MS, N, NOW_MS};
use crate::format::{self, MAX_KID, NONCE_LEN, STATE_FIXED, State};

const TAG: usize = 16;
/// Shortest state: fixed part plus a 1-byte method.
const MIN_STATE: usize = STATE_FIXED + 1;

/// The rejection decided before any cryptography (length, base64, header, framing, key id),
/// or `None` when the token reaches the AEAD, on the fixture's engine (which still opens v1).
/// `bytes` is the decoded token, `text_len` the length of its text.
pub fn before_aead(bytes: &[u8], text_len: usize) -> Option<Reason> {
    before_aead_with(bytes, text_len, true)
}

/// [`before_aead`] on an engine that opens v1 tokens if `v1_open`, and refuses them as
/// retired otherwise.
pub fn before_aead_with(bytes: &[u8], text_len: usize, v1_open: bool) -> Option<Reason> {
    if text_len > N {
        return Some(Reason::TooLong);
    }
    if bytes.len() < 3 {
        return Some(Reason::Malformed);
    }
    if bytes[0] != 1 && bytes[0] != 2 {
        return Some(Reason::UnsupportedVersion);
    }
    if bytes[1] != 1 {
        return Some(Reason::WrongAlgorithm);
    }
    let k = bytes[2] as usize;
    if k == 0 || k > MAX_KID || bytes.len() < 3 + k + NONCE_LEN + MIN_STATE + TAG {
        return Some(Reason::Malformed);
    }
    if bytes[0] == 1 && !v1_open {
        return Some(Reason::VersionRetired);
    }
    let kid = &bytes[3..3 + k];
    if ![fixture::CURRENT.0, fixture::PREVIOUS.0]
        .iter()
        .any(|id| id.as_bytes() == kid)
    {
        return Some(Reason::UnknownKey);
    }
    None
}

/// The outcome for an authentic token whose plaintext is `plain`, resumed with the fixture's
/// binding and arguments at [`NOW_MS`].
pub fn after_aead(plain: &[u8]) -> Result<State, Reason> {
    let state = format::parse_state(plain).ok_or(Reason::BadState)?;
    if state.method != fixture::binding().method() {
        return Err(Reason::MethodMismatch);
    }
    if state.expires_at <= NOW_MS {
        return Err(Reason::Expired);
    }
    if state.expires_at - state.issued_at > MAX_LIFETIME_MS {
        return Err(Reason::LifetimeExceeded);
    }
    if state.issued_at > NOW_MS + MAX_SKEW_MS {
        return Err(Reason::IssuedInFuture);
    }
    if state.round >= MAX_ROUNDS {
        return Err(Reason::RoundsExceeded);
    }
    if state.args != fixture::ARGS {
        return Err(Reason::ArgumentsMismatch);
    }
    Ok(state)
}
