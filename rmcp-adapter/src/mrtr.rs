//! [`Mrtr`]: the engine and where callers come from, shared by every handler; and the
//! builders that turn rmcp's parameters into a verified [`Pending`] request.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mrtr_replay::{AnyReplayCache, AsyncReplayCache};
use mrtr_std::engine::{Engine, Generation};
use mrtr_std::jsonrpc::{Method, RequestState, ResumeRequest};
use mrtr_std::quota::{QuotaKey, Quotas};
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ErrorData, GetPromptRequestParams, InputResponses, JsonObject,
    ReadResourceRequestParams,
};
use rmcp::service::RequestContext;

use crate::call::{Bound, Origin, Pending, Request};
use crate::caller::{
    Caller, Charge, FromExtensions, PrincipalSource, QuotaGate, default_quota_key, http_parts,
};
use crate::error::ToErrorData;
use crate::layer::Verdict;

/// Whether the missing-layer error has been logged at `ERROR` yet (once per process; later
/// ones at `DEBUG`).
static UNCHECKED_LOGGED: AtomicBool = AtomicBool::new(false);

/// The answer to a pausable request that came over HTTP without the precheck layer's
/// verdict: the server is misconfigured (no [`PrecheckLayer`](crate::layer::PrecheckLayer) in front of
/// rmcp), and the request's arguments cannot be bound exactly. It is refused before its
/// `requestState` is looked at, so the answer says nothing about the token.
fn unchecked() -> ErrorData {
    const WHY: &str = "PrecheckLayer is not in front of this rmcp service (use mrtr_rmcp::Stack): \
                       requests over HTTP cannot be bound exactly, so none may pause or resume";
    if UNCHECKED_LOGGED.swap(true, Ordering::Relaxed) {
        tracing::debug!(target: "mrtr", "{WHY}");
    } else {
        tracing::error!(target: "mrtr", "{WHY}");
    }
    ErrorData::internal_error("Internal error: the server cannot check this request", None)
}

/// mrtr for an rmcp server: the engine that seals and checks `requestState` (a [`Engine`]
/// engine, whose keys can be reloaded while it serves), the [`PrincipalSource`] that names
/// the caller and, if set ([`Mrtr::with_quotas`]), the per-caller quotas on pauses and
/// resumes. Cheap to clone (two `Arc`s); build it once at startup and keep it in the server
/// struct ([`HasMrtr`]).
pub struct Mrtr<R = AnyReplayCache> {
    shared: Arc<Inner<R>>,
    quotas: Option<Arc<QuotaGate>>,
}

struct Inner<R> {
    engine: Engine<R>,
    principals: Box<dyn PrincipalSource>,
}

impl<R> Clone for Mrtr<R> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            quotas: self.quotas.clone(),
        }
    }
}

impl<R: fmt::Debug> fmt::Debug for Mrtr<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mrtr")
            .field("engine", &self.shared.engine)
            .field("quotas", &self.quotas)
            .finish_non_exhaustive()
    }
}

/// For `mrtr_std::reload::KeyReloader`, which reloads the keys of this `Mrtr`'s engine.
impl<R> AsRef<Engine<R>> for Mrtr<R> {
    fn as_ref(&self) -> &Engine<R> {
        self.reloadable()
    }
}

/// A server that holds a [`Mrtr`]: what the [`Parameters`](crate::Parameters) extractor of a
/// `#[tool]` function needs from it. One line to implement.
pub trait HasMrtr<R = AnyReplayCache> {
    /// The server's mrtr.
    fn mrtr(&self) -> &Mrtr<R>;
}

impl<R> Mrtr<R> {
    /// mrtr with `engine`, reading the caller from the [`Caller`] a bearer-auth layer put in
    /// the HTTP request's extensions (anonymous on stdio).
    pub fn new(engine: Engine<R>) -> Self {
        Self::with_principal_source(engine, FromExtensions)
    }

    /// mrtr with `engine`, naming callers with `principals`.
    pub fn with_principal_source(engine: Engine<R>, principals: impl PrincipalSource) -> Self {
        Self {
            shared: Arc::new(Inner {
                engine,
                principals: Box::new(principals),
            }),
            quotas: None,
        }
    }

    /// The same, with per-caller quotas on pauses and resumes ([`mrtr_std::quota`]): a resume
    /// (a request carrying a `requestState`) is charged before its token is opened, so the
    /// answer tells nothing about the token; a pause before its token is sealed. A caller out
    /// of tokens gets [`QUOTA_EXCEEDED_CODE`](mrtr_std::quota::QUOTA_EXCEEDED_CODE) with a
    /// message naming the limit and `data` `{"limit", "retryAfterMs", ...}`.
    ///
    /// The quota of an authenticated caller is its principal's; an anonymous caller's is its
    /// source address when the HTTP request's extensions hold an `IpAddr` or `SocketAddr`
    /// (IPv6 by /64), else one quota shared by all anonymous callers. To name callers
    /// otherwise, see [`Mrtr::with_quotas_keyed_by`].
    pub fn with_quotas(self, quotas: Quotas) -> Self {
        self.with_quotas_keyed_by(quotas, default_quota_key)
    }

    /// The same as [`Mrtr::with_quotas`], charging the quota `key` names for each request (from
    /// its caller and HTTP request: e.g. the address an `axum` `ConnectInfo` holds).
    pub fn with_quotas_keyed_by(
        mut self,
        quotas: Quotas,
        key: impl Fn(&Caller, Option<&http::request::Parts>) -> QuotaKey + Send + Sync + 'static,
    ) -> Self {
        self.quotas = Some(Arc::new(QuotaGate {
            quotas,
            key: Box::new(key),
        }));
        self
    }

    /// The quotas, if set.
    pub fn quotas(&self) -> Option<&Quotas> {
        self.quotas.as_deref().map(|gate| &gate.quotas)
    }

    /// The engine, whose keys [`Engine::reload`] replaces.
    pub fn reloadable(&self) -> &Engine<R> {
        &self.shared.engine
    }

    /// The engine generation to serve one request with.
    pub fn engine(&self) -> Arc<Generation<R, mrtr_std::clock::SystemClock>> {
        self.shared.engine.current()
    }

    /// The caller of the request `ctx` belongs to.
    pub fn caller(&self, ctx: &RequestContext<RoleServer>) -> Caller {
        self.shared.principals.caller(http_parts(ctx))
    }
}

impl<R: AsyncReplayCache> Mrtr<R> {
    /// A `tools/call` (in a hand-written `ServerHandler::call_tool`), verified: every check
    /// of its `requestState` but the replay record. Commit it ([`Pending::commit`]) once the
    /// handler's own checks pass.
    pub fn tool_call(
        &self,
        params: &CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Pending<R>, ErrorData> {
        self.verify(
            Method::ToolsCall,
            &params.name,
            params.arguments.as_ref(),
            params.request_state.as_deref(),
            params.input_responses.clone(),
            ctx,
        )
    }

    /// A `prompts/get`, verified (see [`Mrtr::tool_call`]). rmcp's prompt router drops
    /// `requestState` before a `#[prompt]` function runs, so pausable prompts are served from a
    /// hand-written `ServerHandler::get_prompt`.
    pub fn prompt_get(
        &self,
        params: &GetPromptRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Pending<R>, ErrorData> {
        self.verify(
            Method::PromptsGet,
            &params.name,
            params.arguments.as_ref(),
            params.request_state.as_deref(),
            params.input_responses.clone(),
            ctx,
        )
    }

    /// A `resources/read`, verified (see [`Mrtr::tool_call`]); bound to the URI, no
    /// arguments.
    pub fn resource_read(
        &self,
        params: &ReadResourceRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Pending<R>, ErrorData> {
        self.verify(
            Method::ResourcesRead,
            &params.uri,
            None,
            params.request_state.as_deref(),
            params.input_responses.clone(),
            ctx,
        )
    }

    /// Builds the request's binding once and verifies its `requestState`.
    pub(crate) fn verify(
        &self,
        method: Method,
        target: &str,
        arguments: Option<&JsonObject>,
        request_state: Option<&str>,
        input_responses: Option<InputResponses>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Pending<R>, ErrorData> {
        // Over HTTP, the precheck layer's verdict on the raw text; none on stdio.
        let verdict = match http_parts(ctx) {
            Some(parts) => Some(parts.extensions.get::<Verdict>().ok_or_else(unchecked)?),
            None => None,
        };
        let (version, era_2025) = crate::eras::protocol(ctx);
        let caller = self.caller(ctx);
        let charge = self
            .quotas
            .as_ref()
            .map(|gate| Charge::new(gate.clone(), &caller, http_parts(ctx)));
        // A resume is charged before its token is opened: the answer cannot depend on the
        // token (no oracle), and a refused resume records nothing.
        if let (Some(charge), Some(_)) = (&charge, request_state) {
            charge.resume()?;
        }
        let state = match request_state {
            Some(token) => RequestState::Token(token),
            None => RequestState::Absent,
        };
        let mut req = ResumeRequest::with_map_arguments(
            method,
            &version,
            target,
            arguments,
            state,
            caller.principal(),
        );
        // The precheck layer found the raw request is not I-JSON: it cannot be bound.
        if let Some(Verdict::NotIJson(v)) = verdict {
            req = req.not_i_json(v.clone());
        }
        let engine = self.engine();
        let verified = engine.verify(&req).map_err(|e| e.to_error_data())?;
        let args = req.args_digest().copied().map_err(Clone::clone);
        Ok(Pending {
            engine,
            req: Box::new(Request {
                binding: Bound {
                    method,
                    version,
                    target: target.to_owned(),
                    caller,
                    args,
                },
                input_responses,
                origin: Origin::new(ctx, era_2025),
                charge,
            }),
            verified,
        })
    }
}
