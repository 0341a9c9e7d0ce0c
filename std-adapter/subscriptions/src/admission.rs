//! What the server knew when it admitted a subscription: the authenticated principal (typed,
//! indexed for targeted reconciliation) and any opaque application evidence.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// An opaque application value: initial admission evidence or an application context carried
/// from one grant to the next. Never printed.
pub type AppValue = Arc<dyn Any + Send + Sync>;

/// The authenticated principal a subscription acts for: token issuer and subject.
///
/// The registry indexes subscriptions by it, so that revoking one subject re-checks only that
/// subject's subscriptions ([`Selector::Subject`](super::Selector::Subject),
/// [`Selector::Principal`](super::Selector::Principal)). Issuer and subject are identifiers,
/// not secrets: `Debug` shows them.
///
/// ```
/// use mrtr_subscriptions::Principal;
///
/// let p = Principal::new("https://idp.example", "alice");
/// assert_eq!((p.issuer(), p.subject()), ("https://idp.example", "alice"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    issuer: Arc<str>,
    subject: Arc<str>,
}

impl Principal {
    /// The principal `subject` as asserted by `issuer`.
    pub fn new(issuer: impl Into<Arc<str>>, subject: impl Into<Arc<str>>) -> Self {
        Self {
            issuer: issuer.into(),
            subject: subject.into(),
        }
    }

    /// Who vouched for the subject (e.g. the token issuer).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The subject.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    pub(super) fn subject_arc(&self) -> &Arc<str> {
        &self.subject
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.subject, self.issuer)
    }
}

/// The admission evidence a server passes when it creates a subscription
/// ([`Registry::listen`](super::Registry::listen),
/// [`Registry::subscribe_resource`](super::Registry::subscribe_resource)). The authorizer
/// sees both parts in every check of that subscription.
///
/// ```
/// use std::sync::Arc;
/// use mrtr_subscriptions::{Admission, Principal};
///
/// let anonymous = Admission::anonymous();
/// assert!(anonymous.principal().is_none());
///
/// let alice = Admission::of(Principal::new("https://idp.example", "alice"))
///     .with_evidence(Arc::new("scopes: notifications"));
/// assert_eq!(alice.principal().map(Principal::subject), Some("alice"));
/// assert!(alice.evidence().is_some());
/// ```
#[derive(Clone, Default)]
pub struct Admission {
    principal: Option<Principal>,
    evidence: Option<AppValue>,
}

impl Admission {
    /// No authenticated principal and no evidence.
    pub fn anonymous() -> Self {
        Self::default()
    }

    /// Admitted for `principal`.
    pub fn of(principal: Principal) -> Self {
        Self {
            principal: Some(principal),
            evidence: None,
        }
    }

    /// Adds opaque application evidence (the authorizer reads it with
    /// [`AuthorizationContext::evidence_as`](super::AuthorizationContext::evidence_as)).
    pub fn with_evidence(mut self, evidence: AppValue) -> Self {
        self.evidence = Some(evidence);
        self
    }

    /// The authenticated principal, if any.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_ref()
    }

    /// The application evidence, if any.
    pub fn evidence(&self) -> Option<&AppValue> {
        self.evidence.as_ref()
    }

    pub(super) fn into_parts(self) -> (Option<Principal>, Option<AppValue>) {
        (self.principal, self.evidence)
    }
}

impl fmt::Debug for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Admission")
            .field("principal", &self.principal)
            .field("has_evidence", &self.evidence.is_some())
            .finish()
    }
}
