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
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body::Body;
use http_body_util::{BodyExt, Either, Full, Limited};
use mrtr_std::core::ErrorDetail;
use mrtr_std::ijson::Violation;
use mrtr_std::jsonrpc::{Precheck, precheck_bytes};
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
/// //   Router::new().nest_service("/mcp", PrecheckLayer::new(ErrorDetail::Uniform).layer(service))
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
            inner: Arc::new(inner),
            layer: self.clone(),
        }
    }
}

/// The service [`PrecheckLayer`] wraps around rmcp's HTTP service. Cloning it is cheap (two
/// reference counts): each request clones the inner service once, and readies that clone
/// before calling it.
#[derive(Debug)]
pub struct PrecheckService<S> {
    inner: Arc<S>,
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

impl<S, B, ResBody> Service<Request<B>> for PrecheckService<S>
where
    S: Service<Request<Full<Bytes>>, Response = Response<ResBody>> + Clone + Send + Sync + 'static,
    S::Future: Send,
    S::Error: Send,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    ResBody: Send + 'static,
{
    type Response = Response<ResponseBody<ResBody>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    /// Always ready: each call readies its own clone of the inner service.
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let inner = self.inner.clone();
        let config = self.layer.config.clone();
        Box::pin(async move {
            let (mut parts, body) = request.into_parts();
            let bytes = match Limited::new(body, config.max_body).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(_) => {
                    return Ok(respond(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        json!({"error": "request body too large or unreadable"}),
                    ));
                }
            };
            if parts.method == Method::POST {
                let checked = precheck_bytes(&bytes, config.detail);
                match checked.outcome {
                    Precheck::Pass => {}
                    Precheck::Unbindable(v) => {
                        parts.extensions.insert::<Violation>(v);
                    }
                    Precheck::Reject(error) => return Ok(error_response(&bytes, error.to_value())),
                }
                if let Some(hook) = checked.method.as_deref().and_then(|m| config.hook(m)) {
                    // A message the hook must admit but a parser cannot read (nested deeper
                    // than serde_json follows) is refused here, never handed on unadmitted.
                    let Ok(message) = serde_json::from_slice::<Value>(&bytes) else {
                        let error = json!({"code": -32700, "message": "Parse error"});
                        return Ok(error_response(&bytes, error));
                    };
                    match hook(Arc::new(message), &parts).await {
                        Ok(extensions) => parts.extensions.extend(extensions),
                        Err(error) => return Ok(error_response(&bytes, error)),
                    }
                }
            }
            let mut service = S::clone(&inner);
            std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
            let response = service
                .call(Request::from_parts(parts, Full::new(bytes)))
                .await?;
            Ok(response.map(Either::Left))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

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
            let mut response = Response::new(Full::new(Bytes::new()));
            *response.status_mut() = StatusCode::NO_CONTENT;
            std::future::ready(Ok(response))
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
}
