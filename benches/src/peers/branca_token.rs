use super::Peer;
use crate::{KEY, TTL_SECS};

/// `branca` (XChaCha20-Poly1305, base62 text, a timestamp checked against a TTL). Binds
/// nothing beyond its own header.
pub struct Branca {
    inner: branca::Branca,
}

impl Branca {
    /// A branca instance keyed with [`KEY`].
    pub fn new() -> Self {
        Self {
            inner: branca::Branca::new(&KEY).expect("32-byte key"),
        }
    }
}

impl Peer for Branca {
    fn id(&self) -> &'static str {
        "branca"
    }

    fn describe(&self) -> &'static str {
        "branca 0.10 (XChaCha20-Poly1305 via orion, base62, timestamp + TTL; no binding)"
    }

    fn seal(&mut self, payload: &[u8]) -> String {
        self.inner.encode(payload).expect("branca seal")
    }

    fn open(&mut self, token: &str) -> Vec<u8> {
        self.inner
            .decode(token, TTL_SECS as u32)
            .expect("branca open")
    }
}
