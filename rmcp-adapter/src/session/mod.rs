//! rmcp's Streamable HTTP sessions (the 2025 era): each bound to the caller that opened it,
//! capped per caller and in total, and (feature `subscriptions`) `resources/subscribe` guarded
//! by mrtr-subscriptions' authorizer runtime, with the sessions that losing a grant retires.
//!
//! * `ResourceGrants::subscribe` (from `ServerHandler::subscribe`) establishes one grant per
//!   session and URI through the registry's authorizer and answers only after the initial
//!   check: a refusal is the request's error (`-32002`, `SUBSCRIBE_DENIED`) and leaves the
//!   session alive.
//! * The grant belongs to the `Mcp-Session-Id` session, not to a connection: it is renewed
//!   within its lease whether or not the client keeps its GET stream open, so a GET disconnect
//!   does not end it. It ends with the session (`DELETE`, the session idling out), with
//!   `ResourceGrants::unsubscribe` (neither calls the authorizer nor retires the session),
//!   or when the registry retires the session.
//! * `ResourceGrants::notify_updated` sends `notifications/resources/updated` to every
//!   session whose grant for the URI passes the delivery gate now.
//! * [`Sessions`] wraps rmcp's session manager: a session it closes, for whatever reason,
//!   releases its grants; and a session the registry retires (a renewal denied, three
//!   consecutive failed checks, an expired grant) is closed, so every later request with its
//!   id gets HTTP 404 and the client must initialize again and resubscribe. (This era has no
//!   subscription-ended notification.)
//! * [`OwnerLayer`] (from [`Sessions::owner_layer`]) binds each session to the caller that
//!   opened it: anyone else naming its id gets the unknown-session 404.
//! * [`SessionLimits`] (set with [`SessionOwners::set_limits`]) caps the sessions open at
//!   once, per caller and in total: rmcp sets no cap, and each session holds a task, its
//!   table entry and its owner. A session beyond a cap is closed at once and its `initialize`
//!   refused (HTTP 429 or 503, a JSON-RPC error naming the cap).

use std::fmt;
use std::sync::{Arc, Weak};

use futures_core::Stream;
#[cfg(feature = "subscriptions")]
use mrtr_std::clock::MonotonicClock;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};

use crate::caller::http_parts;

#[cfg(feature = "subscriptions")]
mod grants;
mod limits;
mod owner;
#[cfg(feature = "subscriptions")]
pub use grants::{ResourceGrants, SUBSCRIBE_DENIED};
pub use limits::{SessionCapExceeded, SessionLimits};
pub use owner::{OwnerLayer, OwnerService, SessionOwners};

/// The HTTP header naming the session (parsed once: a lookup by text parses the name every
/// time).
const SESSION_HEADER: http::HeaderName = http::HeaderName::from_static("mcp-session-id");

/// The session id of the request `ctx` belongs to (its `Mcp-Session-Id` header).
pub fn session_id(ctx: &RequestContext<RoleServer>) -> Option<&str> {
    http_parts(ctx)?.headers.get(SESSION_HEADER)?.to_str().ok()
}

/// What a closing session must release besides its owner: its resource grants.
#[cfg(feature = "subscriptions")]
trait Release: Send + Sync {
    /// `DELETE` or idling out: the grants are released in the registry.
    fn closed(&self, session: &str) -> usize;
    /// Retired by the registry, which has released the grants already: the client only.
    fn retired(&self, session: &str);
}

#[cfg(feature = "subscriptions")]
impl<C: MonotonicClock + 'static> Release for ResourceGrants<C> {
    fn closed(&self, session: &str) -> usize {
        self.forget(session)
    }
    fn retired(&self, session: &str) {
        self.release(session);
    }
}

/// rmcp's session manager `M` (e.g. `LocalSessionManager`) with each session's owner and caps
/// ([`Sessions::owned`]), and (feature `subscriptions`, `Sessions::new`) its resource grants:
/// closing a session releases them, and a session the registry retires is closed (later
/// requests with its id get HTTP 404). Build either inside a tokio runtime.
pub struct Sessions<M> {
    inner: M,
    #[cfg(feature = "subscriptions")]
    grants: Option<Box<dyn Release>>,
    owners: SessionOwners,
}

impl<M> fmt::Debug for Sessions<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sessions").finish_non_exhaustive()
    }
}

impl<M: SessionManager> Sessions<M> {
    /// Wraps `inner` and starts the task that closes retired sessions (it takes the registry's
    /// retirement channel, [`RegistryHandle::session_retirements`](mrtr_subscriptions::RegistryHandle::session_retirements); stops when the manager is
    /// dropped).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, or if the registry's retirement channel was already taken.
    #[cfg(feature = "subscriptions")]
    pub fn new<C: MonotonicClock + 'static>(inner: M, grants: ResourceGrants<C>) -> Arc<Self> {
        let mut retirements = grants
            .registry()
            .session_retirements()
            .expect("the registry's retirement channel is free");
        let sessions = Self::build(inner, Some(Box::new(grants)));
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
                // The registry released the grants: the owner and the client go, and rmcp
                // closes the session, without a second release in the registry.
                sessions.owners.forget(&id);
                if let Some(g) = &sessions.grants {
                    g.retired(&id);
                }
                if let Err(e) = sessions.inner.close_session(&id).await {
                    tracing::warn!(error = %e, "retired session did not close cleanly");
                }
            }
        });
        sessions
    }

    fn build(
        inner: M,
        #[cfg(feature = "subscriptions")] grants: Option<Box<dyn Release>>,
    ) -> Arc<Self> {
        // Fails early, where the caller can see why, rather than at the first capped session.
        let _runtime = tokio::runtime::Handle::current();
        let sessions = Arc::new(Self {
            inner,
            #[cfg(feature = "subscriptions")]
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

    /// Who opened each session (filled by [`Sessions::owner_layer`]).
    pub fn owners(&self) -> &SessionOwners {
        &self.owners
    }

    /// The layer that binds each session to the caller that opened it and refuses it to
    /// everyone else (see [`OwnerLayer`]); put it in front of the service using these sessions.
    pub fn owner_layer(&self) -> OwnerLayer<crate::FromExtensions> {
        self.owners.layer()
    }

    /// Wraps `inner` with session owners and caps only: for a server that serves no 2025-era
    /// `resources/subscribe` (no subscription registry, no grants).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (a session beyond a cap is closed by a task).
    pub fn owned(inner: M) -> Arc<Self> {
        Self::build(
            inner,
            #[cfg(feature = "subscriptions")]
            None,
        )
    }
}

impl<M: SessionManager> SessionManager for Sessions<M> {
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
        #[cfg(feature = "subscriptions")]
        if let Some(released) = self.grants.as_ref().map(|g| g.closed(id))
            && released > 0
        {
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
