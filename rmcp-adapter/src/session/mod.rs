//! 2025-era `resources/subscribe` on rmcp's Streamable HTTP sessions, guarded by mrtr-std's
//! authorizer runtime, and the sessions that losing a grant retires.
//!
//! * [`ResourceGrants::subscribe`] (from `ServerHandler::subscribe`) establishes one grant per
//!   session and URI through the registry's authorizer and answers only after the initial
//!   check: a refusal is the request's error (`-32002`, [`SUBSCRIBE_DENIED`]) and leaves the
//!   session alive.
//! * The grant belongs to the `Mcp-Session-Id` session, not to a connection: it is renewed
//!   within its lease whether or not the client keeps its GET stream open, so a GET disconnect
//!   does not end it. It ends with the session (`DELETE`, the session idling out), with
//!   [`ResourceGrants::unsubscribe`] (neither calls the authorizer nor retires the session),
//!   or when the registry retires the session.
//! * [`ResourceGrants::notify_updated`] sends `notifications/resources/updated` to every
//!   session whose grant for the URI passes the delivery gate now.
//! * [`Sessions`] wraps rmcp's session manager: a session it closes, for whatever reason,
//!   releases its grants; and a session the registry retires (a renewal denied, three
//!   consecutive failed checks, an expired grant) is closed, so every later request with its
//!   id gets HTTP 404 and the client must initialize again and resubscribe. (This era has no
//!   subscription-ended notification.)
//! * [`OwnerLayer`] (from [`Sessions::owner_layer`]) binds each session to the caller that
//!   opened it: anyone else naming its id gets the unknown-session 404 (see [`owner`]).
//! * [`SessionLimits`] (set with [`SessionOwners::set_limits`]) caps the sessions open at
//!   once, per caller and in total: rmcp sets no cap, and each session holds a task, its
//!   table entry and its owner. A session beyond a cap is closed at once and its `initialize`
//!   refused (HTTP 429 or 503, a JSON-RPC error naming the cap).
//!
//! ```
//! # use mrtr_rmcp::Mrtr;
//! # use mrtr_rmcp::session::{ResourceGrants, Sessions};
//! # use mrtr_std::clock::StdMonotonicClock;
//! # use mrtr_std::engine::{Backend, Limits, Rotating};
//! # use mrtr_std::keys::KeyConfig;
//! # use mrtr_replay::AnyReplayCache;
//! # use mrtr_std::subscription::{Registry, RegistryConfig, RegistryHandle, deny_all};
//! # use rmcp::model::{ErrorData, SubscribeRequestParams};
//! # use rmcp::service::RequestContext;
//! # use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
//! # use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
//! # use rmcp::{RoleServer, ServerHandler};
//! # #[derive(Clone)]
//! # struct Server { mrtr: Mrtr, grants: ResourceGrants<StdMonotonicClock> }
//! // in the handler:
//! impl ServerHandler for Server {
//!     #[allow(deprecated)] // resources/subscribe is 2025-era
//!     async fn subscribe(&self, p: SubscribeRequestParams, ctx: RequestContext<RoleServer>)
//!         -> Result<(), ErrorData> {
//!         let caller = self.mrtr.caller(&ctx);
//!         self.grants.subscribe(&p.uri, &caller, &ctx).await
//!     }
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let keys = KeyConfig::parse_env("current=k1; k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")?;
//! # let engine = Rotating::new(Backend::Aes256Gcm, keys, Limits::for_audience("booking"), AnyReplayCache::memory(1_000))?;
//! # let registry = Registry::new(StdMonotonicClock::new(), deny_all(), RegistryConfig::default());
//! # let registry_handle = RegistryHandle::spawn(registry);
//! // at startup (Sessions::new needs a tokio runtime):
//! let grants = ResourceGrants::new(registry_handle);
//! let sessions = Sessions::new(LocalSessionManager::default(), grants.clone());
//! # let server = Server { mrtr: Mrtr::new(engine), grants };
//! # let factory = move || Ok(server.clone());
//! let config = StreamableHttpServerConfig::default().with_legacy_session_mode(true);
//! let service = StreamableHttpService::new(factory, sessions, config);
//! # let _ = service;
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use futures_core::Stream;
use mrtr_std::clock::{MonotonicClock, StdMonotonicClock};
use mrtr_std::subscription::{RegistryHandle, SubscribeRefused, SubscriptionKey};
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, ErrorData, ServerJsonRpcMessage};
use rmcp::service::{Peer, RequestContext};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};
use serde_json::json;

use crate::caller::{Caller, http_parts};

mod limits;
pub mod owner;
pub use limits::{SessionCapExceeded, SessionLimits};
pub use owner::{OwnerLayer, OwnerService, SessionOwners};

/// The code answering a `resources/subscribe` whose initial authorization failed (as Soklet
/// answers it); `data.reason` is `"subscription_denied"`. The session stays alive.
pub const SUBSCRIBE_DENIED: ErrorCode = ErrorCode(-32002);

/// The HTTP header naming the session (parsed once: a lookup by text parses the name every
/// time).
const SESSION_HEADER: http::HeaderName = http::HeaderName::from_static("mcp-session-id");

/// A session's grants, and how to reach its client.
struct Session {
    peer: Peer<RoleServer>,
    grants: HashMap<String, SubscriptionKey>,
}

struct Inner<C> {
    registry: RegistryHandle<C>,
    sessions: Mutex<HashMap<Arc<str>, Session>>,
}

/// The 2025-era resource grants of every session: subscribe, unsubscribe, deliver. Cheap to
/// clone. See the [module docs](self).
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

/// The session id of the request `ctx` belongs to (its `Mcp-Session-Id` header).
pub fn session_id(ctx: &RequestContext<RoleServer>) -> Option<&str> {
    http_parts(ctx)?.headers.get(SESSION_HEADER)?.to_str().ok()
}

impl<C: MonotonicClock + 'static> ResourceGrants<C> {
    /// Grants authorized by `registry` (its authorizer decides every check).
    pub fn new(registry: RegistryHandle<C>) -> Self {
        Self {
            inner: Arc::new(Inner {
                registry,
                sessions: Mutex::default(),
            }),
        }
    }

    /// The registry.
    pub fn registry(&self) -> &RegistryHandle<C> {
        &self.inner.registry
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<Arc<str>, Session>> {
        self.inner
            .sessions
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
            .subscribe_resource(session, uri, caller.admission())
            .await
        {
            Ok(key) => {
                let session: Arc<str> = session.into();
                let mut sessions = self.sessions();
                let entry = sessions.entry(session).or_insert_with(|| Session {
                    peer: ctx.peer.clone(),
                    grants: HashMap::new(),
                });
                entry.grants.insert(uri.to_owned(), key);
                // The session may have closed (and its grants been released) while the check
                // ran: then nothing is left to deliver to.
                if registry.with_registry(|r| r.phase(key).is_none()) {
                    sessions.remove(session_id(ctx).unwrap_or_default());
                    return Err(ErrorData::invalid_request("the session has ended", None));
                }
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
        if let Some(entry) = self.sessions().get_mut(session) {
            entry.grants.remove(uri);
        }
        tracing::info!(uri, released, "resources/unsubscribe");
    }

    /// Sends `notifications/resources/updated` for `uri` to every session whose grant for it
    /// passes the delivery gate now. Returns how many sessions it was sent to.
    pub async fn notify_updated(&self, uri: &str) -> usize {
        let peers: Vec<Peer<RoleServer>> = {
            let sessions = self.sessions();
            sessions
                .values()
                .filter(|s| {
                    s.grants
                        .get(uri)
                        .is_some_and(|k| self.inner.registry.may_deliver(*k))
                })
                .map(|s| s.peer.clone())
                .collect()
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

    /// The session ended: releases its grants (no authorizer call). Returns how many.
    pub fn forget(&self, session: &str) -> usize {
        self.sessions().remove(session);
        self.inner.registry.close_session(session)
    }

    /// Sessions holding at least one grant now.
    pub fn sessions_with_grants(&self) -> usize {
        self.sessions()
            .values()
            .filter(|s| !s.grants.is_empty())
            .count()
    }
}

/// rmcp's session manager `M` (e.g. `LocalSessionManager`) with each session's owner and caps,
/// and (with [`Sessions::new`]) its resource grants: closing a session releases them, and a
/// session the registry retires is closed (later requests with its id get HTTP 404). A server
/// without 2025-era subscriptions uses [`Sessions::owned`], which needs no subscription
/// registry. Build either inside a tokio runtime.
pub struct Sessions<M, C = StdMonotonicClock> {
    inner: M,
    grants: Option<ResourceGrants<C>>,
    owners: SessionOwners,
}

impl<M, C> fmt::Debug for Sessions<M, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sessions").finish_non_exhaustive()
    }
}

impl<M: SessionManager, C: MonotonicClock + 'static> Sessions<M, C> {
    /// Wraps `inner` and starts the task that closes retired sessions (it takes the registry's
    /// retirement channel, [`RegistryHandle::session_retirements`]; stops when the manager is
    /// dropped).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, or if the registry's retirement channel was already taken.
    pub fn new(inner: M, grants: ResourceGrants<C>) -> Arc<Self> {
        let mut retirements = grants
            .registry()
            .session_retirements()
            .expect("the registry's retirement channel is free");
        let sessions = Self::build(inner, Some(grants));
        let weak: Weak<Self> = Arc::downgrade(&sessions);
        tokio::spawn(async move {
            while let Some(retired) = retirements.recv().await {
                let Some(sessions) = weak.upgrade() else {
                    return;
                };
                tracing::info!(
                    reason = retired.reason.as_str(),
                    grants = retired.grants,
                    "session retired: a resource grant was lost"
                );
                let id: SessionId = retired.session.clone();
                if let Err(e) = sessions.close_session(&id).await {
                    tracing::warn!(error = %e, "retired session did not close cleanly");
                }
            }
        });
        sessions
    }

    fn build(inner: M, grants: Option<ResourceGrants<C>>) -> Arc<Self> {
        // Fails early, where the caller can see why, rather than at the first capped session.
        let _runtime = tokio::runtime::Handle::current();
        let sessions = Arc::new(Self {
            inner,
            grants,
            owners: SessionOwners::default(),
        });
        let closing: Weak<Self> = Arc::downgrade(&sessions);
        // A session opened beyond a cap (SessionLimits) is closed at once, in the background.
        sessions.owners.set_closer(Box::new(move |id: Arc<str>| {
            let Some(sessions) = closing.upgrade() else {
                return;
            };
            tokio::spawn(async move {
                let id: SessionId = id;
                if let Err(e) = sessions.close_session(&id).await {
                    tracing::warn!(error = %e, "a session beyond the cap did not close cleanly");
                }
            });
        }));
        sessions
    }

    /// The grants (`None` for [`Sessions::owned`]).
    pub fn grants(&self) -> Option<&ResourceGrants<C>> {
        self.grants.as_ref()
    }

    /// Who opened each session (filled by [`Sessions::owner_layer`]).
    pub fn owners(&self) -> &SessionOwners {
        &self.owners
    }

    /// The layer that binds each session to the caller that opened it and refuses it to
    /// everyone else (see [`OwnerLayer`]); put it in front of the service using these sessions.
    pub fn owner_layer(&self) -> OwnerLayer<crate::FromExtensions> {
        self.owners.layer()
    }
}

impl<M: SessionManager> Sessions<M> {
    /// Wraps `inner` with session owners and caps only: for a server that serves no 2025-era
    /// `resources/subscribe` (no subscription registry, no grants).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (a session beyond a cap is closed by a task).
    pub fn owned(inner: M) -> Arc<Self> {
        Self::build(inner, None)
    }
}

impl<M: SessionManager, C: MonotonicClock + 'static> SessionManager for Sessions<M, C> {
    type Error = M::Error;
    type Transport = M::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.owners.forget(id);
        let released = self.grants.as_ref().map_or(0, |g| g.forget(id));
        if released > 0 {
            tracing::info!(released, "session closed: its resource grants are released");
        }
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }

    fn event_store(
        &self,
    ) -> Option<Arc<dyn rmcp::transport::streamable_http_server::session::EventStore>> {
        self.inner.event_store()
    }
}
