//! [`PrecheckLayer`]: a tower layer that checks each JSON-RPC message's raw body before rmcp
//! parses it.
//!
//! Three things cannot wait until rmcp has built its typed parameters:
//!
//! * **A `requestState` that is not a string.** rmcp types it as a string, so such a request
//!   fails to parse and rmcp answers `-32601`. mrtr's contract is the uniform `-32602`
//!   rejection for every unusable `requestState`; the layer answers it.
//! * **Requests that are not I-JSON** (RFC 7493): a duplicate member name or a number a
//!   double does not carry exactly is gone once a parser has built a map, and the argument
//!   digest could no longer tell such requests apart. A resume is refused here (uniformly); a
//!   fresh call goes on marked (the [`Violation`] is put in the HTTP request's extensions, where
//!   [`Mrtr`](crate::Mrtr) finds it) and cannot pause.
//! * **JSON that serde_json cannot read**: a number beyond a double's range (`1e400`) or a
//!   lone surrogate makes rmcp refuse the whole body (HTTP 415). The layer answers such a
//!   message itself, as JSON-RPC: `-32602` naming the problem and where it is, or the uniform
//!   rejection for a resume ([`refuse_unreadable`]).
//!
//! The layer reads each body once, in one pass that builds no parse tree
//! ([`precheck_bytes`]); rmcp then parses it as it always does. An application that must
//! answer some method before rmcp does (for example the authorization of a
//! `subscriptions/listen`, which must finish before rmcp acknowledges it) registers an
//! admission hook for that method ([`PrecheckLayer::admit`]): only messages of that method
//! are parsed for it.
//!
//! **stdio** has no HTTP request, so no layer: there rmcp answers a non-string `requestState`
//! itself (`-32601`, it cannot parse the request), and duplicate member names and
//! over-precise decimals cannot be detected (integers a double does not carry still are,
//! from the parsed value).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http::{Method, Request, Response, StatusCode, header};
use http_body::Body;
use http_body_util::{Either, Full};
use mrtr_std::core::ErrorDetail;
use mrtr_std::ijson::Violation;
use mrtr_std::jsonrpc::{Precheck, RequestState, precheck_bytes, refuse_unreadable};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

use tower_layer::Layer;
use tower_service::Service;

/// Error type of a boxed body.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body of a response that passed through a layer: the inner service's own
/// (`Either::Left`, untouched: no boxing per request), or the body of an answer the layer gave
/// itself (`Either::Right`).
pub type ResponseBody<B> = Either<B, Full<Bytes>>;

/// Largest request body the layer buffers by default (4 MiB).
pub const DEFAULT_MAX_BODY: usize = 4 * 1024 * 1024;

/// What an admission hook decides: `Ok(extensions)` passes the request on with these
/// extensions added to it (for the handler to find); `Err(error)` answers the request with
/// that JSON-RPC error object (`{"code", "message", "data"?}`) instead.
pub type Admission = Result<http::Extensions, Value>;

type Hook = Arc<
    dyn Fn(Arc<Value>, &http::request::Parts) -> Pin<Box<dyn Future<Output = Admission> + Send>>
        + Send
        + Sync,
>;

/// Checks each JSON-RPC POST before rmcp parses it; see the [module docs](self).
///
/// ```
/// use mrtr_rmcp::PrecheckLayer;
/// use mrtr_std::core::ErrorDetail;
///
/// // Around rmcp's StreamableHttpService, e.g. with axum:
/// //   Router::new().route_service("/mcp", PrecheckLayer::new(ErrorDetail::Uniform).layer(service))
/// let layer = PrecheckLayer::new(ErrorDetail::Uniform)
///     .max_body(1 << 20)
///     .admit("subscriptions/listen", |message, _parts| async move {
///         // Decide before rmcp sees the message; `Err(error)` answers it instead.
///         let _ = message;
///         Ok(http::Extensions::new())
///     });
/// # let _ = layer;
/// ```
#[derive(Clone)]
pub struct PrecheckLayer {
    config: Arc<Config>,
}

/// What every service of one layer shares.
#[derive(Clone)]
struct Config {
    detail: ErrorDetail,
    max_body: usize,
    hooks: Vec<(String, Hook)>,
}

impl Config {
    fn hook(&self, method: &str) -> Option<&Hook> {
        self.hooks.iter().find(|(m, _)| m == method).map(|(_, h)| h)
    }
}

impl PrecheckLayer {
    /// A layer answering rejections in `detail` mode (use the engine's:
    /// `mrtr.engine().limits().error_detail`).
    pub fn new(detail: ErrorDetail) -> Self {
        Self {
            config: Arc::new(Config {
                detail,
                max_body: DEFAULT_MAX_BODY,
                hooks: Vec::new(),
            }),
        }
    }

    /// The largest body buffered (default [`DEFAULT_MAX_BODY`]); a larger one gets HTTP 413.
    pub fn max_body(mut self, bytes: usize) -> Self {
        Arc::make_mut(&mut self.config).max_body = bytes;
        self
    }

    /// Runs `hook` on every JSON-RPC message of `method` that passed mrtr's checks, with the
    /// parsed message and the request's parts (to read, for example, the caller an auth layer
    /// put in its extensions, before the future starts). The extensions it returns are added
    /// to the request; an `Err(error)` answers the request with that JSON-RPC error. Messages
    /// of other methods are not parsed for it. A second hook for the same method replaces the
    /// first.
    pub fn admit<F, Fut>(mut self, method: impl Into<String>, hook: F) -> Self
    where
        F: Fn(Arc<Value>, &http::request::Parts) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Admission> + Send + 'static,
    {
        let method = method.into();
        let hook: Hook = Arc::new(move |message, parts| Box::pin(hook(message, parts)));
        let hooks = &mut Arc::make_mut(&mut self.config).hooks;
        hooks.retain(|(m, _)| *m != method);
        hooks.push((method, hook));
        self
    }
}

impl fmt::Debug for PrecheckLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hooks: Vec<&str> = self.config.hooks.iter().map(|(m, _)| m.as_str()).collect();
        f.debug_struct("PrecheckLayer")
            .field("detail", &self.config.detail)
            .field("max_body", &self.config.max_body)
            .field("hooks", &hooks)
            .finish()
    }
}

impl<S> Layer<S> for PrecheckLayer {
    type Service = PrecheckService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        PrecheckService {
            inner: Arc::new(Mutex::new(inner)),
            layer: self.clone(),
        }
    }
}

/// The service [`PrecheckLayer`] wraps around rmcp's HTTP service. Cloning it is cheap (two
/// reference counts), so the layers and router around it can clone it per request. Its clones
/// share one inner service: once a request's body is read and checked, the request takes a
/// lock on it, readies it and calls it (a tower `call` only starts the work and returns its
/// future, so the lock is held for that short step), with no clone of the inner service per
/// request. Only when the shared service is not ready at once (rmcp's always is) does the
/// request wait on a clone of its own. The response future is a plain state machine: nothing
/// is boxed per request but an admission hook's future.
#[derive(Debug)]
pub struct PrecheckService<S> {
    inner: Arc<Mutex<S>>,
    layer: PrecheckLayer,
}

impl<S> Clone for PrecheckService<S> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            layer: self.layer.clone(),
        }
    }
}

/// A response answering the request here, with `status` and a JSON body.
fn respond<B>(status: StatusCode, body: Value) -> Response<ResponseBody<B>> {
    let mut response = Response::new(Either::Right(Full::new(Bytes::from(body.to_string()))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// A JSON-RPC error response for the id of the message in `raw` (read only here: a message
/// answered by the layer).
fn error_response<B>(raw: &[u8], error: Value) -> Response<ResponseBody<B>> {
    let id = serde_json::from_slice::<Value>(raw)
        .ok()
        .and_then(|message| message.get("id").cloned())
        .unwrap_or(Value::Null);
    respond(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": id, "error": error}),
    )
}

/// The answer to a message whose text is JSON that serde_json cannot read (`1e400`, a lone
/// surrogate: rmcp would refuse the whole body with HTTP 415), as
/// [`refuse_unreadable`] decides from the envelope read by [`Envelope`]; `None` when the
/// text is not JSON at all (rmcp answers it).
fn unreadable<B>(
    raw: &[u8],
    violation: &Violation,
    detail: ErrorDetail,
) -> Option<Response<ResponseBody<B>>> {
    let (id, error) = match serde_json::from_slice::<Envelope>(raw) {
        Ok(envelope) => {
            let state = match &envelope.params.request_state {
                Shape::Absent => RequestState::Absent,
                Shape::Text(token) => RequestState::Token(token),
                Shape::Other => RequestState::NotAString,
            };
            let method = envelope.method.as_deref();
            let error = refuse_unreadable(method, state, violation, detail);
            (envelope.id.unwrap_or(Value::Null), error)
        }
        // The violation is in the envelope itself (the method, the requestState, the id, a
        // name): still JSON, still answered, without an id to answer to.
        Err(_) => {
            serde_json::from_slice::<IgnoredAny>(raw).ok()?;
            let error = refuse_unreadable(None, RequestState::Absent, violation, detail);
            (Value::Null, error)
        }
    };
    Some(respond(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": id, "error": error.to_value()}),
    ))
}

/// A JSON-RPC message's envelope, read so that values serde_json cannot hold (`1e400`, a
/// lone surrogate) are skipped wherever they are not one of these members.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Params,
}

/// The part of `params` that [`refuse_unreadable`] needs.
#[derive(Default, Deserialize)]
struct Params {
    #[serde(default, rename = "requestState")]
    request_state: Shape,
}

/// The shape of a `requestState` member.
#[derive(Default)]
enum Shape {
    /// No such member.
    #[default]
    Absent,
    /// A string.
    Text(String),
    /// Anything else, `null` included (skipped unread).
    Other,
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Shape, E> {
        Ok(Shape::Text(v.to_owned()))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Shape::Other)
    }
}

/// The answer to a body that is too large or cannot be read.
fn too_large<B>() -> Response<ResponseBody<B>> {
    respond(
        StatusCode::PAYLOAD_TOO_LARGE,
        json!({"error": "request body too large or unreadable"}),
    )
}

/// A body being read: its first chunk kept as it is (the whole body, for a small request),
/// further chunks copied after it.
#[derive(Default)]
struct Buffered {
    first: Option<Bytes>,
    rest: Vec<u8>,
}

impl Buffered {
    fn len(&self) -> usize {
        self.first.as_ref().map_or(0, Bytes::len) + self.rest.len()
    }

    fn push(&mut self, chunk: Bytes) {
        match &self.first {
            None => self.first = Some(chunk),
            Some(first) => {
                if self.rest.is_empty() {
                    self.rest.extend_from_slice(first);
                }
                self.rest.extend_from_slice(&chunk);
            }
        }
    }

    fn into_bytes(self) -> Bytes {
        if self.rest.is_empty() {
            self.first.unwrap_or_default()
        } else {
            Bytes::from(self.rest)
        }
    }
}

/// What a request still needs before the inner service answers it.
enum Next {
    /// Hand it on.
    Call(Request<Full<Bytes>>),
    /// An admission hook decides first.
    Admit(Admitting),
    /// Answered here.
    Answer,
}

/// A request waiting for its admission hook.
struct Admitting {
    hook: Pin<Box<dyn Future<Output = Admission> + Send>>,
    parts: http::request::Parts,
    bytes: Bytes,
}

pin_project_lite::pin_project! {
    /// The response future of [`PrecheckService`].
    pub struct PrecheckFuture<S, B, F, ResBody> {
        #[pin]
        state: State<S, B, F, ResBody>,
    }
}

pin_project_lite::pin_project! {
    #[project = StateProj]
    #[project_replace = StateOwned]
    enum State<S, B, F, ResBody> {
        /// Reading the body.
        Reading {
            #[pin]
            body: B,
            read: Buffered,
            parts: http::request::Parts,
            inner: Arc<Mutex<S>>,
            config: Arc<Config>,
        },
        /// Waiting for an admission hook (the body is read).
        Admitting { admitting: Admitting, inner: Arc<Mutex<S>> },
        /// Waiting for a clone of the inner service to be ready (rare: rmcp's always is; boxed
        /// so that the common states stay small to move).
        Readying { service: Box<S>, request: Option<Request<Full<Bytes>>> },
        /// The inner service answers.
        Calling {
            #[pin]
            call: F,
        },
        /// Answered here, with this response.
        Answered { response: Option<Response<ResponseBody<ResBody>>> },
        /// The response went out.
        Done,
    }
}

impl<S, B, ResBody> PrecheckFuture<S, B, S::Future, ResBody>
where
    S: Service<Request<Full<Bytes>>, Response = Response<ResBody>>,
{
    /// Hands the checked request to the shared inner service when it is ready at once
    /// (rmcp's always is): readied and called under its lock, so no other request comes
    /// between the two. Else the request waits on a clone of its own.
    fn start(
        inner: &Mutex<S>,
        request: Request<Full<Bytes>>,
        cx: &mut Context<'_>,
    ) -> Result<State<S, B, S::Future, ResBody>, S::Error>
    where
        S: Clone,
    {
        // A panic in another request's `call` leaves the service as that call left it, which
        // a clone per request would not have protected either.
        let mut shared = inner.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(match shared.poll_ready(cx)? {
            Poll::Ready(()) => State::Calling {
                call: shared.call(request),
            },
            Poll::Pending => State::Readying {
                service: Box::new(S::clone(&shared)),
                request: Some(request),
            },
        })
    }

    /// The request, its body read: checked, then handed on, held for a hook, or answered.
    fn decide(
        parts: http::request::Parts,
        bytes: Bytes,
        config: &Config,
    ) -> (Next, Option<Response<ResponseBody<ResBody>>>) {
        let mut parts = parts;
        if parts.method == Method::POST {
            let checked = precheck_bytes(&bytes, config.detail);
            if let Some(violation) = &checked.unreadable
                && let Some(answer) = unreadable(&bytes, violation, config.detail)
            {
                return (Next::Answer, Some(answer));
            }
            match checked.outcome {
                Precheck::Pass => {}
                Precheck::Unbindable(v) => {
                    parts.extensions.insert::<Violation>(v);
                }
                Precheck::Reject(error) => {
                    return (Next::Answer, Some(error_response(&bytes, error.to_value())));
                }
            }
            if let Some(hook) = checked.method.as_deref().and_then(|m| config.hook(m)) {
                // A message the hook must admit but a parser cannot read (nested deeper than
                // serde_json follows) is refused here, never handed on unadmitted.
                let Ok(message) = serde_json::from_slice::<Value>(&bytes) else {
                    let error = json!({"code": -32700, "message": "Parse error"});
                    return (Next::Answer, Some(error_response(&bytes, error)));
                };
                let hook = hook(Arc::new(message), &parts);
                let admitting = Admitting { hook, parts, bytes };
                return (Next::Admit(admitting), None);
            }
        }
        (
            Next::Call(Request::from_parts(parts, Full::new(bytes))),
            None,
        )
    }
}

impl<S, B, ResBody> Future for PrecheckFuture<S, B, S::Future, ResBody>
where
    S: Service<Request<Full<Bytes>>, Response = Response<ResBody>> + Clone,
    B: Body,
{
    type Output = Result<Response<ResponseBody<ResBody>>, S::Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let mut state = self.as_mut().project().state;
            match state.as_mut().project() {
                StateProj::Reading {
                    mut body,
                    read,
                    config,
                    ..
                } => {
                    // Every frame that is there now; the rest when the body wakes us.
                    loop {
                        match body.as_mut().poll_frame(cx) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(None) => break,
                            Poll::Ready(Some(Err(_))) => {
                                state.set(State::Done);
                                return Poll::Ready(Ok(too_large()));
                            }
                            Poll::Ready(Some(Ok(frame))) => {
                                if let Ok(mut data) = frame.into_data() {
                                    // Zero-copy for `Bytes` (hyper's and rmcp's body data).
                                    let chunk = data.copy_to_bytes(data.remaining());
                                    if read.len() + chunk.len() > config.max_body {
                                        state.set(State::Done);
                                        return Poll::Ready(Ok(too_large()));
                                    }
                                    read.push(chunk);
                                }
                            }
                        }
                    }
                    let StateOwned::Reading {
                        read,
                        parts,
                        inner,
                        config,
                        ..
                    } = state.as_mut().project_replace(State::Done)
                    else {
                        unreachable!("the state was Reading");
                    };
                    let (next, answer) = Self::decide(parts, read.into_bytes(), &config);
                    match next {
                        Next::Call(request) => match Self::start(&inner, request, cx) {
                            Ok(next) => state.set(next),
                            Err(e) => {
                                state.set(State::Done);
                                return Poll::Ready(Err(e));
                            }
                        },
                        Next::Admit(admitting) => state.set(State::Admitting { admitting, inner }),
                        Next::Answer => state.set(State::Answered { response: answer }),
                    }
                }
                StateProj::Admitting { admitting, .. } => {
                    let Poll::Ready(admission) = admitting.hook.as_mut().poll(cx) else {
                        return Poll::Pending;
                    };
                    let StateOwned::Admitting { admitting, inner } =
                        state.as_mut().project_replace(State::Done)
                    else {
                        unreachable!("the state was Admitting");
                    };
                    let Admitting {
                        mut parts, bytes, ..
                    } = admitting;
                    match admission {
                        Ok(extensions) => {
                            parts.extensions.extend(extensions);
                            let request = Request::from_parts(parts, Full::new(bytes));
                            match Self::start(&inner, request, cx) {
                                Ok(next) => state.set(next),
                                Err(e) => {
                                    state.set(State::Done);
                                    return Poll::Ready(Err(e));
                                }
                            }
                        }
                        Err(error) => {
                            let response = error_response(&bytes, error);
                            state.set(State::Answered {
                                response: Some(response),
                            });
                        }
                    }
                }
                StateProj::Readying { service, request } => {
                    match service.poll_ready(cx) {
                        Poll::Ready(Ok(())) => {}
                        Poll::Ready(Err(e)) => {
                            state.set(State::Done);
                            return Poll::Ready(Err(e));
                        }
                        Poll::Pending => return Poll::Pending,
                    }
                    let Some(request) = request.take() else {
                        // Unreachable: the request is set with the state.
                        state.set(State::Done);
                        return Poll::Pending;
                    };
                    let call = service.call(request);
                    state.set(State::Calling { call });
                }
                StateProj::Calling { call } => {
                    let response = match call.poll(cx) {
                        Poll::Ready(Ok(response)) => response,
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                        Poll::Pending => return Poll::Pending,
                    };
                    state.set(State::Done);
                    return Poll::Ready(Ok(response.map(Either::Left)));
                }
                StateProj::Answered { response } => {
                    let response = response.take();
                    state.set(State::Done);
                    if let Some(response) = response {
                        return Poll::Ready(Ok(response));
                    }
                    // Unreachable: a response is set with the state.
                    return Poll::Pending;
                }
                StateProj::Done => return Poll::Pending,
            }
        }
    }
}

impl<S, B, ResBody> Service<Request<B>> for PrecheckService<S>
where
    S: Service<Request<Full<Bytes>>, Response = Response<ResBody>> + Clone,
    B: Body,
{
    type Response = Response<ResponseBody<ResBody>>;
    type Error = S::Error;
    type Future = PrecheckFuture<S, B, S::Future, ResBody>;

    /// Always ready: the inner service is readied when a request's body has been checked.
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let (parts, body) = request.into_parts();
        PrecheckFuture {
            state: State::Reading {
                body,
                read: Buffered::default(),
                parts,
                inner: self.inner.clone(),
                config: self.layer.config.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::convert::Infallible;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use http_body_util::BodyExt;

    use super::*;

    /// A body arriving in pieces: each chunk after a `Pending` (it wakes itself), then maybe
    /// an error.
    struct Pieces {
        chunks: VecDeque<Bytes>,
        fail: bool,
        waited: bool,
    }

    impl Pieces {
        fn new(chunks: &[&str], fail: bool) -> Self {
            Self {
                chunks: chunks.iter().map(|c| Bytes::from(c.to_string())).collect(),
                fail,
                waited: false,
            }
        }
    }

    impl Body for Pieces {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
            if !self.waited {
                self.waited = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.waited = false;
            match self.chunks.pop_front() {
                Some(chunk) => Poll::Ready(Some(Ok(http_body::Frame::data(chunk)))),
                None if self.fail => Poll::Ready(Some(Err(std::io::Error::other("reset")))),
                None => Poll::Ready(None),
            }
        }
    }

    /// An inner service answering 204, keeping each body it got and whether it came marked
    /// as not I-JSON.
    #[derive(Clone, Default)]
    struct Keeper(Arc<Mutex<Vec<(Bytes, bool)>>>);

    impl Service<Request<Full<Bytes>>> for Keeper {
        type Response = Response<Full<Bytes>>;
        type Error = Infallible;
        type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request<Full<Bytes>>) -> Self::Future {
            let kept = self.0.clone();
            Box::pin(async move {
                let marked = request.extensions().get::<Violation>().is_some();
                let body = request.into_body().collect().await.unwrap().to_bytes();
                kept.lock().unwrap().push((body, marked));
                let mut response = Response::new(Full::new(Bytes::new()));
                *response.status_mut() = StatusCode::NO_CONTENT;
                Ok(response)
            })
        }
    }

    async fn send(service: &mut PrecheckService<Keeper>, body: Pieces) -> StatusCode {
        let request = Request::post("/mcp").body(body).unwrap();
        service.call(request).await.unwrap().status()
    }

    #[tokio::test]
    async fn a_body_in_pieces_is_read_whole_before_it_is_checked() {
        let keeper = Keeper::default();
        let mut service = PrecheckLayer::new(ErrorDetail::Uniform).layer(keeper.clone());
        let message = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"n":9007199254740993}}}"#;
        // Cut inside a name, inside a number and between members.
        let pieces = [
            &message[..20],
            &message[20..83],
            &message[83..90],
            &message[90..],
        ];
        assert_eq!(
            send(&mut service, Pieces::new(&pieces, false)).await,
            StatusCode::NO_CONTENT
        );
        // Its number does not survive a double: handed on marked, the bytes whole.
        let kept = keeper.0.lock().unwrap().clone();
        assert_eq!(kept, vec![(Bytes::from(message), true)]);
        // Refused whole: a non-string requestState, sent in two pieces.
        let refused = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","requestState":3}}"#;
        let request = Request::post("/mcp")
            .body(Pieces::new(&[&refused[..40], &refused[40..]], false))
            .unwrap();
        let response = service.call(request).await.unwrap();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let reply: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            (reply["id"].clone(), reply["error"]["code"].clone()),
            (json!(7), json!(-32602))
        );
        assert_eq!(keeper.0.lock().unwrap().len(), 1);
    }

    /// What the counting inner services below answer: 204, at once.
    fn no_content<E>() -> std::future::Ready<Result<Response<Full<Bytes>>, E>> {
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = StatusCode::NO_CONTENT;
        std::future::ready(Ok(response))
    }

    /// An inner service that is not ready at first (`Pending` once, waking itself), or that
    /// fails to get ready; counts its calls.
    #[derive(Clone)]
    struct Reluctant {
        waited: Arc<AtomicUsize>,
        calls: Arc<AtomicUsize>,
        fails: bool,
    }

    impl Service<Request<Full<Bytes>>> for Reluctant {
        type Response = Response<Full<Bytes>>;
        type Error = &'static str;
        type Future = std::future::Ready<Result<Self::Response, &'static str>>;

        fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), &'static str>> {
            if self.fails {
                return Poll::Ready(Err("overloaded"));
            }
            if self.waited.fetch_add(1, Ordering::SeqCst) == 0 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _request: Request<Full<Bytes>>) -> Self::Future {
            self.calls.fetch_add(1, Ordering::SeqCst);
            no_content()
        }
    }

    #[tokio::test]
    async fn a_service_not_ready_yet_gets_the_request_once_ready_and_its_error_is_returned() {
        for fails in [false, true] {
            let calls = Arc::new(AtomicUsize::new(0));
            let inner = Reluctant {
                waited: Arc::new(AtomicUsize::new(0)),
                calls: calls.clone(),
                fails,
            };
            let mut service = PrecheckLayer::new(ErrorDetail::Uniform).layer(inner);
            let request = Request::post("/mcp")
                .body(Full::new(Bytes::from_static(b"{}")))
                .unwrap();
            let outcome = service.call(request).await.map(|r| r.status());
            if fails {
                assert_eq!(outcome, Err("overloaded"));
                assert_eq!(calls.load(Ordering::SeqCst), 0);
            } else {
                assert_eq!(outcome, Ok(StatusCode::NO_CONTENT));
                assert_eq!(calls.load(Ordering::SeqCst), 1);
            }
        }
    }

    #[tokio::test]
    async fn a_body_over_the_limit_or_broken_gets_413_and_never_reaches_the_service() {
        let keeper = Keeper::default();
        let mut service = PrecheckLayer::new(ErrorDetail::Uniform)
            .max_body(16)
            .layer(keeper.clone());
        // 10 + 10 bytes: the second piece crosses the limit.
        let over = Pieces::new(&["0123456789", "0123456789"], false);
        assert_eq!(
            send(&mut service, over).await,
            StatusCode::PAYLOAD_TOO_LARGE
        );
        let broken = Pieces::new(&["{\"a\":"], true);
        assert_eq!(
            send(&mut service, broken).await,
            StatusCode::PAYLOAD_TOO_LARGE
        );
        // Exactly at the limit passes.
        let at = Pieces::new(&["[1,2,3,4,", "5,6,77]"], false);
        assert_eq!(send(&mut service, at).await, StatusCode::NO_CONTENT);
        let kept = keeper.0.lock().unwrap().clone();
        assert_eq!(kept, vec![(Bytes::from("[1,2,3,4,5,6,77]"), false)]);
    }

    /// An inner service answering 204, counting its calls.
    #[derive(Clone)]
    struct Inner(Arc<AtomicUsize>);

    impl Service<Request<Full<Bytes>>> for Inner {
        type Response = Response<Full<Bytes>>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Self::Response, Infallible>>;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _request: Request<Full<Bytes>>) -> Self::Future {
            self.0.fetch_add(1, Ordering::SeqCst);
            no_content()
        }
    }

    async fn post(service: &mut PrecheckService<Inner>, body: String) -> (StatusCode, Value) {
        let request = Request::post("/mcp")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        let response = service.call(request).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    #[tokio::test]
    async fn a_hook_sees_only_its_method_and_a_message_it_cannot_read_is_refused() {
        let seen = Arc::new(AtomicUsize::new(0));
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        let mut service = PrecheckLayer::new(ErrorDetail::Uniform)
            .admit("subscriptions/listen", move |message, _parts| {
                counter.fetch_add(1, Ordering::SeqCst);
                let refuse = message["params"]["refuse"] == true;
                async move {
                    if refuse {
                        Err(json!({"code": -32600, "message": "no"}))
                    } else {
                        Ok(http::Extensions::new())
                    }
                }
            })
            .layer(Inner(calls.clone()));
        let message = |method: &str, params: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"{method}","params":{params}}}"#)
        };
        // Other methods pass without the hook.
        let (status, _) = post(&mut service, message("tools/list", "{}")).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        assert_eq!(seen.load(Ordering::SeqCst), 0);
        // Its method: admitted, or answered with the hook's error and never handed on.
        let (status, _) = post(&mut service, message("subscriptions/listen", "{}")).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let (_, reply) = post(
            &mut service,
            message("subscriptions/listen", r#"{"refuse":true}"#),
        )
        .await;
        assert_eq!(reply["error"]["message"], "no");
        assert_eq!(reply["id"], 3);
        assert_eq!(
            (seen.load(Ordering::SeqCst), calls.load(Ordering::SeqCst)),
            (2, 2)
        );
        // Deeper than serde_json reads (the scan follows 128 levels): refused, not handed on
        // unadmitted.
        let deep = format!(r#"{{"x":{}{}}}"#, "[".repeat(126), "]".repeat(126));
        let (_, reply) = post(&mut service, message("subscriptions/listen", &deep)).await;
        assert_eq!(reply["error"]["code"], -32700, "{reply}");
        assert_eq!(
            (seen.load(Ordering::SeqCst), calls.load(Ordering::SeqCst)),
            (2, 2)
        );
    }

    /// [`Inner`], also counting its clones.
    struct Counted {
        inner: Inner,
        clones: Arc<AtomicUsize>,
    }

    impl Clone for Counted {
        fn clone(&self) -> Self {
            self.clones.fetch_add(1, Ordering::SeqCst);
            Self {
                inner: self.inner.clone(),
                clones: self.clones.clone(),
            }
        }
    }

    impl Service<Request<Full<Bytes>>> for Counted {
        type Response = Response<Full<Bytes>>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Self::Response, Infallible>>;

        fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            self.inner.poll_ready(cx)
        }

        fn call(&mut self, request: Request<Full<Bytes>>) -> Self::Future {
            self.inner.call(request)
        }
    }

    #[tokio::test]
    async fn clones_of_the_service_share_one_inner_service_that_is_never_cloned_when_ready() {
        let calls = Arc::new(AtomicUsize::new(0));
        let clones = Arc::new(AtomicUsize::new(0));
        let inner = Counted {
            inner: Inner(calls.clone()),
            clones: clones.clone(),
        };
        let service = PrecheckLayer::new(ErrorDetail::Uniform).layer(inner);
        let message = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
        // As a router does: a fresh clone of the layer's service per request, several at once.
        let requests: Vec<_> = (0..8)
            .map(|_| {
                let mut service = service.clone();
                tokio::spawn(async move {
                    let request = Request::post("/mcp")
                        .body(Full::new(Bytes::from(message)))
                        .unwrap();
                    service.call(request).await.unwrap().status()
                })
            })
            .collect();
        for request in requests {
            assert_eq!(request.await.unwrap(), StatusCode::NO_CONTENT);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 8);
        assert_eq!(clones.load(Ordering::SeqCst), 0);
    }
}
