//! Bearer tokens → principals: a small static map, standing in for a real token validator.
//!
//! The map file has one entry per line, `TOKEN ISSUER SUBJECT`, `#` comments. Without a file
//! the server uses a built-in demo map (and says so). A request without `Authorization` is
//! anonymous unless `--require-auth` is set; an unknown token gets HTTP 401.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use std::future::{Ready, ready};
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::TryFutureExt;
use futures_util::future::{Either, MapOk};
use mrtr_rmcp::Caller;
use tower::{Layer, Service};

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

/// The layer that authenticates each request and stores its [`Caller`] in the request
/// extensions (rmcp hands the HTTP request parts to the handlers). A plain tower layer: the
/// check is synchronous, so the inner service is called directly, without a clone or a boxed
/// future.
#[derive(Clone, Debug)]
pub struct AuthLayer {
    tokens: Arc<TokenMap>,
}

impl AuthLayer {
    /// Authenticates against `tokens`.
    pub fn new(tokens: Arc<TokenMap>) -> Self {
        Self { tokens }
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = Authenticate<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Authenticate {
            inner,
            tokens: self.tokens.clone(),
        }
    }
}

/// Turns a response of the inner service into axum's (whose body type is boxed once).
type ToAxum<B> = fn(axum::http::Response<B>) -> Response;

fn to_axum<B>(response: axum::http::Response<B>) -> Response
where
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    response.map(axum::body::Body::new)
}

/// The service [`AuthLayer`] wraps around the routes.
#[derive(Clone, Debug)]
pub struct Authenticate<S> {
    inner: S,
    tokens: Arc<TokenMap>,
}

impl<S, B> Service<Request> for Authenticate<S>
where
    S: Service<Request, Response = axum::http::Response<B>>,
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response, S::Error>>, MapOk<S::Future, ToAxum<B>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        match self
            .tokens
            .authenticate(request.headers().get(header::AUTHORIZATION))
        {
            Ok(caller) => {
                request.extensions_mut().insert(caller);
                Either::Right(self.inner.call(request).map_ok(to_axum as ToAxum<B>))
            }
            Err(denied) => {
                tracing::info!(?denied, "request refused: not authenticated");
                let response = (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Bearer")],
                    "unauthorized",
                )
                    .into_response();
                Either::Left(ready(Ok(response)))
            }
        }
    }
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
