//! `book_table`: two rounds of form elicitation before it completes.
//!
//! Round 1 asks for a date; round 2 asks to confirm the date and party size; round 3 books.
//! The date chosen in round 1 travels only in the sealed continuation: the confirmation
//! answer does not repeat it.

use mrtr_rmcp::Call;
use mrtr_rmcp::input::{self, Answer, Declared};
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ElicitationSchema, ErrorData, StringFormat,
};
use serde::{Deserialize, Serialize};

/// Largest party the example restaurant seats.
pub const MAX_PARTY: u64 = 20;

/// The tool's parameters.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Args {
    /// Guests, from 1 to 20.
    #[schemars(range(min = 1, max = 20))]
    pub party_size: u64,
    /// The restaurant (default: Chez Ferris).
    pub restaurant: Option<String>,
}

/// Where a booking stands between rounds.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
enum Booking {
    /// The date question is out.
    AwaitDate,
    /// The date is chosen; the confirmation question is out.
    AwaitConfirm { date: String },
}

/// What the request must satisfy before its token is spent: a party the restaurant seats
/// (answered with a tool error), and form elicitation declared (`-32021`).
pub fn check(args: &Args, declared: Declared) -> Result<Option<CallToolResult>, ErrorData> {
    if !(1..=MAX_PARTY).contains(&args.party_size) {
        return Ok(Some(CallToolResult::error(vec![ContentBlock::text(
            format!("party_size must be an integer from 1 to {MAX_PARTY}"),
        )])));
    }
    declared.require_form()?;
    Ok(None)
}

/// One round of the booking flow.
pub fn flow(call: &Call, args: &Args) -> Result<CallToolResponse, ErrorData> {
    let party = args.party_size;
    let restaurant = args.restaurant.as_deref().unwrap_or("Chez Ferris");
    let responses = call.input_responses();
    match call.state::<Booking>()? {
        None => ask_date(call, None),
        Some(Booking::AwaitDate) => match input::answer(responses, "date") {
            Answer::Accepted(form) => match input::text_field(form, "date") {
                Some(date) if is_date(date) => ask_confirm(call, date, party, restaurant),
                Some(bad) => ask_date(call, Some(bad)),
                None => ask_date(call, None),
            },
            Answer::Refused => cancelled("no date was chosen"),
            Answer::Missing => ask_date(call, None),
        },
        Some(Booking::AwaitConfirm { date }) => match input::answer(responses, "confirm") {
            Answer::Accepted(form) => match form.get("confirm").and_then(|v| v.as_bool()) {
                Some(true) => booked(call, &date, party, restaurant),
                Some(false) => cancelled("not confirmed"),
                None => ask_confirm(call, &date, party, restaurant),
            },
            Answer::Refused => cancelled("not confirmed"),
            Answer::Missing => ask_confirm(call, &date, party, restaurant),
        },
    }
}

fn ask_date(call: &Call, rejected: Option<&str>) -> Result<CallToolResponse, ErrorData> {
    let message = match rejected {
        Some(bad) => format!("\"{bad}\" is not a date (YYYY-MM-DD). Which date would you like?"),
        None => "Which date would you like to book (YYYY-MM-DD)?".to_owned(),
    };
    let question = input::form_with(&message, date_schema()?);
    Ok(call
        .pause(&Booking::AwaitDate, input::one("date", question))?
        .into())
}

/// The date question's form: one required date (rmcp's typed builder, far cheaper than
/// reading the same schema from JSON on every request).
fn date_schema() -> Result<ElicitationSchema, ErrorData> {
    ElicitationSchema::builder()
        .required_string_with("date", |s| {
            s.format(StringFormat::Date).description("YYYY-MM-DD")
        })
        .build()
        .map_err(schema_error)
}

/// The confirmation's form: one required boolean.
fn confirm_schema() -> Result<ElicitationSchema, ErrorData> {
    ElicitationSchema::builder()
        .required_bool_with("confirm", |b| b.description("Yes, book it"))
        .build()
        .map_err(schema_error)
}

fn schema_error(e: &'static str) -> ErrorData {
    ErrorData::internal_error(format!("elicitation schema: {e}"), None)
}

fn ask_confirm(
    call: &Call,
    date: &str,
    party: u64,
    restaurant: &str,
) -> Result<CallToolResponse, ErrorData> {
    let question = input::form_with(
        &format!("Book a table for {party} at {restaurant} on {date}?"),
        confirm_schema()?,
    );
    let state = Booking::AwaitConfirm {
        date: date.to_owned(),
    };
    Ok(call.pause(&state, input::one("confirm", question))?.into())
}

fn booked(
    call: &Call,
    date: &str,
    party: u64,
    restaurant: &str,
) -> Result<CallToolResponse, ErrorData> {
    let who = call.caller().subject().unwrap_or("guest");
    let reference = format!("{who}-{}-{party}", date.replace('-', ""));
    Ok(CallToolResult::success(vec![ContentBlock::text(format!(
        "Booked a table for {party} at {restaurant} on {date} for {who} (ref {reference})."
    ))])
    .into())
}

/// Whether a completed `book_table` response is a booking (not a cancellation or an error).
pub fn is_booked(response: &CallToolResponse) -> bool {
    let CallToolResponse::Complete(result) = response else {
        return false;
    };
    result.is_error != Some(true)
        && result
            .content
            .first()
            .and_then(|c| c.as_text())
            .is_some_and(|t| t.text.starts_with("Booked "))
}

fn cancelled(why: &str) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResult::success(vec![ContentBlock::text(format!(
        "Booking cancelled: {why}."
    ))])
    .into())
}

/// `YYYY-MM-DD` with a plausible month and day.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|t| t.parse::<u32>().ok());
    let digits = s
        .bytes()
        .enumerate()
        .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    matches!(
        (digits, num(5..7), num(8..10)),
        (true, Some(1..=12), Some(1..=31))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert!(is_date("2026-12-24"));
        assert!(!is_date("2026-13-01"));
        assert!(!is_date("2026-12-32"));
        assert!(!is_date("24/12/2026"));
        assert!(!is_date("2026-1a-01"));
        assert!(!is_date("２０２６-12-24"));
    }

    #[test]
    fn the_checks_before_the_token_is_spent() {
        let form = Declared {
            form: true,
            ..Declared::default()
        };
        let args = |n| Args {
            party_size: n,
            restaurant: None,
        };
        assert_eq!(check(&args(2), form).unwrap(), None);
        let err = check(&args(2), Declared::default()).unwrap_err();
        assert_eq!(err.code.0, -32021);
        let too_many = check(&args(21), form).unwrap().expect("a tool error");
        assert_eq!(too_many.is_error, Some(true));
    }

    /// The typed forms are on the wire exactly what the JSON schemas were before them.
    #[test]
    fn the_typed_forms_are_the_json_forms() {
        let same = |typed: ElicitationSchema, json: serde_json::Value| {
            let typed = serde_json::to_value(input::form_with("q", typed)).unwrap();
            let from_json = serde_json::to_value(input::form("q", json, &[])).unwrap();
            assert_eq!(typed, from_json);
        };
        same(
            date_schema().unwrap(),
            serde_json::json!({"date": {"type": "string", "format": "date", "description": "YYYY-MM-DD"}}),
        );
        same(
            confirm_schema().unwrap(),
            serde_json::json!({"confirm": {"type": "boolean", "description": "Yes, book it"}}),
        );
    }
}
