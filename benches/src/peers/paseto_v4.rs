use std::time::Duration;

use pasetors::claims::{Claims, ClaimsValidationRules};
use pasetors::keys::SymmetricKey;
use pasetors::token::UntrustedToken;
use pasetors::version4::V4;
use pasetors::{Local, local};

use super::Peer;
use crate::{KEY, TTL_SECS, binding_bytes};

/// `pasetors` v4.local through its claims API (XChaCha20 + BLAKE2b): the continuation as a
/// claim beside `exp`, the binding as implicit assertion.
pub struct PasetoV4Local {
    key: SymmetricKey<V4>,
    rules: ClaimsValidationRules,
    implicit: Vec<u8>,
}

impl PasetoV4Local {
    /// A v4.local key from [`KEY`].
    pub fn new() -> Self {
        Self {
            key: SymmetricKey::from(&KEY).expect("32-byte key"),
            rules: ClaimsValidationRules::new(),
            implicit: binding_bytes(),
        }
    }
}

impl Peer for PasetoV4Local {
    fn id(&self) -> &'static str {
        "paseto-v4-local"
    }

    fn describe(&self) -> &'static str {
        "pasetors 0.8 v4.local, claims API (XChaCha20 + BLAKE2b; exp claim; binding as implicit assertion)"
    }

    fn seal(&mut self, payload: &[u8]) -> String {
        let mut claims = Claims::new_expires_in(&Duration::from_secs(TTL_SECS)).expect("claims");
        let text = std::str::from_utf8(payload).expect("ASCII payload");
        claims.add_additional("st", text).expect("claim");
        local::encrypt(&self.key, &claims, None, Some(&self.implicit)).expect("paseto seal")
    }

    fn open(&mut self, token: &str) -> Vec<u8> {
        let untrusted = UntrustedToken::<Local, V4>::try_from(token).expect("paseto token");
        let trusted = local::decrypt(
            &self.key,
            &untrusted,
            &self.rules,
            None,
            Some(&self.implicit),
        )
        .expect("paseto open");
        let claims = trusted.payload_claims().expect("claims");
        let st = claims
            .get_claim("st")
            .and_then(|v| v.as_str())
            .expect("st claim");
        st.as_bytes().to_vec()
    }
}
