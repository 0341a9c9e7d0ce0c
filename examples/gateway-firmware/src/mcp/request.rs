//! Reading a JSON-RPC request: its id, method and params, and what its `_meta` declares
//! (protocol version, client capabilities), read afresh for every request.

use mrtr_json::{Kind, Limits, Value};

use super::reply::{Failure, INVALID_REQUEST, PARSE_ERROR};

/// The `_meta` key of the request's protocol version.
pub const VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the request's client capabilities.
pub const CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";

/// Bounds on a request: nesting, members per object.
pub const LIMITS: Limits = Limits {
    max_depth: 32,
    max_members: 64,
    max_len: u32::MAX as usize,
};

/// A request (or notification) that is well-formed JSON-RPC.
#[derive(Clone, Copy, Debug)]
pub struct Request<'r> {
    /// The raw JSON of `id` (a number or string); `None` for a notification.
    pub id: Option<&'r [u8]>,
    /// `method`.
    pub method: Value<'r>,
    /// `params`, if present (an object: checked).
    pub params: Option<Value<'r>>,
}

/// Why a request could not be read: the error and the id to answer it with.
#[derive(Clone, Copy, Debug)]
pub struct Malformed<'r> {
    /// The error.
    pub failure: Failure,
    /// The request's id, when it could be read; `null` otherwise.
    pub id: &'r [u8],
}

/// Parses and checks the envelope of one request.
pub fn read(text: &[u8]) -> Result<Request<'_>, Malformed<'_>> {
    let fail = |message, code| Malformed {
        failure: Failure::new(code, message),
        id: b"null",
    };
    let root = match mrtr_json::parse(text, &LIMITS) {
        Ok(root) => root,
        Err(e) => {
            let message = match e {
                mrtr_json::Error::TooDeep => "Parse error: nested deeper than 32 levels",
                mrtr_json::Error::TooManyMembers => "Parse error: an object with over 64 members",
                mrtr_json::Error::DuplicateName => {
                    "Parse error: duplicate member name (not I-JSON)"
                }
                mrtr_json::Error::LossyNumber => {
                    "Parse error: a number a double cannot carry (not I-JSON)"
                }
                mrtr_json::Error::LoneSurrogate => "Parse error: a lone surrogate (not I-JSON)",
                _ => "Parse error: not a JSON value",
            };
            return Err(fail(message, PARSE_ERROR));
        }
    };
    match root.kind() {
        Kind::Object => {}
        Kind::Array => {
            return Err(fail(
                "Invalid Request: batches are not supported",
                INVALID_REQUEST,
            ));
        }
        _ => return Err(fail("Invalid Request: not an object", INVALID_REQUEST)),
    }
    let id = match root.get("id") {
        None => None,
        Some(v) if matches!(v.kind(), Kind::Number | Kind::String) => Some(v.raw()),
        Some(_) => {
            return Err(fail(
                "Invalid Request: id must be a string or a number",
                INVALID_REQUEST,
            ));
        }
    };
    let invalid = |message| Malformed {
        failure: Failure::new(INVALID_REQUEST, message),
        id: id.unwrap_or(b"null"),
    };
    if !root.get("jsonrpc").is_some_and(|v| v.str_eq("2.0")) {
        return Err(invalid("Invalid Request: jsonrpc must be \"2.0\""));
    }
    let method = root
        .get("method")
        .filter(|m| m.kind() == Kind::String)
        .ok_or(invalid("Invalid Request: method must be a string"))?;
    let params = match root.get("params") {
        Some(p) if p.kind() == Kind::Object => Some(p),
        None => None,
        Some(_) => {
            return Err(Malformed {
                failure: Failure::invalid_params("Invalid params: params must be an object"),
                id: id.unwrap_or(b"null"),
            });
        }
    };
    Ok(Request { id, method, params })
}

impl<'r> Request<'r> {
    /// `params.<name>`.
    pub fn param(&self, name: &str) -> Option<Value<'r>> {
        self.params?.get(name)
    }

    /// `params._meta.<name>`.
    pub fn meta(&self, name: &str) -> Option<Value<'r>> {
        self.param("_meta")?.get(name)
    }

    /// The protocol version the request names in `_meta` (its raw JSON), if any.
    pub fn version(&self) -> Option<Value<'r>> {
        self.meta(VERSION_META)
    }

    /// What the request's `_meta` declares the client can answer.
    pub fn declared(&self) -> Declared {
        Declared::from(self.meta(CAPABILITIES_META))
    }
}

/// The input request kinds a client declared for one request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    /// Form elicitation (`elicitation: {}` or `elicitation.form`).
    pub form: bool,
    /// `sampling/createMessage`.
    pub sampling: bool,
    /// `roots/list`.
    pub roots: bool,
}

impl Declared {
    /// Reads a `clientCapabilities` object (`None`: nothing declared).
    pub fn from(caps: Option<Value<'_>>) -> Self {
        let Some(caps) = caps.filter(|c| c.kind() == Kind::Object) else {
            return Self::default();
        };
        fn object(v: Option<Value<'_>>) -> Option<Value<'_>> {
            v.filter(|v| v.kind() == Kind::Object)
        }
        let elicitation = object(caps.get("elicitation"));
        Self {
            // Form when declared, or when elicitation names no mode at all; URL-only is
            // not form.
            form: elicitation
                .is_some_and(|e| object(e.get("form")).is_some() || e.get("url").is_none()),
            sampling: object(caps.get("sampling")).is_some(),
            roots: object(caps.get("roots")).is_some(),
        }
    }
}

/// What a tool requires the request to declare, and the `-32021` naming it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing.
    Nothing,
    /// Form elicitation.
    Form,
    /// Sampling.
    Sampling,
    /// Roots.
    Roots,
    /// All three.
    All,
    /// Any one of them.
    Any,
}

impl Needs {
    /// `-32021` unless `declared` covers what is needed.
    pub fn check(self, d: Declared) -> Result<(), Failure> {
        let (ok, missing) = match self {
            Self::Nothing => (true, ""),
            Self::Form => (d.form, r#"{"elicitation":{"form":{}}}"#),
            Self::Sampling => (d.sampling, r#"{"sampling":{}}"#),
            Self::Roots => (d.roots, r#"{"roots":{}}"#),
            Self::All => (
                d.form && d.sampling && d.roots,
                r#"{"elicitation":{"form":{}},"sampling":{},"roots":{}}"#,
            ),
            Self::Any => (d.form || d.sampling || d.roots, r#"{"sampling":{}}"#),
        };
        if ok {
            Ok(())
        } else {
            Err(Failure::missing(missing))
        }
    }
}
