//! The conformance suite's MRTR tools and prompt (`test_input_required_result_*`), with the
//! hosted server's semantics (`examples/hosted-server/src/conformance.rs`). The stateful ones
//! seal the hosted server's continuation bytes (serde_json of its state types), so a token
//! sealed by a hosted node with the same key and audience completes here, and the reverse.

use mrtr_core::cipher::Cipher;
use mrtr_json::{Value, Writer, write_string};

use super::Call;
use super::flow::{Ctx, NAME_SCHEMA, OK_SCHEMA, Requests, State};
use super::input::{Answer, accepted_text, answer, has, roots, sampled_text, text_field};
use super::reply::{Failure, Text, with_str};
use super::request::{Declared, Needs};

/// The conformance tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// `test_input_required_result_elicitation`.
    Elicitation,
    /// `test_input_required_result_sampling`.
    Sampling,
    /// `test_input_required_result_list_roots`.
    ListRoots,
    /// `test_input_required_result_request_state`.
    RequestState,
    /// `test_input_required_result_multiple_inputs`.
    MultipleInputs,
    /// `test_input_required_result_multi_round`.
    MultiRound,
    /// `test_input_required_result_tampered_state`.
    TamperedState,
    /// `test_input_required_result_capabilities`.
    Capabilities,
}

/// The conformance prompt's name.
pub const PROMPT: &str = "test_input_required_result_prompt";

impl Tool {
    /// Every tool, in the order `tools/list` shows them.
    pub const ALL: [Self; 8] = [
        Self::Elicitation,
        Self::Sampling,
        Self::ListRoots,
        Self::RequestState,
        Self::MultipleInputs,
        Self::MultiRound,
        Self::TamperedState,
        Self::Capabilities,
    ];

    /// The tool's name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Elicitation => "test_input_required_result_elicitation",
            Self::Sampling => "test_input_required_result_sampling",
            Self::ListRoots => "test_input_required_result_list_roots",
            Self::RequestState => "test_input_required_result_request_state",
            Self::MultipleInputs => "test_input_required_result_multiple_inputs",
            Self::MultiRound => "test_input_required_result_multi_round",
            Self::TamperedState => "test_input_required_result_tampered_state",
            Self::Capabilities => "test_input_required_result_capabilities",
        }
    }

    /// The tool's description (the hosted server's).
    pub const fn description(self) -> &'static str {
        match self {
            Self::Elicitation => "Asks for a name, then greets",
            Self::Sampling => "Asks the client's model a question",
            Self::ListRoots => "Asks for the client's roots",
            Self::RequestState => "Confirms with sealed state",
            Self::MultipleInputs => "Asks three kinds at once",
            Self::MultiRound => "Two rounds of questions",
            Self::TamperedState => "Rejects altered state",
            Self::Capabilities => "Asks only what the client can answer",
        }
    }

    /// What the request must declare.
    pub const fn needs(self) -> Needs {
        match self {
            Self::Sampling => Needs::Sampling,
            Self::ListRoots => Needs::Roots,
            Self::MultipleInputs => Needs::All,
            Self::Capabilities => Needs::Any,
            _ => Needs::Form,
        }
    }

    /// The tool named `name`.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// One round.
    pub fn run<C: Cipher>(
        self,
        call: &Call<'_>,
        ctx: &mut Ctx<'_, '_, '_, C>,
    ) -> Result<(), Failure> {
        let r = call.responses;
        match self {
            Self::Elicitation => match accepted_text(r, "user_name", "name") {
                Some(name) => ctx.done(|t| {
                    t.str("Hello, ").value(name, true).str("!");
                }),
                None => ctx.ask(ask_name("user_name", "What is your name?")),
            },
            Self::Sampling => match sampled_text(r, "capital_question") {
                Some(text) => ctx.done(|t| {
                    t.str("The model answered: ").value(text, false);
                }),
                None => ctx
                    .ask(|q| q.sampling("capital_question", "What is the capital of France?", 100)),
            },
            Self::ListRoots => match roots(r, "client_roots") {
                Some(list) => ctx.done(|t| {
                    t.str("Client roots: ");
                    uris(t, list);
                }),
                None => ctx.ask(|q| q.roots("client_roots")),
            },
            Self::RequestState => {
                confirm(call, ctx, "state-ok: the sealed requestState was verified")
            }
            Self::TamperedState => confirm(call, ctx, "state-ok: untampered"),
            Self::MultipleInputs => multiple_inputs(call, ctx),
            Self::MultiRound => multi_round(call, ctx),
            Self::Capabilities => capabilities(call, ctx),
        }
    }
}

fn ask_name<'k>(key: &'k str, message: &'k str) -> impl FnOnce(&mut Requests<'_, '_>) + 'k {
    move |q| q.form_text(key, message, NAME_SCHEMA)
}

/// Writes the `uri` of every root, joined by `, `.
fn uris(t: &mut Text<'_, '_>, list: Value<'_>) {
    for (i, root) in list.items().enumerate() {
        if i > 0 {
            t.str(", ");
        }
        if let Some(uri) = root.get("uri") {
            t.value(uri, false);
        }
    }
}

/// `request_state` and `tampered_state`: one sealed confirmation.
fn confirm<C: Cipher>(
    call: &Call<'_>,
    ctx: &mut Ctx<'_, '_, '_, C>,
    done: &str,
) -> Result<(), Failure> {
    if call.state.is_some()
        && let Answer::Accepted(form) = answer(call.responses, "confirm")
        && form.get("ok").and_then(|v| v.as_bool()).is_some()
    {
        return ctx.done(|t| {
            t.str(done);
        });
    }
    ctx.pause(br#"{"question":"confirm"}"#, |q| {
        q.form_text("confirm", "Please confirm", OK_SCHEMA)
    })
}

fn multiple_inputs<C: Cipher>(
    call: &Call<'_>,
    ctx: &mut Ctx<'_, '_, '_, C>,
) -> Result<(), Failure> {
    let r = call.responses;
    if call.state.is_some()
        && let (Some(name), Some(greeting), Some(list)) = (
            accepted_text(r, "user_name", "name"),
            sampled_text(r, "greeting"),
            roots(r, "client_roots"),
        )
    {
        return ctx.done(|t| {
            t.value(greeting, false)
                .str(" ")
                .value(name, true)
                .str(" (")
                .u64(list.items().count() as u64)
                .str(" roots)");
        });
    }
    ctx.pause(
        br#"{"keys":["user_name","greeting","client_roots"]}"#,
        |q| {
            q.form_text("user_name", "What is your name?", NAME_SCHEMA);
            q.sampling("greeting", "Generate a greeting", 50);
            q.roots("client_roots");
        },
    )
}

fn multi_round<C: Cipher>(call: &Call<'_>, ctx: &mut Ctx<'_, '_, '_, C>) -> Result<(), Failure> {
    let unreadable = Failure::internal("Internal error: cannot read the paused state");
    let Some(state) = call.state else {
        return ask_step1(ctx);
    };
    let step = state.get("step").ok_or(unreadable)?;
    if step.str_eq("await_name") {
        return match accepted_text(call.responses, "step1", "name") {
            Some(name) => match with_str(name, |s| ask_step2(ctx, s.trim())) {
                Some(asked) => asked,
                None => ctx.tool_error("the name is too long for the gateway"),
            },
            None => ask_step1(ctx),
        };
    }
    if !step.str_eq("await_color") {
        return Err(unreadable);
    }
    let name = state.get("name").ok_or(unreadable)?;
    let color = match answer(call.responses, "step2") {
        Answer::Accepted(form) => text_field(form, "color"),
        _ => None,
    };
    match color {
        Some(color) => ctx.done(|t| {
            t.value(name, false)
                .str("'s favorite color is ")
                .value(color, true)
                .str(".");
        }),
        None => with_str(name, |s| ask_step2(ctx, s)).unwrap_or(Err(unreadable)),
    }
}

fn ask_step1<C: Cipher>(ctx: &mut Ctx<'_, '_, '_, C>) -> Result<(), Failure> {
    ctx.pause(
        br#"{"step":"await_name"}"#,
        ask_name("step1", "Step 1: What is your name?"),
    )
}

/// Asks for the color, with the name sealed as the hosted server seals it
/// (`{"step":"await_color","name":"..."}`, serde_json's escaping).
fn ask_step2<C: Cipher>(ctx: &mut Ctx<'_, '_, '_, C>, name: &str) -> Result<(), Failure> {
    let mut state = State::new();
    let Some(bytes) = state.build(|w: &mut Writer<'_>| {
        w.raw(br#"{"step":"await_color","name":"#);
        write_string(name, w);
        w.raw(b"}");
    }) else {
        return ctx.tool_error("the name is too long for the gateway");
    };
    ctx.pause(bytes, |q| {
        q.form_text(
            "step2",
            "Step 2: What is your favorite color?",
            r#"{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}"#,
        )
    })
}

/// `capabilities`: asks only what the request declared (keys in the hosted server's order,
/// a sorted map's: `name`, `roots`, `sample`).
fn capabilities<C: Cipher>(call: &Call<'_>, ctx: &mut Ctx<'_, '_, '_, C>) -> Result<(), Failure> {
    let d: Declared = call.declared;
    let keys = [("name", d.form), ("roots", d.roots), ("sample", d.sampling)];
    let asked = || keys.iter().filter(|(_, on)| *on).map(|(k, _)| *k);
    if call.state.is_some() && asked().all(|k| has(call.responses, k)) {
        return ctx.done(|t| {
            t.str("answered: ");
            for (i, k) in asked().enumerate() {
                if i > 0 {
                    t.str(", ");
                }
                t.str(k);
            }
        });
    }
    let mut state = State::new();
    let bytes = state
        .build(|w| {
            w.raw(br#"{"keys":["#);
            for (i, k) in asked().enumerate() {
                if i > 0 {
                    w.raw(b",");
                }
                w.string(k);
            }
            w.raw(b"]}");
        })
        .ok_or(Failure::internal(
            "Internal error: cannot encode the paused state",
        ))?;
    ctx.pause(bytes, |q| {
        if d.form {
            q.form_text("name", "What is your name?", NAME_SCHEMA);
        }
        if d.roots {
            q.roots("roots");
        }
        if d.sampling {
            q.sampling("sample", "Say hello", 20);
        }
    })
}

/// The conformance prompt: one sealed question for context.
pub fn prompt<C: Cipher>(call: &Call<'_>, ctx: &mut Ctx<'_, '_, '_, C>) -> Result<(), Failure> {
    if call.state.is_some()
        && let Some(context) = accepted_text(call.responses, "user_context", "context")
    {
        return ctx.done(|t| {
            t.str("Use this context: ").value(context, true);
        });
    }
    ctx.pause(br#"{"key":"user_context"}"#, |q| {
        q.form_text(
            "user_context",
            "What context should the prompt use?",
            r#"{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}"#,
        )
    })
}
