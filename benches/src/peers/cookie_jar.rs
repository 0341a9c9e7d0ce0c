use cookie::{Cookie, CookieJar, Key};

use super::Peer;

const NAME: &str = "mrtr";

/// `cookie`'s private jar (AES-256-GCM, cookie name as associated data, base64). No expiry
/// inside the sealed value: cookies leave that to the browser.
pub struct CookiePrivate {
    key: Key,
    jar: CookieJar,
}

impl CookiePrivate {
    /// A jar key derived from a fixed 64-byte master key.
    pub fn new() -> Self {
        Self {
            key: Key::from(&[0x42; 64]),
            jar: CookieJar::new(),
        }
    }
}

impl Peer for CookiePrivate {
    fn id(&self) -> &'static str {
        "cookie-private"
    }

    fn describe(&self) -> &'static str {
        "cookie 0.18 private jar (AES-256-GCM via RustCrypto, name as associated data; no expiry)"
    }

    fn seal(&mut self, payload: &[u8]) -> String {
        let text = String::from_utf8(payload.to_vec()).expect("ASCII payload");
        self.jar.private_mut(&self.key).add(Cookie::new(NAME, text));
        self.jar.get(NAME).expect("cookie").value().to_owned()
    }

    fn open(&mut self, token: &str) -> Vec<u8> {
        let sealed = Cookie::new(NAME, token.to_owned());
        let opened = self
            .jar
            .private(&self.key)
            .decrypt(sealed)
            .expect("cookie open");
        opened.value().as_bytes().to_vec()
    }
}
