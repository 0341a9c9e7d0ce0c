//! The application's authorizer: its trait, its immutable context, its result types and the
//! shared deny-all authorizer.

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mrtr_core::lease::CheckKind;

use mrtr_std::caller::Caller;

use super::admission::AppValue;
use super::target::{NotificationFilter, Target};

/// The error an authorizer returns when it cannot decide. The check fails closed; the error's
/// text is neither logged nor kept.
pub type AuthorizeError = Box<dyn std::error::Error + Send + Sync>;

/// Authorizes one initial, renewal or reconciliation check of a subscription.
///
/// Runs on the registry's bounded worker pool, never on an async event loop, and at most once
/// at a time per subscription. An error, a panic or a missed deadline fails the check closed.
/// Closures with the same signature are authorizers.
///
/// ```
/// use std::time::Duration;
/// use mrtr_subscriptions::{Authorization, Authorizer, AuthorizationContext, Grant,
///     InvocationFeatures};
///
/// let authorizer = |ctx: &AuthorizationContext, _: &InvocationFeatures| {
///     if ctx.caller().subject() == Some("alice") {
///         Ok(Authorization::Allowed(Grant::for_duration(ctx, Duration::from_secs(60))))
///     } else {
///         Ok(Authorization::Denied)
///     }
/// };
/// fn takes(_: impl Authorizer) {}
/// takes(authorizer);
/// ```
pub trait Authorizer: Send + Sync {
    /// Decides one check. `ctx` is immutable; `features` holds only the check's cooperative
    /// cancellation token.
    fn authorize(
        &self,
        ctx: &AuthorizationContext,
        features: &InvocationFeatures,
    ) -> Result<Authorization, AuthorizeError>;
}

impl<F> Authorizer for F
where
    F: Fn(&AuthorizationContext, &InvocationFeatures) -> Result<Authorization, AuthorizeError>
        + Send
        + Sync,
{
    fn authorize(
        &self,
        ctx: &AuthorizationContext,
        features: &InvocationFeatures,
    ) -> Result<Authorization, AuthorizeError> {
        self(ctx, features)
    }
}

/// Denies every check.
#[derive(Clone, Copy, Debug, Default)]
pub struct DenyAll;

impl Authorizer for DenyAll {
    fn authorize(
        &self,
        _: &AuthorizationContext,
        _: &InvocationFeatures,
    ) -> Result<Authorization, AuthorizeError> {
        Ok(Authorization::Denied)
    }
}

/// The shared authorizer that denies every check.
///
/// ```
/// let a = mrtr_subscriptions::deny_all();
/// let b = mrtr_subscriptions::deny_all();
/// assert!(std::sync::Arc::ptr_eq(&a, &b));
/// ```
pub fn deny_all() -> Arc<dyn Authorizer> {
    static SHARED: OnceLock<Arc<dyn Authorizer>> = OnceLock::new();
    SHARED.get_or_init(|| Arc::new(DenyAll)).clone()
}

/// An authorizer's answer.
pub enum Authorization {
    /// Allowed until the grant's end (the registry caps it further).
    Allowed(Grant),
    /// Explicitly denied.
    Denied,
}

impl fmt::Debug for Authorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Allowed(g) => f.debug_tuple("Allowed").field(g).finish(),
            Self::Denied => f.write_str("Denied"),
        }
    }
}

/// A bounded grant, in the registry's monotonic milliseconds.
pub struct Grant {
    pub(crate) valid_until_ms: u64,
    pub(crate) context: Option<AppValue>,
}

impl Grant {
    /// Valid until `valid_until_ms` on the registry's monotonic clock (see
    /// [`AuthorizationContext::issued_at_ms`]).
    pub fn until_ms(valid_until_ms: u64) -> Self {
        Self {
            valid_until_ms,
            context: None,
        }
    }

    /// Valid for `duration` from the moment the check was issued (conservative: queueing and
    /// running time count against it).
    pub fn for_duration(ctx: &AuthorizationContext, duration: Duration) -> Self {
        let ms = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        Self::until_ms(ctx.issued_at_ms.saturating_add(ms))
    }

    /// Carries an application context to the next check of this subscription. A grant
    /// without one clears the previous context.
    pub fn with_context(mut self, context: AppValue) -> Self {
        self.context = Some(context);
        self
    }

    /// The grant's end before the registry's caps.
    pub fn valid_until_ms(&self) -> u64 {
        self.valid_until_ms
    }
}

impl fmt::Debug for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grant")
            .field("valid_until_ms", &self.valid_until_ms)
            .field("has_context", &self.context.is_some())
            .finish()
    }
}

/// The immutable context of one check.
#[derive(Clone)]
pub struct AuthorizationContext {
    pub(crate) kind: CheckKind,
    pub(crate) target: Target,
    pub(crate) caller: Caller,
    pub(crate) evidence: Option<AppValue>,
    pub(crate) application_context: Option<AppValue>,
    pub(crate) previous_expiry_ms: Option<u64>,
    pub(crate) issued_at_ms: u64,
    pub(crate) deadline_ms: u64,
    pub(crate) filter: Arc<NotificationFilter>,
    pub(crate) resource_uris: Arc<[String]>,
}

impl AuthorizationContext {
    /// Initial, renewal or reconciliation.
    pub fn kind(&self) -> CheckKind {
        self.kind
    }

    /// The subscription: a listen request id, or a session's resource URI.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The caller the subscription was admitted for ([`Caller::Anonymous`] if nobody authenticated).
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// The opaque application evidence given when the subscription was created.
    pub fn evidence(&self) -> Option<&AppValue> {
        self.evidence.as_ref()
    }

    /// The evidence, if it has type `T`.
    pub fn evidence_as<T: Any>(&self) -> Option<&T> {
        self.evidence.as_deref()?.downcast_ref()
    }

    /// The application context of the latest accepted grant (none on the initial check, or
    /// after a grant without one).
    pub fn application_context(&self) -> Option<&AppValue> {
        self.application_context.as_ref()
    }

    /// The application context, if it has type `T`.
    pub fn application_context_as<T: Any>(&self) -> Option<&T> {
        self.application_context.as_deref()?.downcast_ref()
    }

    /// The effective expiry in force before this check (none on the initial check).
    pub fn previous_expiry_ms(&self) -> Option<u64> {
        self.previous_expiry_ms
    }

    /// When the check was issued, on the registry's monotonic clock.
    pub fn issued_at_ms(&self) -> u64 {
        self.issued_at_ms
    }

    /// When the check times out, on the registry's monotonic clock.
    pub fn deadline_ms(&self) -> u64 {
        self.deadline_ms
    }

    /// The notification filter asked for (listen; empty for a 2025-era grant).
    pub fn filter(&self) -> &NotificationFilter {
        &self.filter
    }

    /// The resource URIs the grant covers (listen: `resourceSubscriptions`; 2025 era: the
    /// subscribed URI).
    pub fn resource_uris(&self) -> &[String] {
        &self.resource_uris
    }
}

impl fmt::Debug for AuthorizationContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationContext")
            .field("kind", &self.kind)
            .field("target", &self.target)
            .field("caller", &self.caller)
            .field("has_evidence", &self.evidence.is_some())
            .field(
                "has_application_context",
                &self.application_context.is_some(),
            )
            .field("previous_expiry_ms", &self.previous_expiry_ms)
            .field("issued_at_ms", &self.issued_at_ms)
            .field("deadline_ms", &self.deadline_ms)
            .field("filter", &self.filter)
            .field("resource_uris", &self.resource_uris.len())
            .finish()
    }
}

/// What one check may use besides its context: only its cooperative cancellation token.
#[derive(Clone, Debug)]
pub struct InvocationFeatures {
    pub(crate) cancellation: CancellationToken,
}

impl InvocationFeatures {
    /// Cancelled when the check is superseded, times out or its subscription ends. Whatever
    /// the check returns afterwards is discarded.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }
}

/// A cooperative cancellation flag, shared between a check and the registry.
#[derive(Clone, Debug, Default)]
pub struct CancellationToken(Arc<AtomicBool>);

impl CancellationToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the check has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    pub(crate) fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }
}
