//! The end-to-end comparison server: the hosted server's `book_table` tool on plain rmcp 3.11,
//! with `requestState` sealed by rmcp's built-in `RequestStateCodec` (HMAC-SHA256, `rs1`)
//! instead of mrtr. `ci/bench-e2e.sh` runs it next to `examples/hosted-server` and drives
//! both with the same load.
//!
//! The tool does what the hosted server's does, round by round: the party size is checked
//! and form elicitation required before the token is opened; round 1 asks for a date, round 2
//! for a confirmation, round 3 books. Its state is the same JSON, sealed with
//! `seal_json_with`, bound (as associated data) to the method, protocol version, tool name,
//! caller and a SHA-256 of the arguments, with a 5-minute TTL, as rmcp's documentation
//! advises. It does what rmcp offers and no more: no single use (rmcp leaves that to the
//! server), no encryption (the codec signs).
//!
//! The HTTP side is the hosted server's rmcp configuration: Streamable HTTP at `/mcp`,
//! 2026-07-28 requests served statelessly with JSON responses, sessions for 2025 clients.
//!
//! With `--state-padding BYTES` it seals every state with a filler member of that many bytes
//! (opening ignores it), so that its token can be made as long as mrtr's: `ci/bench-e2e-instr.sh`
//! counts it that way too, to bound what the longer token costs rmcp's own parsing and
//! serializing (the bound also holds this server's own work on the filler).
//!
//! ```text
//! e2e-rmcp-codec --listen 127.0.0.1:0 --addr-file /tmp/codec.addr [--state-padding BYTES]
//! ```

use std::sync::Arc;
use std::time::Duration;

use mrtr_benches::e2e_server::{self, Options};
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitationSchema, ErrorData, Implementation, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ProtocolVersion, RequestStateCodec, SealOptions, ServerCapabilities,
    ServerConfig, StringFormat,
};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// Largest party the example restaurant seats.
const MAX_PARTY: u64 = 20;

/// Token lifetime (the hosted server's default TTL).
const TTL: Duration = Duration::from_secs(300);

/// The tool's parameters (as the hosted server's).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Args {
    /// Guests, from 1 to 20.
    party_size: u64,
    /// The restaurant (default: Chez Ferris).
    restaurant: Option<String>,
}

/// Where a booking stands between rounds (the hosted server's state, as JSON).
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
enum Booking {
    AwaitDate,
    AwaitConfirm { date: String },
}

/// A state sealed with filler (`--state-padding`), so that this server's token is as long as
/// another's: the booking's members, then `pad`, which opening ignores (an unknown member).
#[derive(Serialize)]
struct Padded<'a> {
    #[serde(flatten)]
    booking: &'a Booking,
    pad: &'a str,
}

/// A `#[tool]` function's parameters and the request's sealed state, opened. Named
/// `Parameters` because rmcp's `#[tool]` macro takes the input schema from the parameter of
/// that name.
struct Parameters<P> {
    params: P,
    /// The opened state (`None`: a fresh call).
    state: Option<Booking>,
    responses: Option<InputResponses>,
    /// What the next token is bound to.
    context: Vec<u8>,
    declared_form: bool,
}

impl<P: schemars::JsonSchema> schemars::JsonSchema for Parameters<P> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        P::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        P::json_schema(generator)
    }
}

/// The uniform refusal of a `requestState` that does not open.
fn rejected() -> ErrorData {
    ErrorData::invalid_params(
        "Invalid or expired requestState",
        Some(json!({"reason": "invalid_request_state"})),
    )
}

impl<P: serde::de::DeserializeOwned> FromContextPart<ToolCallContext<'_, Codec>> for Parameters<P> {
    fn from_context_part(cx: &mut ToolCallContext<'_, Codec>) -> Result<Self, ErrorData> {
        let arguments = cx.arguments.take().unwrap_or_default();
        let version = cx
            .request_context
            .protocol_version()
            .map(|v| v.as_str().to_owned())
            .unwrap_or_default();
        let context = binding(&version, &cx.name, &arguments)?;
        let state = match cx.request_state.take() {
            None => None,
            Some(token) => Some(
                cx.service
                    .codec
                    .open_json_with::<Booking>(&token, &context)
                    .map_err(|_| rejected())?,
            ),
        };
        let declared_form = cx
            .request_context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        let params = serde_json::from_value(Value::Object(arguments))
            .map_err(|e| ErrorData::invalid_params(format!("invalid arguments: {e}"), None))?;
        Ok(Self {
            params,
            state,
            responses: cx.input_responses.take(),
            context,
            declared_form,
        })
    }
}

/// The associated data a token is bound to: method, protocol version, tool, caller
/// (anonymous here: the load carries no credentials) and a digest of the arguments.
fn binding(
    version: &str,
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<Vec<u8>, ErrorData> {
    let args = serde_json::to_vec(arguments)
        .map_err(|e| ErrorData::internal_error(format!("arguments: {e}"), None))?;
    let mut out = Vec::with_capacity(64 + version.len() + tool.len());
    for part in [
        b"tools/call".as_slice(),
        version.as_bytes(),
        tool.as_bytes(),
        b"anonymous",
    ] {
        out.extend_from_slice(part);
        out.push(0);
    }
    out.extend_from_slice(&Sha256::digest(&args));
    Ok(out)
}

/// The server: the codec and the tool router (built once, shared by the handler rmcp makes
/// for each request, as in the hosted server).
#[derive(Clone)]
struct Codec {
    codec: Arc<RequestStateCodec>,
    tool_router: Arc<ToolRouter<Self>>,
    /// Filler sealed with every state (`--state-padding`; empty: none).
    pad: Arc<str>,
}

type Reply = Result<CallToolResponse, ErrorData>;

#[tool_router]
impl Codec {
    #[tool(description = "Books a restaurant table: asks for a date, then for confirmation")]
    async fn book_table(&self, p: Parameters<Args>) -> Reply {
        if !(1..=MAX_PARTY).contains(&p.params.party_size) {
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "party_size must be an integer from 1 to {MAX_PARTY}"
            ))])
            .into());
        }
        if !p.declared_form {
            let caps = serde_json::from_value(json!({"elicitation": {"form": {}}}))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            return Err(ErrorData::missing_required_client_capability(caps));
        }
        let party = p.params.party_size;
        let restaurant = p.params.restaurant.as_deref().unwrap_or("Chez Ferris");
        match &p.state {
            None => self.ask_date(&p, None),
            Some(Booking::AwaitDate) => match accepted(p.responses.as_ref(), "date") {
                Some(form) => match form.get("date").and_then(Value::as_str).map(str::trim) {
                    Some(date) if is_date(date) => self.ask_confirm(&p, date, party, restaurant),
                    Some(bad) if !bad.is_empty() => self.ask_date(&p, Some(bad)),
                    _ => self.ask_date(&p, None),
                },
                None => self.ask_date(&p, None),
            },
            Some(Booking::AwaitConfirm { date }) => {
                match accepted(p.responses.as_ref(), "confirm")
                    .and_then(|f| f.get("confirm"))
                    .and_then(Value::as_bool)
                {
                    Some(true) => Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                        "Booked a table for {party} at {restaurant} on {date} for guest."
                    ))])
                    .into()),
                    Some(false) => Ok(CallToolResult::success(vec![ContentBlock::text(
                        "Booking cancelled: not confirmed.",
                    )])
                    .into()),
                    None => self.ask_confirm(&p, date, party, restaurant),
                }
            }
        }
    }
}

impl Codec {
    fn pause(&self, p: &Parameters<Args>, state: &Booking, key: &str, q: InputRequest) -> Reply {
        let opts = SealOptions::new().associated_data(&p.context).ttl(TTL);
        let sealed = if self.pad.is_empty() {
            self.codec.seal_json_with(state, &opts)
        } else {
            let padded = Padded {
                booking: state,
                pad: &self.pad,
            };
            self.codec.seal_json_with(&padded, &opts)
        };
        let token = sealed.map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut requests = InputRequests::new();
        requests.insert(key.to_owned(), q);
        Ok(InputRequiredResult::new(Some(requests), Some(token)).into())
    }

    fn ask_date(&self, p: &Parameters<Args>, rejected: Option<&str>) -> Reply {
        let message = match rejected {
            Some(bad) => {
                format!("\"{bad}\" is not a date (YYYY-MM-DD). Which date would you like?")
            }
            None => "Which date would you like to book (YYYY-MM-DD)?".to_owned(),
        };
        let schema = ElicitationSchema::builder()
            .required_string_with("date", |s| {
                s.format(StringFormat::Date).description("YYYY-MM-DD")
            })
            .build();
        let q = form(&message, schema)?;
        self.pause(p, &Booking::AwaitDate, "date", q)
    }

    fn ask_confirm(&self, p: &Parameters<Args>, date: &str, party: u64, restaurant: &str) -> Reply {
        let schema = ElicitationSchema::builder()
            .required_bool_with("confirm", |b| b.description("Yes, book it"))
            .build();
        let q = form(
            &format!("Book a table for {party} at {restaurant} on {date}?"),
            schema,
        )?;
        let state = Booking::AwaitConfirm {
            date: date.to_owned(),
        };
        self.pause(p, &state, "confirm", q)
    }
}

/// A form elicitation from a schema built with rmcp's typed builder (as the hosted server's
/// `booking.rs` builds its own).
fn form(
    message: &str,
    schema: Result<ElicitationSchema, &'static str>,
) -> Result<InputRequest, ErrorData> {
    let requested_schema =
        schema.map_err(|e| ErrorData::internal_error(format!("schema: {e}"), None))?;
    Ok(InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_owned(),
            requested_schema,
        },
    )))
}

/// The accepted form under `key`, if the client accepted it.
fn accepted<'a>(
    responses: Option<&'a InputResponses>,
    key: &str,
) -> Option<&'a Map<String, Value>> {
    let r = responses?.get(key)?;
    if r.get("action")?.as_str()? != "accept" {
        return None;
    }
    r.get("content")?.as_object()
}

/// `YYYY-MM-DD` with a plausible month and day.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = b
        .iter()
        .enumerate()
        .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|t| t.parse::<u32>().ok());
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && digits
        && matches!((num(5..7), num(8..10)), (Some(1..=12), Some(1..=31)))
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Codec {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rmcp-codec-server", "0"))
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        e2e_server::versions()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse(std::env::args().skip(1))?;
    if options.replay_capacity.is_some() {
        return Err("--replay-capacity: this server has no replay cache".into());
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key)?;
    let codec = Arc::new(RequestStateCodec::try_new(key.to_vec())?);
    let shutdown = tokio_util::sync::CancellationToken::new();
    let tools = Arc::new(Codec::tool_router());
    let pad: Arc<str> = "x".repeat(options.state_padding).into();
    let service: StreamableHttpService<Codec, _> = StreamableHttpService::new(
        move || {
            Ok(Codec {
                codec: codec.clone(),
                tool_router: tools.clone(),
                pad: pad.clone(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        e2e_server::http_config(&shutdown),
    );
    // Routed as the hosted server routes it (a route, not a nest), like every e2e server.
    let router = axum::Router::new().route_service("/mcp", service);
    e2e_server::serve(&options, router, shutdown).await
}
