//! Prompts that pause once: `plan_dinner` (the example) and, built with the `testing`
//! feature, the conformance prompt.

#[cfg(feature = "testing")]
mod conformance;

use mrtr_rmcp::input::{self, Answer, Declared};
use mrtr_rmcp::{Call, Pending};
use rmcp::model::{
    ErrorData, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Prompt, PromptArgument,
    PromptMessage, Role,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

type Reply = Result<GetPromptResponse, ErrorData>;

/// One `prompts/get`: the request's own checks before its token is spent, then its rounds.
pub async fn get(request: &GetPromptRequestParams, pending: Pending) -> Reply {
    let declared = Declared::from_capabilities(pending.capabilities());
    match request.name.as_str() {
        PLAN_DINNER => {
            let cuisine = request
                .arguments
                .as_ref()
                .and_then(|a| a.get("cuisine"))
                .and_then(|c| c.as_str())
                .unwrap_or_default()
                .to_lowercase();
            let Some(fresh_menu) = dishes(&cuisine) else {
                return Err(ErrorData::invalid_params(
                    "cuisine must be italian, japanese or mexican",
                    None,
                ));
            };
            declared.require_form()?;
            pending
                .run(|call| plan_dinner(call, &cuisine, &fresh_menu))
                .await
        }
        #[cfg(feature = "testing")]
        conformance::PROMPT => {
            declared.require_form()?;
            pending.run(conformance::prompt).await
        }
        other => Err(ErrorData::invalid_params(
            format!("unknown prompt: {other}"),
            None,
        )),
    }
}

/// The example prompt.
pub const PLAN_DINNER: &str = "plan_dinner";

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
        #[cfg(feature = "testing")]
        Prompt::new(
            conformance::PROMPT,
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
fn plan_dinner(call: &Call, cuisine: &str, fresh_menu: &[(String, Vec<String>)]) -> Reply {
    let question = || {
        input::form(
            "Any dietary restrictions? (comma-separated, e.g. dairy, gluten; empty for none)",
            json!({"restrictions": {"type": "string"}}),
            &["restrictions"],
        )
    };
    let Some(menu) = call.state::<Menu>()? else {
        let menu = Menu {
            cuisine: cuisine.to_owned(),
            dishes: fresh_menu.to_vec(),
        };
        return Ok(call
            .pause(&menu, input::one("restrictions", question()))?
            .into());
    };
    let Answer::Accepted(form) = input::answer(call.input_responses(), "restrictions") else {
        return Ok(call
            .pause(&menu, input::one("restrictions", question()))?
            .into());
    };
    let avoid: Vec<String> = input::text_field(form, "restrictions")
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
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description("Dinner plan")
            .into(),
    )
}
