//! What the server knew when it admitted a subscription: the authenticated caller (mrtr-std's
//! [`Caller`], indexed for targeted reconciliation) and any opaque application evidence.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use mrtr_std::caller::Caller;

/// An opaque application value: initial admission evidence or an application context carried
/// from one grant to the next. Never printed.
pub type AppValue = Arc<dyn Any + Send + Sync>;

/// The admission evidence a server passes when it creates a subscription
/// ([`Registry::listen`](super::Registry::listen),
/// [`Registry::subscribe_resource`](super::Registry::subscribe_resource)). The authorizer
/// sees both parts in every check of that subscription.
///
/// ```
/// use std::sync::Arc;
/// use mrtr_std::caller::Caller;
/// use mrtr_subscriptions::Admission;
///
/// let anonymous = Admission::anonymous();
/// assert!(anonymous.caller().is_anonymous());
///
/// let alice = Admission::of(Caller::user("https://idp.example", "alice"))
///     .with_evidence(Arc::new("scopes: notifications"));
/// assert_eq!(alice.caller().subject(), Some("alice"));
/// assert!(alice.evidence().is_some());
/// ```
#[derive(Clone, Default)]
pub struct Admission {
    caller: Caller,
    evidence: Option<AppValue>,
}

impl Admission {
    /// No authenticated caller and no evidence.
    pub fn anonymous() -> Self {
        Self::default()
    }

    /// Admitted for `caller`. The registry indexes subscriptions by an authenticated caller,
    /// so that revoking one subject re-checks only that subject's subscriptions
    /// ([`Selector::Subject`](super::Selector::Subject),
    /// [`Selector::Caller`](super::Selector::Caller)).
    pub fn of(caller: Caller) -> Self {
        Self {
            caller,
            evidence: None,
        }
    }

    /// Adds opaque application evidence (the authorizer reads it with
    /// [`AuthorizationContext::evidence_as`](super::AuthorizationContext::evidence_as)).
    pub fn with_evidence(mut self, evidence: AppValue) -> Self {
        self.evidence = Some(evidence);
        self
    }

    /// The caller ([`Caller::Anonymous`] if nobody authenticated).
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// The application evidence, if any.
    pub fn evidence(&self) -> Option<&AppValue> {
        self.evidence.as_ref()
    }

    pub(super) fn into_parts(self) -> (Caller, Option<AppValue>) {
        (self.caller, self.evidence)
    }
}

impl fmt::Debug for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Admission")
            .field("caller", &self.caller)
            .field("has_evidence", &self.evidence.is_some())
            .finish()
    }
}
