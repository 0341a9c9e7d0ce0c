//! Who sent a request, owned: the one identity type of every mrtr crate above the core.
//!
//! A server's authentication layer decides the [`Caller`] of each request; mrtr binds tokens
//! to it (as the core's borrowed [`Principal`], through [`Caller::principal`]), charges its
//! quotas to it, and admits and indexes its subscriptions by it (`mrtr-subscriptions`).

use std::fmt;
use std::sync::Arc;

use mrtr_core::Principal;

/// The authenticated caller of a request, owned: what a bearer-auth layer puts in the HTTP
/// request's extensions, what a token is bound to, and whom a subscription acts for.
///
/// `Debug` shows the issuer and subject (identities, not secrets).
///
/// ```
/// use mrtr_std::caller::Caller;
/// use mrtr_std::core::Principal;
///
/// let alice = Caller::user("https://idp.example", "alice");
/// assert_eq!(alice.subject(), Some("alice"));
/// assert_eq!(alice.issuer(), Some("https://idp.example"));
/// assert_eq!(alice.principal(), Principal::User { issuer: "https://idp.example", subject: "alice" });
/// assert!(Caller::Anonymous.is_anonymous());
/// assert_ne!(alice, Caller::user("https://other.example", "alice"));
/// ```
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
    /// An authenticated caller: `subject` as asserted by `issuer`.
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

    /// Whether nobody authenticated.
    pub fn is_anonymous(&self) -> bool {
        matches!(self, Self::Anonymous)
    }

    /// The subject, if authenticated.
    pub fn subject(&self) -> Option<&str> {
        match self {
            Self::Anonymous => None,
            Self::User { subject, .. } => Some(subject),
        }
    }

    /// The issuer, if authenticated.
    pub fn issuer(&self) -> Option<&str> {
        match self {
            Self::Anonymous => None,
            Self::User { issuer, .. } => Some(issuer),
        }
    }
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.principal(), f)
    }
}
