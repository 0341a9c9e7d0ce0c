//! The tools, as an rmcp `#[tool]` router: `book_table` and `countdown` (state-only pauses,
//! for the round cap). The conformance suite's tools are in `conformance.rs` (feature
//! `testing`).
//!
//! Every tool takes `mrtr_rmcp::Parameters`: its typed arguments and the verified request.
//! It checks what is the request's fault first (a capability not declared, invalid input),
//! then runs its flow with `Pending::run`: the token is spent, and the flow's rounds run as
//! the request's era asks (one round per request in 2026-07-28; every round in process, each
//! round's questions sent to the client as server-to-client requests, in a 2025-era session).

use mrtr_rmcp::Parameters;
use mrtr_rmcp::input::Declared;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData};
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};

use crate::booking;
use crate::server::Hosted;

type Reply = Result<CallToolResponse, ErrorData>;

/// `countdown`'s parameters.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct CountdownArgs {
    /// How many state-only pauses before completing (0 to 100).
    #[schemars(range(min = 0, max = 100))]
    pauses: u64,
}

/// Sealed state of `countdown`.
#[derive(Serialize, Deserialize)]
struct Left {
    pauses: u64,
}

#[tool_router(vis = "pub")]
impl Hosted {
    #[tool(description = "Books a restaurant table: asks for a date, then for confirmation")]
    async fn book_table(&self, Parameters { params, pending }: Parameters<booking::Args>) -> Reply {
        let declared = Declared::from_capabilities(pending.capabilities());
        if let Some(refusal) = booking::check(&params, declared)? {
            return Ok(refusal.into());
        }
        let reply = pending.run(|call| booking::flow(call, &params)).await?;
        if booking::is_booked(&reply) {
            self.app().subs.bookings_changed().await;
        }
        Ok(reply)
    }

    #[tool(description = "Pauses `pauses` times with state-only results, then completes")]
    async fn countdown(&self, Parameters { params, pending }: Parameters<CountdownArgs>) -> Reply {
        if params.pauses > 100 {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "pauses must be an integer from 0 to 100",
            )])
            .into());
        }
        pending
            .run(|call| {
                let left = call.state::<Left>()?.map_or(params.pauses, |l| l.pauses);
                if left == 0 {
                    let text = format!("countdown finished after {} pauses", params.pauses);
                    return Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into());
                }
                Ok(call.retry(&Left { pauses: left - 1 })?.into())
            })
            .await
    }
}
