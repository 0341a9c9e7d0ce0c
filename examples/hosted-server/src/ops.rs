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
use mrtr_std::engine::Engine;
use mrtr_std::metrics::Prometheus;
use serde_json::json;

use crate::server::App;

/// The operations router. With `token`, `/metrics` and `/readyz` require it as a bearer token.
pub fn router(app: Arc<App>, token: Option<Arc<str>>) -> Router {
    let ready_app = app.clone();
    let guarded = Router::new()
        .route(
            "/readyz",
            get(move || {
                let app = ready_app.clone();
                async move { readyz(app.mrtr.reloadable()).await }
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
    if mrtr_rmcp::bearer_matches(request.headers(), &token) {
        next.run(request).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "unauthorized"})),
        )
            .into_response()
    }
}

/// Readiness on the operations listener: 200 `{"ready":true}`, or 503 with the causes while mrtr cannot serve: the
/// replay store cannot record resumes (Redis unreachable, an evicting maxmemory-policy, out
/// of memory, replicas not acknowledging) or the sealing key's budget is exhausted. Probes the
/// store (bounded by its timeouts; at most one Redis round trip a second however often it is
/// called). Never shows the Redis URL.
pub async fn readyz(engine: &Engine) -> (StatusCode, Json<serde_json::Value>) {
    let health = engine.probe().await;
    let status =
        StatusCode::from_u16(health.status_code()).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
    (status, Json(health.to_json()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mrtr_replay::AnyReplayCache;
    use mrtr_replay::redis::RedisReplayCache;
    use mrtr_std::engine::{Backend, EngineConfig};
    use mrtr_std::keys::KeyConfig;
    use serde_json::json;

    use super::*;

    fn engine(store: AnyReplayCache) -> Engine {
        let keys = KeyConfig::ephemeral().unwrap();
        Engine::new(
            Backend::Aes256Gcm,
            keys,
            EngineConfig::for_audience("t"),
            store,
        )
        .unwrap()
    }

    #[tokio::test]
    async fn readyz_is_200_for_stores_without_io() {
        for store in [AnyReplayCache::Off, AnyReplayCache::memory(10)] {
            let (status, Json(body)) = readyz(&engine(store)).await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(body, json!({"ready": true}));
        }
    }

    #[tokio::test]
    async fn readyz_is_503_with_the_cause_and_never_the_url() {
        // Nothing listens on a port that was just free.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cache = RedisReplayCache::builder(format!("redis://:s3cret@127.0.0.1:{port}/"))
            .connect_timeout(Duration::from_secs(2))
            .build()
            .unwrap();
        let (status, Json(body)) = readyz(&engine(AnyReplayCache::Redis(cache))).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body["ready"], false);
        let cause = body["cause"].as_str().unwrap();
        assert!(cause.contains("unreachable"), "{cause}");
        let text = body.to_string();
        assert!(
            !text.contains("s3cret") && !text.contains("127.0.0.1"),
            "{text}"
        );
    }
}
