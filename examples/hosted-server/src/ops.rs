//! The operations listener: `/metrics`, `/readyz` with its causes, and `/healthz`, on an
//! address of their own (`--ops-listen`, loopback by default).
//!
//! Why not on the public listener: the metrics count every resume by its precise outcome
//! (`tampered`, `replayed`, `arguments_mismatch`, ...) and name key ids, seals left per key and
//! the Redis prefix. A peer who could read them would learn exactly what the uniform `-32602`
//! on the wire exists to hide. So the public listener answers only liveness (`/healthz`) and
//! the bare readiness status (`/readyz`: `{"ready": true|false}`, no cause), which load
//! balancers need; everything else is here. Bound beyond loopback, every route but `/healthz`
//! requires the admin bearer token, checked in constant time before anything else.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use mrtr_std::metrics::Prometheus;
use serde_json::json;

use crate::admin;
use crate::server::App;

/// The operations router. With `token`, `/metrics` and `/readyz` require it as a bearer token.
pub fn router(app: Arc<App>, token: Option<Arc<str>>) -> Router {
    let ready_app = app.clone();
    let guarded = Router::new()
        .route(
            "/readyz",
            get(move || {
                let app = ready_app.clone();
                async move { crate::http::readyz(app.mrtr.rotating()).await }
            }),
        )
        .route(
            "/metrics",
            get(move || {
                let body = app.metrics.render();
                async move { ([(header::CONTENT_TYPE, Prometheus::CONTENT_TYPE)], body) }
            }),
        );
    let guarded = match token {
        Some(token) => guarded.layer(middleware::from_fn_with_state(token, require_token)),
        None => guarded,
    };
    guarded.route("/healthz", get(|| async { "ok" }))
}

/// Refuses a request without the admin bearer token, before its route runs (and before
/// its body is read).
pub async fn require_token(
    State(token): State<Arc<str>>,
    request: Request,
    next: Next,
) -> Response {
    if admin::bearer_matches(request.headers(), &token) {
        next.run(request).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "unauthorized"})),
        )
            .into_response()
    }
}
