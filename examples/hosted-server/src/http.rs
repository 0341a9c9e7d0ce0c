//! Streamable HTTP: rmcp's service at `/mcp` behind bearer authentication (2026-07-28 requests
//! stateless; `initialize` with 2025-11-25 or 2025-06-18 opens a session), the `/healthz`
//! (liveness) and bare `/readyz` (readiness status, no cause) probes, and the admin endpoints
//! when an admin token is configured. Metrics and readiness causes are on the operations
//! listener ([`crate::ops`]), never here.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use mrtr_rmcp::Stack;
use mrtr_rmcp::layer::PrecheckLayer;
use mrtr_rmcp::session::{SessionLimits, Sessions};
use mrtr_std::engine::Engine;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use tower::Layer;

use crate::admin::{self, Admin};
use crate::auth::{self, TokenMap};
use crate::limits::SourceLayer;
use crate::server::{App, Hosted};

/// Which `Host` and `Origin` headers `/mcp` accepts.
#[derive(Clone, Debug, Default)]
pub struct Exposure {
    /// Hosts besides rmcp's loopback defaults.
    pub hosts: Vec<String>,
    /// Browser origins (none: `Origin` is not checked).
    pub origins: Vec<String>,
}

impl Exposure {
    /// rmcp's transport configuration with these hosts and origins.
    fn apply(&self, config: StreamableHttpServerConfig) -> StreamableHttpServerConfig {
        let mut hosts = config.allowed_hosts.clone();
        hosts.extend(self.hosts.iter().cloned());
        let config = config.with_allowed_hosts(hosts);
        if self.origins.is_empty() {
            config
        } else {
            config.with_allowed_origins(self.origins.iter().cloned())
        }
    }
}

/// The public router: `/mcp`, `/healthz`, the bare `/readyz` and the admin endpoints.
pub fn router(
    app: Arc<App>,
    tokens: Arc<TokenMap>,
    admin_token: Option<String>,
    session_idle: Duration,
    session_limits: SessionLimits,
    exposure: &Exposure,
    shutdown: &CancellationToken,
) -> Router {
    let admin = admin_token.map(|token| Admin {
        app: app.clone(),
        token: token.into(),
    });
    let ready_app = app.clone();
    // mrtr's checks on the raw body, and the initial authorization of subscriptions/listen
    // (which must finish before rmcp acknowledges it).
    let precheck = PrecheckLayer::new(app.mrtr.engine().limits().error_detail).admit(
        mrtr_rmcp::listen::METHOD,
        mrtr_rmcp::listen::admitter(app.subs.registry().clone()),
    );
    // One endpoint for both eras: rmcp serves a request carrying 2026-07-28 `_meta`
    // statelessly (JSON responses) and opens a session for `initialize` (2025 revisions). The
    // session manager releases a session's resource grants when it closes, and closes a
    // session whose grant the registry retires (404 for its id from then on).
    let mut local = LocalSessionManager::default();
    local.session_config.keep_alive = Some(session_idle);
    let sessions = Sessions::new(local, app.subs.grants().clone());
    // Capped per caller and in total: rmcp sets no cap of its own.
    sessions.owners().set_limits(session_limits);
    // Each 2025 session belongs to the caller that opened it; anyone else naming its id gets
    // the unknown-session 404.
    let owners = sessions.owner_layer();
    let service: StreamableHttpService<Hosted, _> = StreamableHttpService::new(
        {
            let tools = Hosted::tools();
            move || Ok(Hosted::new(app.clone(), tools.clone()))
        },
        sessions,
        exposure
            .apply(StreamableHttpServerConfig::default())
            .with_legacy_session_mode(true)
            .with_json_response(true)
            .with_cancellation_token(shutdown.child_token()),
    );
    // Bearer authentication, session ownership, mrtr's checks, rmcp: Stack keeps that order,
    // as plain tower layers around the one service (no per-route boxing). `/mcp` is one
    // endpoint, so it is a route, not a nest (nesting rewrites every request's URI), and a
    // route of this router itself (axum boxes a merged service route a second time); the
    // cost of each is in BENCHMARKS.md. The source address goes in first: quotas and session
    // caps count an anonymous caller by it.
    let layers = Stack::new(precheck)
        .caller(auth::caller_layer(tokens))
        .owners(owners);
    let mcp = SourceLayer.layer(layers.layer(service));
    let mut router = Router::new()
        .route_service("/mcp", mcp)
        // Liveness: 200 while the process serves, whatever the replay store says.
        .route("/healthz", get(|| async { "ok" }))
        // Readiness for load balancers: the status alone. The causes (which name the store's
        // failure) are on the operations listener.
        .route(
            "/readyz",
            get(move || {
                let app = ready_app.clone();
                async move { ready_status(app.mrtr.reloadable()).await }
            }),
        );
    if let Some(admin) = admin {
        let routes = Router::new()
            .route("/admin/revoke", post(admin::revoke))
            .route("/admin/restore", post(admin::restore))
            .route("/admin/subscriptions", get(admin::subscriptions));
        // TEST HOOK: only with the `testing` feature and --test-hooks.
        #[cfg(feature = "testing")]
        let routes = match admin.app.subs.faults() {
            Some(_) => routes.route("/admin/test/faults", post(admin::faults)),
            None => routes,
        };
        // The token is checked before a body is read or parsed.
        let routes = routes.route_layer(axum::middleware::from_fn_with_state(
            admin.token.clone(),
            crate::ops::require_token,
        ));
        router = router.merge(routes.with_state(admin));
    }
    router
}

/// The public readiness probe: 200 `{"ready":true}` or 503 `{"ready":false}`, nothing more.
pub async fn ready_status(engine: &Engine) -> (StatusCode, Json<serde_json::Value>) {
    let health = engine.probe().await;
    let status =
        StatusCode::from_u16(health.status_code()).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
    (
        status,
        Json(serde_json::json!({"ready": health.is_ready()})),
    )
}
