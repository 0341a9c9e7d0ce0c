//! The session owner layer: see [`OwnerLayer`].

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{Either, Full};
use tower_layer::Layer;
use tower_service::Service;

use super::SESSION_HEADER;
use super::limits::{SessionCapExceeded, SessionLimits};
use crate::caller::{Caller, FromExtensions, PrincipalSource, default_quota_key};
use crate::layer::ResponseBody;
use mrtr_std::quota::QuotaKey;

/// The body rmcp answers for an unknown session; a foreign one gets the same.
const NOT_FOUND: &str = "Not Found: Session not found";

/// Who opened each open session, and the caps on them ([`SessionLimits`]). Cheap to clone;
/// shared by [`Sessions`](super::Sessions) (which forgets a session when it closes) and its
/// [`OwnerLayer`].
#[derive(Clone, Default)]
pub struct SessionOwners {
    table: Arc<Mutex<Table>>,
    /// Closes a session opened beyond a cap (set by [`Sessions`](super::Sessions)).
    closer: Arc<OnceLock<Closer>>,
}

/// Closes a session by id, in the background.
pub(crate) type Closer = Box<dyn Fn(Arc<str>) + Send + Sync>;

#[derive(Default)]
struct Table {
    owners: HashMap<Arc<str>, Caller>,
    /// Each session's account for the caps: the principal, or an anonymous caller's source
    /// address (as quotas count callers).
    accounts: HashMap<Arc<str>, QuotaKey>,
    /// Open sessions per account (no entry: none).
    counts: HashMap<QuotaKey, usize>,
    limits: SessionLimits,
}

impl Table {
    fn remove(&mut self, id: &str) {
        self.owners.remove(id);
        let Some(account) = self.accounts.remove(id) else {
            return;
        };
        if let Some(n) = self.counts.get_mut(&account) {
            *n -= 1;
            if *n == 0 {
                self.counts.remove(&account);
            }
        }
    }
}

impl fmt::Debug for SessionOwners {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The ids are bearer handles: only their number is shown.
        let table = self.table();
        f.debug_struct("SessionOwners")
            .field("sessions", &table.owners.len())
            .field("limits", &table.limits)
            .finish()
    }
}

impl SessionOwners {
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Caps the sessions open at once, per caller and in total (checked as each opens).
    pub fn set_limits(&self, limits: SessionLimits) {
        self.table().limits = limits;
    }

    /// The caps.
    pub fn limits(&self) -> SessionLimits {
        self.table().limits
    }

    /// The caller that opened session `id`, while it is open.
    pub fn owner(&self, id: &str) -> Option<Caller> {
        self.table().owners.get(id).cloned()
    }

    /// Open sessions with an owner.
    pub fn len(&self) -> usize {
        self.table().owners.len()
    }

    /// No open session has an owner.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Open sessions counted against `account` (a principal, or an anonymous source).
    pub fn count_of(&self, account: &QuotaKey) -> usize {
        self.table().counts.get(account).copied().unwrap_or(0)
    }

    /// Whether `caller` may use session `id`: only its owner may, and an id without one (never
    /// opened through the layer, or closed) is nobody's.
    pub fn may_use(&self, id: &str, caller: &Caller) -> bool {
        self.table()
            .owners
            .get(id)
            .is_some_and(|owner| owner == caller)
    }

    /// Binds the new session `id` to `caller`, counted against `account`, unless a cap is
    /// reached (count and bind under one lock: racing openers cannot overshoot).
    pub(crate) fn bind(
        &self,
        id: &str,
        caller: Caller,
        account: QuotaKey,
    ) -> Result<(), SessionCapExceeded> {
        let mut table = self.table();
        if table.owners.contains_key(id) {
            return Ok(());
        }
        let own = table.counts.get(&account).copied().unwrap_or(0);
        table.limits.admit(own, table.owners.len())?;
        *table.counts.entry(account.clone()).or_insert(0) += 1;
        let id: Arc<str> = id.into();
        table.accounts.insert(id.clone(), account);
        table.owners.insert(id, caller);
        Ok(())
    }

    /// Session `id` closed: it has no owner from now on.
    pub(crate) fn forget(&self, id: &str) {
        self.table().remove(id);
    }

    /// Sets how a session opened beyond a cap is closed (once).
    pub(crate) fn set_closer(&self, closer: Closer) {
        let _ = self.closer.set(closer);
    }

    /// Closes session `id`, opened beyond a cap (nothing without a closer: the layer alone
    /// cannot close it, and it idles out).
    fn close(&self, id: &str) {
        match self.closer.get() {
            Some(close) => close(id.into()),
            None => tracing::warn!(
                "a session beyond the cap was refused but cannot be closed here (no Sessions)"
            ),
        }
    }

    /// The layer enforcing these owners, reading the caller from the request's extensions
    /// ([`FromExtensions`]).
    pub fn layer(&self) -> OwnerLayer<FromExtensions> {
        OwnerLayer {
            owners: self.clone(),
            source: Arc::new(FromExtensions),
        }
    }
}

/// Each 2025-era session belongs to the caller that opened it.
///
/// rmcp serves a `Mcp-Session-Id` as a bearer handle: whoever presents the id uses the
/// session, reads its `GET` stream, answers its server-to-client requests, or ends it with
/// `DELETE`. This layer binds each session to the [`Caller`] of the `initialize` that
/// opened it and answers every other caller's request naming the id exactly as rmcp answers an
/// unknown id (HTTP 404, `Not Found: Session not found`), so the id tells another caller
/// nothing, not even that it exists. The binding ends when the session closes (`DELETE`,
/// idling out, retirement), through [`Sessions`](super::Sessions).
///
/// The layer goes between the authentication layer (which puts the caller in the request's
/// extensions) and rmcp's service, outermost of mrtr's layers so that a foreign request runs
/// no other check:
///
/// ```
/// # use axum::Router;
/// # use axum::body::Body;
/// # use mrtr_rmcp::session::Sessions;
/// # use mrtr_rmcp::layer::PrecheckLayer;
/// # use mrtr_rmcp::mrtr_std::caller::Caller;
/// # use mrtr_std::core::ErrorDetail;
/// # use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
/// # use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
/// # use serde_json::{Value, json};
/// # use tower_layer::Layer;
/// # use tower_service::Service;
/// # #[derive(Clone)]
/// # struct Server;
/// # impl rmcp::ServerHandler for Server {}
/// # /// Bearer auth: the token is the user's name.
/// # async fn authenticate(mut request: axum::extract::Request, next: axum::middleware::Next)
/// #     -> axum::response::Response {
/// #     let token = request.headers().get("authorization").and_then(|v| v.to_str().ok());
/// #     let caller = match token.and_then(|t| t.strip_prefix("Bearer ")) {
/// #         Some(user) => Caller::user("https://idp.test", user),
/// #         None => Caller::Anonymous,
/// #     };
/// #     request.extensions_mut().insert(caller);
/// #     next.run(request).await
/// # }
/// # /// A POST to /mcp as `user`, in session `id` if given.
/// # fn post(user: &str, id: Option<&str>, body: Value) -> http::Request<Body> {
/// #     let mut request = http::Request::post("/mcp")
/// #         .header("host", "localhost")
/// #         .header("authorization", format!("Bearer {user}"))
/// #         .header("accept", "application/json, text/event-stream")
/// #         .header("content-type", "application/json");
/// #     if let Some(id) = id {
/// #         request = request.header("mcp-session-id", id).header("mcp-protocol-version", "2025-11-25");
/// #     }
/// #     request.body(Body::from(body.to_string())).expect("a valid request")
/// # }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let factory = || Ok(Server);
/// # let config = StreamableHttpServerConfig::default();
/// # let detail = ErrorDetail::Uniform;
/// # let authentication = axum::middleware::from_fn(authenticate);
/// let sessions = Sessions::owned(LocalSessionManager::default());
/// let owners = sessions.owner_layer();
/// let service = StreamableHttpService::new(factory, sessions, config);
/// let mcp = owners.layer(PrecheckLayer::new(detail).layer(service));
/// let app = Router::new().route_service("/mcp", mcp).layer(authentication);
/// # // alice opens a session; its id is hers alone.
/// # let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
/// #     "protocolVersion": "2025-11-25", "capabilities": {},
/// #     "clientInfo": {"name": "doc", "version": "1"}}});
/// # let opened = app.clone().call(post("alice", None, init)).await?;
/// # assert_eq!(opened.status(), 200);
/// # let id = opened.headers()["mcp-session-id"].to_str()?.to_owned();
/// # let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
/// # let own = app.clone().call(post("alice", Some(&id), initialized)).await?;
/// # assert_eq!(own.status(), 202);
/// # let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
/// # let foreign = app.clone().call(post("bob", Some(&id), ping)).await?;
/// # assert_eq!(foreign.status(), 404);
/// # Ok(())
/// # }
/// ```
pub struct OwnerLayer<P> {
    owners: SessionOwners,
    source: Arc<P>,
}

impl<P> Clone for OwnerLayer<P> {
    fn clone(&self) -> Self {
        Self {
            owners: self.owners.clone(),
            source: self.source.clone(),
        }
    }
}

impl<P> fmt::Debug for OwnerLayer<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnerLayer")
            .field("owners", &self.owners)
            .finish_non_exhaustive()
    }
}

impl<P: PrincipalSource> OwnerLayer<P> {
    /// Reads the caller with `source` instead (use the same one as [`Mrtr`](crate::Mrtr)).
    pub fn principal_source<Q: PrincipalSource>(self, source: Q) -> OwnerLayer<Q> {
        OwnerLayer {
            owners: self.owners,
            source: Arc::new(source),
        }
    }
}

impl<S, P> Layer<S> for OwnerLayer<P> {
    type Service = OwnerService<S, P>;

    fn layer(&self, inner: S) -> Self::Service {
        OwnerService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`OwnerLayer`] wraps around rmcp's HTTP service (or mrtr's precheck layer).
/// Cloning it clones the inner service; readiness is the inner service's, and each call hands
/// the request to that readied inner service at once (no clone per request). The response
/// future is a plain state machine: nothing is boxed per request.
pub struct OwnerService<S, P> {
    inner: S,
    layer: OwnerLayer<P>,
}

impl<S: Clone, P> Clone for OwnerService<S, P> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            layer: self.layer.clone(),
        }
    }
}

impl<S, P> fmt::Debug for OwnerService<S, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnerService")
            .field("layer", &self.layer)
            .finish_non_exhaustive()
    }
}

/// rmcp's answer for an unknown session, which a foreign caller gets too.
fn not_found<B>() -> Response<ResponseBody<B>> {
    let body = Full::new(Bytes::from_static(NOT_FOUND.as_bytes()));
    let mut response = Response::new(Either::Right(body));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// The session a request or response names: `None` without the header, `Some(None)` for a
/// header that is not text (which names no session anyone owns).
fn session_of(headers: &http::HeaderMap) -> Option<Option<&str>> {
    let value = headers.get(SESSION_HEADER)?;
    Some(value.to_str().ok())
}

/// What the layer does with the response once it is there.
enum Then {
    /// The request named a session its caller owns: a 404 from rmcp means it is gone.
    ForgetIfGone { owners: SessionOwners, id: Box<str> },
    /// The request named no session: a response that opens one binds it to this caller.
    BindIfOpened {
        owners: SessionOwners,
        caller: Caller,
        account: QuotaKey,
    },
    /// Done (the response went out).
    Nothing,
}

pin_project_lite::pin_project! {
    /// The response future of [`OwnerService`]: rmcp's answer, or the unknown-session 404
    /// for a session the caller does not own.
    pub struct OwnerFuture<F> {
        // `None`: refused here.
        #[pin]
        call: Option<F>,
        then: Then,
    }
}

impl<F, ResBody, E> Future for OwnerFuture<F>
where
    F: Future<Output = Result<Response<ResBody>, E>>,
{
    type Output = Result<Response<ResponseBody<ResBody>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Some(call) = this.call.as_pin_mut() else {
            return Poll::Ready(Ok(not_found()));
        };
        let response = match call.poll(cx) {
            Poll::Ready(Ok(response)) => response,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        };
        match std::mem::replace(this.then, Then::Nothing) {
            // A session that rmcp no longer knows has no owner either.
            Then::ForgetIfGone { owners, id } if response.status() == StatusCode::NOT_FOUND => {
                owners.forget(&id);
            }
            // A response opening a session: its opener owns it, within the caps. Beyond
            // them the session is closed at once and the opener told which cap.
            Then::BindIfOpened {
                owners,
                caller,
                account,
            } => {
                if let Some(Some(id)) = session_of(response.headers())
                    && let Err(refused) = owners.bind(id, caller.clone(), account)
                {
                    tracing::debug!(caller = ?caller, limit = refused.limit_name(),
                        "a session beyond the cap was refused");
                    owners.close(id);
                    return Poll::Ready(Ok(refused.response()));
                }
            }
            Then::ForgetIfGone { .. } | Then::Nothing => {}
        }
        Poll::Ready(Ok(response.map(Either::Left)))
    }
}

impl<S, P, B, ResBody> Service<Request<B>> for OwnerService<S, P>
where
    S: Service<Request<B>, Response = Response<ResBody>>,
    P: PrincipalSource,
{
    type Response = Response<ResponseBody<ResBody>>;
    type Error = S::Error;
    type Future = OwnerFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let (parts, body) = request.into_parts();
        let caller = self.layer.source.caller(Some(&parts));
        let owners = &self.layer.owners;
        let then = match session_of(&parts.headers) {
            None => Then::BindIfOpened {
                owners: owners.clone(),
                account: default_quota_key(&caller, Some(&parts)),
                caller,
            },
            Some(Some(id)) if owners.may_use(id, &caller) => Then::ForgetIfGone {
                owners: owners.clone(),
                id: id.into(),
            },
            Some(id) => {
                if id.and_then(|id| owners.owner(id)).is_some() {
                    tracing::warn!(caller = ?caller, "a request named a session another caller opened");
                }
                return OwnerFuture {
                    call: None,
                    then: Then::Nothing,
                };
            }
        };
        // The inner service is called here, before this call returns, so the one this
        // service readied in `poll_ready` is the one that takes the request: no clone (the
        // clone-and-replace pattern is for services that call their inner one later, from
        // their future).
        OwnerFuture {
            call: Some(self.inner.call(Request::from_parts(parts, body))),
            then,
        }
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn key(caller: &Caller) -> QuotaKey {
        default_quota_key(caller, None)
    }

    #[test]
    fn only_the_owner_may_use_a_session_and_a_closed_one_is_nobodys() {
        let owners = SessionOwners::default();
        let alice = Caller::user("https://idp.test", "alice");
        let bob = Caller::user("https://idp.test", "bob");
        owners.bind("s1", alice.clone(), key(&alice)).unwrap();
        assert!(owners.may_use("s1", &alice));
        assert!(!owners.may_use("s1", &bob));
        assert!(!owners.may_use("s1", &Caller::Anonymous));
        assert!(!owners.may_use("s2", &alice));
        owners.forget("s1");
        assert!(!owners.may_use("s1", &alice));
        assert!(owners.is_empty());
    }

    #[test]
    fn sessions_are_capped_per_caller_and_in_total_and_a_closed_one_frees_its_slot() {
        let owners = SessionOwners::default();
        owners.set_limits(SessionLimits {
            per_caller: Some(2),
            total: Some(3),
        });
        let alice = Caller::user("https://idp.test", "alice");
        let bob = Caller::user("https://idp.test", "bob");
        owners.bind("b1", bob.clone(), key(&bob)).unwrap();
        owners.bind("b2", bob.clone(), key(&bob)).unwrap();
        assert_eq!(
            owners.bind("b3", bob.clone(), key(&bob)),
            Err(SessionCapExceeded::PerCaller(2))
        );
        // A refused session has no owner: nobody may use it.
        assert!(!owners.may_use("b3", &bob));
        assert_eq!(owners.count_of(&key(&bob)), 2);
        // bob at his cap does not stop alice, until the total is reached.
        owners.bind("a1", alice.clone(), key(&alice)).unwrap();
        assert_eq!(
            owners.bind("a2", alice.clone(), key(&alice)),
            Err(SessionCapExceeded::Total(3))
        );
        // A closed session frees its slot (and its caller's).
        owners.forget("b1");
        assert_eq!(owners.count_of(&key(&bob)), 1);
        owners.bind("a2", alice.clone(), key(&alice)).unwrap();
        assert_eq!((owners.len(), owners.count_of(&key(&alice))), (3, 2));
        // Forgetting twice, or an unknown id, changes nothing.
        owners.forget("b1");
        owners.forget("nope");
        assert_eq!(owners.len(), 3);
        owners.forget("b2");
        assert_eq!(owners.count_of(&key(&bob)), 0);
    }

    #[test]
    fn debug_shows_no_session_id() {
        let owners = SessionOwners::default();
        owners
            .bind(
                "secret-session-id",
                Caller::Anonymous,
                QuotaKey::Caller(Caller::Anonymous),
            )
            .unwrap();
        let shown = format!("{owners:?} {:?}", owners.layer());
        assert!(!shown.contains("secret-session-id"), "{shown}");
        assert!(shown.contains("sessions: 1"), "{shown}");
    }

    #[test]
    fn the_header_is_read_as_text_or_not_at_all() {
        let mut headers = http::HeaderMap::new();
        assert_eq!(session_of(&headers), None);
        headers.insert(SESSION_HEADER, HeaderValue::from_static("abc"));
        assert_eq!(session_of(&headers), Some(Some("abc")));
        headers.insert(
            SESSION_HEADER,
            HeaderValue::from_bytes(&[0xff, 0xfe]).unwrap(),
        );
        assert_eq!(session_of(&headers), Some(None));
    }
}
