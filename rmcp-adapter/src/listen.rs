//! `subscriptions/listen` (2026-07-28) guarded by mrtr-std's authorizer runtime, on rmcp.
//!
//! The initial authorization must finish before the acknowledgment, but rmcp acknowledges a
//! listen before it calls the handler's `listen`. So admission runs in the
//! [`PrecheckLayer`](crate::layer::PrecheckLayer)'s hook ([`admit`]): the registry runs the initial
//! check with the caller's principal; a refusal answers the request with a JSON-RPC error and
//! nothing is acknowledged; an allowed subscription travels to the handler in the HTTP
//! request's extensions, where [`take`] finds it. While it runs, renewals happen on the
//! registry's schedule; a denial, expiry or failed check ends it ([`Listening::ended`]), and
//! the handler returning from `listen` makes rmcp send the tagged completion result.
//!
//! ```
//! # use mrtr_rmcp::layer::PrecheckLayer;
//! # use mrtr_std::clock::StdMonotonicClock;
//! # use mrtr_std::core::ErrorDetail;
//! # use mrtr_std::caller::Caller;
//! # use mrtr_subscriptions::{Registry, RegistryConfig, RegistryHandle, deny_all};
//! # use rmcp::model::{ErrorData, SubscriptionFilter};
//! # use rmcp::service::SubscriptionContext;
//! # use rmcp::ServerHandler;
//! # struct Listener;
//! // The handler serves them:
//! impl ServerHandler for Listener {
//!     fn accepted_subscription_filter(&self, requested: &SubscriptionFilter)
//!         -> Option<SubscriptionFilter> { Some(requested.clone()) }
//!
//!     async fn listen(&self, sub: SubscriptionContext) -> Result<(), ErrorData> {
//!         let mut listening = mrtr_rmcp::listen::take::<StdMonotonicClock>(&sub)?;
//!         loop {
//!             tokio::select! {
//!                 _ = sub.cancelled() => return Ok(()),        // the client left
//!                 _ = listening.ended() => return Ok(()),      // denied, expired, failed check
//!                 // and your events, sent with sub.sink() while listening.may_deliver()
//!             }
//!         }
//!     }
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! # let registry = Registry::new(StdMonotonicClock::new(), deny_all(), RegistryConfig::default());
//! # let registry = RegistryHandle::spawn(registry);
//! # let policy = registry.clone();
//! // The layer's hook admits listens:
//! let layer = PrecheckLayer::new(ErrorDetail::Uniform)
//!     .admit(mrtr_rmcp::listen::METHOD, mrtr_rmcp::listen::admitter(registry));
//! # let _ = (layer, Listener);
//! # // This policy denies everyone: the listen is refused before rmcp could acknowledge it.
//! # let listen = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
//! #     "params": {"notifications": {"toolsListChanged": true}}});
//! # let refused = mrtr_rmcp::listen::admit(&policy, &listen, &mrtr_std::caller::Caller::Anonymous).await;
//! # assert_eq!(refused.unwrap_err()["data"]["reason"], "subscription_denied");
//! # }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use mrtr_std::clock::MonotonicClock;
use mrtr_subscriptions::{
    Admission, ListenRefused, Listening, NotificationFilter, RegistryHandle, RequestId,
};
use rmcp::model::ErrorData;
use rmcp::service::SubscriptionContext;
use serde_json::{Value, json};

use crate::caller::{Caller, http_parts};
use crate::layer::Admission as HookResult;

/// The method whose messages [`admitter`] decides: register it with
/// [`PrecheckLayer::admit`](crate::layer::PrecheckLayer::admit) for this method.
pub const METHOD: &str = "subscriptions/listen";

/// An admitted subscription on its way from the layer to the handler, in the HTTP request's
/// extensions. Dropping it unserved closes the subscription (without an authorizer call).
pub struct Admitted<C: MonotonicClock>(Arc<Mutex<Option<Listening<C>>>>);

impl<C: MonotonicClock> Clone for Admitted<C> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
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

/// The hook for [`PrecheckLayer::admit`](crate::layer::PrecheckLayer::admit) that admits
/// `subscriptions/listen` messages with [`admit`], as the [`Caller`] in the request's
/// extensions (anonymous if none); other messages pass untouched.
pub fn admitter<C: MonotonicClock + 'static>(
    registry: RegistryHandle<C>,
) -> impl Fn(Arc<Value>, &http::request::Parts) -> Pin<Box<dyn Future<Output = HookResult> + Send>>
+ Send
+ Sync
+ 'static {
    move |message, parts| {
        let caller = parts
            .extensions
            .get::<Caller>()
            .cloned()
            .unwrap_or_default();
        let registry = registry.clone();
        Box::pin(async move { admit(&registry, &message, &caller).await })
    }
}

/// Runs the initial check of a `subscriptions/listen` message for `caller`, before rmcp
/// acknowledges it. An allowed subscription comes back in the extensions to add to the request
/// (where [`take`] finds it); other messages pass with none.
///
/// A refusal is the request's error: `-32600 "Subscription not authorized"` with
/// `data.reason = "subscription_denied"` (the precise reason goes to the log), or `-32603
/// "Subscription capacity reached"`.
pub async fn admit<C: MonotonicClock + 'static>(
    registry: &RegistryHandle<C>,
    message: &Value,
    caller: &Caller,
) -> HookResult {
    let mut extensions = http::Extensions::new();
    if message.get("method").and_then(Value::as_str) != Some(METHOD) {
        return Ok(extensions);
    }
    let Some(id) = message.get("id").and_then(request_id) else {
        return Err(json!({"code": -32600, "message": "subscriptions/listen needs a request id"}));
    };
    let filter = filter(message.get("params"));
    match registry
        .listen(id, filter, Admission::of(caller.clone()))
        .await
    {
        Ok(listening) => {
            extensions.insert(Admitted(Arc::new(Mutex::new(Some(listening)))));
            Ok(extensions)
        }
        Err(ListenRefused::AtCapacity) => {
            tracing::warn!("subscriptions/listen refused: registry at capacity");
            Err(json!({"code": -32603, "message": "Subscription capacity reached"}))
        }
        Err(ListenRefused::Refused(reason)) => {
            tracing::info!(caller = ?caller, reason = reason.as_str(), "subscriptions/listen not authorized");
            Err(
                json!({"code": -32600, "message": "Subscription not authorized",
                       "data": {"reason": "subscription_denied"}}),
            )
        }
    }
}

/// The subscription [`admit`] admitted for this `listen`. An error when none was (stdio, or a
/// request that bypassed the layer: nothing authorized it) or it was already taken.
pub fn take<C: MonotonicClock + 'static>(
    sub: &SubscriptionContext,
) -> Result<Listening<C>, ErrorData> {
    let admitted = http_parts(sub.request_context())
        .and_then(|parts| parts.extensions.get::<Admitted<C>>())
        .cloned();
    let Some(Admitted(slot)) = admitted else {
        return Err(ErrorData::invalid_request(
            "subscription not authorized",
            None,
        ));
    };
    let taken = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
    taken.ok_or_else(|| ErrorData::internal_error("subscription already served", None))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
