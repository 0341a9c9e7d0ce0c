//! Peer token libraries doing mrtr's job on the same continuation: seal it with a key, hand
//! back a string, open the string again. Each uses its library's ordinary API, with a 300 s
//! lifetime and the binding as associated data where the library has those.
//!
//! What each peer checks is weaker than mrtr's chain (no round cap, no argument digest, no
//! token id; some bind nothing), so these comparisons flatter the peers, not mrtr.

mod branca_token;
mod cookie_jar;
mod fernet_token;
mod jwt_hs256;
mod paseto_v4;
mod rmcp_codec;

use branca_token::Branca;
use cookie_jar::CookiePrivate;
use fernet_token::Fernet;
use jwt_hs256::JwtHs256;
use paseto_v4::PasetoV4Local;
use rmcp_codec::RmcpCodec;

/// A token library, seen through the one job mrtr does.
pub trait Peer {
    /// Short, path-safe name for benchmark ids.
    fn id(&self) -> &'static str;
    /// What it does, for the report.
    fn describe(&self) -> &'static str;
    /// Seals `payload` (ASCII) into a token.
    fn seal(&mut self, payload: &[u8]) -> String;
    /// Opens `token`; panics if it does not open (benchmark tokens are always valid).
    fn open(&mut self, token: &str) -> Vec<u8>;
}

/// Every peer, freshly keyed.
pub fn all() -> Vec<Box<dyn Peer>> {
    vec![
        Box::new(RmcpCodec::new()),
        Box::new(PasetoV4Local::new()),
        Box::new(Branca::new()),
        Box::new(Fernet::new()),
        Box::new(CookiePrivate::new()),
        Box::new(JwtHs256::new()),
    ]
}
