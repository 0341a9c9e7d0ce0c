//! A `#[tool]` router server with mrtr, driven by rmcp's own client over Streamable HTTP.

mod support;

use mrtr_rmcp::input::{self, Answer, Declared};
use mrtr_rmcp::{HasMrtr, Mrtr, Parameters};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    InputResponses, JsonObject, ServerCapabilities, ServerConfig,
};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use support::{assert_uniform, client, mcp_error, meta, post_raw, serve};

#[derive(Clone)]
struct Booker {
    tool_router: ToolRouter<Self>,
    mrtr: Mrtr,
}

impl HasMrtr for Booker {
    fn mrtr(&self) -> &Mrtr {
        &self.mrtr
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct BookArgs {
    /// Guests.
    party: u32,
}

#[derive(Serialize, Deserialize)]
enum Booking {
    AwaitDate,
    AwaitConfirm { date: String },
}

#[tool_router]
impl Booker {
    fn new(max_rounds: u32) -> Self {
        Self {
            tool_router: Self::tool_router(),
            mrtr: support::mrtr(max_rounds),
        }
    }

    #[tool(description = "Books a table: asks for a date, then for confirmation")]
    async fn book(
        &self,
        Parameters { params, pending }: Parameters<BookArgs>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The request's fault, checked before the token is spent.
        Declared::from_capabilities(pending.capabilities()).require_form()?;
        let call = pending.commit().await?;
        let form =
            |key: &str| input::one(key, input::form(key, json!({key: {"type": "string"}}), &[]));
        match call.state::<Booking>()? {
            None => Ok(call.pause(&Booking::AwaitDate, form("date"))?.into()),
            Some(Booking::AwaitDate) => match input::answer(call.input_responses(), "date") {
                Answer::Accepted(f) => {
                    let date = input::text_field(f, "date").unwrap_or("?").to_owned();
                    Ok(call
                        .pause(&Booking::AwaitConfirm { date }, form("confirm"))?
                        .into())
                }
                _ => Ok(call.pause(&Booking::AwaitDate, form("date"))?.into()),
            },
            Some(Booking::AwaitConfirm { date }) => {
                let who = call.caller().subject().unwrap_or("guest").to_owned();
                let text = format!("booked {} for {who} on {date}", params.party);
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
            }
        }
    }

    #[tool(description = "Pauses on every call, with state only")]
    async fn forever(
        &self,
        Parameters { pending, .. }: Parameters<JsonObject>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = pending.commit().await?;
        let n = call.state::<u32>()?.unwrap_or(0);
        Ok(call.retry(&(n + 1))?.into())
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Booker {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn args(party: u32) -> JsonObject {
    match json!({ "party": party }) {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

fn answered(key: &str, value: &str) -> InputResponses {
    serde_json::from_value(json!({key: {"action": "accept", "content": {key: value}}})).unwrap()
}

fn book(state: Option<&str>, responses: Option<InputResponses>) -> CallToolRequestParams {
    let mut p = CallToolRequestParams::new("book").with_arguments(args(4));
    if let Some(s) = state {
        p = p.with_request_state(s.to_owned());
    }
    if let Some(r) = responses {
        p = p.with_input_responses(r);
    }
    p
}

fn paused(r: Result<CallToolResponse, rmcp::ServiceError>) -> String {
    match r.expect("a result") {
        CallToolResponse::InputRequired(i) => i.request_state.expect("a requestState"),
        other => panic!("expected input_required, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_pauses_twice_then_completes_and_its_tokens_are_single_use() {
    let served = serve(Booker::new(10)).await;
    let alice = client(&served.url, Some("alice"), true).await;
    let first = paused(alice.call_tool_once(book(None, None)).await);
    let second = paused(
        alice
            .call_tool_once(book(Some(&first), Some(answered("date", "2026-12-24"))))
            .await,
    );
    let done = alice
        .call_tool_once(book(Some(&second), Some(answered("confirm", "yes"))))
        .await
        .unwrap();
    let CallToolResponse::Complete(result) = done else {
        panic!("expected a complete result")
    };
    let text = result.content[0].as_text().unwrap().text.clone();
    assert_eq!(text, "booked 4 for alice on 2026-12-24");
    // Both tokens are spent.
    for spent in [&first, &second] {
        let e = mcp_error(alice.call_tool_once(book(Some(spent), None)).await);
        assert_uniform(&e);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_is_bound_to_its_caller_and_arguments_and_a_refusal_does_not_spend_it() {
    let served = serve(Booker::new(10)).await;
    let alice = client(&served.url, Some("alice"), true).await;
    let bob = client(&served.url, Some("bob"), true).await;
    let token = paused(alice.call_tool_once(book(None, None)).await);
    let answer = || Some(answered("date", "2027-01-02"));
    // Another caller, no caller, other arguments: the uniform rejection.
    assert_uniform(&mcp_error(
        bob.call_tool_once(book(Some(&token), answer())).await,
    ));
    let anonymous = client(&served.url, None, true).await;
    assert_uniform(&mcp_error(
        anonymous.call_tool_once(book(Some(&token), answer())).await,
    ));
    let other_args = CallToolRequestParams::new("book")
        .with_arguments(args(5))
        .with_request_state(token.clone());
    assert_uniform(&mcp_error(alice.call_tool_once(other_args).await));
    // A resume that forgot to declare form elicitation is refused by the tool before the
    // commit: -32021, and the token is not spent.
    let forgetful = client(&served.url, Some("alice"), false).await;
    let e = mcp_error(forgetful.call_tool_once(book(Some(&token), answer())).await);
    assert_eq!(e.code.0, -32021, "{e:?}");
    // None of the refusals spent it.
    paused(alice.call_tool_once(book(Some(&token), answer())).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_cap_refuses_to_pause_rather_than_issue_a_dead_token() {
    let served = serve(Booker::new(3)).await;
    let alice = client(&served.url, Some("alice"), true).await;
    let forever = |state: Option<&str>| {
        let p = CallToolRequestParams::new("forever");
        match state {
            Some(s) => p.with_request_state(s.to_owned()),
            None => p,
        }
    };
    let t1 = paused(alice.call_tool_once(forever(None)).await);
    let t2 = paused(alice.call_tool_once(forever(Some(&t1))).await);
    // Invocation 3 of 3 cannot pause: the max-rounds rejection.
    let e = mcp_error(alice.call_tool_once(forever(Some(&t2))).await);
    assert_uniform(&e);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_input_schema_comes_from_the_parameters_type() {
    let served = serve(Booker::new(10)).await;
    let alice = client(&served.url, Some("alice"), true).await;
    let tools = alice.list_tools(None).await.unwrap().tools;
    let book = tools.iter().find(|t| t.name == "book").unwrap();
    let schema = serde_json::to_value(&*book.input_schema).unwrap();
    assert_eq!(schema["properties"]["party"]["type"], "integer", "{schema}");
    assert_eq!(schema["required"], json!(["party"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_precheck_layer_answers_what_rmcp_cannot_parse_or_bind() {
    let served = serve(Booker::new(10)).await;
    let call = |params: Value| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}).to_string()
    };
    // A requestState that is not a string: the uniform -32602, not rmcp's -32601.
    for bad in [json!(12345), json!({"a": 1}), json!(null), json!(true)] {
        let body = call(
            json!({"name": "book", "arguments": {"party": 4}, "requestState": bad, "_meta": meta()}),
        );
        let reply = post_raw(&served.url, &body).await;
        assert_eq!(reply["id"], 7);
        assert_eq!(
            reply["error"],
            json!({"code": -32602, "message": "Invalid or expired requestState",
                   "data": {"reason": "invalid_request_state"}}),
            "{reply}"
        );
    }
    // Arguments that are not I-JSON cannot pause: the tool is told why.
    let dup = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"book","arguments":{{"party":4,"party":5}},"_meta":{}}}}}"#,
        meta()
    );
    let reply = post_raw(&served.url, &dup).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("duplicate member name at /params/arguments/party"),
        "{message}"
    );
}
