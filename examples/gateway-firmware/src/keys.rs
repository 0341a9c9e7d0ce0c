//! The gateway's key ring: the current key seals, the previous one still opens.
//!
//! The key bytes below are example constants so that runs are reproducible. Real firmware
//! never compiles keys in: it loads them from protected storage (a secure element, OTP, or
//! flash encrypted with a device key) and rotates them from its management plane.

use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};

/// Id of the key that seals now.
pub const CURRENT_ID: &str = "gw-2026-11";
/// Id of the key it replaced, kept so that tokens sealed before the rotation still open.
pub const PREVIOUS_ID: &str = "gw-2026-10";

const CURRENT: [u8; 32] = *b"example only: current gw key 11.";
const PREVIOUS: [u8; 32] = *b"example only: previous gw key 10";

/// Room for the current key and one previous key.
pub type Ring<C> = KeyRing<C, 2>;

fn key<C: Cipher>(id: &str, bytes: [u8; 32]) -> Key<C> {
    // The ids above are valid; a typo would panic at boot and fail the run.
    let id = KeyId::new(id).unwrap_or_else(|_| panic!("bad key id {id}"));
    Key::new(id, SecretKey::from_bytes(bytes))
}

/// The ring after rotation: current key, plus the previous one for opening.
pub fn ring<C: Cipher>() -> Ring<C> {
    Ring::new(key(CURRENT_ID, CURRENT))
        .with_previous(key(PREVIOUS_ID, PREVIOUS))
        .unwrap_or_else(|_| panic!("two distinct ids fit a ring of two"))
}

/// The ring before rotation: only the previous key, sealing.
pub fn before_rotation<C: Cipher>() -> Ring<C> {
    Ring::new(key(PREVIOUS_ID, PREVIOUS))
}

/// A ring that knows none of the gateway's keys (another deployment).
pub fn foreign<C: Cipher>() -> Ring<C> {
    Ring::new(key("other-site", *b"another deployment's key bytes!!"))
}
