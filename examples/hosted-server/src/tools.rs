//! The tools, as an rmcp `#[tool]` router: `book_table`, `countdown` (state-only pauses, for
//! the round cap) and the conformance suite's tools.
//!
//! Every tool takes `mrtr_rmcp::Parameters`: its typed arguments and the verified request.
//! It checks what is the request's fault first (a capability not declared, invalid input),
//! then runs its flow with `Pending::run`: the token is spent, and the flow's rounds run as
//! the request's era asks (one round per request in 2026-07-28; every round in process, each
//! round's questions sent to the client as server-to-client requests, in a 2025-era session).

use mrtr_rmcp::input::Declared;
use mrtr_rmcp::{Call, Parameters, Pending};
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData, JsonObject};
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};

use crate::booking;
use crate::conformance::{self, Needs};
use crate::server::Hosted;

type Reply = Result<CallToolResponse, ErrorData>;

/// Checks what the request must declare, then runs the flow's rounds.
async fn begin(pending: Pending, needs: Needs, flow: fn(&Call) -> Reply) -> Reply {
    needs.check(Declared::from_capabilities(pending.capabilities()))?;
    pending.run(flow).await
}

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

    #[tool(
        name = "test_input_required_result_elicitation",
        description = "Asks for a name, then greets"
    )]
    async fn t_elicitation(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Form, conformance::elicitation).await
    }

    #[tool(
        name = "test_input_required_result_sampling",
        description = "Asks the client's model a question"
    )]
    async fn t_sampling(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Sampling, conformance::sampling).await
    }

    #[tool(
        name = "test_input_required_result_list_roots",
        description = "Asks for the client's roots"
    )]
    async fn t_list_roots(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Roots, conformance::list_roots).await
    }

    #[tool(
        name = "test_input_required_result_request_state",
        description = "Confirms with sealed state"
    )]
    async fn t_request_state(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Form, conformance::request_state).await
    }

    #[tool(
        name = "test_input_required_result_multiple_inputs",
        description = "Asks three kinds at once"
    )]
    async fn t_multiple_inputs(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::All, conformance::multiple_inputs).await
    }

    #[tool(
        name = "test_input_required_result_multi_round",
        description = "Two rounds of questions"
    )]
    async fn t_multi_round(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Form, conformance::multi_round).await
    }

    #[tool(
        name = "test_input_required_result_tampered_state",
        description = "Rejects altered state"
    )]
    async fn t_tampered_state(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Form, conformance::tampered_state).await
    }

    #[tool(
        name = "test_input_required_result_capabilities",
        description = "Asks only what the client can answer"
    )]
    async fn t_capabilities(&self, Parameters { pending, .. }: Parameters<JsonObject>) -> Reply {
        begin(pending, Needs::Any, conformance::capabilities).await
    }
}
