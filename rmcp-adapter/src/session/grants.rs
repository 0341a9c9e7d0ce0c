//! The 2025-era resource grants of rmcp sessions (feature `subscriptions`): subscribe,
//! unsubscribe, deliver. The registry owns every grant (session, URI, lease); this keeps only
//! each session's client, to deliver to.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mrtr_std::clock::MonotonicClock;
use mrtr_subscriptions::{Admission, RegistryHandle, SubscribeRefused};
use rmcp::RoleServer;
use rmcp::model::{ErrorCode, ErrorData};
use rmcp::service::{Peer, RequestContext};
use serde_json::json;

use super::session_id;
use crate::caller::Caller;

/// The code answering a `resources/subscribe` whose initial authorization failed (as Soklet
/// answers it); `data.reason` is `"subscription_denied"`. The session stays alive.
pub const SUBSCRIBE_DENIED: ErrorCode = ErrorCode(-32002);

struct Inner<C> {
    registry: RegistryHandle<C>,
    /// How to reach the client of each session that subscribed (its grants are the
    /// registry's).
    peers: Mutex<HashMap<Arc<str>, Peer<RoleServer>>>,
}

/// The 2025-era resource grants of every session: subscribe, unsubscribe, deliver. Cheap to
/// clone. The registry holds every grant; [`Sessions::new`](super::Sessions::new) releases a
/// closing session's grants and closes the sessions the registry retires.
///
/// ```
/// # use mrtr_rmcp::Mrtr;
/// # use mrtr_rmcp::session::{ResourceGrants, Sessions};
/// # use mrtr_std::clock::StdMonotonicClock;
/// # use mrtr_std::engine::{Backend, Engine, EngineConfig};
/// # use mrtr_std::keys::KeyConfig;
/// # use mrtr_replay::AnyReplayCache;
/// # use mrtr_subscriptions::{Registry, RegistryConfig, RegistryHandle, deny_all};
/// # use rmcp::model::{ErrorData, SubscribeRequestParams};
/// # use rmcp::service::RequestContext;
/// # use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
/// # use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
/// # use rmcp::{RoleServer, ServerHandler};
/// # #[derive(Clone)]
/// # struct Server { mrtr: Mrtr, grants: ResourceGrants<StdMonotonicClock> }
/// // in the handler:
/// impl ServerHandler for Server {
///     #[allow(deprecated)] // resources/subscribe is 2025-era
///     async fn subscribe(&self, p: SubscribeRequestParams, ctx: RequestContext<RoleServer>)
///         -> Result<(), ErrorData> {
///         let caller = self.mrtr.caller(&ctx);
///         self.grants.subscribe(&p.uri, &caller, &ctx).await
///     }
/// }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let keys = KeyConfig::parse_env("current=k1; k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")?;
/// # let engine = Engine::new(Backend::Aes256Gcm, keys, EngineConfig::for_audience("booking"), AnyReplayCache::memory(1_000))?;
/// # let registry = Registry::new(StdMonotonicClock::new(), deny_all(), RegistryConfig::default());
/// # let registry_handle = RegistryHandle::spawn(registry);
/// // at startup (Sessions::new needs a tokio runtime):
/// let grants = ResourceGrants::new(registry_handle);
/// let sessions = Sessions::new(LocalSessionManager::default(), grants.clone());
/// # let server = Server { mrtr: Mrtr::new(engine), grants };
/// # let factory = move || Ok(server.clone());
/// let config = StreamableHttpServerConfig::default().with_legacy_session_mode(true);
/// let service = StreamableHttpService::new(factory, sessions, config);
/// # let _ = service;
/// # Ok(())
/// # }
/// ```
pub struct ResourceGrants<C> {
    inner: Arc<Inner<C>>,
}

impl<C> Clone for ResourceGrants<C> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<C> fmt::Debug for ResourceGrants<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceGrants").finish_non_exhaustive()
    }
}

impl<C: MonotonicClock + 'static> ResourceGrants<C> {
    /// Grants authorized by `registry` (its authorizer decides every check).
    pub fn new(registry: RegistryHandle<C>) -> Self {
        Self {
            inner: Arc::new(Inner {
                registry,
                peers: Mutex::default(),
            }),
        }
    }

    /// The registry.
    pub fn registry(&self) -> &RegistryHandle<C> {
        &self.inner.registry
    }

    fn peers(&self) -> MutexGuard<'_, HashMap<Arc<str>, Peer<RoleServer>>> {
        self.inner
            .peers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// `resources/subscribe` for `uri` by `caller`, in the session of `ctx`: answers once the
    /// initial check allowed the grant. Errors: no session (`-32600`: a 2026-07-28 client
    /// listens instead), the check refused it ([`SUBSCRIBE_DENIED`], the reason goes to the
    /// log only; the session lives on), or the registry is full (`-32603`).
    pub async fn subscribe(
        &self,
        uri: &str,
        caller: &Caller,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(session) = session_id(ctx) else {
            return Err(ErrorData::invalid_request(
                "resources/subscribe needs a session (Mcp-Session-Id)",
                None,
            ));
        };
        let registry = &self.inner.registry;
        match registry
            .subscribe_resource(session, uri, Admission::of(caller.clone()))
            .await
        {
            Ok(key) => {
                let mut peers = self.peers();
                // The session may have closed (and its grants been released) while the check
                // ran: then nothing is left to deliver to. Checked under the peers' lock, which
                // `release` takes too, so a close cannot slip in between.
                if registry.with_registry(|r| r.phase(key).is_none()) {
                    return Err(ErrorData::invalid_request("the session has ended", None));
                }
                peers
                    .entry(session.into())
                    .or_insert_with(|| ctx.peer.clone());
                tracing::info!(caller = ?caller, uri, %key, "resources/subscribe granted");
                Ok(())
            }
            Err(SubscribeRefused::AtCapacity) => {
                tracing::warn!("resources/subscribe refused: registry at capacity");
                Err(ErrorData::internal_error(
                    "Subscription capacity reached",
                    None,
                ))
            }
            Err(refused) => {
                tracing::info!(caller = ?caller, uri, %refused, "resources/subscribe not authorized");
                Err(ErrorData::new(
                    SUBSCRIBE_DENIED,
                    "Subscription not authorized",
                    Some(json!({"reason": "subscription_denied", "uri": uri})),
                ))
            }
        }
    }

    /// `resources/unsubscribe` for `uri` in the session of `ctx`: releases the grant without
    /// calling the authorizer and without retiring the session. Succeeds whether or not there
    /// was one.
    pub fn unsubscribe(&self, uri: &str, ctx: &RequestContext<RoleServer>) {
        let Some(session) = session_id(ctx) else {
            return;
        };
        let released = self.inner.registry.unsubscribe_resource(session, uri);
        tracing::info!(uri, released, "resources/unsubscribe");
    }

    /// Sends `notifications/resources/updated` for `uri` to every session whose grant for it
    /// passes the delivery gate now. Returns how many sessions it was sent to.
    pub async fn notify_updated(&self, uri: &str) -> usize {
        let peers: Vec<Peer<RoleServer>> = {
            let peers = self.peers();
            self.inner.registry.with_registry(|r| {
                peers
                    .iter()
                    .filter(|(session, _)| r.may_deliver_resource(session, uri))
                    .map(|(_, peer)| peer.clone())
                    .collect()
            })
        };
        let mut sent = 0;
        for peer in peers {
            let params = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
            match peer.notify_resource_updated(params).await {
                Ok(()) => sent += 1,
                Err(e) => tracing::debug!(error = %e, "resource update not delivered"),
            }
        }
        sent
    }

    /// The session ended (`DELETE`, idled out): releases its grants in the registry (no
    /// authorizer call). Returns how many.
    pub fn forget(&self, session: &str) -> usize {
        // The peers' lock is held across the release, so that a subscribe finishing now sees
        // the grant gone (see `subscribe`).
        let mut peers = self.peers();
        peers.remove(session);
        self.inner.registry.close_session(session)
    }

    /// Drops the session's client only: for a session the registry retired, whose grants the
    /// registry has already released.
    pub(super) fn release(&self, session: &str) {
        self.peers().remove(session);
    }

    /// Sessions holding at least one grant now (the registry's count).
    pub fn sessions_with_grants(&self) -> usize {
        self.inner
            .registry
            .with_registry(|r| r.sessions_with_grants())
    }
}
