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
//! argument digest is SHA-256 of the binding form of the arguments: their RFC 8785 canonical
//! JSON with every number keeping its kind, integer or float ([`crate::jcs`]).
//! Any other method cannot pause, and a `requestState` it carries is ignored.

use std::fmt;

use mrtr_core::INVALID_PARAMS;
use mrtr_core::{ArgsDigest, Binding, BindingError, Principal, Reason, Rejection};
use serde_json::{Map, Value, json};

use crate::ijson::Violation;
use crate::jcs::{self, JcsError};

mod prechecks;

pub use prechecks::{
    Precheck, Prechecked, precheck, precheck_bytes, precheck_raw, refuse_unreadable,
};

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
    /// The three methods.
    pub const ALL: [Self; 3] = [Self::ToolsCall, Self::PromptsGet, Self::ResourcesRead];

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

impl<'a> RequestState<'a> {
    /// Classifies a request's `params.requestState` member (`None`: absent). The one place
    /// where a `requestState` that is not a string is told apart.
    pub fn from_member(member: Option<&'a Value>) -> Self {
        match member {
            None => Self::Absent,
            Some(Value::String(s)) => Self::Token(s),
            Some(_) => Self::NotAString,
        }
    }

    /// The token to check (`None` for a fresh call), or the reason to reject the request:
    /// [`Reason::Malformed`] for a `requestState` that is not a string.
    pub fn token(self) -> Result<Option<&'a str>, Reason> {
        match self {
            Self::Absent => Ok(None),
            Self::Token(t) => Ok(Some(t)),
            Self::NotAString => Err(Reason::Malformed),
        }
    }
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

    /// `-32603` Internal error: a server-side fault the client can do nothing about (the
    /// detail belongs in the server's log, not here).
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            code: -32603,
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

/// Why a request's arguments cannot be bound to a `requestState`: the digest would not tell
/// apart arguments the handler reads differently.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unbindable {
    /// The arguments cannot be canonicalized (too deep, or an integer a double does not
    /// carry exactly).
    Canonical(JcsError),
    /// The request's raw text is not I-JSON (a duplicate member name, an over-precise
    /// number), as [`ijson::check`] found before any parser saw it.
    ///
    /// [`ijson::check`]: crate::ijson::check
    NotIJson(Violation),
}

impl fmt::Display for Unbindable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("arguments cannot be bound to a requestState: ")?;
        match self {
            Self::Canonical(e) => fmt::Display::fmt(e, f),
            Self::NotIJson(v) => write!(f, "the request is not I-JSON ({v})"),
        }
    }
}

impl std::error::Error for Unbindable {}

/// What a pausable request binds a token to, borrowed from its params.
///
/// `Debug` never shows the `requestState` text.
///
/// Built once per request: its [`Binding`] is validated and its argument digest computed at
/// construction, and every later use reads them.
#[derive(Clone, Debug)]
pub struct ResumeRequest<'a> {
    method: Method,
    target: &'a str,
    binding: Result<Binding<'a>, BindingError>,
    request_state: RequestState<'a>,
    args: Result<ArgsDigest, Unbindable>,
}

impl<'a> ResumeRequest<'a> {
    /// Reads a request's `params`.
    ///
    /// Returns `Ok(None)` for any method but the three pausable ones (a `requestState` there
    /// is ignored), and a `-32602` error when `params` is not an object, the target is not a
    /// string, or `_meta`'s protocol version is present but not a string. Neither a
    /// non-string `requestState` nor arguments that cannot be bound are errors here:
    /// resuming them gives the uniform rejection, and pausing with unbindable arguments
    /// fails ([`Unbindable`]).
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
        let request_state = RequestState::from_member(params.get("requestState"));
        let arguments = if method.has_arguments() {
            params.get("arguments")
        } else {
            None
        };
        Ok(Some(Self::new(
            method,
            protocol_version,
            target,
            arguments,
            request_state,
            principal,
        )))
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
    ) -> Self {
        Self::from_parts(
            method,
            protocol_version,
            target,
            principal,
            request_state,
            jcs::args_digest(arguments).map_err(Unbindable::Canonical),
        )
    }

    /// Builds a request from parts and an argument digest computed earlier (for example by
    /// a caller that keeps the digest between two uses of one request).
    pub fn from_parts(
        method: Method,
        protocol_version: &'a str,
        target: &'a str,
        principal: Principal<'a>,
        request_state: RequestState<'a>,
        args: Result<ArgsDigest, Unbindable>,
    ) -> Self {
        Self {
            method,
            target,
            binding: Binding::new(method.as_str(), protocol_version, target, principal),
            request_state,
            args,
        }
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
    /// );
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
    ) -> Self {
        Self::from_parts(
            method,
            protocol_version,
            target,
            principal,
            request_state,
            jcs::args_digest_map(arguments).map_err(Unbindable::Canonical),
        )
    }

    /// Marks the request's arguments as unbindable because its raw text is not I-JSON (see
    /// [`precheck_raw`]): resuming it is refused, and pausing it fails.
    pub fn not_i_json(mut self, violation: Violation) -> Self {
        self.args = Err(Unbindable::NotIJson(violation));
        self
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The tool name, prompt name or resource URI.
    pub fn target(&self) -> &'a str {
        self.target
    }

    /// The `requestState` member.
    pub fn request_state(&self) -> RequestState<'a> {
        self.request_state
    }

    /// SHA-256 of the canonical arguments, or why they cannot be bound.
    pub fn args_digest(&self) -> Result<&ArgsDigest, &Unbindable> {
        self.args.as_ref()
    }

    /// The binding for sealing and opening tokens (method, protocol version, target and
    /// principal), validated once when the request was built.
    pub fn binding(&self) -> Result<&Binding<'a>, &BindingError> {
        self.binding.as_ref()
    }
}

impl From<&Unbindable> for JsonRpcError {
    /// `-32602` naming why the arguments cannot be bound (for a handler that could not
    /// pause: the client learns its arguments are the problem).
    fn from(e: &Unbindable) -> Self {
        JsonRpcError::invalid_params(format!("Invalid params: {e}"))
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

#[cfg(test)]
mod tests {
    use super::Method;
    use crate::ijson::{PAUSABLE, scan};

    /// The scanner recognizes the pausable methods by their own list: it must be this one.
    #[test]
    fn the_pausable_methods_are_the_jsonrpc_ones() {
        let names: Vec<&str> = Method::ALL.iter().map(|m| m.as_str()).collect();
        assert_eq!(names, PAUSABLE);
        for method in PAUSABLE {
            let text = format!(r#"{{"method":"{method}"}}"#);
            assert_eq!(
                scan(text.as_bytes()).unwrap().method.as_deref(),
                Some(method)
            );
        }
    }
}
