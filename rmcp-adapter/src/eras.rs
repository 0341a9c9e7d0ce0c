//! One flow for both eras: [`Pending::run`] runs a pausable handler's rounds the way the
//! request's protocol revision asks for.
//!
//! * **2026-07-28** (Multi-Round-Trip Requests): the token is spent, the handler runs one
//!   round, and an `input_required` result (with its sealed `requestState`) goes back to the
//!   client, which retries. Exactly [`Pending::commit`] followed by the round.
//! * **2025-11-25 / 2025-06-18 sessions** (an `initialize` handshake, no `requestState`):
//!   every round runs in this process. Each round's input requests are sent to the client as
//!   server-to-client requests within the session (`elicitation/create`,
//!   `sampling/createMessage`, `roots/list`), its answers become the next round's
//!   [`Call::input_responses`], and the state the round paused with is handed to the next
//!   round in memory ([`Call::state`] reads it the same way): nothing is sealed, the round cap
//!   still applies, and each answer must come within the engine's token lifetime, as a
//!   2026-07-28 client's retry must. A kind of request the client did not declare at
//!   `initialize` is not sent: the call fails with `-32021` naming the capability.
//!
//! The handler is written once, as rounds over a [`Call`]:
//!
//! ```
//! # use mrtr_rmcp::input::Declared;
//! # use mrtr_rmcp::{HasMrtr, Mrtr, Parameters};
//! # use mrtr_std::engine::{Backend, Engine, EngineConfig};
//! # use mrtr_std::keys::KeyConfig;
//! # use mrtr_replay::AnyReplayCache;
//! # use rmcp::model::{CallToolResponse, ErrorData};
//! # use rmcp::{tool, tool_router};
//! # #[derive(Clone)]
//! # struct Server { mrtr: Mrtr }
//! # impl HasMrtr for Server { fn mrtr(&self) -> &Mrtr { &self.mrtr } }
//! # #[derive(serde::Deserialize, schemars::JsonSchema)]
//! # struct Args { party: u32 }
//! # mod booking {
//! #     use mrtr_rmcp::{Call, input};
//! #     use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData};
//! #     /// One round: ask for a date, then book.
//! #     pub fn round(call: &Call, args: &super::Args) -> Result<CallToolResponse, ErrorData> {
//! #         if call.state::<bool>()?.is_none() {
//! #             let ask = input::form("Date?", serde_json::json!({"date": {"type": "string"}}), &[]);
//! #             return Ok(call.pause(&true, input::one("date", ask))?.into());
//! #         }
//! #         let date = match input::answer(call.input_responses(), "date") {
//! #             input::Answer::Accepted(form) => input::text_field(form, "date").unwrap_or("?"),
//! #             _ => "?",
//! #         };
//! #         let text = format!("{} booked on {date}", args.party);
//! #         Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
//! #     }
//! # }
//! # #[tool_router]
//! # impl Server {
//! #[tool(description = "Books a table")]
//! async fn book(&self, Parameters { params, pending }: Parameters<Args>)
//!     -> Result<CallToolResponse, ErrorData>
//! {
//!     Declared::from_capabilities(pending.capabilities()).require_form()?;
//!     pending.run(|call| booking::round(call, &params)).await
//! }
//! # }
//! # #[rmcp::tool_handler(router = Self::tool_router())]
//! # impl rmcp::ServerHandler for Server {
//! #     fn get_info(&self) -> rmcp::model::ServerConfig {
//! #         rmcp::model::ServerConfig::new(rmcp::model::ServerCapabilities::builder().enable_tools().build())
//! #     }
//! # }
//! # /// A client that declares form elicitation and answers every form with a date.
//! # #[derive(Clone)]
//! # struct Client;
//! # impl rmcp::ClientHandler for Client {
//! #     fn get_info(&self) -> rmcp::model::ClientConfig {
//! #         let caps = serde_json::from_value(serde_json::json!({"elicitation": {"form": {}}})).unwrap();
//! #         rmcp::model::ClientConfig::new(caps, rmcp::model::Implementation::new("doc", "1"))
//! #     }
//! #     async fn create_elicitation(&self, _: rmcp::model::ElicitRequestParams,
//! #         _: rmcp::service::RequestContext<rmcp::RoleClient>) -> Result<rmcp::model::ElicitResult, ErrorData> {
//! #         let mut answer = rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept);
//! #         answer.content = Some(serde_json::json!({"date": "2026-12-25"}));
//! #         Ok(answer)
//! #     }
//! # }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use rmcp::model::ProtocolVersion;
//! # use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
//! # let keys = KeyConfig::parse_env("current=k1; k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")?;
//! # let engine = Engine::new(Backend::Aes256Gcm, keys, EngineConfig::for_audience("booking"), AnyReplayCache::memory(1_000))?;
//! # let server = Server { mrtr: Mrtr::new(engine) };
//! # // The same tool in both eras, over an in-memory transport: MRTR rounds (2026-07-28),
//! # // and server-to-client elicitation in an initialized session (2025-11-25).
//! # let eras = [
//! #     ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
//! #     ClientLifecycleMode::Initialize,
//! # ];
//! # for lifecycle in eras {
//! #     let (server_io, client_io) = tokio::io::duplex(64 * 1024);
//! #     let served = server.clone();
//! #     tokio::spawn(async move {
//! #         if let Ok(running) = served.serve(server_io).await { let _ = running.waiting().await; }
//! #     });
//! #     let args = serde_json::json!({"party": 2}).as_object().cloned().unwrap_or_default();
//! #     let params = rmcp::model::CallToolRequestParams::new("book").with_arguments(args);
//! #     // Bounded: a server task that failed would leave the client waiting.
//! #     let result = tokio::time::timeout(std::time::Duration::from_secs(20), async {
//! #         let client = Client.serve_with_lifecycle(client_io, lifecycle).await?;
//! #         let result = client.call_tool(params).await?;
//! #         client.cancel().await?;
//! #         Ok::<_, Box<dyn std::error::Error>>(result)
//! #     }).await??;
//! #     assert_eq!(result.content[0].as_text().map(|t| t.text.as_str()), Some("2 booked on 2026-12-25"));
//! # }
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use mrtr_replay::AsyncReplayCache;
use mrtr_std::core::Round;
use mrtr_std::jsonrpc::PROTOCOL_VERSION_META;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolResponse, ErrorData, GetPromptResponse, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, ProtocolVersion, ReadResourceResponse, ServerRequest,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use crate::call::{Call, Local, Origin, Pending};
use crate::error::ToErrorData;
use crate::input::{self, Declared};

/// What one round of a pausable handler gives: its result type, which either completes the
/// request or asks for input. Implemented for rmcp's three pausable responses.
pub trait RoundResult: Sized {
    /// The `input_required` result, if the round paused; the value itself otherwise.
    fn into_paused(self) -> Result<InputRequiredResult, Self>;
}

impl RoundResult for CallToolResponse {
    fn into_paused(self) -> Result<InputRequiredResult, Self> {
        match self {
            CallToolResponse::InputRequired(paused) => Ok(paused),
            other => Err(other),
        }
    }
}

impl RoundResult for GetPromptResponse {
    fn into_paused(self) -> Result<InputRequiredResult, Self> {
        match self {
            GetPromptResponse::InputRequired(paused) => Ok(paused),
            other => Err(other),
        }
    }
}

impl RoundResult for ReadResourceResponse {
    fn into_paused(self) -> Result<InputRequiredResult, Self> {
        match self {
            ReadResourceResponse::InputRequired(paused) => Ok(paused),
            other => Err(other),
        }
    }
}

/// The future of one round of [`Pending::run_async`]: boxed, `Send`, and borrowing the call.
pub type RoundFuture<'c, T> = Pin<Box<dyn Future<Output = Result<T, ErrorData>> + Send + 'c>>;

pin_project_lite::pin_project! {
    /// One round's answer to the driver: at once (a synchronous round, nothing boxed) or
    /// later (an asynchronous one).
    #[project = RoundStepProj]
    enum RoundStep<'c, T> {
        Now { answer: Option<Result<T, ErrorData>> },
        Later { future: RoundFuture<'c, T> },
    }
}

impl<T> Future for RoundStep<'_, T> {
    type Output = Result<T, ErrorData>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            RoundStepProj::Now { answer } => Poll::Ready(answer.take().unwrap_or_else(|| {
                Err(ErrorData::internal_error(
                    "Internal error: a round was polled after it completed",
                    None,
                ))
            })),
            RoundStepProj::Later { future } => future.as_mut().poll(cx),
        }
    }
}

/// Whether the request `ctx` belongs to was made in a session opened by `initialize`
/// (protocol revisions up to 2025-11-25), where a server asks for input with
/// server-to-client requests instead of `input_required` results.
pub fn is_2025_era(ctx: &RequestContext<RoleServer>) -> bool {
    protocol(ctx).1
}

/// The request's protocol revision and whether it is of the `initialize` era: what rmcp's
/// `RequestContext::protocol_version` answers (`_meta`'s string, else the session's, else
/// none: an empty version), read in place instead of decoded into a new value.
pub(crate) fn protocol(ctx: &RequestContext<RoleServer>) -> (String, bool) {
    let version = match ctx.meta.get(PROTOCOL_VERSION_META) {
        Some(Value::String(v)) => Some(v.clone()),
        _ => ctx
            .peer
            .peer_info()
            .map(|info| info.protocol_version.as_str().to_owned()),
    };
    let era_2025 = version
        .as_deref()
        .is_some_and(|v| v < ProtocolVersion::NO_INITIALIZE.as_str());
    (version.unwrap_or_default(), era_2025)
}

impl<R: AsyncReplayCache> Pending<R> {
    /// Spends the token and runs the handler's rounds (`round`) as the request's era asks:
    /// one round answered to the client in 2026-07-28, every round in this process in a
    /// 2025-era session. See the [module docs](crate::eras).
    ///
    /// Run the request's own checks (a capability it did not declare, invalid arguments)
    /// before calling it, as before [`Pending::commit`].
    ///
    /// The future is kept small (a block over `self`; the exchange with a 2025-era client is
    /// boxed): rmcp's per-request task is as large as the largest handler future.
    pub fn run<T: RoundResult + Send>(
        self,
        mut round: impl FnMut(&Call<R>) -> Result<T, ErrorData> + Send,
    ) -> impl Future<Output = Result<T, ErrorData>> {
        self.drive(move |call| RoundStep::Now {
            answer: Some(round(call)),
        })
    }

    /// [`Pending::run`] with rounds that may `.await` (a ledger, a database, another
    /// service): each round returns its future boxed, `|call| Box::pin(async move { ... })`.
    /// (Boxed and `Send`, so that rmcp's handler future stays `Send`: an `async` closure
    /// borrowing the call would not be, in today's Rust.)
    ///
    /// ```
    /// # use mrtr_rmcp::{Call, Pending};
    /// # use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData};
    /// # async fn seats_left() -> u32 { 4 }
    /// # async fn book(pending: Pending) -> Result<CallToolResponse, ErrorData> {
    /// pending.run_async(|call: &Call| Box::pin(async move {
    ///     let seats = seats_left().await;       // awaits inside a round
    ///     let party = call.caller().subject().unwrap_or("anonymous");
    ///     let text = format!("{seats} seats left for {party}");
    ///     Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    /// })).await
    /// # }
    /// ```
    pub fn run_async<T: RoundResult + Send>(
        self,
        mut round: impl for<'c> FnMut(&'c Call<R>) -> RoundFuture<'c, T> + Send,
    ) -> impl Future<Output = Result<T, ErrorData>> {
        self.drive(move |call| RoundStep::Later {
            future: round(call),
        })
    }

    /// Spends the token and runs the rounds: [`Pending::run`] and [`Pending::run_async`].
    #[expect(
        clippy::manual_async_fn,
        reason = "an async fn would keep a second copy of the request in its future"
    )]
    fn drive<T: RoundResult + Send>(
        self,
        mut round: impl for<'c> FnMut(&'c Call<R>) -> RoundStep<'c, T> + Send,
    ) -> impl Future<Output = Result<T, ErrorData>> {
        async move {
            let era_2025 = self.req.origin.era_2025;
            let mut call = self.commit().await?;
            if !era_2025 {
                return round(&call).await;
            }
            call.local = Some(Box::new(Local {
                state: None,
                round: Round::FIRST,
                paused: Default::default(),
            }));
            loop {
                let paused = match round(&call).await?.into_paused() {
                    Err(complete) => return Ok(complete),
                    Ok(paused) => paused,
                };
                // The state the round kept through Call::pause/retry; none for a round that
                // asks without state (the answers alone carry the next round, as a 2026-07-28
                // retry without requestState would).
                let state = call
                    .local
                    .as_ref()
                    .and_then(|l| l.paused.lock().ok()?.take());
                let asks = paused
                    .input_requests
                    .as_ref()
                    .is_some_and(|r| !r.is_empty());
                if state.is_none() && !asks {
                    tracing::error!(target: "mrtr", target_name = %call.req.binding.target,
                        "a round returned input_required with neither input requests nor state");
                    return Err(ErrorData::internal_error(
                        "Internal error: the handler paused without input requests or state",
                        None,
                    ));
                }
                // A round that asks without state must also be below the cap: the next round
                // would run beyond it.
                let round = call.local.as_ref().map_or(Round::FIRST, |l| l.round);
                if state.is_none() {
                    keep_nothing(&call, round)?;
                }
                let ttl = Duration::from_millis(call.engine.limits().ttl_ms);
                let answers = match paused.input_requests {
                    // Boxed: the exchange's future is over 2 KiB, and inline it would enlarge
                    // every request's future (2026-07-28 requests never get here).
                    Some(requests) if !requests.is_empty() => {
                        Box::pin(ask(&call.req.origin, requests, ttl)).await?
                    }
                    // State only: the next round runs now.
                    _ => InputResponses::new(),
                };
                call.req.input_responses = Some(answers);
                call.local = Some(Box::new(Local {
                    state,
                    round: round.next().unwrap_or(round),
                    paused: Default::default(),
                }));
            }
        }
    }
}

/// The pause checks for a round that asks without keeping state (mrtr-std's, as for any
/// pause).
fn keep_nothing<R>(call: &Call<R>, round: Round) -> Result<(), ErrorData> {
    call.engine
        .check_local_pause(&call.req.binding.request(), round, 0)
        .map_err(|e| e.to_error_data())
}

/// Asks the session's client each input request in turn (server-to-client requests), each
/// answer within `ttl`; returns the answers under the requests' keys.
async fn ask(
    origin: &Origin,
    requests: InputRequests,
    ttl: Duration,
) -> Result<InputResponses, ErrorData> {
    let declared = Declared::from_capabilities(origin.capabilities.as_ref());
    let mut answers = InputResponses::new();
    for (key, request) in requests {
        let (kind, request) = match request {
            InputRequest::Elicitation(r) => {
                declared.require_form()?;
                ("elicitation/create", ServerRequest::ElicitRequest(r))
            }
            InputRequest::CreateMessage(r) => {
                if !declared.sampling {
                    return Err(input::missing(json!({"sampling": {}})));
                }
                (
                    "sampling/createMessage",
                    ServerRequest::CreateMessageRequest(r),
                )
            }
            InputRequest::ListRoots(r) => {
                if !declared.roots {
                    return Err(input::missing(json!({"roots": {}})));
                }
                ("roots/list", ServerRequest::ListRootsRequest(r))
            }
            _ => {
                return Err(ErrorData::internal_error(
                    "Internal error: an input request of a kind this server cannot send",
                    None,
                ));
            }
        };
        let answer = match tokio::time::timeout(ttl, origin.peer.send_request(request)).await {
            Ok(Ok(result)) => serde_json::to_value(result).unwrap_or(Value::Null),
            Ok(Err(e)) => {
                tracing::info!(target: "mrtr", kind, error = %e, "the client did not answer");
                return Err(ErrorData::internal_error(
                    format!("the client did not answer {kind}"),
                    Some(json!({"reason": "input_not_answered"})),
                ));
            }
            Err(_) => {
                tracing::info!(target: "mrtr", kind, "the client did not answer in time");
                return Err(ErrorData::internal_error(
                    format!("the client did not answer {kind} in time"),
                    Some(json!({"reason": "input_timed_out"})),
                ));
            }
        };
        answers.insert(key, answer);
    }
    Ok(answers)
}
