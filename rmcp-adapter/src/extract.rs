//! [`Parameters`]: the extractor for rmcp `#[tool]` functions: the tool's parameters and its
//! verified request in one.
//!
//! It is named like rmcp's own `Parameters` on purpose: rmcp's `#[tool]` macro takes a
//! tool's input schema from the parameter whose type is called `Parameters`, so swapping
//! `rmcp::handler::server::wrapper::Parameters<Args>` for `mrtr_rmcp::Parameters<Args>`
//! keeps the schema (from `Args: JsonSchema`) and adds mrtr.

use mrtr_replay::{AnyReplayCache, AsyncReplayCache};
use mrtr_std::jsonrpc::Method;
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{ErrorData, JsonObject};
use serde::de::DeserializeOwned;

use crate::call::Pending;
use crate::mrtr::HasMrtr;

/// A `#[tool]` function's parameters `P` and its verified request, in one extractor.
///
/// It takes the call's `arguments` (so it replaces rmcp's `Parameters<P>`: use one or the
/// other; a second extractor of the arguments would see none), digests them exactly as sent, verifies the `requestState` (every check but the
/// replay record: rmcp's extractors are synchronous, and the replay store is asynchronous),
/// and then deserializes `P`. The function runs its own checks, then
/// [`Pending::commit`]`().await` spends the token, keeping mrtr's order of checks intact: a
/// request the function refuses before the commit leaves its token usable.
///
/// ```
/// # use mrtr_rmcp::input::{self, Declared};
/// # use mrtr_rmcp::{HasMrtr, Mrtr, Parameters};
/// # use mrtr_std::engine::{Backend, Engine, EngineConfig};
/// # use mrtr_std::keys::KeyConfig;
/// # use mrtr_replay::AnyReplayCache;
/// # use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData};
/// # use rmcp::{tool, tool_router};
/// # use serde::{Deserialize, Serialize};
/// # use serde_json::json;
/// # #[derive(Clone)]
/// # struct Server { mrtr: Mrtr }
/// # impl HasMrtr for Server { fn mrtr(&self) -> &Mrtr { &self.mrtr } }
/// # #[derive(Deserialize, schemars::JsonSchema)]
/// # struct BookArgs { party: u32 }
/// # #[derive(Serialize, Deserialize)]
/// # struct Booking { party: u32 }
/// # #[tool_router]
/// # impl Server {
/// #[tool(description = "Books a table")]
/// async fn book_table(&self, Parameters { params, pending }: Parameters<BookArgs>)
///     -> Result<CallToolResponse, ErrorData>
/// {
///     let declared = Declared::from_capabilities(pending.capabilities());
///     declared.require_form()?;                            // refused: token unspent
///     let call = pending.commit().await?;                  // single use from here
///     match call.state::<Booking>()? {
///         None => {
///             let ask = input::form("Date?", json!({"date": {"type": "string"}}), &[]);
///             let state = Booking { party: params.party };
///             Ok(call.pause(&state, input::one("date", ask))?.into())
///         }
///         Some(Booking { party }) => {
///             let done = ContentBlock::text(format!("table for {party} booked"));
///             Ok(CallToolResult::success(vec![done]).into())
///         }
///     }
/// }
/// # }
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let keys = KeyConfig::parse_env("current=k1; k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")?;
/// # let engine = Engine::new(Backend::Aes256Gcm, keys, EngineConfig::for_audience("booking"), AnyReplayCache::memory(1_000))?;
/// # let _server = Server { mrtr: Mrtr::new(engine) };
/// // The tool's input schema is `BookArgs`'s:
/// let tool = Server::tool_router().get("book_table").cloned().expect("routed");
/// assert!(tool.input_schema["properties"].get("party").is_some());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Parameters<P = JsonObject, R = AnyReplayCache> {
    /// The tool's parameters, deserialized from `arguments`.
    pub params: P,
    /// The verified request; commit it to spend the token.
    pub pending: Pending<R>,
}

impl<S, P, R> FromContextPart<ToolCallContext<'_, S>> for Parameters<P, R>
where
    S: HasMrtr<R>,
    P: DeserializeOwned,
    R: AsyncReplayCache,
{
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        let arguments = context.arguments.take();
        let request_state = context.request_state.take();
        let input_responses = context.input_responses.take();
        let pending = context.service.mrtr().verify(
            Method::ToolsCall,
            &context.name,
            arguments.as_ref(),
            request_state.as_deref(),
            input_responses,
            &context.request_context,
        )?;
        let params =
            serde_json::from_value(serde_json::Value::Object(arguments.unwrap_or_default()))
                .map_err(|e| {
                    ErrorData::invalid_params(
                        format!("failed to deserialize parameters: {e}"),
                        None,
                    )
                })?;
        Ok(Self { params, pending })
    }
}

/// The input schema of the tool is `P`'s.
impl<P: schemars::JsonSchema, R> schemars::JsonSchema for Parameters<P, R> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        P::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        P::json_schema(generator)
    }
}
