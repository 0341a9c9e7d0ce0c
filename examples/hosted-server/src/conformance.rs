//! The tools the conformance suite's MRTR scenarios (`input-required-result-*`) call (its
//! prompt is `prompts::conformance`): built with the `testing` feature only (CI's peer suites
//! turn it on).
//!
//! Each tool states what the request must declare ([`Needs`], checked before its token is
//! spent) and one round of its flow. The three single-kind tools keep no state: the answer
//! alone completes the call, as the scenarios' first-round examples carry no `requestState`.
//! The others seal their state with mrtr like every other flow here.

use mrtr_rmcp::input::{self, Answer, Declared};
use mrtr_rmcp::{Call, Parameters};
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ErrorData, InputRequest, InputRequests,
    InputRequiredResult, JsonObject,
};
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::server::Hosted;

/// What a conformance tool requires the request to declare.
#[derive(Clone, Copy, Debug)]
pub enum Needs {
    /// Form elicitation.
    Form,
    /// Sampling.
    Sampling,
    /// Roots.
    Roots,
    /// All three.
    All,
    /// Any one of them.
    Any,
}

impl Needs {
    /// `-32021` naming what is missing, unless `declared` covers it.
    pub fn check(self, declared: Declared) -> Result<(), ErrorData> {
        let (ok, missing) = match self {
            Self::Form => return declared.require_form(),
            Self::Sampling => (declared.sampling, json!({"sampling": {}})),
            Self::Roots => (declared.roots, json!({"roots": {}})),
            Self::All => (
                declared.form && declared.sampling && declared.roots,
                json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}}),
            ),
            Self::Any => (
                declared.form || declared.sampling || declared.roots,
                json!({"sampling": {}}),
            ),
        };
        if ok {
            Ok(())
        } else {
            Err(input::missing(missing))
        }
    }
}

type Reply = Result<CallToolResponse, ErrorData>;

fn done(text: String) -> Reply {
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
}

/// Asks without sealing anything: the answer alone completes the call.
fn ask_stateless(requests: InputRequests) -> Reply {
    Ok(InputRequiredResult::new(Some(requests), None).into())
}

fn name_form(message: &str) -> InputRequest {
    input::form(message, json!({"name": {"type": "string"}}), &[])
}

fn ok_form() -> InputRequest {
    input::form("Please confirm", json!({"ok": {"type": "boolean"}}), &[])
}

fn accepted_name(call: &Call, key: &str) -> Option<String> {
    match input::answer(call.input_responses(), key) {
        Answer::Accepted(form) => input::text_field(form, "name").map(str::to_owned),
        _ => None,
    }
}

/// `test_input_required_result_elicitation`.
pub fn elicitation(call: &Call) -> Reply {
    match accepted_name(call, "user_name") {
        Some(name) => done(format!("Hello, {name}!")),
        None => ask_stateless(input::one("user_name", name_form("What is your name?"))),
    }
}

/// `test_input_required_result_sampling`.
pub fn sampling(call: &Call) -> Reply {
    match input::sampled_text(call.input_responses(), "capital_question") {
        Some(text) => done(format!("The model answered: {text}")),
        None => ask_stateless(input::one(
            "capital_question",
            input::sampling("What is the capital of France?", 100),
        )),
    }
}

/// `test_input_required_result_list_roots`.
pub fn list_roots(call: &Call) -> Reply {
    match input::root_uris(call.input_responses(), "client_roots") {
        Some(uris) => done(format!("Client roots: {}", uris.join(", "))),
        None => ask_stateless(input::one("client_roots", input::roots())),
    }
}

/// Sealed state of the single-question tools: which question is out.
#[derive(Serialize, Deserialize)]
struct Asked {
    question: String,
}

fn confirm_with_state(call: &Call, done_text: &str) -> Reply {
    let state = Asked {
        question: "confirm".into(),
    };
    if call.state::<Asked>()?.is_some()
        && let Answer::Accepted(form) = input::answer(call.input_responses(), "confirm")
        && form.get("ok").and_then(|v| v.as_bool()).is_some()
    {
        return done(done_text.to_owned());
    }
    Ok(call.pause(&state, input::one("confirm", ok_form()))?.into())
}

/// `test_input_required_result_request_state`.
pub fn request_state(call: &Call) -> Reply {
    confirm_with_state(call, "state-ok: the sealed requestState was verified")
}

/// `test_input_required_result_tampered_state`.
pub fn tampered_state(call: &Call) -> Reply {
    confirm_with_state(call, "state-ok: untampered")
}

/// Sealed state of `multiple_inputs`: the keys still unanswered.
#[derive(Serialize, Deserialize)]
struct Pending {
    keys: Vec<String>,
}

/// `test_input_required_result_multiple_inputs`.
pub fn multiple_inputs(call: &Call) -> Reply {
    let all = ["user_name", "greeting", "client_roots"];
    if call.state::<Pending>()?.is_some() {
        let name = accepted_name(call, "user_name");
        let greeting = input::sampled_text(call.input_responses(), "greeting");
        let roots = input::root_uris(call.input_responses(), "client_roots");
        if let (Some(name), Some(greeting), Some(roots)) = (name, greeting, roots) {
            return done(format!("{greeting} {name} ({} roots)", roots.len()));
        }
    }
    let mut requests = InputRequests::new();
    requests.insert("user_name".into(), name_form("What is your name?"));
    requests.insert(
        "greeting".into(),
        input::sampling("Generate a greeting", 50),
    );
    requests.insert("client_roots".into(), input::roots());
    let state = Pending {
        keys: all.iter().map(|k| (*k).to_owned()).collect(),
    };
    Ok(call.pause(&state, requests)?.into())
}

/// Sealed state of `multi_round`.
#[derive(Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
enum Rounds {
    AwaitName,
    AwaitColor { name: String },
}

/// `test_input_required_result_multi_round`.
pub fn multi_round(call: &Call) -> Reply {
    let ask_name = || {
        let q = name_form("Step 1: What is your name?");
        Ok(call
            .pause(&Rounds::AwaitName, input::one("step1", q))?
            .into())
    };
    let ask_color = |name: &str| {
        let q = input::form(
            "Step 2: What is your favorite color?",
            json!({"color": {"type": "string"}}),
            &[],
        );
        let state = Rounds::AwaitColor {
            name: name.to_owned(),
        };
        Ok(call.pause(&state, input::one("step2", q))?.into())
    };
    match call.state::<Rounds>()? {
        None => ask_name(),
        Some(Rounds::AwaitName) => match accepted_name(call, "step1") {
            Some(name) => ask_color(&name),
            None => ask_name(),
        },
        Some(Rounds::AwaitColor { name }) => match input::answer(call.input_responses(), "step2") {
            Answer::Accepted(form) => match input::text_field(form, "color") {
                Some(color) => done(format!("{name}'s favorite color is {color}.")),
                None => ask_color(&name),
            },
            _ => ask_color(&name),
        },
    }
}

/// `test_input_required_result_capabilities`: asks only what the client declared.
pub fn capabilities(call: &Call) -> Reply {
    let c = Declared::from_capabilities(call.capabilities());
    let mut requests = InputRequests::new();
    if c.sampling {
        requests.insert("sample".into(), input::sampling("Say hello", 20));
    }
    if c.form {
        requests.insert("name".into(), name_form("What is your name?"));
    }
    if c.roots {
        requests.insert("roots".into(), input::roots());
    }
    if call.state::<Pending>()?.is_some() {
        let answered = requests
            .keys()
            .all(|k| call.input_responses().is_some_and(|r| r.contains_key(k)));
        if answered {
            return done(format!(
                "answered: {}",
                requests.keys().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    let state = Pending {
        keys: requests.keys().cloned().collect(),
    };
    Ok(call.pause(&state, requests)?.into())
}

/// Checks what the request must declare, then runs the flow's rounds.
async fn begin(pending: mrtr_rmcp::Pending, needs: Needs, flow: fn(&Call) -> Reply) -> Reply {
    needs.check(Declared::from_capabilities(pending.capabilities()))?;
    pending.run(flow).await
}

#[tool_router(router = conformance_tools, vis = "pub")]
impl Hosted {
    #[tool(
        name = "test_input_required_result_elicitation",
        description = "Asks for a name, then greets"
    )]
    async fn t_elicitation(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Form, elicitation).await
    }

    #[tool(
        name = "test_input_required_result_sampling",
        description = "Asks the client's model a question"
    )]
    async fn t_sampling(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Sampling, sampling).await
    }

    #[tool(
        name = "test_input_required_result_list_roots",
        description = "Asks for the client's roots"
    )]
    async fn t_list_roots(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Roots, list_roots).await
    }

    #[tool(
        name = "test_input_required_result_request_state",
        description = "Confirms with sealed state"
    )]
    async fn t_request_state(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Form, request_state).await
    }

    #[tool(
        name = "test_input_required_result_multiple_inputs",
        description = "Asks three kinds at once"
    )]
    async fn t_multiple_inputs(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::All, multiple_inputs).await
    }

    #[tool(
        name = "test_input_required_result_multi_round",
        description = "Two rounds of questions"
    )]
    async fn t_multi_round(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Form, multi_round).await
    }

    #[tool(
        name = "test_input_required_result_tampered_state",
        description = "Rejects altered state"
    )]
    async fn t_tampered_state(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Form, tampered_state).await
    }

    #[tool(
        name = "test_input_required_result_capabilities",
        description = "Asks only what the client can answer"
    )]
    async fn t_capabilities(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Any, capabilities).await
    }
}
