//! Tests of the layer's request path: bodies read in pieces, over the limit or broken, inner
//! services not ready at once, admission hooks, and the one shared inner service.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use tower_service::Service;

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

/// The layer's verdict on a request it handed on, as the inner service saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    IJson,
    NotIJson,
    NoVerdict,
}

/// An inner service answering 204, keeping each body it got and the verdict it came with.
#[derive(Clone, Default)]
struct Keeper(Arc<Mutex<Vec<(Bytes, Seen)>>>);

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
            let marked = match request.extensions().get::<Verdict>() {
                Some(Verdict::IJson) => Seen::IJson,
                Some(Verdict::NotIJson(_)) => Seen::NotIJson,
                None => Seen::NoVerdict,
            };
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
    assert_eq!(kept, vec![(Bytes::from(message), Seen::NotIJson)]);
    // Refused whole: a non-string requestState, sent in two pieces.
    let refused =
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","requestState":3}}"#;
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
    assert_eq!(kept, vec![(Bytes::from("[1,2,3,4,5,6,77]"), Seen::IJson)]);
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
