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
//!   fresh call goes on marked and cannot pause.
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
//!
//! **Over HTTP the layer is required.** It leaves its verdict on every POST it hands on, and
//! [`Mrtr`](crate::Mrtr) refuses, with `-32603`, a pausable request that came over HTTP without
//! one: its arguments could not be bound exactly, so it may neither pause nor resume. A server
//! that forgot the layer fails on its first call, not silently. [`Stack`](crate::Stack) puts
//! the layer in place.
//!
//! [`refuse_unreadable`]: mrtr_std::jsonrpc::refuse_unreadable
//! [`precheck_bytes`]: mrtr_std::jsonrpc::precheck_bytes

mod future;
#[cfg(test)]
mod tests;
mod unreadable;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::{Either, Full};
use mrtr_std::core::ErrorDetail;
use mrtr_std::ijson::Violation;
use serde_json::{Value, json};
use tower_layer::Layer;

pub use future::PrecheckFuture;
use unreadable::unreadable;

/// What the layer found in the raw text of a request it handed on, left in the request's
/// extensions for [`Mrtr`](crate::Mrtr). Only this crate can make one, so a verdict there
/// always comes from the layer, and a request over HTTP without one did not pass through it.
#[derive(Clone, Debug)]
pub(crate) enum Verdict {
    /// The text is I-JSON: its arguments can be bound.
    IJson,
    /// The text is not I-JSON (a duplicate member name, an over-precise number): its
    /// arguments cannot be bound, so it cannot pause or resume.
    NotIJson(Violation),
}

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
/// use mrtr_rmcp::layer::PrecheckLayer;
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
