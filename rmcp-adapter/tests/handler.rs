//! A hand-written `ServerHandler` with mrtr: a tool, a prompt and a resource that each pause
//! once, driven by rmcp's own client over Streamable HTTP.

mod support;

use mrtr_rmcp::input::{self, Answer};
use mrtr_rmcp::{Call, Mrtr};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputRequests, InputResponses,
    PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceContents, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;
use support::{assert_uniform, client, mcp_error, serve};

#[derive(Clone)]
struct Handwritten {
    mrtr: Mrtr,
}

const URI: &str = "mrtr://report";

fn question() -> InputRequests {
    input::one(
        "name",
        input::form("Your name?", json!({"name": {"type": "string"}}), &[]),
    )
}

/// One round: ask on a fresh call, answer on the resume.
fn name_of(call: &Call) -> Result<Option<String>, ErrorData> {
    if call.state::<String>()?.is_none() {
        return Ok(None);
    }
    Ok(match input::answer(call.input_responses(), "name") {
        Answer::Accepted(form) => input::text_field(form, "name").map(str::to_owned),
        _ => None,
    })
}

impl ServerHandler for Handwritten {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = self.mrtr.tool_call(&request, &ctx)?.commit().await?;
        match name_of(&call)? {
            Some(name) => {
                Ok(CallToolResult::success(vec![ContentBlock::text(format!("hi {name}"))]).into())
            }
            None => Ok(call.pause(&"asked".to_owned(), question())?.into()),
        }
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let call = self.mrtr.prompt_get(&request, &ctx)?.commit().await?;
        match name_of(&call)? {
            Some(name) => Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                format!("greet {name}"),
            )])
            .into()),
            None => Ok(call.pause(&"asked".to_owned(), question())?.into()),
        }
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let call = self.mrtr.resource_read(&request, &ctx)?.commit().await?;
        match name_of(&call)? {
            Some(name) => Ok(ReadResourceResult::new(vec![ResourceContents::text(
                format!("report for {name}"),
                URI,
            )])
            .into()),
            None => Ok(call.pause(&"asked".to_owned(), question())?.into()),
        }
    }
}

fn answer() -> InputResponses {
    serde_json::from_value(json!({"name": {"action": "accept", "content": {"name": "Ada"}}}))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_prompts_and_resources_pause_and_resume_through_the_builders() {
    let served = serve(Handwritten {
        mrtr: support::mrtr(10),
    })
    .await;
    let alice = client(&served.url, Some("alice"), true).await;

    let CallToolResponse::InputRequired(p) = alice
        .call_tool_once(CallToolRequestParams::new("greet"))
        .await
        .unwrap()
    else {
        panic!("tool did not pause")
    };
    let tool_token = p.request_state.unwrap();

    let GetPromptResponse::InputRequired(p) = alice
        .get_prompt_once(GetPromptRequestParams::new("greeting"))
        .await
        .unwrap()
    else {
        panic!("prompt did not pause")
    };
    let prompt_token = p.request_state.unwrap();

    let ReadResourceResponse::InputRequired(p) = alice
        .read_resource_once(ReadResourceRequestParams::new(URI))
        .await
        .unwrap()
    else {
        panic!("resource did not pause")
    };
    let resource_token = p.request_state.unwrap();

    // A token opens only for its own method and target.
    let crossed = CallToolRequestParams::new("greet")
        .with_request_state(prompt_token.clone())
        .with_input_responses(answer());
    assert_uniform(&mcp_error(alice.call_tool_once(crossed).await));
    let crossed = ReadResourceRequestParams::new("mrtr://other")
        .with_request_state(resource_token.clone())
        .with_input_responses(answer());
    assert_uniform(&mcp_error(alice.read_resource_once(crossed).await));

    let done = alice
        .call_tool_once(
            CallToolRequestParams::new("greet")
                .with_request_state(tool_token)
                .with_input_responses(answer()),
        )
        .await
        .unwrap();
    let CallToolResponse::Complete(r) = done else {
        panic!("tool did not complete")
    };
    assert_eq!(r.content[0].as_text().unwrap().text, "hi Ada");

    let done = alice
        .get_prompt_once(
            GetPromptRequestParams::new("greeting")
                .with_request_state(prompt_token)
                .with_input_responses(answer()),
        )
        .await
        .unwrap();
    let GetPromptResponse::Complete(r) = done else {
        panic!("prompt did not complete")
    };
    assert_eq!(
        serde_json::to_value(&r.messages[0]).unwrap()["content"]["text"],
        "greet Ada"
    );

    let spent_resource = resource_token.clone();
    let done = alice
        .read_resource_once(
            ReadResourceRequestParams::new(URI)
                .with_request_state(resource_token)
                .with_input_responses(answer()),
        )
        .await
        .unwrap();
    let ReadResourceResponse::Complete(r) = done else {
        panic!("resource did not complete")
    };
    assert_eq!(
        serde_json::to_value(&r.contents[0]).unwrap()["text"],
        "report for Ada"
    );
    // Spent.
    let again = ReadResourceRequestParams::new(URI)
        .with_request_state(spent_resource)
        .with_input_responses(answer());
    assert_uniform(&mcp_error(alice.read_resource_once(again).await));
}
