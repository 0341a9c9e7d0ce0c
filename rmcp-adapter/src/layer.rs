//! [`PrecheckLayer`]: a tower layer that checks each JSON-RPC message's raw body before rmcp
//! parses it.
//!
//! Two things cannot wait until rmcp has built its typed parameters:
//!
//! * **A `requestState` that is not a string.** rmcp types it as a string, so such a request
//!   fails to parse and rmcp answers `-32601`. mrtr's contract is the uniform `-32602`
//!   rejection for every unusable `requestState`; the layer answers it.
//! * **Requests that are not I-JSON** (RFC 7493): a duplicate member name or a number a
//!   double does not carry exactly is gone once a parser has built a map, and the argument
//!   digest could no longer tell such requests apart. A resume is refused here (uniformly); a
//!   fresh call goes on marked (the [`Violation`] is put in the HTTP request's extensions, where
//!   [`Mrtr`](crate::Mrtr) finds it) and cannot pause.
//!
//! The layer also puts the parsed message in the request's extensions ([`JsonRpcMessage`]) and
//! runs an optional admission hook ([`PrecheckLayer::admit`]) with it, so an application that
//! must answer some requests before rmcp does (for example a `subscriptions/listen`
//! authorization, which must run before rmcp acknowledges) reads the body only once.
//!
//! **stdio** has no HTTP request, so no layer: there rmcp answers a non-string `requestState`
//! itself (`-32601`, it cannot parse the request), and duplicate member names and
//! over-precise decimals cannot be detected (integers a double does not carry still are,
//! from the parsed value).

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body::Body;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited};
use mrtr_std::core::ErrorDetail;
use mrtr_std::ijson::Violation;
use mrtr_std::jsonrpc::{self, Precheck};
use serde_json::{Value, json};
use tower_layer::Layer;
use tower_service::Service;

/// Error type of a boxed body.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body of every response the layer produces.
pub type ResponseBody = UnsyncBoxBody<Bytes, BoxError>;

/// Largest request body the layer buffers by default (4 MiB).
pub const DEFAULT_MAX_BODY: usize = 4 * 1024 * 1024;

/// The parsed JSON-RPC message of a POST, put in the HTTP request's extensions by the layer.
#[derive(Clone, Debug)]
pub struct JsonRpcMessage(pub Arc<Value>);

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
/// //   Router::new().nest_service("/mcp", PrecheckLayer::new(ErrorDetail::Uniform).layer(service))
/// let layer = PrecheckLayer::new(ErrorDetail::Uniform).max_body(1 << 20);
/// # let _ = layer;
/// ```
#[derive(Clone)]
pub struct PrecheckLayer {
    detail: ErrorDetail,
    max_body: usize,
    hook: Option<Hook>,
}

impl PrecheckLayer {
    /// A layer answering rejections in `detail` mode (use the engine's:
    /// `mrtr.engine().limits().error_detail`).
    pub fn new(detail: ErrorDetail) -> Self {
        Self {
            detail,
            max_body: DEFAULT_MAX_BODY,
            hook: None,
        }
    }

    /// The largest body buffered (default [`DEFAULT_MAX_BODY`]); a larger one gets HTTP 413.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// Runs `hook` on every JSON-RPC message that passed mrtr's checks, with the parsed
    /// message and the request's parts (to read, for example, the caller an auth layer put in
    /// its extensions, before the future starts). The extensions it returns are added to the
    /// request; an `Err(error)` answers the request with that JSON-RPC error.
    pub fn admit<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(Arc<Value>, &http::request::Parts) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Admission> + Send + 'static,
    {
        self.hook = Some(Arc::new(move |message, parts| {
            Box::pin(hook(message, parts))
        }));
        self
    }
}

impl fmt::Debug for PrecheckLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrecheckLayer")
            .field("detail", &self.detail)
            .field("max_body", &self.max_body)
            .field("hook", &self.hook.is_some())
            .finish()
    }
}

impl<S> Layer<S> for PrecheckLayer {
    type Service = PrecheckService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        PrecheckService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`PrecheckLayer`] wraps around rmcp's HTTP service.
#[derive(Clone, Debug)]
pub struct PrecheckService<S> {
    inner: S,
    layer: PrecheckLayer,
}

/// A response answering the request here, with `status` and a JSON body.
fn respond(status: StatusCode, body: Value) -> Response<ResponseBody> {
    let body = Full::new(Bytes::from(body.to_string()))
        .map_err(|never: Infallible| match never {})
        .boxed_unsync();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// A JSON-RPC error response for the message's id.
fn error_response(message: &Value, error: Value) -> Response<ResponseBody> {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    respond(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": id, "error": error}),
    )
}

impl<S, B, ResBody> Service<Request<B>> for PrecheckService<S>
where
    S: Service<Request<Full<Bytes>>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Send,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    ResBody: Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The clone is the ready one's twin: keep the polled service for this call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let layer = self.layer.clone();
        Box::pin(async move {
            let (mut parts, body) = request.into_parts();
            let bytes = match Limited::new(body, layer.max_body).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(_) => {
                    return Ok(respond(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        json!({"error": "request body too large or unreadable"}),
                    ));
                }
            };
            if parts.method == Method::POST
                && let Ok(message) = serde_json::from_slice::<Value>(&bytes)
            {
                match jsonrpc::precheck_raw(&message, &bytes, layer.detail) {
                    Precheck::Pass => {}
                    Precheck::Unbindable(v) => {
                        parts.extensions.insert::<Violation>(v);
                    }
                    Precheck::Reject(error) => {
                        return Ok(error_response(&message, error.to_value()));
                    }
                }
                let message = Arc::new(message);
                if let Some(hook) = &layer.hook {
                    match hook(message.clone(), &parts).await {
                        Ok(extensions) => parts.extensions.extend(extensions),
                        Err(error) => return Ok(error_response(&message, error)),
                    }
                }
                parts.extensions.insert(JsonRpcMessage(message));
            }
            let response = inner
                .call(Request::from_parts(parts, Full::new(bytes)))
                .await?;
            Ok(response.map(|b| b.map_err(Into::into).boxed_unsync()))
        })
    }
}
