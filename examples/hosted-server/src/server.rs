//! The MCP server: rmcp's `ServerHandler`, with the tools as a `#[tool]` router and the
//! pausable prompts and resources served through `mrtr-rmcp`'s builders. It speaks 2026-07-28
//! (stateless, `subscriptions/listen`) and, in sessions opened by `initialize`, 2025-11-25 and
//! 2025-06-18 (`resources/subscribe`, server-to-client elicitation).

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use mrtr_rmcp::{HasMrtr, Mrtr};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    ErrorData, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourcesResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ServerHandler, tool_handler};

use crate::listen::{self, Subscriptions};
use crate::{prompts, resources};

/// What every request handler shares.
pub struct App {
    /// mrtr: the engine and where callers come from.
    pub mrtr: Mrtr,
    /// `subscriptions/listen` registry and policy.
    pub subs: Arc<Subscriptions>,
    /// The Prometheus recorder `/metrics` renders.
    pub metrics: mrtr_std::metrics::Prometheus,
}

/// The handler rmcp runs; cheap to clone.
///
/// rmcp builds one per 2026-07-28 request (stateless) and one per 2025-era session, so the
/// tool router, whose construction validates every tool's name and schema, is built once
/// ([`Hosted::tools`]) and shared.
#[derive(Clone)]
pub struct Hosted {
    app: Arc<App>,
    tool_router: Arc<ToolRouter<Self>>,
}

impl Hosted {
    /// The tool router every handler shares: build it once at startup.
    pub fn tools() -> Arc<ToolRouter<Self>> {
        #[cfg(feature = "testing")]
        return Arc::new(Self::tool_router() + Self::conformance_tools());
        #[cfg(not(feature = "testing"))]
        Arc::new(Self::tool_router())
    }

    /// Wraps the shared state, with the shared tool router.
    pub fn new(app: Arc<App>, tools: Arc<ToolRouter<Self>>) -> Self {
        Self {
            app,
            tool_router: tools,
        }
    }

    /// The shared state.
    pub fn app(&self) -> &App {
        &self.app
    }
}

impl HasMrtr for Hosted {
    fn mrtr(&self) -> &Mrtr {
        &self.app.mrtr
    }
}

/// What `initialize` and every stateless request's peer are told about this server.
static INFO: LazyLock<ServerConfig> = LazyLock::new(|| {
    ServerConfig::new(
        ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .build(),
    )
    .with_server_info(Implementation::new(
        "mrtr-hosted-server",
        env!("CARGO_PKG_VERSION"),
    ))
    .with_instructions(
        "Call book_table to book a table; it asks for a date and a confirmation. \
         requestState is sealed (AEAD) and bound to you, the tool and its arguments.",
    )
});

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Hosted {
    fn get_info(&self) -> ServerConfig {
        // rmcp asks for it on every request (stateless ones included): built once, cloned.
        INFO.clone()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&[
            ProtocolVersion::V_2026_07_28,
            ProtocolVersion::V_2025_11_25,
            ProtocolVersion::V_2025_06_18,
        ])
    }

    // resources/subscribe exists only in 2025-era sessions (rmcp answers -32601 elsewhere).
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if request.uri != resources::REPORT_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource at {}", request.uri),
                Some(serde_json::json!({"uri": request.uri})),
            ));
        }
        let caller = self.app.mrtr.caller(&ctx);
        let grants = self.app.subs.grants();
        grants.subscribe(&request.uri, &caller, &ctx).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.app.subs.grants().unsubscribe(&request.uri, &ctx);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(listen::accepted(requested))
    }

    async fn listen(&self, sub: SubscriptionContext) -> Result<(), ErrorData> {
        // Boxed, as the other handlers with large futures below: rmcp spawns one task per
        // request holding the future of whichever handler the method picks, so the task is
        // as large as the largest handler future (and is copied at spawn and completion).
        Box::pin(listen::serve(&self.app.subs, sub)).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let pending = self.app.mrtr.prompt_get(&request, &ctx)?;
        Box::pin(prompts::get(&request, pending)).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(resources::list()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != resources::REPORT_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource at {}", request.uri),
                Some(serde_json::json!({"uri": request.uri})),
            ));
        }
        let pending = self.app.mrtr.resource_read(&request, &ctx)?;
        Box::pin(resources::report(pending)).await
    }
}
