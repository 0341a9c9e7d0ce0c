//! Bearer tokens → principals: a small static map, standing in for a real token validator.
//!
//! The map file has one entry per line, `TOKEN ISSUER SUBJECT`, `#` comments. Without a file
//! the server uses a built-in demo map (and says so). A request without `Authorization` is
//! anonymous unless `--require-auth` is set; an unknown token gets HTTP 401.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use axum::http::{self as http, HeaderValue, header};
use mrtr_rmcp::CallerLayer;
use mrtr_std::caller::Caller;

/// The demo map used when no token file is configured.
pub const DEMO_TOKENS: &[(&str, &str, &str)] = &[
    ("alice-token", "https://idp.example", "alice"),
    ("bob-token", "https://idp.example", "bob"),
    ("carol-token", "https://idp.example", "carol"),
];

/// Bearer token → caller. `Debug` never shows tokens.
pub struct TokenMap {
    entries: HashMap<String, Caller>,
    require_auth: bool,
}

impl fmt::Debug for TokenMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenMap")
            .field("entries", &self.entries.len())
            .field("require_auth", &self.require_auth)
            .finish()
    }
}

impl TokenMap {
    /// The built-in demo map.
    pub fn demo(require_auth: bool) -> Self {
        let entries = DEMO_TOKENS
            .iter()
            .map(|(t, i, s)| ((*t).to_owned(), user(i, s)))
            .collect();
        Self {
            entries,
            require_auth,
        }
    }

    /// Parses the file form; errors name the line, never the token.
    pub fn parse(text: &str, require_auth: bool) -> anyhow::Result<Self> {
        let mut entries = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [token, issuer, subject] = fields[..] else {
                anyhow::bail!("token file line {}: expected TOKEN ISSUER SUBJECT", n + 1);
            };
            if entries
                .insert(token.to_owned(), user(issuer, subject))
                .is_some()
            {
                anyhow::bail!("token file line {}: duplicate token", n + 1);
            }
        }
        if entries.is_empty() {
            anyhow::bail!("token file has no entries");
        }
        Ok(Self {
            entries,
            require_auth,
        })
    }

    /// Loads the file form.
    pub fn load(path: &Path, require_auth: bool) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read token file {}: {e}", path.display()))?;
        Self::parse(&text, require_auth)
    }

    /// The caller for an `Authorization` header value (`None` header: anonymous).
    pub fn authenticate(&self, authorization: Option<&HeaderValue>) -> Result<Caller, Denied> {
        let Some(value) = authorization else {
            return if self.require_auth {
                Err(Denied::Missing)
            } else {
                Ok(Caller::Anonymous)
            };
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or(Denied::Malformed)?;
        self.entries.get(token).cloned().ok_or(Denied::Unknown)
    }

    /// How many tokens the map holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

fn user(issuer: &str, subject: &str) -> Caller {
    Caller::user(issuer, subject)
}

/// Why a request was not authenticated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denied {
    /// No credentials and the server requires them.
    Missing,
    /// Not a `Bearer` header.
    Malformed,
    /// A token the map does not hold.
    Unknown,
}

/// The caller layer: each request's [`Caller`] from the map, or `401` (the refusal is logged
/// at INFO, without the token).
pub fn caller_layer(
    tokens: Arc<TokenMap>,
) -> CallerLayer<impl Fn(&http::request::Parts) -> Option<Caller> + Send + Sync + 'static> {
    CallerLayer::new(move |head: &http::request::Parts| {
        tokens
            .authenticate(head.headers.get(header::AUTHORIZATION))
            .map_err(|denied| tracing::info!(?denied, "request refused: not authenticated"))
            .ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_unknown_and_missing_tokens() {
        let map = TokenMap::demo(false);
        let alice = HeaderValue::from_static("Bearer alice-token");
        assert_eq!(
            map.authenticate(Some(&alice)).unwrap().subject(),
            Some("alice")
        );
        let nobody = HeaderValue::from_static("Bearer nobody");
        assert_eq!(map.authenticate(Some(&nobody)), Err(Denied::Unknown));
        let basic = HeaderValue::from_static("Basic YWxpY2U=");
        assert_eq!(map.authenticate(Some(&basic)), Err(Denied::Malformed));
        assert_eq!(map.authenticate(None), Ok(Caller::Anonymous));
        assert_eq!(
            TokenMap::demo(true).authenticate(None),
            Err(Denied::Missing)
        );
    }

    #[test]
    fn file_errors_name_the_line_not_the_token() {
        let err = TokenMap::parse("# c\nsecret-value only-two\n", false).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("line 2"), "{text}");
        assert!(!text.contains("secret-value"), "{text}");
        let dup = TokenMap::parse("t a b\nt c d\n", false).unwrap_err();
        assert!(dup.to_string().contains("duplicate"));
        let ok = TokenMap::parse("t1 iss sub\n", false).unwrap();
        assert_eq!(ok.len(), 1);
    }
}
