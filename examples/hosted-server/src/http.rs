//! Streamable HTTP: rmcp's stateless service at `/mcp` behind bearer authentication, and a
//! `/healthz` probe, and the admin endpoints when an admin token is configured.

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::admin::{self, Admin};
use crate::auth::{self, TokenMap};
use crate::preflight;
use crate::server::{App, Hosted};

/// The router serving `/mcp` and `/healthz`.
pub fn router(
    app: Arc<App>,
    tokens: Arc<TokenMap>,
    admin_token: Option<String>,
    shutdown: &CancellationToken,
) -> Router {
    let admin = admin_token.map(|token| Admin {
        app: app.clone(),
        token: token.into(),
    });
    let preflight_app = app.clone();
    let service: StreamableHttpService<Hosted, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(Hosted::new(app.clone())),
        Default::default(),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_cancellation_token(shutdown.child_token()),
    );
    let mcp = Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(
            preflight_app,
            preflight::preflight,
        ))
        .layer(axum::middleware::from_fn_with_state(
            tokens,
            auth::authenticate,
        ));
    let mut router = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .merge(mcp);
    if let Some(admin) = admin {
        router = router.merge(
            Router::new()
                .route("/admin/revoke", post(admin::revoke))
                .route("/admin/restore", post(admin::restore))
                .with_state(admin),
        );
    }
    router
}
