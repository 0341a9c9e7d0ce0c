//! The example policy's admin endpoints: revoke or restore a subject's subscriptions (both
//! eras), read the authorizer's call counts, and (test hook, `--test-hooks` only) script
//! authorizer faults.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use serde::de::DeserializeOwned;
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
    mrtr_rmcp::bearer_matches(headers, &admin.token)
}

/// The answer to a request without the admin token.
fn unauthorized() -> (StatusCode, Json<Value>) {
    (
        StatusCode::UNAUTHORIZED,
        Json(json!({"error": "unauthorized"})),
    )
}

/// Reads the body as `T`, once the caller is authorized: nobody without the token learns
/// anything from the parser.
fn body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, (StatusCode, Json<Value>)> {
    serde_json::from_slice(bytes).map_err(|e| {
        (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": format!("invalid body: {e}")})),
        )
    })
}

/// `POST /admin/revoke`: fences the subject's subscriptions now, ends them once their
/// checks deny them, and denies new ones. Only that subject's subscriptions are re-checked
/// (`reconciling` says how many).
pub async fn revoke(
    State(admin): State<Admin>,
    headers: HeaderMap,
    bytes: Bytes,
) -> (StatusCode, Json<Value>) {
    if !authorized(&admin, &headers) {
        return unauthorized();
    }
    let body: Subject = match body(&bytes) {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let reconciling = admin.app.subs.revoke(&body.subject);
    (
        StatusCode::OK,
        Json(json!({"revoked": body.subject, "reconciling": reconciling})),
    )
}

/// `GET /admin/subscriptions`: authorizer calls by subject and kind of check, and how many
/// 2025-era sessions hold a grant.
pub async fn subscriptions(
    State(admin): State<Admin>,
    headers: HeaderMap,
) -> (StatusCode, Json<Value>) {
    if !authorized(&admin, &headers) {
        return unauthorized();
    }
    let subs = &admin.app.subs;
    let counters = subs.registry().with_registry(|r| r.counters());
    (
        StatusCode::OK,
        Json(json!({
            "checks": subs.checks(),
            "sessions_with_grants": subs.grants().sessions_with_grants(),
            "sessions_retired": counters.sessions_retired,
            "active": counters.active,
            "timed_out": counters.timed_out_queued + counters.timed_out_running,
            "errors": counters.errors,
            "ended": {
                "denied": counters.ended_denied,
                "expired": counters.ended_expired,
                "retries_exhausted": counters.ended_retries_exhausted,
                "closed": counters.closed,
            },
        })),
    )
}

/// `{"subject": "carol", "script": ["timeout", "error", "allow"]}`.
#[cfg(feature = "testing")]
#[derive(Deserialize)]
pub struct Script {
    subject: String,
    script: Vec<crate::faults::Fault>,
}

/// TEST HOOK (`--test-hooks` only): `POST /admin/test/faults` scripts the subject's next
/// authorizer checks. `GET`-free: the answer says how many steps are queued.
#[cfg(feature = "testing")]
pub async fn faults(
    State(admin): State<Admin>,
    headers: HeaderMap,
    bytes: Bytes,
) -> (StatusCode, Json<Value>) {
    if !authorized(&admin, &headers) {
        return unauthorized();
    }
    let body: Script = match body(&bytes) {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let Some(faults) = admin.app.subs.faults() else {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"error": "no test hooks"})),
        );
    };
    faults.set(&body.subject, body.script);
    tracing::warn!(
        subject = body.subject,
        "test hook: authorizer faults scripted"
    );
    (
        StatusCode::OK,
        Json(json!({"subject": body.subject, "queued": faults.left(&body.subject)})),
    )
}

/// `POST /admin/restore`: lifts a revocation.
pub async fn restore(
    State(admin): State<Admin>,
    headers: HeaderMap,
    bytes: Bytes,
) -> (StatusCode, Json<Value>) {
    if !authorized(&admin, &headers) {
        return unauthorized();
    }
    let body: Subject = match body(&bytes) {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    admin.app.subs.restore(&body.subject);
    (StatusCode::OK, Json(json!({"restored": body.subject})))
}
