//! A resource that pauses once: the bookings report asks which month to cover.

use std::time::{SystemTime, UNIX_EPOCH};

use mrtr_rmcp::input::{self, Answer, Declared};
use rmcp::model::{
    ErrorData, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The report's URI.
pub const REPORT_URI: &str = "mrtr://reports/bookings";

/// Every resource this server lists.
pub fn list() -> Vec<Resource> {
    vec![
        Resource::new(REPORT_URI, "bookings-report")
            .with_description("Monthly bookings report; asks which month first")
            .with_mime_type("text/plain"),
    ]
}

/// Sealed state: when and for whom the report was requested (round 1).
#[derive(Debug, Serialize, Deserialize)]
struct Requested {
    requested_at_ms: u64,
    requested_by: String,
}

/// The report: form elicitation must be declared (checked before the token is spent), then
/// its rounds run ([`round`]).
pub async fn report(pending: mrtr_rmcp::Pending) -> Result<ReadResourceResponse, ErrorData> {
    Declared::from_capabilities(pending.capabilities()).require_form()?;
    pending.run(round).await
}

/// One round of the report: it asks for the month, then it answers.
fn round(call: &mrtr_rmcp::Call) -> Result<ReadResourceResponse, ErrorData> {
    let question = || {
        input::form(
            "Which month should the bookings report cover (YYYY-MM)?",
            json!({"month": {"type": "string", "description": "YYYY-MM"}}),
            &[],
        )
    };
    let Some(pending) = call.state::<Requested>()? else {
        let requested_at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or_default();
        let pending = Requested {
            requested_at_ms,
            requested_by: call.caller().subject().unwrap_or("anonymous").to_owned(),
        };
        return Ok(call
            .pause(&pending, input::one("month", question()))?
            .into());
    };
    let month = match input::answer(call.input_responses(), "month") {
        Answer::Accepted(form) => input::text_field(form, "month").filter(|m| is_month(m)),
        _ => None,
    };
    let Some(month) = month else {
        return Ok(call
            .pause(&pending, input::one("month", question()))?
            .into());
    };
    let text = format!(
        "Bookings report for {month}\nrequested by {} at {} ms since the epoch\n(no bookings recorded by this example)\n",
        pending.requested_by, pending.requested_at_ms
    );
    Ok(ReadResourceResult::new(vec![ResourceContents::text(text, REPORT_URI)]).into())
}

fn is_month(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 7
        && b[4] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || c.is_ascii_digit())
        && matches!(s[5..7].parse::<u32>(), Ok(1..=12))
}

#[cfg(test)]
mod tests {
    #[test]
    fn months() {
        assert!(super::is_month("2026-11"));
        assert!(!super::is_month("2026-13"));
        assert!(!super::is_month("2026/11"));
        assert!(!super::is_month("26-11"));
    }
}
