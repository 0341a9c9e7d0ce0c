//! Prompts that pause once: `plan_dinner` (the example) and the conformance prompt.

use rmcp::model::{ErrorData, GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::ask::{self, Answer};
use crate::call::{Call, Outcome};

/// The example prompt.
pub const PLAN_DINNER: &str = "plan_dinner";
/// The conformance suite's prompt.
pub const CONFORMANCE: &str = "test_input_required_result_prompt";

/// Every prompt this server lists.
pub fn list() -> Vec<Prompt> {
    vec![
        Prompt::new(
            PLAN_DINNER,
            Some("Plans a dinner menu; asks for dietary restrictions first"),
            Some(vec![
                PromptArgument::new("cuisine")
                    .with_description("italian, japanese or mexican")
                    .with_required(true),
            ]),
        ),
        Prompt::new(
            CONFORMANCE,
            Some("Asks for context before building the prompt"),
            None,
        ),
    ]
}

/// Sealed state of `plan_dinner`: the dishes picked in round 1.
#[derive(Debug, Serialize, Deserialize)]
struct Menu {
    cuisine: String,
    dishes: Vec<(String, Vec<String>)>,
}

fn dishes(cuisine: &str) -> Option<Vec<(String, Vec<String>)>> {
    let d = |name: &str, tags: &[&str]| {
        (
            name.to_owned(),
            tags.iter().map(|t| (*t).to_owned()).collect(),
        )
    };
    Some(match cuisine {
        "italian" => vec![
            d("margherita pizza", &["dairy", "gluten"]),
            d("risotto ai funghi", &["dairy"]),
            d("caponata", &[]),
        ],
        "japanese" => vec![
            d("salmon nigiri", &["fish"]),
            d("vegetable tempura", &["gluten"]),
            d("agedashi tofu", &["soy"]),
        ],
        "mexican" => vec![
            d("tacos al pastor", &["meat"]),
            d("black bean enchiladas", &["dairy"]),
            d("guacamole", &[]),
        ],
        _ => return None,
    })
}

/// One round of `plan_dinner`.
pub fn plan_dinner(call: &Call<'_>) -> Result<Outcome<GetPromptResult>, ErrorData> {
    let cuisine = call.arg_str("cuisine").unwrap_or_default().to_lowercase();
    let Some(fresh_menu) = dishes(&cuisine) else {
        return Err(ErrorData::invalid_params(
            "cuisine must be italian, japanese or mexican",
            None,
        ));
    };
    call.caps.require_form()?;
    let question = || {
        ask::form(
            "Any dietary restrictions? (comma-separated, e.g. dairy, gluten; empty for none)",
            json!({"restrictions": {"type": "string"}}),
            &["restrictions"],
        )
    };
    let Some(menu) = call.state::<Menu>()? else {
        let menu = Menu {
            cuisine,
            dishes: fresh_menu,
        };
        return Outcome::ask(&menu, ask::one("restrictions", question()));
    };
    let Answer::Accepted(form) = ask::answer(call.responses, "restrictions") else {
        return Outcome::ask(&menu, ask::one("restrictions", question()));
    };
    let avoid: Vec<String> = ask::text_field(form, "restrictions")
        .unwrap_or("")
        .split(',')
        .map(|s| s.trim().to_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let chosen: Vec<&str> = menu
        .dishes
        .iter()
        .filter(|(_, tags)| !tags.iter().any(|t| avoid.contains(t)))
        .map(|(name, _)| name.as_str())
        .collect();
    let text = format!(
        "Plan a {} dinner for tonight around these dishes: {}. Avoid: {}.",
        menu.cuisine,
        if chosen.is_empty() {
            "(none fit; suggest alternatives)".to_owned()
        } else {
            chosen.join(", ")
        },
        if avoid.is_empty() {
            "nothing".to_owned()
        } else {
            avoid.join(", ")
        },
    );
    Ok(Outcome::Done(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description("Dinner plan"),
    ))
}

/// Sealed state of the conformance prompt.
#[derive(Serialize, Deserialize)]
struct AskedContext {
    key: String,
}

/// One round of the conformance prompt.
pub fn conformance(call: &Call<'_>) -> Result<Outcome<GetPromptResult>, ErrorData> {
    call.caps.require_form()?;
    if call.state::<AskedContext>()?.is_some()
        && let Answer::Accepted(form) = ask::answer(call.responses, "user_context")
        && let Some(context) = ask::text_field(form, "context")
    {
        return Ok(Outcome::Done(GetPromptResult::new(vec![
            PromptMessage::new_text(Role::User, format!("Use this context: {context}")),
        ])));
    }
    let q = ask::form(
        "What context should the prompt use?",
        json!({"context": {"type": "string"}}),
        &[],
    );
    Outcome::ask(
        &AskedContext {
            key: "user_context".into(),
        },
        ask::one("user_context", q),
    )
}
