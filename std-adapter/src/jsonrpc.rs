//! JSON-RPC glue: what a `tools/call`, `prompts/get` or `resources/read` request binds a token
//! to, and the JSON the server answers with.
//!
//! | method | target | arguments digested |
//! |---|---|---|
//! | `tools/call` | `params.name` | `params.arguments` |
//! | `prompts/get` | `params.name` | `params.arguments` |
//! | `resources/read` | `params.uri` | none (digest of absent arguments) |
//!
//! The protocol version is `params._meta["io.modelcontextprotocol/protocolVersion"]` (bound
//! as the empty string when absent); the principal is whoever the server authenticated. The
//! argument digest is SHA-256 of the RFC 8785 canonical JSON of the arguments ([`crate::jcs`]).
//! Any other method cannot pause, and a `requestState` it carries is ignored.

use std::fmt;

use mrtr_core::error::INVALID_PARAMS;
use mrtr_core::{ArgsDigest, Binding, BindingError, ErrorDetail, Principal, Reason, Rejection};
use serde_json::{Map, Value, json};

use crate::jcs::{self, JcsError};

/// The `_meta` key holding the request's protocol version.
pub const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

/// The methods that may answer `input_required` and carry a `requestState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// `tools/call`: target `params.name`, digest of `params.arguments`.
    ToolsCall,
    /// `prompts/get`: target `params.name`, digest of `params.arguments`.
    PromptsGet,
    /// `resources/read`: target `params.uri`, no arguments.
    ResourcesRead,
}

impl Method {
    /// The method for a JSON-RPC method name, if it is one of the three.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "tools/call" => Some(Self::ToolsCall),
            "prompts/get" => Some(Self::PromptsGet),
            "resources/read" => Some(Self::ResourcesRead),
            _ => None,
        }
    }

    /// The JSON-RPC method name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ToolsCall => "tools/call",
            Self::PromptsGet => "prompts/get",
            Self::ResourcesRead => "resources/read",
        }
    }

    /// The `params` member naming the target.
    pub const fn target_field(self) -> &'static str {
        match self {
            Self::ToolsCall | Self::PromptsGet => "name",
            Self::ResourcesRead => "uri",
        }
    }

    /// Whether the method has `params.arguments`.
    pub const fn has_arguments(self) -> bool {
        !matches!(self, Self::ResourcesRead)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `requestState` member of a request.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RequestState<'a> {
    /// No `requestState`: a fresh call.
    Absent,
    /// A string: the token to resume.
    Token(&'a str),
    /// Present but not a string (including `null`): rejected as malformed.
    NotAString,
}

impl fmt::Debug for RequestState<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Absent => f.write_str("Absent"),
            Self::Token(t) => write!(f, "Token(<redacted, {} bytes>)", t.len()),
            Self::NotAString => f.write_str("NotAString"),
        }
    }
}

/// A JSON-RPC error object for the response's `error` member.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonRpcError {
    code: i32,
    message: String,
    data: Option<Value>,
    rejection: Option<Rejection>,
}

impl JsonRpcError {
    /// `-32602` for params that cannot be used at all (not an object, missing target,
    /// arguments that cannot be canonicalized).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self {
            code: INVALID_PARAMS,
            message: message.into(),
            data: None,
            rejection: None,
        }
    }

    /// The error for a rejected `requestState`, from [`Rejection::wire`].
    pub fn from_rejection(rejection: Rejection) -> Self {
        let wire = rejection.wire();
        Self {
            code: wire.code,
            message: wire.message.to_owned(),
            data: Some(json!({ "reason": wire.reason })),
            rejection: Some(rejection),
        }
    }

    /// `error.code`.
    pub fn code(&self) -> i32 {
        self.code
    }

    /// `error.message`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// `error.data`, if any.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }

    /// The rejection, when this error rejects a `requestState` (its precise reason is for
    /// logs and metrics).
    pub fn rejection(&self) -> Option<Rejection> {
        self.rejection
    }

    /// The error object: `{"code", "message", "data"?}`.
    pub fn to_value(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("code".into(), self.code.into());
        obj.insert("message".into(), self.message.clone().into());
        if let Some(data) = &self.data {
            obj.insert("data".into(), data.clone());
        }
        Value::Object(obj)
    }
}

impl fmt::Display for JsonRpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for JsonRpcError {}

impl From<Rejection> for JsonRpcError {
    fn from(r: Rejection) -> Self {
        Self::from_rejection(r)
    }
}

/// What a pausable request binds a token to, borrowed from its params.
///
/// `Debug` never shows the `requestState` text.
#[derive(Clone, Copy, Debug)]
pub struct ResumeRequest<'a> {
    method: Method,
    protocol_version: &'a str,
    target: &'a str,
    principal: Principal<'a>,
    request_state: RequestState<'a>,
    args: ArgsDigest,
}

impl<'a> ResumeRequest<'a> {
    /// Reads a request's `params`.
    ///
    /// Returns `Ok(None)` for any method but the three pausable ones (a `requestState` there
    /// is ignored), and a `-32602` error when `params` is not an object, the target is not a
    /// string, `_meta`'s protocol version is present but not a string, or the arguments
    /// cannot be canonicalized. A non-string `requestState` is not an error here: resuming
    /// it gives the uniform rejection.
    ///
    /// ```
    /// use mrtr_std::jsonrpc::{Method, RequestState, ResumeRequest};
    /// use mrtr_std::core::Principal;
    /// use serde_json::json;
    ///
    /// let params = json!({
    ///     "name": "book_table",
    ///     "arguments": {"party": 4},
    ///     "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
    /// });
    /// let req = ResumeRequest::from_params("tools/call", &params, Principal::Anonymous)?
    ///     .expect("tools/call can pause");
    /// assert_eq!(req.method(), Method::ToolsCall);
    /// assert_eq!(req.target(), "book_table");
    /// assert_eq!(req.request_state(), RequestState::Absent);
    ///
    /// assert!(ResumeRequest::from_params("tools/list", &params, Principal::Anonymous)?.is_none());
    /// # Ok::<(), mrtr_std::jsonrpc::JsonRpcError>(())
    /// ```
    pub fn from_params(
        method: &str,
        params: &'a Value,
        principal: Principal<'a>,
    ) -> Result<Option<Self>, JsonRpcError> {
        let Some(method) = Method::from_name(method) else {
            return Ok(None);
        };
        let Some(params) = params.as_object() else {
            return Err(JsonRpcError::invalid_params(format!(
                "Invalid params: {method} params must be an object"
            )));
        };
        let field = method.target_field();
        let target = match params.get(field) {
            Some(Value::String(s)) => s.as_str(),
            _ => {
                return Err(JsonRpcError::invalid_params(format!(
                    "Invalid params: params.{field} must be a string"
                )));
            }
        };
        let protocol_version = match params
            .get("_meta")
            .and_then(|m| m.get(PROTOCOL_VERSION_META))
        {
            None => "",
            Some(Value::String(v)) => v.as_str(),
            Some(_) => {
                return Err(JsonRpcError::invalid_params(format!(
                    "Invalid params: params._meta[\"{PROTOCOL_VERSION_META}\"] must be a string"
                )));
            }
        };
        let request_state = match params.get("requestState") {
            None => RequestState::Absent,
            Some(Value::String(s)) => RequestState::Token(s),
            Some(_) => RequestState::NotAString,
        };
        let arguments = if method.has_arguments() {
            params.get("arguments")
        } else {
            None
        };
        Self::new(
            method,
            protocol_version,
            target,
            arguments,
            request_state,
            principal,
        )
        .map(Some)
    }

    /// Builds a request from parts already extracted (for typed SDK params): digests
    /// `arguments` (absent, `null` and `{}` alike).
    pub fn new(
        method: Method,
        protocol_version: &'a str,
        target: &'a str,
        arguments: Option<&Value>,
        request_state: RequestState<'a>,
        principal: Principal<'a>,
    ) -> Result<Self, JsonRpcError> {
        let args = jcs::args_digest(arguments).map_err(args_error)?;
        Ok(Self {
            method,
            protocol_version,
            target,
            principal,
            request_state,
            args,
        })
    }

    /// [`ResumeRequest::new`] for arguments held as a JSON object map, as SDKs type
    /// `params.arguments` (rmcp's `JsonObject`): digested in place, without cloning the map
    /// into a [`Value`]. The digest is the one [`ResumeRequest::new`] computes for the same
    /// object (absent and `{}` alike).
    ///
    /// ```
    /// use mrtr_std::core::Principal;
    /// use mrtr_std::jsonrpc::{Method, RequestState, ResumeRequest};
    /// use serde_json::{Map, Value, json};
    ///
    /// let Value::Object(arguments) = json!({"party": 4}) else { unreachable!() };
    /// let typed = ResumeRequest::with_map_arguments(
    ///     Method::ToolsCall, "2026-07-28", "book_table", Some(&arguments),
    ///     RequestState::Absent, Principal::Anonymous,
    /// )?;
    /// let params = json!({"name": "book_table", "arguments": {"party": 4},
    ///                     "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    /// let parsed = ResumeRequest::from_params("tools/call", &params, Principal::Anonymous)?
    ///     .unwrap();
    /// assert_eq!(typed.args_digest(), parsed.args_digest());
    /// # Ok::<(), mrtr_std::jsonrpc::JsonRpcError>(())
    /// ```
    pub fn with_map_arguments(
        method: Method,
        protocol_version: &'a str,
        target: &'a str,
        arguments: Option<&Map<String, Value>>,
        request_state: RequestState<'a>,
        principal: Principal<'a>,
    ) -> Result<Self, JsonRpcError> {
        let args = jcs::args_digest_map(arguments).map_err(args_error)?;
        Ok(Self {
            method,
            protocol_version,
            target,
            principal,
            request_state,
            args,
        })
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The protocol version (empty if the request did not carry one).
    pub fn protocol_version(&self) -> &'a str {
        self.protocol_version
    }

    /// The tool name, prompt name or resource URI.
    pub fn target(&self) -> &'a str {
        self.target
    }

    /// The authenticated caller.
    pub fn principal(&self) -> Principal<'a> {
        self.principal
    }

    /// The `requestState` member.
    pub fn request_state(&self) -> RequestState<'a> {
        self.request_state
    }

    /// SHA-256 of the canonical arguments.
    pub fn args_digest(&self) -> &ArgsDigest {
        &self.args
    }

    /// The binding for sealing and opening tokens.
    pub fn binding(&self) -> Result<Binding<'a>, BindingError> {
        Binding::new(
            self.method.as_str(),
            self.protocol_version,
            self.target,
            self.principal,
        )
    }
}

fn args_error(e: JcsError) -> JsonRpcError {
    JsonRpcError::invalid_params(format!(
        "Invalid params: arguments cannot be canonicalized: {e}"
    ))
}

/// Checks a raw JSON-RPC message, before an SDK parses it, for a `requestState` that is not a
/// string on one of the three pausable methods, and returns the rejection to answer the
/// message with (in `detail` mode: use [`Engine::precheck`](crate::engine::Engine::precheck)
/// for the engine's own mode).
///
/// SDKs that type `requestState` as a string fail to parse such a request and answer it with
/// their own error; mrtr's contract is the uniform `-32602` rejection for any unusable
/// `requestState`, which this gives. Everything else is `None`: other methods (their
/// `requestState` is ignored), absent or string `requestState` (checked on resume),
/// notifications and responses without a method, and batches (arrays). A rejection is logged
/// like any other (target `mrtr`, reason `malformed`).
///
/// ```
/// use mrtr_std::core::ErrorDetail;
/// use mrtr_std::jsonrpc::precheck;
/// use serde_json::json;
///
/// let bad = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
///                  "params": {"name": "book_table", "requestState": 42}});
/// let error = precheck(&bad, ErrorDetail::Uniform).expect("rejected");
/// assert_eq!(error.to_value(), json!({"code": -32602, "message": "Invalid or expired requestState",
///                                     "data": {"reason": "invalid_request_state"}}));
///
/// let fine = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
///                   "params": {"name": "book_table", "requestState": "opaque"}});
/// assert!(precheck(&fine, ErrorDetail::Uniform).is_none());
/// ```
pub fn precheck(message: &Value, detail: ErrorDetail) -> Option<JsonRpcError> {
    let method = message.get("method").and_then(Value::as_str)?;
    Method::from_name(method)?;
    match message.pointer("/params/requestState") {
        None | Some(Value::String(_)) => None,
        Some(_) => {
            tracing::info!(
                target: "mrtr",
                reason = Reason::Malformed.as_str(),
                method,
                "requestState rejected: not a string"
            );
            Some(JsonRpcError::from_rejection(Rejection::new(
                Reason::Malformed,
                detail,
            )))
        }
    }
}

/// The `input_required` result: `{"resultType":"input_required","inputRequests"?,
/// "requestState"}`. `input_requests` is the map of embedded requests (omitted when `None`:
/// a state-only result).
pub fn input_required_result(request_state: &str, input_requests: Option<Value>) -> Value {
    let mut obj = Map::new();
    obj.insert("resultType".into(), "input_required".into());
    if let Some(reqs) = input_requests {
        obj.insert("inputRequests".into(), reqs);
    }
    obj.insert("requestState".into(), request_state.into());
    Value::Object(obj)
}
