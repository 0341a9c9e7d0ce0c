//! Writing responses: the JSON-RPC envelope, error objects, and text built from parts, all
//! into the caller's fixed buffer through `mrtr_json::Writer` (a write that does not fit is
//! dropped and remembered, never a panic).

use mrtr_json::{Value, Writer};

/// The protocol revision served.
pub const VERSION: &str = crate::PROTOCOL_VERSION;

/// A JSON-RPC error to answer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    /// `error.code`.
    pub code: i32,
    /// `error.message`.
    pub message: &'static str,
    /// `error.data`, as JSON text (or none).
    pub data: Data,
}

/// The `data` member of an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Data {
    /// No `data`.
    None,
    /// This JSON text, as it is.
    Raw(&'static str),
    /// `{"supported":["2026-07-28"],"requested":<the raw JSON value>}`.
    Unsupported(&'static str),
}

/// Parse error.
pub const PARSE_ERROR: i32 = -32700;
/// Invalid request.
pub const INVALID_REQUEST: i32 = -32600;
/// Method not found.
pub const METHOD_NOT_FOUND: i32 = -32601;
/// Invalid params.
pub const INVALID_PARAMS: i32 = -32602;
/// Internal error.
pub const INTERNAL_ERROR: i32 = -32603;
/// The request needs a client capability it did not declare.
pub const MISSING_CAPABILITY: i32 = -32021;
/// Unsupported protocol version.
pub const UNSUPPORTED_VERSION: i32 = -32022;

impl Failure {
    /// An error without `data`.
    pub const fn new(code: i32, message: &'static str) -> Self {
        Self {
            code,
            message,
            data: Data::None,
        }
    }

    /// `-32602` naming what is wrong with the params.
    pub const fn invalid_params(message: &'static str) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// `-32603`.
    pub const fn internal(message: &'static str) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }

    /// The uniform refusal of any bad `requestState` (its cause goes to the log only).
    pub const fn rejected(wire: mrtr_core::WireError) -> Self {
        Self {
            code: wire.code,
            message: wire.message,
            data: Data::Raw(r#"{"reason":"invalid_request_state"}"#),
        }
    }

    /// `-32021` with `data.requiredCapabilities` (a ClientCapabilities object as JSON).
    pub const fn missing(required: &'static str) -> Self {
        Self {
            code: MISSING_CAPABILITY,
            message: "Missing required client capability",
            data: Data::Raw(required),
        }
    }

    /// The HTTP status the Streamable HTTP transport answers this error with.
    pub const fn status(&self) -> u16 {
        match self.code {
            PARSE_ERROR | INVALID_REQUEST | MISSING_CAPABILITY | UNSUPPORTED_VERSION => 400,
            _ => 200,
        }
    }
}

/// Writes `{"jsonrpc":"2.0","id":ID,"error":{...}}`; `requested` is the raw JSON of the
/// requested protocol version for [`Data::Unsupported`].
pub fn error(w: &mut Writer<'_>, id: &[u8], failure: &Failure, requested: &[u8]) {
    w.raw(br#"{"jsonrpc":"2.0","id":"#).raw(id);
    w.raw(br#","error":{"code":"#);
    int(w, failure.code);
    w.raw(br#","message":"#).string(failure.message);
    match failure.data {
        Data::None => {}
        Data::Raw(data) => {
            if failure.code == MISSING_CAPABILITY {
                w.raw(br#","data":{"requiredCapabilities":"#)
                    .raw(data.as_bytes())
                    .raw(b"}");
            } else {
                w.raw(br#","data":"#).raw(data.as_bytes());
            }
        }
        Data::Unsupported(supported) => {
            w.raw(br#","data":{"supported":"#)
                .raw(supported.as_bytes())
                .raw(br#","requested":"#)
                .raw(if requested.is_empty() {
                    b"null"
                } else {
                    requested
                })
                .raw(b"}");
        }
    }
    w.raw(b"}}");
}

/// Writes a signed integer.
pub fn int(w: &mut Writer<'_>, n: i32) {
    if n < 0 {
        w.raw(b"-");
    }
    w.u64(u64::from(n.unsigned_abs()));
}

/// The start of a result: `{"jsonrpc":"2.0","id":ID,"result":`.
pub fn result_start(w: &mut Writer<'_>, id: &[u8]) {
    w.raw(br#"{"jsonrpc":"2.0","id":"#)
        .raw(id)
        .raw(br#","result":"#);
}

/// Text inside a JSON string being written: each part escaped as JSON requires.
pub struct Text<'w, 'b> {
    w: &'w mut Writer<'b>,
}

impl<'w, 'b> Text<'w, 'b> {
    /// Text written into `w` (the caller writes the quotes).
    pub fn new(w: &'w mut Writer<'b>) -> Self {
        Self { w }
    }

    /// Appends `s`, escaped.
    pub fn str(&mut self, s: &str) -> &mut Self {
        escape(self.w, s.as_bytes());
        self
    }

    /// Appends `n` in decimal.
    pub fn u64(&mut self, n: u64) -> &mut Self {
        self.w.u64(n);
        self
    }

    /// Appends a number as JSON (ECMAScript) prints it; nothing if it is not finite.
    pub fn number(&mut self, x: f64) -> &mut Self {
        let _ = mrtr_json::write_number(x, &mut *self.w);
        self
    }

    /// Appends the text of a JSON string value, trimmed if `trim`: decoded and escaped
    /// again when it fits [`MAX_FIELD`], else its escaped content as written (trimmed of
    /// literal spaces only). Nothing for a value that is not a string.
    pub fn value(&mut self, v: Value<'_>, trim: bool) -> &mut Self {
        if with_str(v, |s| {
            self.str(if trim { s.trim() } else { s });
        })
        .is_none()
        {
            let raw = v.raw();
            if v.kind() == mrtr_json::Kind::String && raw.len() >= 2 {
                let mut content = raw.get(1..raw.len() - 1).unwrap_or_default();
                if trim {
                    content = content.trim_ascii();
                }
                self.w.raw(content);
            }
        }
        self
    }
}

/// Longest decoded string the gateway copies out of a request.
pub const MAX_FIELD: usize = 200;

/// Calls `f` with the decoded text of the string `v` (escapes resolved, at most
/// [`MAX_FIELD`] bytes once decoded, unless it has no escapes); `None` if `v` is not such a
/// string.
pub fn with_str<R>(v: Value<'_>, f: impl FnOnce(&str) -> R) -> Option<R> {
    if let Some(s) = v.as_str() {
        return Some(f(s));
    }
    let mut buf = [0u8; MAX_FIELD];
    v.unescape_into(&mut buf).ok().map(f)
}

/// The decoded, trimmed text of `v` is non-empty (an answered text field).
pub fn non_empty(v: Option<Value<'_>>) -> Option<Value<'_>> {
    v.filter(|v| v.kind() == mrtr_json::Kind::String)
        .filter(|v| with_str(*v, |s| !s.trim().is_empty()).unwrap_or(v.raw().len() > 2))
}

/// Writes the content of a JSON string (no quotes): `"`, `\` and control characters
/// escaped, everything else as it is.
pub fn escape(w: &mut Writer<'_>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0C => b"\\f",
            0..=0x1F => b"",
            _ => continue,
        };
        w.raw(bytes.get(start..i).unwrap_or_default());
        if short.is_empty() {
            let u = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ];
            w.raw(&u);
        } else {
            w.raw(short);
        }
        start = i + 1;
    }
    w.raw(bytes.get(start..).unwrap_or_default());
}
