use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use super::Peer;
use crate::{KEY, TTL_SECS};

#[derive(Serialize, Deserialize)]
struct Claims {
    exp: u64,
    st: String,
}

/// `jsonwebtoken` HS256 (JWS, HMAC-SHA256 over JSON claims, `exp` validated): the signed
/// state many Rust servers reach for. Integrity only, binds nothing.
pub struct JwtHs256 {
    header: Header,
    enc: EncodingKey,
    dec: DecodingKey,
    validation: Validation,
}

impl JwtHs256 {
    /// HS256 keys from [`KEY`].
    pub fn new() -> Self {
        Self {
            header: Header::new(Algorithm::HS256),
            enc: EncodingKey::from_secret(&KEY),
            dec: DecodingKey::from_secret(&KEY),
            validation: Validation::new(Algorithm::HS256),
        }
    }
}

impl Peer for JwtHs256 {
    fn id(&self) -> &'static str {
        "jwt-hs256"
    }

    fn describe(&self) -> &'static str {
        "jsonwebtoken 10 HS256 (aws-lc-rs provider; JSON claims with exp; not encrypted, no binding)"
    }

    fn seal(&mut self, payload: &[u8]) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let claims = Claims {
            exp: now + TTL_SECS,
            st: String::from_utf8(payload.to_vec()).expect("ASCII payload"),
        };
        jsonwebtoken::encode(&self.header, &claims, &self.enc).expect("jwt seal")
    }

    fn open(&mut self, token: &str) -> Vec<u8> {
        let data =
            jsonwebtoken::decode::<Claims>(token, &self.dec, &self.validation).expect("jwt open");
        data.claims.st.into_bytes()
    }
}
