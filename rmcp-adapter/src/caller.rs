//! Who is calling: the principal a token is bound to, read from the HTTP request rmcp
//! received the call in; and whom a quota charges.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

pub(crate) use mrtr_std::caller::Caller;
use mrtr_std::quota::{Action, Exceeded, QUOTA_EXCEEDED_CODE, QuotaKey, Quotas};
use rmcp::RoleServer;
use rmcp::model::{ErrorCode, ErrorData};
use rmcp::service::RequestContext;

/// Finds the caller of a request. The default, [`FromExtensions`], reads the [`Caller`] a
/// bearer-auth layer inserted into the HTTP request's extensions; implement this trait (or
/// pass a closure) to read your own auth layer's type instead.
pub trait PrincipalSource: Send + Sync + 'static {
    /// The caller of the request `http` (the HTTP request rmcp received it in; `None` on
    /// stdio and other transports without HTTP).
    fn caller(&self, http: Option<&http::request::Parts>) -> Caller;
}

impl<F> PrincipalSource for F
where
    F: Fn(Option<&http::request::Parts>) -> Caller + Send + Sync + 'static,
{
    fn caller(&self, http: Option<&http::request::Parts>) -> Caller {
        self(http)
    }
}

/// The default [`PrincipalSource`]: the [`Caller`] in the HTTP request's extensions, else
/// anonymous (stdio, or no auth layer).
#[derive(Clone, Copy, Debug, Default)]
pub struct FromExtensions;

impl PrincipalSource for FromExtensions {
    fn caller(&self, http: Option<&http::request::Parts>) -> Caller {
        http.and_then(|p| p.extensions.get::<Caller>())
            .cloned()
            .unwrap_or_default()
    }
}

/// The HTTP request rmcp received a call in (rmcp's Streamable HTTP server puts its parts in
/// the request context's extensions; stdio has none).
pub fn http_parts(ctx: &RequestContext<RoleServer>) -> Option<&http::request::Parts> {
    ctx.extensions.get::<http::request::Parts>()
}

/// Names the quota a request is charged to: the caller and the HTTP request it came in.
pub(crate) type QuotaKeyFn =
    dyn Fn(&Caller, Option<&http::request::Parts>) -> QuotaKey + Send + Sync + 'static;

/// The default quota key: the principal of an authenticated caller; for an anonymous one, the
/// source address if the HTTP request's extensions carry one (an [`IpAddr`] or a
/// [`SocketAddr`] put there by the server), else the one quota all anonymous callers share.
pub(crate) fn default_quota_key(caller: &Caller, http: Option<&http::request::Parts>) -> QuotaKey {
    match caller {
        Caller::User { .. } => QuotaKey::Caller(caller.clone()),
        Caller::Anonymous => {
            let ext = http.map(|p| &p.extensions);
            let addr = ext
                .and_then(|e| e.get::<IpAddr>().copied())
                .or_else(|| ext.and_then(|e| e.get::<SocketAddr>()).map(SocketAddr::ip));
            addr.map_or(QuotaKey::Caller(Caller::Anonymous), QuotaKey::source)
        }
    }
}

/// The quotas of a [`Mrtr`](crate::Mrtr) and how it names whom to charge.
pub(crate) struct QuotaGate {
    pub(crate) quotas: Quotas,
    pub(crate) key: Box<QuotaKeyFn>,
}

impl fmt::Debug for QuotaGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.quotas, f)
    }
}

/// One request's account: the gate and whom it charges.
pub(crate) struct Charge {
    gate: Arc<QuotaGate>,
    key: QuotaKey,
}

impl Charge {
    pub(crate) fn new(
        gate: Arc<QuotaGate>,
        caller: &Caller,
        http: Option<&http::request::Parts>,
    ) -> Self {
        let key = (gate.key)(caller, http);
        Self { gate, key }
    }

    /// Charges one resume (before the token is opened).
    pub(crate) fn resume(&self) -> Result<(), ErrorData> {
        self.charge(Action::Resume)
    }

    /// Charges one pause (before the token is sealed).
    pub(crate) fn pause(&self) -> Result<(), ErrorData> {
        self.charge(Action::Pause)
    }

    fn charge(&self, action: Action) -> Result<(), ErrorData> {
        self.gate.quotas.charge(&self.key, action).map_err(|e| {
            // Debug: a caller over its quota sends requests as fast as it can, and each would
            // be a log line.
            tracing::debug!(target: "mrtr", caller = ?self.key, limit = e.limit_name(),
                "refused by a quota");
            quota_error(&e)
        })
    }
}

/// The JSON-RPC error of a refusal by a quota: [`QUOTA_EXCEEDED_CODE`], a message naming the
/// limit (`quota exceeded: resumes per caller, 2/s (burst 3)`) and `data` with the limit's
/// name and `retryAfterMs`.
pub(crate) fn quota_error(e: &Exceeded) -> ErrorData {
    ErrorData::new(
        ErrorCode(QUOTA_EXCEEDED_CODE),
        e.to_string(),
        Some(e.data()),
    )
}
