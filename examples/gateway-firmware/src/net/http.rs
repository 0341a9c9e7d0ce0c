//! One HTTP/1.1 request of the Streamable HTTP transport, judged from the bytes received so
//! far: wait for more, refuse it (with the status and JSON-RPC error to answer), or call the
//! MCP server with its body and caller. Responses are written by [`head`].
//!
//! Only `POST /mcp` with a `Content-Length` body of `application/json` and an `Accept` that
//! takes JSON reaches the server; `GET /mcp` is 405 (the gateway offers no SSE stream), other
//! paths 404. Heads are bounded ([`MAX_HEAD`], [`MAX_HEADERS`]: 431), bodies too
//! ([`MAX_BODY`]: 413); chunked bodies are refused (411).

use core::fmt::Write as _;

use httparse::{EMPTY_HEADER, Header, Status};
use mrtr_core::Principal;

use super::auth::Bearers;

/// Longest request head (request line and headers), bytes.
pub const MAX_HEAD: usize = 2048;
/// Most header lines in a request.
pub const MAX_HEADERS: usize = 24;
/// Longest request body, bytes.
pub const MAX_BODY: usize = 4096;
/// Longest request, head and body: each connection's receive window.
pub const MAX_REQUEST: usize = MAX_HEAD + MAX_BODY;
/// The one endpoint.
pub const PATH: &str = "/mcp";
/// The protocol revision the gateway serves (`MCP-Protocol-Version`).
pub const VERSION: &str = crate::PROTOCOL_VERSION;

/// JSON-RPC `-32600` Invalid Request.
pub const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC `-32020`: the `MCP-Protocol-Version` header does not match the request.
pub const HEADER_MISMATCH: i32 = -32020;

/// What to do with the bytes received so far on a connection.
#[derive(Debug)]
pub enum Verdict<'b, 't> {
    /// The request is not complete yet. `send_continue`: its head is complete and valid and
    /// asks for `100 Continue` before sending its body.
    More {
        /// Answer `100 Continue` now (once per request).
        send_continue: bool,
    },
    /// Answer without calling the server.
    Refuse(Refusal),
    /// Call the server.
    Call {
        /// The request body.
        body: &'b [u8],
        /// The authenticated caller.
        caller: Principal<'t>,
        /// Bytes of the request (head and body), to remove from the connection.
        consumed: usize,
        /// Whether the connection stays open after the response.
        keep_alive: bool,
    },
}

/// A request answered by the transport itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// HTTP status.
    pub status: u16,
    /// The JSON-RPC error of the body (`id: null`); `None`: no body.
    pub error: Option<(i32, &'static str)>,
    /// Bytes of the request to remove; `None`: close the connection after the response (the
    /// rest of the request is not read).
    pub consumed: Option<usize>,
}

impl Refusal {
    const fn close(status: u16, error: Option<(i32, &'static str)>) -> Self {
        Self {
            status,
            error,
            consumed: None,
        }
    }
}

/// Judges the bytes received so far (`buf` starts at a request's first byte).
pub fn judge<'b, 't>(buf: &'b [u8], bearers: &'t Bearers) -> Verdict<'b, 't> {
    let mut headers = [EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let head_len = match req.parse(buf) {
        Ok(Status::Complete(n)) if n <= MAX_HEAD => n,
        Ok(Status::Complete(_)) => return too_large_head(),
        Ok(Status::Partial) if buf.len() >= MAX_HEAD => return too_large_head(),
        Ok(Status::Partial) => {
            return Verdict::More {
                send_continue: false,
            };
        }
        Err(httparse::Error::TooManyHeaders) => return too_large_head(),
        Err(_) => {
            return Verdict::Refuse(Refusal::close(
                400,
                Some((INVALID_REQUEST, "Bad Request: not an HTTP/1.1 request")),
            ));
        }
    };
    let headers: &[Header<'_>] = req.headers;
    let keep_alive = req.version == Some(1) && !has_token(headers, "connection", b"close");
    let (Some(method), Some(target)) = (req.method, req.path) else {
        return Verdict::Refuse(Refusal::close(400, None));
    };
    let path = target.split_once('?').map_or(target, |(p, _)| p);
    let Ok(length) = content_length(headers) else {
        return Verdict::Refuse(Refusal::close(
            400,
            Some((INVALID_REQUEST, "Bad Request: invalid Content-Length")),
        ));
    };
    let chunked = one(headers, "transfer-encoding") != Ok(None);
    // A refusal decided by the head: keep the connection only if no body follows.
    let refuse = |status, error| {
        let bodyless = !chunked && length.unwrap_or(0) == 0;
        Verdict::Refuse(Refusal {
            status,
            error,
            consumed: (bodyless && keep_alive).then_some(head_len),
        })
    };
    if path != PATH {
        return refuse(404, None);
    }
    let Ok(authorization) = one(headers, "authorization") else {
        return refuse(401, None);
    };
    let Some(caller) = bearers.authenticate(authorization) else {
        return refuse(401, None);
    };
    if method != "POST" {
        return refuse(405, None);
    }
    if chunked {
        return Verdict::Refuse(Refusal::close(
            411,
            Some((
                INVALID_REQUEST,
                "Length Required: send Content-Length, not chunked",
            )),
        ));
    }
    let Some(length) = length else {
        return refuse(
            411,
            Some((INVALID_REQUEST, "Length Required: send Content-Length")),
        );
    };
    if length > MAX_BODY {
        return Verdict::Refuse(Refusal::close(
            413,
            Some((
                INVALID_REQUEST,
                "Content Too Large: the body limit is 4096 bytes",
            )),
        ));
    }
    if !media_type_is(one(headers, "content-type"), b"application/json") {
        return refuse(
            415,
            Some((
                INVALID_REQUEST,
                "Unsupported Media Type: send application/json",
            )),
        );
    }
    if !accepts_json(headers) {
        return refuse(
            406,
            Some((INVALID_REQUEST, "Not Acceptable: accept application/json")),
        );
    }
    match one(headers, "mcp-protocol-version") {
        Ok(None) => {}
        Ok(Some(v)) if v.trim_ascii() == VERSION.as_bytes() => {}
        _ => {
            return refuse(
                400,
                Some((
                    HEADER_MISMATCH,
                    "MCP-Protocol-Version header does not match the request (2026-07-28)",
                )),
            );
        }
    }
    let end = head_len + length;
    match buf.get(head_len..end) {
        Some(body) => Verdict::Call {
            body,
            caller,
            consumed: end,
            keep_alive,
        },
        None => Verdict::More {
            send_continue: has_token(headers, "expect", b"100-continue"),
        },
    }
}

fn too_large_head<'b, 't>() -> Verdict<'b, 't> {
    Verdict::Refuse(Refusal::close(
        431,
        Some((
            INVALID_REQUEST,
            "Request Header Fields Too Large: at most 2048 bytes and 24 headers",
        )),
    ))
}

/// The value of header `name` if it appears at most once; `Err` if repeated.
fn one<'h>(headers: &[Header<'h>], name: &str) -> Result<Option<&'h [u8]>, ()> {
    let mut found = headers.iter().filter(|h| h.name.eq_ignore_ascii_case(name));
    match (found.next(), found.next()) {
        (None, _) => Ok(None),
        (Some(h), None) => Ok(Some(h.value)),
        (Some(_), Some(_)) => Err(()),
    }
}

/// `Content-Length`: `Ok(None)` if absent, `Err` if malformed or repeated.
fn content_length(headers: &[Header<'_>]) -> Result<Option<usize>, ()> {
    let Some(value) = one(headers, "content-length")? else {
        return Ok(None);
    };
    let digits = value.trim_ascii();
    if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return Err(());
    }
    Ok(Some(
        digits.iter().fold(0, |n, d| n * 10 + usize::from(d - b'0')),
    ))
}

/// Whether any header `name` lists `token` (comma-separated, case-insensitive).
fn has_token(headers: &[Header<'_>], name: &str, token: &[u8]) -> bool {
    headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case(name))
        .flat_map(|h| h.value.split(|&b| b == b','))
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

/// Whether a media type header (one value, parameters ignored) is `want`.
fn media_type_is(value: Result<Option<&[u8]>, ()>, want: &[u8]) -> bool {
    let Ok(Some(value)) = value else {
        return false;
    };
    let essence = value.split(|&b| b == b';').next().unwrap_or_default();
    essence.trim_ascii().eq_ignore_ascii_case(want)
}

/// Whether `Accept` admits a JSON response: `application/json`, `application/*` or `*/*`.
fn accepts_json(headers: &[Header<'_>]) -> bool {
    headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("accept"))
        .flat_map(|h| h.value.split(|&b| b == b','))
        .map(|range| {
            let essence = range.split(|&b| b == b';').next().unwrap_or_default();
            essence.trim_ascii()
        })
        .any(|r| {
            [b"application/json".as_slice(), b"application/*", b"*/*"]
                .iter()
                .any(|ok| r.eq_ignore_ascii_case(ok))
        })
}

/// The reason phrase of the statuses the gateway answers.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

/// A `fmt::Write` into a fixed buffer; `full` once anything did not fit.
struct Cursor<'a> {
    buf: &'a mut [u8],
    len: usize,
    full: bool,
}

impl core::fmt::Write for Cursor<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        match self.buf.get_mut(self.len..self.len + s.len()) {
            Some(slot) => {
                slot.copy_from_slice(s.as_bytes());
                self.len += s.len();
                Ok(())
            }
            None => {
                self.full = true;
                Err(core::fmt::Error)
            }
        }
    }
}

/// Writes a response head into `buf` and returns its length (`None` if it does not fit):
/// status line, `Content-Type: application/json` when `body_len > 0`, `Content-Length`,
/// `WWW-Authenticate: Bearer` for 401, `Allow: POST` for 405, and `Connection: close`
/// unless `keep_alive`.
pub fn head(buf: &mut [u8], status: u16, body_len: usize, keep_alive: bool) -> Option<usize> {
    let mut w = Cursor {
        buf,
        len: 0,
        full: false,
    };
    let _ = write!(w, "HTTP/1.1 {} {}\r\n", status, reason(status));
    if body_len > 0 {
        let _ = w.write_str("Content-Type: application/json\r\n");
    }
    let _ = write!(w, "Content-Length: {body_len}\r\n");
    match status {
        401 => {
            let _ = w.write_str("WWW-Authenticate: Bearer\r\n");
        }
        405 => {
            let _ = w.write_str("Allow: POST\r\n");
        }
        _ => {}
    }
    if !keep_alive {
        let _ = w.write_str("Connection: close\r\n");
    }
    let _ = w.write_str("\r\n");
    (!w.full).then_some(w.len)
}

/// Writes `{"jsonrpc":"2.0","id":null,"error":{"code":CODE,"message":"MESSAGE"}}` into
/// `buf` (the message is plain ASCII without quotes or backslashes) and returns its length.
pub fn error_body(buf: &mut [u8], code: i32, message: &str) -> Option<usize> {
    let mut w = Cursor {
        buf,
        len: 0,
        full: false,
    };
    let _ = write!(
        w,
        r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":{code},"message":"{message}"}}}}"#
    );
    (!w.full).then_some(w.len)
}
