//! `subscriptions/listen` guarded by mrtr-std's authorizer runtime.
//!
//! The initial check must finish before the acknowledgment, but rmcp acknowledges before it
//! calls the handler's `listen`. So admission happens in the HTTP preflight ([`admit`]): the
//! registry runs the initial check; a denial answers the request with an error and nothing is
//! acknowledged; an allowed subscription is handed to rmcp (and to [`serve`]) through the
//! request extensions. While it runs, renewals happen on the registry's schedule; a denial,
//! expiry or failed check ends it, and `listen` returning makes rmcp send the tagged
//! completion result.
//!
//! The example policy: a signed-in caller may listen unless its subject is revoked; anonymous
//! callers may not. Each subscription is admitted with the caller's principal (issuer and
//! subject). Revoking a subject ([`Subscriptions::revoke`]) reconciles that subject's
//! subscriptions only, found through the registry's index: they are fenced at once and end
//! when their checks deny them; every other stream keeps delivering and runs no check.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use mrtr_std::clock::StdMonotonicClock;
use mrtr_std::subscription::{
    Admission, Authorization, AuthorizationContext, Grant, InvocationFeatures, ListenRefused,
    Listening, NotificationFilter, Principal, Registry, RegistryConfig, RegistryHandle, RequestId,
    Selector,
};
use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::auth::Caller;
use crate::resources::REPORT_URI;

/// The registry (driven by mrtr-std's tokio driver) and the example policy's state.
pub struct Subscriptions {
    registry: RegistryHandle<StdMonotonicClock>,
    revoked: Arc<RwLock<HashSet<String>>>,
    bookings: broadcast::Sender<()>,
}

/// An admitted subscription, carried from the preflight to `listen` in request extensions.
/// Dropping the last clone, or the subscription once served, closes it (never calling the
/// authorizer).
#[derive(Clone)]
pub struct Admitted(Arc<Mutex<Option<Listening<StdMonotonicClock>>>>);

/// Why a listen was not admitted: at capacity, or refused by the initial check.
pub type NotAdmitted = ListenRefused;

impl Subscriptions {
    /// Starts the registry and its driver task. Grants last `lease` (capped by the registry
    /// at one minute).
    pub fn start(lease: Duration) -> Arc<Self> {
        let revoked: Arc<RwLock<HashSet<String>>> = Arc::default();
        let policy_revoked = revoked.clone();
        let authorizer = move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
            let Some(subject) = ctx.principal().map(Principal::subject) else {
                return Ok(Authorization::Denied);
            };
            let revoked = policy_revoked
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            if revoked.contains(subject) {
                return Ok(Authorization::Denied);
            }
            Ok(Authorization::Allowed(Grant::for_duration(ctx, lease)))
        };
        let registry = Registry::new(
            StdMonotonicClock::new(),
            Arc::new(authorizer),
            RegistryConfig::default(),
        );
        Arc::new(Self {
            registry: RegistryHandle::spawn(registry),
            revoked,
            bookings: broadcast::channel(64).0,
        })
    }

    /// Revokes `subject`: its running subscriptions are fenced now and end once their
    /// checks deny them; new ones are denied. Nobody else's subscription is re-checked.
    /// Returns how many subscriptions are being reconciled.
    pub fn revoke(&self, subject: &str) -> usize {
        self.revoked
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(subject.to_owned());
        // After the policy change, so every check it starts sees the revocation.
        let n = self
            .registry
            .reconcile_matching(&Selector::Subject(subject.to_owned()));
        tracing::info!(subject, reconciling = n, "subject revoked");
        n
    }

    /// Lifts a revocation.
    pub fn restore(&self, subject: &str) {
        self.revoked
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(subject);
    }

    /// Tells listeners of the bookings report that it changed.
    pub fn bookings_changed(&self) {
        let _ = self.bookings.send(());
    }
}

/// The request id of a JSON-RPC message, as the registry names it.
pub fn request_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        Value::String(s) => Some(RequestId::String(s.clone())),
        _ => None,
    }
}

/// The notification filter of a `subscriptions/listen` request's params.
pub fn filter(params: Option<&Value>) -> NotificationFilter {
    let n = params.and_then(|p| p.get("notifications"));
    let flag = |name: &str| n.and_then(|n| n.get(name)).and_then(Value::as_bool) == Some(true);
    NotificationFilter {
        tools_list_changed: flag("toolsListChanged"),
        prompts_list_changed: flag("promptsListChanged"),
        resources_list_changed: flag("resourcesListChanged"),
        resource_subscriptions: n
            .and_then(|n| n.get("resourceSubscriptions"))
            .and_then(Value::as_array)
            .map(|uris| {
                uris.iter()
                    .filter_map(|u| u.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Runs the initial check of a listen request; `Ok` only once it is allowed.
pub async fn admit(
    subs: &Arc<Subscriptions>,
    id: RequestId,
    filter: NotificationFilter,
    caller: Caller,
) -> Result<Admitted, NotAdmitted> {
    let admission = match &caller {
        Caller::Anonymous => Admission::anonymous(),
        Caller::User { issuer, subject } => {
            Admission::of(Principal::new(issuer.as_str(), subject.as_str()))
        }
    };
    let listening = subs.registry.listen(id, filter, admission).await?;
    Ok(Admitted(Arc::new(Mutex::new(Some(listening)))))
}

/// The part of a requested filter this server serves: updates of the bookings report.
pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    let uris: Vec<String> = requested
        .resource_subscriptions
        .iter()
        .flatten()
        .filter(|u| u.as_str() == REPORT_URI)
        .cloned()
        .collect();
    if !uris.is_empty() {
        accepted.resource_subscriptions = Some(uris);
    }
    accepted
}

/// Runs one admitted subscription until the client leaves or the registry ends it.
pub async fn serve(subs: &Subscriptions, sub: SubscriptionContext) -> Result<(), rmcp::ErrorData> {
    let admitted = sub
        .request_context()
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Admitted>())
        .cloned();
    let Some(Admitted(slot)) = admitted else {
        // stdio, or a request that bypassed admission: nothing authorized it.
        return Err(rmcp::ErrorData::invalid_request(
            "subscription not authorized",
            None,
        ));
    };
    let taken = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
    let Some(mut listening) = taken else {
        return Err(rmcp::ErrorData::internal_error(
            "subscription already served",
            None,
        ));
    };
    let wants_report = sub
        .accepted()
        .resource_subscriptions
        .as_ref()
        .is_some_and(|u| u.iter().any(|u| u == REPORT_URI));
    let mut bookings = subs.bookings.subscribe();
    loop {
        tokio::select! {
            _ = sub.cancelled() => return Ok(()),
            reason = listening.ended() => {
                tracing::info!(key = %listening.key(), ?reason, "subscription ended");
                return Ok(());
            }
            changed = bookings.recv() => {
                if changed.is_err() && !matches!(changed, Err(broadcast::error::RecvError::Lagged(_))) {
                    continue;
                }
                let deliver = wants_report && listening.may_deliver();
                if deliver && sub.sink().notify_resource_updated(REPORT_URI).await.is_err() {
                    return Ok(());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mrtr_std::subscription::EndReason;
    use serde_json::json;

    #[test]
    fn filters_and_ids_from_json() {
        let f = filter(Some(&json!({"notifications": {"toolsListChanged": true,
            "resourceSubscriptions": ["mrtr://reports/bookings", 5]}})));
        assert!(f.tools_list_changed && !f.prompts_list_changed);
        assert_eq!(
            f.resource_subscriptions,
            vec!["mrtr://reports/bookings".to_owned()]
        );
        assert_eq!(filter(None), NotificationFilter::default());
        assert_eq!(request_id(&json!(3)), Some(RequestId::Number(3)));
        assert_eq!(request_id(&json!("a")), Some(RequestId::String("a".into())));
        assert_eq!(request_id(&json!(null)), None);
    }

    fn user(subject: &str) -> Caller {
        Caller::User {
            issuer: "i".into(),
            subject: subject.into(),
        }
    }

    fn taken(admitted: Result<Admitted, NotAdmitted>) -> Listening<StdMonotonicClock> {
        let Admitted(slot) = admitted.expect("admitted");
        let taken = slot.lock().unwrap().take();
        taken.expect("not yet served")
    }

    #[tokio::test]
    async fn policy_admits_users_denies_anonymous_and_revoked_subjects() {
        let subs = Subscriptions::start(Duration::from_secs(30));
        let alice = user("alice");
        let f = NotificationFilter::default();
        let a = admit(&subs, RequestId::Number(1), f.clone(), alice.clone()).await;
        let b = admit(&subs, RequestId::Number(5), f.clone(), user("bob")).await;
        let anon = admit(&subs, RequestId::Number(2), f.clone(), Caller::Anonymous).await;
        assert_eq!(anon.err(), Some(NotAdmitted::Refused(EndReason::Denied)));
        // Revoking alice re-checks alice's subscription only: it ends as denied.
        let mut listening = taken(a);
        let bob = taken(b);
        assert_eq!(subs.revoke("alice"), 1);
        assert!(!listening.may_deliver(), "fenced at once");
        let ended = tokio::time::timeout(Duration::from_secs(10), listening.ended())
            .await
            .unwrap();
        assert_eq!(ended, EndReason::Denied);
        assert!(bob.may_deliver(), "bob's stream is untouched");
        let checks = subs.registry.with_registry(|r| r.counters());
        assert_eq!(
            checks.reconciliation_checks, 1,
            "nobody else was re-checked"
        );
        let again = admit(&subs, RequestId::Number(3), f.clone(), alice.clone()).await;
        assert_eq!(again.err(), Some(NotAdmitted::Refused(EndReason::Denied)));
        subs.restore("alice");
        assert!(admit(&subs, RequestId::Number(4), f, alice).await.is_ok());
    }
}
