//! The caller of each HTTP request, from a function of your own: [`CallerLayer`] runs it on the
//! request head, puts the [`Caller`] it returns into the request's extensions (where
//! [`FromExtensions`](crate::FromExtensions), the session owner layer and the quotas read
//! it), or answers `401` itself. [`bearer_token`] and [`bearer_matches`] read the
//! `Authorization` header.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode, header};
use http_body_util::{Either, Full};
use subtle::ConstantTimeEq;
use tower_layer::Layer;
use tower_service::Service;

use crate::caller::Caller;
use crate::layer::ResponseBody;

/// A tower layer that authenticates each request with a function of its head:
/// `Some(caller)` goes on (with the caller in the request's extensions), `None` gets `401`
/// with `WWW-Authenticate: Bearer` and is not passed on. Return `Some(Caller::Anonymous)` to
/// let unauthenticated requests through.
///
/// ```
/// use mrtr_rmcp::mrtr_std::caller::Caller;
/// use mrtr_rmcp::{CallerLayer, bearer_token};
///
/// // A stand-in for a real token validator.
/// let layer = CallerLayer::new(|head: &http::request::Parts| match bearer_token(&head.headers) {
///     Some("alice-token") => Some(Caller::user("https://idp.example", "alice")),
///     Some(_) => None,                 // an unknown token: 401
///     None => Some(Caller::Anonymous), // no credentials: anonymous
/// });
/// # let _ = layer;
/// ```
pub struct CallerLayer<F> {
    authenticate: Arc<F>,
}

impl<F> CallerLayer<F>
where
    F: Fn(&http::request::Parts) -> Option<Caller> + Send + Sync + 'static,
{
    /// Authenticates with `authenticate`.
    pub fn new(authenticate: F) -> Self {
        Self {
            authenticate: Arc::new(authenticate),
        }
    }
}

impl<F> Clone for CallerLayer<F> {
    fn clone(&self) -> Self {
        Self {
            authenticate: self.authenticate.clone(),
        }
    }
}

impl<F> fmt::Debug for CallerLayer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallerLayer").finish_non_exhaustive()
    }
}

impl<S, F> Layer<S> for CallerLayer<F> {
    type Service = CallerService<S, F>;

    fn layer(&self, inner: S) -> Self::Service {
        CallerService {
            inner,
            authenticate: self.authenticate.clone(),
        }
    }
}

/// The service [`CallerLayer`] wraps. Cloning it clones the inner service; each call hands an
/// authenticated request to the readied inner service at once.
pub struct CallerService<S, F> {
    inner: S,
    authenticate: Arc<F>,
}

impl<S: Clone, F> Clone for CallerService<S, F> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            authenticate: self.authenticate.clone(),
        }
    }
}

impl<S, F> fmt::Debug for CallerService<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallerService").finish_non_exhaustive()
    }
}

/// The `401` a request without an acceptable credential gets.
fn unauthorized<B>() -> Response<ResponseBody<B>> {
    let mut response = Response::new(Either::Right(Full::new(Bytes::from_static(
        b"unauthorized",
    ))));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer"),
    );
    response
}

impl<S, F, ReqBody, ResBody> Service<Request<ReqBody>> for CallerService<S, F>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    F: Fn(&http::request::Parts) -> Option<Caller>,
{
    type Response = Response<ResponseBody<ResBody>>;
    type Error = S::Error;
    type Future = CallerFuture<S::Future, ResBody>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let (mut parts, body) = request.into_parts();
        match (self.authenticate)(&parts) {
            Some(caller) => {
                parts.extensions.insert(caller);
                CallerFuture {
                    state: State::Inner {
                        future: self.inner.call(Request::from_parts(parts, body)),
                    },
                }
            }
            None => {
                tracing::debug!(target: "mrtr", "request refused: not authenticated");
                CallerFuture {
                    state: State::Refused {
                        response: Some(unauthorized()),
                    },
                }
            }
        }
    }
}

pin_project_lite::pin_project! {
    /// The response future of [`CallerService`]: the inner service's answer, or the `401`.
    pub struct CallerFuture<F, B> {
        #[pin]
        state: State<F, B>,
    }
}

pin_project_lite::pin_project! {
    #[project = StateProj]
    enum State<F, B> {
        Inner { #[pin] future: F },
        Refused { response: Option<Response<ResponseBody<B>>> },
    }
}

impl<F, B, E> Future for CallerFuture<F, B>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<ResponseBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Inner { future } => future
                .poll(cx)
                .map(|answer| answer.map(|response| response.map(Either::Left))),
            StateProj::Refused { response } => match response.take() {
                Some(response) => Poll::Ready(Ok(response)),
                // Polled again after it completed: a contract violation of the caller's; an
                // answer that cannot be confused with a real one.
                None => Poll::Ready(Ok(internal_error())),
            },
        }
    }
}

fn internal_error<B>() -> Response<ResponseBody<B>> {
    let mut response = Response::new(Either::Right(Full::new(Bytes::new())));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response
}

/// The token of an `Authorization: Bearer <token>` header (the scheme matched without regard
/// to case, as RFC 9110 asks), or `None`.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Whether the request's bearer token is `expected`, compared in constant time (through
/// `subtle`): how long the comparison takes does not depend on how much of the token matched.
/// An empty `expected` matches nothing.
///
/// ```
/// let mut headers = http::HeaderMap::new();
/// headers.insert("authorization", "Bearer s3cret".parse().unwrap());
/// assert!(mrtr_rmcp::bearer_matches(&headers, "s3cret"));
/// assert!(!mrtr_rmcp::bearer_matches(&headers, "s3cre"));
/// ```
pub fn bearer_matches(headers: &HeaderMap, expected: &str) -> bool {
    match bearer_token(headers) {
        Some(presented) if !expected.is_empty() => {
            bool::from(presented.as_bytes().ct_eq(expected.as_bytes()))
        }
        _ => false,
    }
}

/// A [`CallerLayer`] that lets every request through as [`Caller::Anonymous`]: for servers
/// without authentication (the token is then bound to the anonymous caller).
pub fn anonymous() -> CallerLayer<fn(&http::request::Parts) -> Option<Caller>> {
    CallerLayer::new(|_| Some(Caller::Anonymous))
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, value.parse().unwrap());
        h
    }

    #[test]
    fn bearer_tokens_are_read_with_any_case_of_the_scheme() {
        assert_eq!(bearer_token(&headers("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&headers("bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&headers("Basic YWxpY2U=")), None);
        assert_eq!(bearer_token(&headers("Bearer ")), None);
        assert_eq!(bearer_token(&HeaderMap::new()), None);
        assert!(bearer_matches(&headers("Bearer abc"), "abc"));
        assert!(!bearer_matches(&headers("Bearer abc"), "abd"));
        assert!(!bearer_matches(&headers("Bearer abc"), "abcd"));
        assert!(!bearer_matches(&headers("Bearer abc"), ""));
        assert!(!bearer_matches(&HeaderMap::new(), "abc"));
    }

    /// An inner service that answers with the caller it found in the extensions.
    #[derive(Clone)]
    struct Echo;

    impl Service<Request<()>> for Echo {
        type Response = Response<String>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Response<String>, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request<()>) -> Self::Future {
            let caller = request.extensions().get::<Caller>().cloned();
            std::future::ready(Ok(Response::new(format!("{caller:?}"))))
        }
    }

    fn run(
        service: &mut impl Service<
            Request<()>,
            Response = Response<ResponseBody<String>>,
            Error = Infallible,
            Future: Unpin,
        >,
        authorization: Option<&str>,
    ) -> Response<ResponseBody<String>> {
        let mut request = Request::new(());
        if let Some(value) = authorization {
            request
                .headers_mut()
                .insert(header::AUTHORIZATION, value.parse().unwrap());
        }
        let mut future = service.call(request);
        let waker = std::task::Waker::noop();
        match Pin::new(&mut future).poll(&mut Context::from_waker(waker)) {
            Poll::Ready(Ok(response)) => response,
            Poll::Pending => panic!("a ready inner service answered later"),
        }
    }

    #[test]
    fn the_layer_inserts_the_caller_or_answers_401_without_calling_on() {
        let layer =
            CallerLayer::new(
                |head: &http::request::Parts| match bearer_token(&head.headers) {
                    Some("alice") => Some(Caller::user("https://idp.test", "alice")),
                    Some(_) => None,
                    None => Some(Caller::Anonymous),
                },
            );
        let mut service = layer.layer(Echo);
        match run(&mut service, Some("Bearer alice")).into_body() {
            Either::Left(text) => assert!(text.contains("alice"), "{text}"),
            Either::Right(_) => panic!("alice was refused"),
        }
        match run(&mut service, None).into_body() {
            Either::Left(text) => assert_eq!(text, format!("{:?}", Some(Caller::Anonymous))),
            Either::Right(_) => panic!("an anonymous request was refused"),
        }
        let refused = run(&mut service, Some("Bearer mallory"));
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(refused.headers()[header::WWW_AUTHENTICATE], "Bearer");
        assert!(matches!(refused.into_body(), Either::Right(_)));
    }
}
