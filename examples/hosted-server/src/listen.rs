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
//! callers may not. Revoking a subject ([`Subscriptions::revoke`]) reconciles every
//! subscription at once, so a revoked subject's streams end immediately.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use mrtr_std::clock::StdMonotonicClock;
use mrtr_std::subscription::{
    Authorization, AuthorizationContext, EndReason, Event, Grant, InvocationFeatures,
    NotificationFilter, Registry, RegistryConfig, RequestId, SubscriptionKey,
};
use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;
use serde_json::Value;
use tokio::sync::{Notify, broadcast, mpsc};

use crate::auth::Caller;
use crate::resources::REPORT_URI;

type Events = mpsc::UnboundedReceiver<Event>;

/// The registry, its driver task's wiring, and the example policy's state.
pub struct Subscriptions {
    registry: Mutex<Registry<StdMonotonicClock>>,
    routes: Mutex<HashMap<SubscriptionKey, mpsc::UnboundedSender<Event>>>,
    wake: Arc<Notify>,
    revoked: Arc<RwLock<HashSet<String>>>,
    bookings: broadcast::Sender<()>,
}

/// An admitted subscription, carried from the preflight to `listen` in request extensions.
/// Dropping the last clone closes the subscription (never calling the authorizer).
#[derive(Clone)]
pub struct Admitted(Arc<Ticket>);

struct Ticket {
    key: SubscriptionKey,
    events: Mutex<Option<Events>>,
    subs: Arc<Subscriptions>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut registry = self
            .subs
            .registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let was_open = registry.close(self.key);
        drop(registry);
        self.subs.routes().remove(&self.key);
        tracing::debug!(key = %self.key, was_open, "subscription released");
    }
}

/// Why a listen was not admitted.
#[derive(Debug, PartialEq, Eq)]
pub enum NotAdmitted {
    /// The registry is full.
    AtCapacity,
    /// The initial check denied it or failed (the reason is for logs only).
    Refused(EndReason),
}

impl Subscriptions {
    /// Starts the registry and its driver task. Grants last `lease` (capped by the registry
    /// at one minute).
    pub fn start(lease: Duration) -> Arc<Self> {
        let revoked: Arc<RwLock<HashSet<String>>> = Arc::default();
        let policy_revoked = revoked.clone();
        let authorizer = move |ctx: &AuthorizationContext, _: &InvocationFeatures| {
            let subject = match ctx.evidence_as::<Caller>().and_then(Caller::subject) {
                Some(s) => s,
                None => return Ok(Authorization::Denied),
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
        let wake = Arc::new(Notify::new());
        let waker = wake.clone();
        registry.set_waker(move || waker.notify_one());
        let subs = Arc::new(Self {
            registry: Mutex::new(registry),
            routes: Mutex::default(),
            wake,
            revoked,
            bookings: broadcast::channel(64).0,
        });
        tokio::spawn(drive(Arc::downgrade(&subs)));
        subs
    }

    fn routes(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<SubscriptionKey, mpsc::UnboundedSender<Event>>> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, Registry<StdMonotonicClock>> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Revokes `subject`: its running subscriptions end now, new ones are denied.
    pub fn revoke(&self, subject: &str) -> usize {
        self.revoked
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(subject.to_owned());
        let n = self.registry().reconcile_all();
        self.wake.notify_one();
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

/// The driver: runs the registry whenever a check completes or a deadline passes, and routes
/// each event to its subscription.
async fn drive(subs: std::sync::Weak<Subscriptions>) {
    loop {
        let Some(s) = subs.upgrade() else { return };
        let wait = s.registry().time_until_next_deadline();
        let wake = s.wake.clone();
        drop(s);
        tokio::select! {
            _ = wake.notified() => {}
            _ = tokio::time::sleep(wait.unwrap_or(Duration::from_secs(3600))) => {}
        }
        let Some(s) = subs.upgrade() else { return };
        let mut events = Vec::new();
        s.registry().drive(&mut events);
        let routes = s.routes();
        for event in events {
            let key = match &event {
                Event::Acknowledged { key, .. }
                | Event::Rejected { key, .. }
                | Event::Ended { key, .. } => *key,
                Event::SessionRetired { trigger, .. } => *trigger,
            };
            if let Some(tx) = routes.get(&key) {
                let _ = tx.send(event);
            }
        }
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
    let (tx, mut rx) = mpsc::unbounded_channel();
    let key = {
        let mut registry = subs.registry();
        let key = registry
            .listen(id, filter, Some(Arc::new(caller)))
            .map_err(|_| NotAdmitted::AtCapacity)?;
        subs.routes().insert(key, tx);
        key
    };
    subs.wake.notify_one();
    let ticket = Ticket {
        key,
        events: Mutex::new(None),
        subs: subs.clone(),
    };
    match rx.recv().await {
        Some(Event::Acknowledged { .. }) => {}
        Some(Event::Rejected { reason, .. })
        | Some(Event::Ended { reason, .. })
        | Some(Event::SessionRetired { reason, .. }) => return Err(NotAdmitted::Refused(reason)),
        None => return Err(NotAdmitted::Refused(EndReason::Closed)),
    }
    *ticket.events.lock().unwrap_or_else(PoisonError::into_inner) = Some(rx);
    Ok(Admitted(Arc::new(ticket)))
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
    let Some(Admitted(ticket)) = admitted else {
        // stdio, or a request that bypassed admission: nothing authorized it.
        return Err(rmcp::ErrorData::invalid_request(
            "subscription not authorized",
            None,
        ));
    };
    let taken = ticket
        .events
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let Some(mut events) = taken else {
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
            event = events.recv() => match event {
                Some(Event::Ended { reason, .. }) => {
                    tracing::info!(key = %ticket.key, ?reason, "subscription ended");
                    return Ok(());
                }
                Some(_) => {}
                None => return Ok(()),
            },
            changed = bookings.recv() => {
                if changed.is_err() && !matches!(changed, Err(broadcast::error::RecvError::Lagged(_))) {
                    continue;
                }
                let deliver = wants_report && subs.registry().may_deliver(ticket.key);
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

    #[tokio::test]
    async fn policy_admits_users_denies_anonymous_and_revoked_subjects() {
        let subs = Subscriptions::start(Duration::from_secs(30));
        let alice = Caller::User {
            issuer: "i".into(),
            subject: "alice".into(),
        };
        let f = NotificationFilter::default();
        let a = admit(&subs, RequestId::Number(1), f.clone(), alice.clone()).await;
        assert!(a.is_ok());
        let anon = admit(&subs, RequestId::Number(2), f.clone(), Caller::Anonymous).await;
        assert_eq!(anon.err(), Some(NotAdmitted::Refused(EndReason::Denied)));
        // Revoking ends alice's running subscription with an Ended event.
        let Admitted(ticket) = a.unwrap();
        let mut events = ticket.events.lock().unwrap().take().unwrap();
        subs.revoke("alice");
        let ended = tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .unwrap();
        assert!(
            matches!(
                ended,
                Some(Event::Ended {
                    reason: EndReason::Denied,
                    ..
                })
            ),
            "{ended:?}"
        );
        let again = admit(&subs, RequestId::Number(3), f.clone(), alice.clone()).await;
        assert_eq!(again.err(), Some(NotAdmitted::Refused(EndReason::Denied)));
        subs.restore("alice");
        assert!(admit(&subs, RequestId::Number(4), f, alice).await.is_ok());
    }
}
