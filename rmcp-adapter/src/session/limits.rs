//! Caps on open 2025-era sessions: per caller and in total.
//!
//! rmcp keeps every session it opens (its session table, and the owner map beside it) until
//! the session is closed or idles out, and sets no cap of its own: without one, a caller can
//! open sessions until memory runs out. [`SessionLimits`] caps them. The cap is checked when a
//! session opens, under the owner map's lock (so concurrent `initialize` requests cannot
//! overshoot it): a session beyond it is closed at once and its `initialize` answered with
//! HTTP 429 (the caller's own cap) or 503 (the server's), carrying the JSON-RPC error
//! [`QUOTA_EXCEEDED_CODE`] with a message naming the cap and `data`
//! `{"limit": "sessions_per_caller" | "sessions_total", "max": N}`.
//!
//! Requests of the 2026-07-28 revision open no session and are never refused by these caps.

use std::fmt;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::{Either, Full};
use mrtr_std::quota::QUOTA_EXCEEDED_CODE;
use serde_json::json;

use crate::layer::ResponseBody;

/// The most sessions open at once: per caller (an authenticated principal; an anonymous
/// caller by its source address, IPv6 by /64, as quotas count callers; anonymous callers
/// without a known address together count as one) and in total. `None`: no cap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionLimits {
    /// Most sessions one caller holds open at once.
    pub per_caller: Option<usize>,
    /// Most sessions open at once in all.
    pub total: Option<usize>,
}

impl SessionLimits {
    /// No cap at all.
    pub const fn unlimited() -> Self {
        Self {
            per_caller: None,
            total: None,
        }
    }

    /// Whether one more session may open, given the caller's open sessions and all.
    pub(crate) fn admit(&self, callers_own: usize, total: usize) -> Result<(), SessionCapExceeded> {
        if let Some(max) = self.total
            && total >= max
        {
            return Err(SessionCapExceeded::Total(max));
        }
        if let Some(max) = self.per_caller
            && callers_own >= max
        {
            return Err(SessionCapExceeded::PerCaller(max));
        }
        Ok(())
    }
}

/// A session refused by a cap of [`SessionLimits`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionCapExceeded {
    /// The caller already holds this many sessions.
    PerCaller(usize),
    /// The server already holds this many sessions.
    Total(usize),
}

impl SessionCapExceeded {
    /// The cap's name on the wire: `sessions_per_caller` or `sessions_total`.
    pub fn limit_name(&self) -> &'static str {
        match self {
            Self::PerCaller(_) => "sessions_per_caller",
            Self::Total(_) => "sessions_total",
        }
    }

    /// The HTTP status of the refusal: 429 for the caller's own cap, 503 for the server's.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::PerCaller(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Total(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn max(&self) -> usize {
        match *self {
            Self::PerCaller(max) | Self::Total(max) => max,
        }
    }

    /// The refusal: the status, and a JSON-RPC error (id `null`: the `initialize` it answers
    /// was not read here) naming the cap.
    pub(crate) fn response<B>(&self) -> Response<ResponseBody<B>> {
        let body = json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {
                "code": QUOTA_EXCEEDED_CODE,
                "message": self.to_string(),
                "data": {"limit": self.limit_name(), "max": self.max()},
            },
        });
        let body = Full::new(Bytes::from(body.to_string()));
        let mut response = Response::new(Either::Right(body));
        *response.status_mut() = self.status();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        response
    }
}

impl fmt::Display for SessionCapExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PerCaller(max) => write!(
                f,
                "quota exceeded: open sessions per caller, {max} (close one with DELETE first)"
            ),
            Self::Total(max) => write!(f, "quota exceeded: open sessions in total, {max}"),
        }
    }
}

impl std::error::Error for SessionCapExceeded {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_cap_comes_first_then_the_callers() {
        let limits = SessionLimits {
            per_caller: Some(2),
            total: Some(3),
        };
        assert_eq!(limits.admit(0, 0), Ok(()));
        assert_eq!(limits.admit(1, 2), Ok(()));
        assert_eq!(limits.admit(2, 2), Err(SessionCapExceeded::PerCaller(2)));
        assert_eq!(limits.admit(0, 3), Err(SessionCapExceeded::Total(3)));
        assert_eq!(SessionLimits::unlimited().admit(1 << 40, 1 << 40), Ok(()));
    }

    #[test]
    fn the_refusal_names_the_cap() {
        let r = SessionCapExceeded::PerCaller(2).response::<Full<Bytes>>();
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        let Either::Right(body) = r.into_body() else {
            panic!("the layer's own body");
        };
        let text = futures_body(body);
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(v["error"]["code"], QUOTA_EXCEEDED_CODE);
        assert_eq!(
            v["error"]["data"],
            json!({"limit": "sessions_per_caller", "max": 2})
        );
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("open sessions per caller, 2"),
            "{v}"
        );
        assert_eq!(
            SessionCapExceeded::Total(9)
                .response::<Full<Bytes>>()
                .status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
    }

    /// The bytes of a `Full` body (one frame, ready at once).
    fn futures_body(body: Full<Bytes>) -> Bytes {
        use http_body::Body;
        let mut body = std::pin::pin!(body);
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        match body.as_mut().poll_frame(&mut cx) {
            std::task::Poll::Ready(Some(Ok(frame))) => frame.into_data().unwrap_or_default(),
            _ => Bytes::new(),
        }
    }
}
