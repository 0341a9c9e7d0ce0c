//! `book_table`: two rounds of form elicitation before it completes.
//!
//! Round 1 asks for a date; round 2 asks to confirm the date and party size; round 3 books.
//! The date chosen in round 1 travels only in the sealed continuation: the confirmation
//! answer does not repeat it.

use rmcp::model::{CallToolResult, ContentBlock, ErrorData};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::ask::{self, Answer};
use crate::call::{Call, Outcome};

/// The tool's name.
pub const NAME: &str = "book_table";

/// Largest party the example restaurant seats.
pub const MAX_PARTY: u64 = 20;

/// Where a booking stands between rounds.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
enum Booking {
    /// The date question is out.
    AwaitDate,
    /// The date is chosen; the confirmation question is out.
    AwaitConfirm { date: String },
}

/// The input schema.
pub fn input_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "party_size": {"type": "integer", "minimum": 1, "maximum": MAX_PARTY},
            "restaurant": {"type": "string"}
        },
        "required": ["party_size"]
    })
}

/// One round of the booking flow.
pub fn flow(call: &Call<'_>) -> Result<Outcome<CallToolResult>, ErrorData> {
    let party = match call.arg_u64("party_size") {
        Some(n @ 1..=MAX_PARTY) => n,
        _ => {
            return Ok(Outcome::Done(CallToolResult::error(vec![
                ContentBlock::text(format!(
                    "party_size must be an integer from 1 to {MAX_PARTY}"
                )),
            ])));
        }
    };
    let restaurant = call.arg_str("restaurant").unwrap_or("Chez Ferris");
    call.caps.require_form()?;
    match call.state::<Booking>()? {
        None => ask_date(None),
        Some(Booking::AwaitDate) => match ask::answer(call.responses, "date") {
            Answer::Accepted(form) => match ask::text_field(form, "date") {
                Some(date) if is_date(date) => ask_confirm(date, party, restaurant),
                Some(bad) => ask_date(Some(bad)),
                None => ask_date(None),
            },
            Answer::Refused => cancelled("no date was chosen"),
            Answer::Missing => ask_date(None),
        },
        Some(Booking::AwaitConfirm { date }) => match ask::answer(call.responses, "confirm") {
            Answer::Accepted(form) => match form.get("confirm").and_then(|v| v.as_bool()) {
                Some(true) => booked(call, &date, party, restaurant),
                Some(false) => cancelled("not confirmed"),
                None => ask_confirm(&date, party, restaurant),
            },
            Answer::Refused => cancelled("not confirmed"),
            Answer::Missing => ask_confirm(&date, party, restaurant),
        },
    }
}

fn ask_date(rejected: Option<&str>) -> Result<Outcome<CallToolResult>, ErrorData> {
    let message = match rejected {
        Some(bad) => format!("\"{bad}\" is not a date (YYYY-MM-DD). Which date would you like?"),
        None => "Which date would you like to book (YYYY-MM-DD)?".to_owned(),
    };
    let question = ask::form(
        &message,
        json!({"date": {"type": "string", "format": "date", "description": "YYYY-MM-DD"}}),
        &[],
    );
    Outcome::ask(&Booking::AwaitDate, ask::one("date", question))
}

fn ask_confirm(
    date: &str,
    party: u64,
    restaurant: &str,
) -> Result<Outcome<CallToolResult>, ErrorData> {
    let question = ask::form(
        &format!("Book a table for {party} at {restaurant} on {date}?"),
        json!({"confirm": {"type": "boolean", "description": "Yes, book it"}}),
        &[],
    );
    let state = Booking::AwaitConfirm {
        date: date.to_owned(),
    };
    Outcome::ask(&state, ask::one("confirm", question))
}

fn booked(
    call: &Call<'_>,
    date: &str,
    party: u64,
    restaurant: &str,
) -> Result<Outcome<CallToolResult>, ErrorData> {
    let who = call.caller.subject().unwrap_or("guest");
    let reference = format!("{who}-{}-{party}", date.replace('-', ""));
    Ok(Outcome::Done(CallToolResult::success(vec![
        ContentBlock::text(format!(
            "Booked a table for {party} at {restaurant} on {date} for {who} (ref {reference})."
        )),
    ])))
}

/// Whether a completed `book_table` result is a booking (not a cancellation or an error).
pub fn is_booked(result: &CallToolResult) -> bool {
    result.is_error != Some(true)
        && result
            .content
            .first()
            .and_then(|c| c.as_text())
            .is_some_and(|t| t.text.starts_with("Booked "))
}

fn cancelled(why: &str) -> Result<Outcome<CallToolResult>, ErrorData> {
    Ok(Outcome::Done(CallToolResult::success(vec![
        ContentBlock::text(format!("Booking cancelled: {why}.")),
    ])))
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
    use crate::ask::Caps;
    use crate::auth::Caller;
    use mrtr_std::engine::Step;
    use rmcp::model::InputResponses;

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
    fn fresh_call_asks_for_the_date_and_needs_form_elicitation() {
        let args = serde_json::from_value(json!({"party_size": 2})).unwrap();
        let caller = Caller::Anonymous;
        let mut call = Call {
            step: &Step::Fresh,
            responses: None,
            arguments: Some(&args),
            caps: Caps {
                form: true,
                ..Caps::default()
            },
            caller: &caller,
        };
        match flow(&call).unwrap() {
            Outcome::Ask { state, requests } => {
                assert!(requests.contains_key("date"));
                let s: Booking = serde_json::from_slice(&state).unwrap();
                assert_eq!(s, Booking::AwaitDate);
            }
            _ => panic!("expected a date question"),
        }
        call.caps = Caps::default();
        let err = flow(&call).err().expect("-32021");
        assert_eq!(err.code.0, -32021);
        let empty = InputResponses::new();
        call.responses = Some(&empty);
        let bad_args = serde_json::from_value(json!({"party_size": 0})).unwrap();
        call.arguments = Some(&bad_args);
        match flow(&call).unwrap() {
            Outcome::Done(r) => assert_eq!(r.is_error, Some(true)),
            _ => panic!("expected a tool error"),
        }
    }
}
