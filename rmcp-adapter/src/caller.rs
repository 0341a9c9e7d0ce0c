//! Who is calling: the principal a token is bound to, read from the HTTP request rmcp
//! received the call in.

use std::fmt;
use std::sync::Arc;

use mrtr_std::core::Principal;
use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// The authenticated caller of a request, owned: what a bearer-auth layer puts in the HTTP
/// request's extensions, and what a token is bound to.
///
/// `Debug` shows the issuer and subject (identities, not secrets).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub enum Caller {
    /// Nobody authenticated: stdio, or auth disabled. An identity of its own: a token sealed
    /// for an anonymous caller never opens for an authenticated one, nor the reverse.
    #[default]
    Anonymous,
    /// An authenticated caller.
    User {
        /// Who vouched for the caller (for example the token's `iss`).
        issuer: Arc<str>,
        /// The caller, as the issuer names it (for example `sub`).
        subject: Arc<str>,
    },
}

impl Caller {
    /// An authenticated caller.
    pub fn user(issuer: impl Into<Arc<str>>, subject: impl Into<Arc<str>>) -> Self {
        Self::User {
            issuer: issuer.into(),
            subject: subject.into(),
        }
    }

    /// The principal a token is bound to.
    pub fn principal(&self) -> Principal<'_> {
        match self {
            Self::Anonymous => Principal::Anonymous,
            Self::User { issuer, subject } => Principal::User { issuer, subject },
        }
    }

    /// The subject, if authenticated.
    pub fn subject(&self) -> Option<&str> {
        match self {
            Self::Anonymous => None,
            Self::User { subject, .. } => Some(subject),
        }
    }
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.principal(), f)
    }
}

/// Finds the caller of a request. The default, [`FromExtensions`], reads the [`Caller`] a
/// bearer-auth layer inserted into the HTTP request's extensions; implement this trait (or
/// pass a closure) to read your own auth layer's type instead.
pub trait PrincipalSource: Send + Sync + 'static {
    /// The caller of the request `http` (the HTTP request rmcp received it in; `None` on
    /// stdio and other transports without HTTP).
    fn caller(&self, http: Option<&http::request::Parts>) -> Caller;
}

impl<F> PrincipalSource for F
where
    F: Fn(Option<&http::request::Parts>) -> Caller + Send + Sync + 'static,
{
    fn caller(&self, http: Option<&http::request::Parts>) -> Caller {
        self(http)
    }
}

/// The default [`PrincipalSource`]: the [`Caller`] in the HTTP request's extensions, else
/// anonymous (stdio, or no auth layer).
#[derive(Clone, Copy, Debug, Default)]
pub struct FromExtensions;

impl PrincipalSource for FromExtensions {
    fn caller(&self, http: Option<&http::request::Parts>) -> Caller {
        http.and_then(|p| p.extensions.get::<Caller>())
            .cloned()
            .unwrap_or_default()
    }
}

/// The HTTP request rmcp received a call in (rmcp's Streamable HTTP server puts its parts in
/// the request context's extensions; stdio has none).
pub fn http_parts(ctx: &RequestContext<RoleServer>) -> Option<&http::request::Parts> {
    ctx.extensions.get::<http::request::Parts>()
}
