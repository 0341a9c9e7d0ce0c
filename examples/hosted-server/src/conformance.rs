//! The tools the conformance suite's MRTR scenarios (`input-required-result-*`) call.
//!
//! The three single-kind tools keep no state: the answer alone completes the call, as the
//! scenarios' first-round examples carry no `requestState`. The others seal their state with
//! mrtr like every other flow here.

use rmcp::model::{CallToolResult, ContentBlock, ErrorData, InputRequests};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::ask::{self, Answer};
use crate::call::{Call, Outcome};

type Flow = fn(&Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData>;

/// Every conformance tool: name, description, flow.
pub const TOOLS: &[(&str, &str, Flow)] = &[
    (
        "test_input_required_result_elicitation",
        "Asks for a name, then greets",
        elicitation,
    ),
    (
        "test_input_required_result_sampling",
        "Asks the client's model a question",
        sampling,
    ),
    (
        "test_input_required_result_list_roots",
        "Asks for the client's roots",
        list_roots,
    ),
    (
        "test_input_required_result_request_state",
        "Confirms with sealed state",
        request_state,
    ),
    (
        "test_input_required_result_multiple_inputs",
        "Asks three kinds at once",
        multiple_inputs,
    ),
    (
        "test_input_required_result_multi_round",
        "Two rounds of questions",
        multi_round,
    ),
    (
        "test_input_required_result_tampered_state",
        "Rejects altered state",
        tampered_state,
    ),
    (
        "test_input_required_result_capabilities",
        "Asks only what the client can answer",
        capabilities,
    ),
];

fn done(text: String) -> Result<Outcome<CallToolResult>, ErrorData> {
    Ok(Outcome::Done(CallToolResult::success(vec![
        ContentBlock::text(text),
    ])))
}

fn name_form(message: &str) -> rmcp::model::InputRequest {
    ask::form(message, json!({"name": {"type": "string"}}), &[])
}

fn ok_form() -> rmcp::model::InputRequest {
    ask::form("Please confirm", json!({"ok": {"type": "boolean"}}), &[])
}

fn accepted_name(call: &Call<'_>, key: &str) -> Option<String> {
    match ask::answer(call.responses, key) {
        Answer::Accepted(form) => ask::text_field(form, "name").map(str::to_owned),
        _ => None,
    }
}

fn elicitation(call: &Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData> {
    call.caps.require_form()?;
    match accepted_name(call, "user_name") {
        Some(name) => done(format!("Hello, {name}!")),
        None => Ok(Outcome::AskStateless(ask::one(
            "user_name",
            name_form("What is your name?"),
        ))),
    }
}

fn sampling(call: &Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData> {
    if !call.caps.sampling {
        return Err(ask::missing(json!({"sampling": {}})));
    }
    match ask::sampled_text(call.responses, "capital_question") {
        Some(text) => done(format!("The model answered: {text}")),
        None => Ok(Outcome::AskStateless(ask::one(
            "capital_question",
            ask::sampling("What is the capital of France?", 100),
        ))),
    }
}

fn list_roots(call: &Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData> {
    if !call.caps.roots {
        return Err(ask::missing(json!({"roots": {}})));
    }
    match ask::root_uris(call.responses, "client_roots") {
        Some(uris) => done(format!("Client roots: {}", uris.join(", "))),
        None => Ok(Outcome::AskStateless(ask::one(
            "client_roots",
            ask::roots(),
        ))),
    }
}

/// Sealed state of the single-question tools: which question is out.
#[derive(Serialize, Deserialize)]
struct Asked {
    question: String,
}

fn confirm_with_state(
    call: &Call<'_>,
    done_text: &str,
) -> Result<Outcome<CallToolResult>, ErrorData> {
    call.caps.require_form()?;
    let state = Asked {
        question: "confirm".into(),
    };
    if call.state::<Asked>()?.is_some()
        && let Answer::Accepted(form) = ask::answer(call.responses, "confirm")
        && form.get("ok").and_then(|v| v.as_bool()).is_some()
    {
        return done(done_text.to_owned());
    }
    Outcome::ask(&state, ask::one("confirm", ok_form()))
}

fn request_state(call: &Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData> {
    confirm_with_state(call, "state-ok: the sealed requestState was verified")
}

fn tampered_state(call: &Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData> {
    confirm_with_state(call, "state-ok: untampered")
}

/// Sealed state of `multiple_inputs`: the keys still unanswered.
#[derive(Serialize, Deserialize)]
struct Pending {
    keys: Vec<String>,
}

fn multiple_inputs(call: &Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData> {
    if !(call.caps.form && call.caps.sampling && call.caps.roots) {
        return Err(ask::missing(
            json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}}),
        ));
    }
    let all = ["user_name", "greeting", "client_roots"];
    if call.state::<Pending>()?.is_some() {
        let name = accepted_name(call, "user_name");
        let greeting = ask::sampled_text(call.responses, "greeting");
        let roots = ask::root_uris(call.responses, "client_roots");
        if let (Some(name), Some(greeting), Some(roots)) = (name, greeting, roots) {
            return done(format!("{greeting} {name} ({} roots)", roots.len()));
        }
    }
    let mut requests = InputRequests::new();
    requests.insert("user_name".into(), name_form("What is your name?"));
    requests.insert("greeting".into(), ask::sampling("Generate a greeting", 50));
    requests.insert("client_roots".into(), ask::roots());
    let state = Pending {
        keys: all.iter().map(|k| (*k).to_owned()).collect(),
    };
    Outcome::ask(&state, requests)
}

/// Sealed state of `multi_round`.
#[derive(Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
enum Rounds {
    AwaitName,
    AwaitColor { name: String },
}

fn multi_round(call: &Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData> {
    call.caps.require_form()?;
    let ask_name = || {
        Outcome::ask(
            &Rounds::AwaitName,
            ask::one("step1", name_form("Step 1: What is your name?")),
        )
    };
    let ask_color = |name: &str| {
        let q = ask::form(
            "Step 2: What is your favorite color?",
            json!({"color": {"type": "string"}}),
            &[],
        );
        Outcome::ask(
            &Rounds::AwaitColor {
                name: name.to_owned(),
            },
            ask::one("step2", q),
        )
    };
    match call.state::<Rounds>()? {
        None => ask_name(),
        Some(Rounds::AwaitName) => match accepted_name(call, "step1") {
            Some(name) => ask_color(&name),
            None => ask_name(),
        },
        Some(Rounds::AwaitColor { name }) => match ask::answer(call.responses, "step2") {
            Answer::Accepted(form) => match ask::text_field(form, "color") {
                Some(color) => done(format!("{name}'s favorite color is {color}.")),
                None => ask_color(&name),
            },
            _ => ask_color(&name),
        },
    }
}

fn capabilities(call: &Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData> {
    let c = call.caps;
    if !(c.form || c.sampling || c.roots) {
        return Err(ask::missing(json!({"sampling": {}})));
    }
    let mut requests = InputRequests::new();
    if c.sampling {
        requests.insert("sample".into(), ask::sampling("Say hello", 20));
    }
    if c.form {
        requests.insert("name".into(), name_form("What is your name?"));
    }
    if c.roots {
        requests.insert("roots".into(), ask::roots());
    }
    if call.state::<Pending>()?.is_some() {
        let answered = requests
            .keys()
            .all(|k| call.responses.is_some_and(|r| r.contains_key(k)));
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
    Outcome::ask(&state, requests)
}
