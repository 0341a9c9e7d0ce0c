//! The MCP server: rmcp's `ServerHandler` over the flows in this crate.

use std::borrow::Cow;
use std::sync::Arc;

use mrtr_std::engine::AnyEngine;
use mrtr_std::jsonrpc::Method;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};

use crate::call::{self, Reply, Request};
use crate::listen::{self, Subscriptions};
use crate::{prompts, resources, tools};

/// What every request handler shares.
pub struct App {
    /// The mrtr engine.
    pub sealer: AnyEngine,
    /// `subscriptions/listen` registry and policy.
    pub subs: Arc<Subscriptions>,
}

/// The handler rmcp runs; cheap to clone.
#[derive(Clone)]
pub struct Hosted {
    app: Arc<App>,
}

impl Hosted {
    /// Wraps the shared state.
    pub fn new(app: Arc<App>) -> Self {
        Self { app }
    }
}

impl<T> Reply<T> {
    fn into_response<R: From<T> + From<rmcp::model::InputRequiredResult>>(self) -> R {
        match self {
            Reply::Complete(r) => r.into(),
            Reply::InputRequired(r) => r.into(),
        }
    }
}

impl ServerHandler for Hosted {
    fn get_info(&self) -> ServerConfig {
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
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&[ProtocolVersion::V_2026_07_28])
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(flow) = tools::flow(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                None,
            ));
        };
        let req = Request {
            method: Method::ToolsCall,
            target: &request.name,
            arguments: request.arguments.as_ref(),
            request_state: request.request_state.as_deref(),
            responses: request.input_responses.as_ref(),
        };
        let reply = call::run(&self.app.sealer, req, &ctx, flow).await?;
        if request.name == crate::booking::NAME
            && let Reply::Complete(result) = &reply
            && crate::booking::is_booked(result)
        {
            self.app.subs.bookings_changed();
        }
        Ok(reply.into_response())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(listen::accepted(requested))
    }

    async fn listen(&self, sub: SubscriptionContext) -> Result<(), ErrorData> {
        listen::serve(&self.app.subs, sub).await
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
        let flow = match request.name.as_str() {
            prompts::PLAN_DINNER => prompts::plan_dinner,
            prompts::CONFORMANCE => prompts::conformance,
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown prompt: {other}"),
                    None,
                ));
            }
        };
        let req = Request {
            method: Method::PromptsGet,
            target: &request.name,
            arguments: request.arguments.as_ref(),
            request_state: request.request_state.as_deref(),
            responses: request.input_responses.as_ref(),
        };
        Ok(call::run(&self.app.sealer, req, &ctx, flow)
            .await?
            .into_response())
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
        let req = Request {
            method: Method::ResourcesRead,
            target: &request.uri,
            arguments: None,
            request_state: request.request_state.as_deref(),
            responses: request.input_responses.as_ref(),
        };
        Ok(call::run(&self.app.sealer, req, &ctx, resources::report)
            .await?
            .into_response())
    }
}
