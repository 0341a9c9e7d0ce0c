//! The request path of [`PrecheckService`]: the body read into a buffer, the checked request
//! handed on, held for an admission hook or answered, and [`PrecheckFuture`], the state
//! machine that does it per request.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{Either, Full};
use mrtr_std::jsonrpc::{Precheck, precheck_bytes};
use serde_json::{Value, json};
use tower_service::Service;

use super::{
    Admission, Config, PrecheckService, ResponseBody, Verdict, error_response, respond, unreadable,
};

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
                Precheck::Pass => {
                    parts.extensions.insert(Verdict::IJson);
                }
                Precheck::Unbindable(v) => {
                    parts.extensions.insert(Verdict::NotIJson(v));
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
