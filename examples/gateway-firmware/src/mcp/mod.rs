//! The gateway's MCP server (protocol revision 2026-07-28): one request in, one response
//! out, on fixed buffers, shared by the transports (stdio over the UART, Streamable HTTP).
//!
//! [`Server::handle`] takes the request's bytes, the caller the transport authenticated,
//! and the buffer the response goes into; it returns the response's length (0 for a
//! notification) and the HTTP status an HTTP transport answers with. Nothing allocates;
//! no input can panic it.
//!
//! | method | answer |
//! | --- | --- |
//! | `server/discover` | supported versions `["2026-07-28"]`, capabilities `tools`, `prompts`; serverInfo in `_meta` |
//! | `ping` | an empty result |
//! | `tools/list`, `prompts/list` | every tool (see [`tools`]) / the conformance prompt, one page |
//! | `tools/call`, `prompts/get` | a result, `input_required` with a sealed `requestState`, or an error |
//! | `initialize`, any `_meta` version but 2026-07-28 | `-32022` (HTTP 400) |
//! | anything else | `-32601`; notifications get no answer |
//!
//! Every result carries `resultType`. A `requestState` that does not resume (tampered,
//! truncated, replayed, expired, another tool's, other arguments, past the round cap, not a
//! string) gets the uniform `-32602` `Invalid or expired requestState`; a request that needs
//! a client capability its `_meta` does not declare gets `-32021`.

pub mod conformance;
pub mod flow;
pub mod input;
pub mod pwm;
pub mod reply;
pub mod request;
pub mod tools;

use chacha20::ChaCha20Rng;
use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyError, KeyId, KeyRing, SecretKey};
use mrtr_core::limits::AadLimits;
use mrtr_core::replay::SharedReplaySet;
use mrtr_core::{Binding, Codec, ConfigError, Principal, Reason, Round};
use mrtr_json::{Kind, Value, Writer};
use rand_core::SeedableRng;

use self::flow::Ctx;
use self::reply::{Data, Failure, METHOD_NOT_FOUND, UNSUPPORTED_VERSION};
use self::request::{Declared, Request};
use self::tools::Tool;
use crate::clock::{CLOCK, Uptime};
use crate::gateway::{self, GatewayError};

/// The bindings the server seals: tool and prompt names and principal fields up to 64
/// bytes, audiences up to [`crate::config::MAX_AUDIENCE`].
pub const AAD_LIMITS: AadLimits = AadLimits {
    target: 64,
    principal_field: crate::config::MAX_PRINCIPAL_FIELD,
    audience: crate::config::MAX_AUDIENCE,
    ..AadLimits::DEFAULT
};
/// The server's AAD capacity.
pub const AAD: usize = AAD_LIMITS.capacity();

/// Token ids the replay set remembers until their tokens expire: the resumes it can take
/// within one token lifetime (24 bytes each).
#[cfg(machine = "microbit")]
pub const REPLAY_CAPACITY: usize = 32;
/// Token ids the replay set remembers until their tokens expire: the resumes it can take
/// within one token lifetime (24 bytes each).
#[cfg(not(machine = "microbit"))]
pub const REPLAY_CAPACITY: usize = 256;

/// The single-use record of every token the server resumed, shared by its transports.
pub static SPENT: SharedReplaySet<REPLAY_CAPACITY> = SharedReplaySet::new();

/// The server's token buffer (and longest `requestState` accepted).
pub type Token = crate::Token;

/// The server's engine: the learned wall clock, the shared replay set.
pub type GwEngine<C> =
    gateway::Engine<'static, C, Uptime, &'static SharedReplaySet<REPLAY_CAPACITY>, AAD>;

/// The protocol versions served, as JSON.
const SUPPORTED: &str = r#"["2026-07-28"]"#;

/// A response: its length in the caller's buffer and the HTTP status to send it with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// Bytes written; 0 for a notification (nothing to send).
    pub len: usize,
    /// 200, or 400 for the errors the spec answers with Bad Request.
    pub status: u16,
}

/// The token buffers of one request, kept off the stack: the token being resumed and the
/// one being sealed.
pub struct Scratch {
    opened: Token,
    sealed: Token,
}

impl Scratch {
    /// Empty buffers (for a `static`).
    pub const fn new() -> Self {
        Self {
            opened: Token::new(),
            sealed: Token::new(),
        }
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

/// What a pausable request's handler sees.
#[derive(Clone, Copy, Debug)]
pub struct Call<'r> {
    /// `params.arguments`.
    pub args: Option<Value<'r>>,
    /// `params.inputResponses`.
    pub responses: Option<Value<'r>>,
    /// The resumed continuation (JSON), `None` on a fresh call.
    pub state: Option<Value<'r>>,
    /// What the request declared.
    pub declared: Declared,
}

/// How the server is set up.
#[derive(Clone, Copy, Debug)]
pub struct Settings<'a> {
    /// The audience: the gateway's identity.
    pub audience: &'a str,
    /// Token lifetime, ms.
    pub ttl_ms: u64,
    /// Round cap.
    pub max_rounds: u32,
}

/// The MCP server.
pub struct Server<'s, C: Cipher> {
    engine: GwEngine<C>,
    rng: ChaCha20Rng,
    outputs: pwm::Outputs,
    scratch: &'s mut Scratch,
}

/// A key for [`Server::init`]: its id and its 32 bytes.
#[derive(Clone, Copy)]
pub struct KeySpec<'a> {
    /// The key id.
    pub id: &'a str,
    /// The key bytes.
    pub secret: &'a [u8; 32],
}

/// Why [`Server::init`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub enum InitError {
    /// A key id or the ring was refused.
    Key(mrtr_core::key::KeyError),
    /// The engine refused the settings.
    Config(ConfigError),
}

/// Where a server lives for the whole run: a `static` of the binary (`.bss`), handed out once
/// by its entry point ([`serve_stdio!`](crate::serve_stdio), `gateway_http!`), never a stack
/// frame. [`Server::init`] fills it.
pub type Slot<C> = Option<Server<'static, C>>;

impl<'s, C: Cipher> Server<'s, C> {
    /// Builds a server into `slot`: sealing with `current`, still opening with `previous`,
    /// its DRBG seeded with `seed`. The wall clock must be known ([`CLOCK`]).
    ///
    /// The server is built where it will live (a [`Slot`]: a `static`) and not returned by
    /// value: the engine holds the ciphers' key schedules (544 bytes per AES-256-GCM key on a
    /// Cortex-M0, two keys during a rotation), and every move costs a copy's worth of stack.
    /// mrtr-core's key ring and builder take and return their parts by value, so the steps
    /// run in frames of their own, each gone before the next starts: this frame holds only
    /// the ring, made one key at a time (`first_key`, `add_key`: a key's schedule and
    /// its copies live in their frames), then `install` builds the engine over it and
    /// moves the server into `slot`. Nothing large is moved out of a `Result` (one more copy
    /// each time): key ids are checked first, so making a key cannot fail.
    #[inline(never)]
    pub fn init(
        slot: &mut Option<Self>,
        settings: &Settings<'_>,
        current: KeySpec<'_>,
        previous: Option<KeySpec<'_>>,
        seed: [u8; 32],
        scratch: &'s mut Scratch,
    ) -> Result<(), InitError> {
        let id = |k: &KeySpec<'_>| KeyId::new(k.id).map_err(InitError::Key);
        let mut ring = first_key::<C>(id(&current)?, current.secret);
        if let Some(previous) = previous {
            add_key(&mut ring, id(&previous)?, previous.secret).map_err(InitError::Key)?;
        }
        install(slot, ring, settings, seed, scratch)
    }

    /// The outputs' duty cycles, in percent.
    pub fn outputs(&self) -> [u16; pwm::CHANNELS] {
        self.outputs.percent()
    }

    /// Answers one request from `caller` into `out`.
    #[inline(never)]
    pub fn handle(&mut self, request: &[u8], caller: Principal<'_>, out: &mut [u8]) -> Reply {
        let req = match request::read(request) {
            Ok(req) => req,
            Err(m) => return error(out, m.id, &m.failure, b""),
        };
        let Some(id) = req.id else {
            // A notification: nothing to answer, whatever it is.
            return Reply {
                len: 0,
                status: 202,
            };
        };
        let method = req.method;
        // The protocol version, read per request: -32022 for any other (and for the 2025
        // handshake).
        let version: Option<&[u8]> = if method.str_eq("initialize") {
            Some(req.param("protocolVersion").map_or(b"null", |v| v.raw()))
        } else {
            match req.version() {
                Some(v) if v.str_eq(crate::PROTOCOL_VERSION) => None,
                Some(v) => Some(v.raw()),
                None if method.str_eq("ping") || method.str_eq("server/discover") => None,
                None => Some(b"null"),
            }
        };
        if let Some(requested) = version {
            let failure = Failure {
                code: UNSUPPORTED_VERSION,
                message: "Unsupported protocol version",
                data: Data::Unsupported(SUPPORTED),
            };
            return error(out, id, &failure, requested);
        }
        let result = {
            let mut w = Writer::new(out);
            reply::result_start(&mut w, id);
            self.dispatch(&req, caller, &mut w).and_then(|()| {
                w.raw(b"}");
                w.finish().map(<[u8]>::len).map_err(|_| {
                    defmt::warn!("a response did not fit the buffer");
                    Failure::internal(
                        "Internal error: the response is larger than the gateway's buffer",
                    )
                })
            })
        };
        match result {
            Ok(len) => Reply { len, status: 200 },
            Err(failure) => error(out, id, &failure, b""),
        }
    }

    fn dispatch(
        &mut self,
        req: &Request<'_>,
        caller: Principal<'_>,
        w: &mut Writer<'_>,
    ) -> Result<(), Failure> {
        let m = req.method;
        if m.str_eq("tools/call") {
            self.call(req, caller, w, flow::Kind::Tool)
        } else if m.str_eq("prompts/get") {
            self.call(req, caller, w, flow::Kind::Prompt)
        } else if m.str_eq("tools/list") {
            tools::list(w);
            Ok(())
        } else if m.str_eq("prompts/list") {
            tools::prompts(w);
            Ok(())
        } else if m.str_eq("server/discover") {
            discover(w);
            Ok(())
        } else if m.str_eq("ping") {
            w.raw(br#"{"resultType":"complete"}"#);
            Ok(())
        } else {
            Err(Failure::new(METHOD_NOT_FOUND, "Method not found"))
        }
    }

    /// A `tools/call` or `prompts/get`: bind, verify its `requestState`, the request's own
    /// checks, spend the token, run one round.
    fn call(
        &mut self,
        req: &Request<'_>,
        caller: Principal<'_>,
        w: &mut Writer<'_>,
        kind: flow::Kind,
    ) -> Result<(), Failure> {
        let name = req
            .param("name")
            .and_then(|n| n.as_str())
            .ok_or(Failure::invalid_params(
                "Invalid params: name must be a string",
            ))?;
        let (method, tool) = match kind {
            flow::Kind::Tool => ("tools/call", Tool::named(name)),
            flow::Kind::Prompt => ("prompts/get", None),
        };
        if kind == flow::Kind::Tool && tool.is_none() {
            return Err(Failure::invalid_params("Unknown tool"));
        }
        if kind == flow::Kind::Prompt && name != conformance::PROMPT {
            return Err(Failure::invalid_params("Unknown prompt"));
        }
        let args = match req.param("arguments") {
            Some(a) if matches!(a.kind(), Kind::Object | Kind::Null) => Some(a),
            None => None,
            Some(_) => {
                return Err(Failure::invalid_params(
                    "Invalid params: arguments must be an object",
                ));
            }
        };
        let digest = mrtr_json::args_digest(args).map_err(|_| {
            Failure::invalid_params("Invalid params: the arguments cannot be bound")
        })?;
        let binding =
            Binding::new(method, crate::PROTOCOL_VERSION, name, caller).map_err(|_| {
                Failure::invalid_params(
                    "Invalid params: the request cannot be bound (name or caller too long)",
                )
            })?;
        let Self {
            engine,
            rng,
            outputs,
            scratch,
        } = self;
        let Scratch { opened, sealed } = &mut **scratch;
        let refuse = |reason: Reason| {
            defmt::info!(
                "{=str} {=str}: requestState refused ({})",
                method,
                binding.target(),
                reason
            );
            Failure::rejected(engine.reject(reason).wire())
        };
        let gateway_error = |e: GatewayError| match e {
            GatewayError::Rejected(reason) => refuse(reason),
            _ => Failure::internal("Internal error: the gateway does not know the time"),
        };
        let resumed = match req.param("requestState") {
            None => None,
            Some(state) => {
                let token = state.as_str().ok_or_else(|| refuse(Reason::Malformed))?;
                Some(
                    gateway::verify(engine, token, &binding, &digest, opened)
                        .map_err(gateway_error)?,
                )
            }
        };
        let state = match &resumed {
            Some(r) => Some(
                mrtr_json::parse(r.continuation(), &request::LIMITS).map_err(|_| {
                    Failure::internal("Internal error: cannot read the paused state")
                })?,
            ),
            None => None,
        };
        let call = Call {
            args: args.filter(|a| a.kind() == Kind::Object),
            responses: req
                .param("inputResponses")
                .filter(|r| r.kind() == Kind::Object),
            state,
            declared: req.declared(),
        };
        let tool_error = match tool {
            Some(t) => t.check(&call)?,
            None => request::Needs::Form.check(call.declared).map(|()| None)?,
        };
        if let Some(r) = &resumed {
            gateway::spend(engine, r).map_err(gateway_error)?;
        }
        let mut ctx = Ctx {
            w,
            engine,
            rng,
            sealed,
            binding,
            args: digest,
            round: resumed.as_ref().map_or(Round::FIRST, |r| r.next_round()),
            kind,
        };
        if let Some(message) = tool_error {
            return ctx.tool_error(message);
        }
        match tool {
            Some(t) => t.run(&call, &mut ctx, outputs),
            None => conformance::prompt(&call, &mut ctx),
        }
    }
}

/// A ring of the one key `id`: the key's schedule and its moves into the ring are in this
/// frame, gone once the ring is returned.
#[inline(never)]
fn first_key<C: Cipher>(id: KeyId, secret: &[u8; 32]) -> KeyRing<C, 2> {
    KeyRing::new(Key::new(id, SecretKey::from_bytes(*secret)))
}

/// Adds the key `id` to `ring`, as a previous (opening only) key: like `first_key`, its
/// copies are in this frame.
#[inline(never)]
fn add_key<C: Cipher>(
    ring: &mut KeyRing<C, 2>,
    id: KeyId,
    secret: &[u8; 32],
) -> Result<(), KeyError> {
    ring.add_previous(Key::new(id, SecretKey::from_bytes(*secret)))
}

/// Builds the engine over `ring` and installs the server into `slot`: the builder's moves
/// of the ring happen in this frame, gone once the server is in its slot.
#[inline(never)]
fn install<'s, C: Cipher>(
    slot: &mut Option<Server<'s, C>>,
    ring: KeyRing<C, 2>,
    settings: &Settings<'_>,
    seed: [u8; 32],
    scratch: &'s mut Scratch,
) -> Result<(), InitError> {
    let engine = Codec::builder(ring, &CLOCK)
        .aad_capacity::<AAD>()
        .ttl_ms(settings.ttl_ms)
        .max_rounds(settings.max_rounds)
        .replay_cache(&SPENT)
        .audience(settings.audience)
        .build()
        .map_err(InitError::Config)?;
    *slot = Some(Server {
        engine,
        rng: ChaCha20Rng::from_seed(seed),
        outputs: pwm::Outputs::new(),
        scratch,
    });
    Ok(())
}

/// Writes the `server/discover` result.
fn discover(w: &mut Writer<'_>) {
    w.raw(br#"{"resultType":"complete","supportedVersions":"#)
        .raw(SUPPORTED.as_bytes())
        .raw(br#","capabilities":{"tools":{},"prompts":{}},"ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mrtr-gateway","version":"#)
        .string(env!("CARGO_PKG_VERSION"))
        .raw(b"}}}");
}

/// Writes an error response.
fn error(out: &mut [u8], id: &[u8], failure: &Failure, requested: &[u8]) -> Reply {
    let mut w = Writer::new(out);
    reply::error(&mut w, id, failure, requested);
    let len = w.finish().map_or(0, <[u8]>::len);
    Reply {
        len,
        status: failure.status(),
    }
}

/// Answers a request line that did not fit the transport's buffer (`partial` is what did):
/// `-32600`, with the request's id when it appears in `partial`.
#[inline(never)]
pub fn too_long(partial: &[u8], out: &mut [u8]) -> Reply {
    let id = scan_id(partial).unwrap_or(b"null");
    let failure = Failure::new(
        reply::INVALID_REQUEST,
        "Invalid Request: the message is longer than the gateway's request buffer",
    );
    error(out, id, &failure, b"")
}

/// The raw id (a number or a string without escapes) of the top-level object whose start
/// is `text`, if its `"id"` member lies whole in `text`.
pub fn scan_id(text: &[u8]) -> Option<&[u8]> {
    let mut depth = 0usize;
    let mut i = 0;
    let mut key_next = false;
    while let Some(&b) = text.get(i) {
        match b {
            b'{' | b'[' => {
                depth += 1;
                key_next = depth == 1 && b == b'{';
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b',' => {
                key_next = depth == 1;
                i += 1;
            }
            b'"' => {
                let end = string_end(text, i)?;
                if key_next && depth == 1 && text.get(i..end) == Some(&b"\"id\""[..]) {
                    return id_value(text, end);
                }
                key_next = false;
                i = end;
            }
            _ => i += 1,
        }
    }
    None
}

/// The index just after the string starting at `start`.
fn string_end(text: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        match text.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The value after `"id"` at `at`: `: 7` or `: "abc"` (no escapes), whole.
fn id_value(text: &[u8], at: usize) -> Option<&[u8]> {
    let skip = |mut i: usize| {
        while text.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        i
    };
    let colon = skip(at);
    if text.get(colon) != Some(&b':') {
        return None;
    }
    let start = skip(colon + 1);
    match text.get(start)? {
        b'"' => {
            let end = string_end(text, start)?;
            let value = text.get(start..end)?;
            (!value.contains(&b'\\')).then_some(value)
        }
        b'-' | b'0'..=b'9' => {
            let len = text
                .get(start..)?
                .iter()
                .take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                .count();
            let value = text.get(start..start + len)?;
            // The number must end inside the text (else it may continue past the cut).
            let next = text.get(start + len)?;
            (matches!(next, b',' | b'}' | b' ')
                && mrtr_json::parse(value, &request::LIMITS).is_ok())
            .then_some(value)
        }
        _ => None,
    }
}
