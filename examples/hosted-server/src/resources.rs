//! A resource that pauses once: the bookings report asks which month to cover.

use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::model::{ErrorData, ReadResourceResult, Resource, ResourceContents};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::ask::{self, Answer};
use crate::call::{Call, Outcome};

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
struct Pending {
    requested_at_ms: u64,
    requested_by: String,
}

/// One round of the report.
pub fn report(call: &Call<'_>) -> Result<Outcome<ReadResourceResult>, ErrorData> {
    call.caps.require_form()?;
    let question = || {
        ask::form(
            "Which month should the bookings report cover (YYYY-MM)?",
            json!({"month": {"type": "string", "description": "YYYY-MM"}}),
            &[],
        )
    };
    let Some(pending) = call.state::<Pending>()? else {
        let requested_at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or_default();
        let pending = Pending {
            requested_at_ms,
            requested_by: call.caller.subject().unwrap_or("anonymous").to_owned(),
        };
        return Outcome::ask(&pending, ask::one("month", question()));
    };
    let month = match ask::answer(call.responses, "month") {
        Answer::Accepted(form) => ask::text_field(form, "month").filter(|m| is_month(m)),
        _ => None,
    };
    let Some(month) = month else {
        return Outcome::ask(&pending, ask::one("month", question()));
    };
    let text = format!(
        "Bookings report for {month}\nrequested by {} at {} ms since the epoch\n(no bookings recorded by this example)\n",
        pending.requested_by, pending.requested_at_ms
    );
    Ok(Outcome::Done(ReadResourceResult::new(vec![
        ResourceContents::text(text, REPORT_URI),
    ])))
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
