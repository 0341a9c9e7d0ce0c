use super::Peer;
use crate::TTL_SECS;

/// `fernet` with its default OpenSSL backend (AES-128-CBC + HMAC-SHA256, timestamp + TTL).
/// Binds nothing.
pub struct Fernet {
    inner: fernet::Fernet,
}

impl Fernet {
    /// A fernet instance with a fresh key.
    pub fn new() -> Self {
        Self {
            inner: fernet::Fernet::new(&fernet::Fernet::generate_key()).expect("fernet key"),
        }
    }
}

impl Peer for Fernet {
    fn id(&self) -> &'static str {
        "fernet"
    }

    fn describe(&self) -> &'static str {
        "fernet 0.2, default OpenSSL backend (AES-128-CBC + HMAC-SHA256, timestamp + TTL; no binding)"
    }

    fn seal(&mut self, payload: &[u8]) -> String {
        self.inner.encrypt(payload)
    }

    fn open(&mut self, token: &str) -> Vec<u8> {
        self.inner
            .decrypt_with_ttl(token, TTL_SECS)
            .expect("fernet open")
    }
}
