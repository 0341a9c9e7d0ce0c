//! The example policy's admin endpoints: revoke or restore a subject's subscriptions.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::server::App;

/// Shared state of the admin routes.
#[derive(Clone)]
pub struct Admin {
    /// The server state.
    pub app: Arc<App>,
    /// The bearer token the admin must present.
    pub token: Arc<str>,
}

/// `{"subject": "alice"}`.
#[derive(Deserialize)]
pub struct Subject {
    subject: String,
}

fn authorized(admin: &Admin, headers: &HeaderMap) -> bool {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    // Constant-time enough for a demo token compare: equal lengths, then every byte.
    presented.is_some_and(|p| {
        p.len() == admin.token.len()
            && p.bytes()
                .zip(admin.token.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    })
}

/// `POST /admin/revoke`: fences the subject's subscriptions now, ends them once their
/// checks deny them, and denies new ones. Only that subject's subscriptions are re-checked
/// (`reconciling` says how many).
pub async fn revoke(
    State(admin): State<Admin>,
    headers: HeaderMap,
    Json(body): Json<Subject>,
) -> (StatusCode, Json<Value>) {
    if !authorized(&admin, &headers) {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "unauthorized"})),
        );
    }
    let reconciling = admin.app.subs.revoke(&body.subject);
    (
        StatusCode::OK,
        Json(json!({"revoked": body.subject, "reconciling": reconciling})),
    )
}

/// `POST /admin/restore`: lifts a revocation.
pub async fn restore(
    State(admin): State<Admin>,
    headers: HeaderMap,
    Json(body): Json<Subject>,
) -> (StatusCode, Json<Value>) {
    if !authorized(&admin, &headers) {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "unauthorized"})),
        );
    }
    admin.app.subs.restore(&body.subject);
    (StatusCode::OK, Json(json!({"restored": body.subject})))
}
