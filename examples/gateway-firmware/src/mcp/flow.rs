//! One round of a pausable request (`tools/call`, `prompts/get`): how a handler completes,
//! asks without state, or pauses into a sealed `requestState`, written straight into the
//! response.

use chacha20::ChaCha20Rng;
use mrtr_core::cipher::Cipher;
use mrtr_core::{ArgsDigest, Binding, Reason, Round, SealError};
use mrtr_json::Writer;

use super::reply::{Failure, Text};
use super::{GwEngine, Token};
use crate::gateway::{self, GatewayError};

/// Largest continuation the gateway seals.
pub const MAX_CONTINUATION: usize = crate::MAX_CONTINUATION;

/// What kind of result a completed request has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `tools/call`: `content` with one text block.
    Tool,
    /// `prompts/get`: `messages` with one user text message.
    Prompt,
}

/// The round being answered: where the result goes and what a pause binds.
pub struct Ctx<'a, 'w, 'b, C: Cipher> {
    /// The response, positioned where the result goes.
    pub w: &'w mut Writer<'b>,
    pub(super) engine: &'a GwEngine<C>,
    pub(super) rng: &'a mut ChaCha20Rng,
    pub(super) sealed: &'a mut Token,
    pub(super) binding: Binding<'a>,
    pub(super) args: ArgsDigest,
    pub(super) round: Round,
    pub(super) kind: Kind,
}

impl<C: Cipher> Ctx<'_, '_, '_, C> {
    /// Completes with the text `text` writes.
    pub fn done(&mut self, text: impl FnOnce(&mut Text<'_, '_>)) -> Result<(), Failure> {
        match self.kind {
            Kind::Tool => self
                .w
                .raw(br#"{"resultType":"complete","content":[{"type":"text","text":""#),
            Kind::Prompt => self.w.raw(
                br#"{"resultType":"complete","messages":[{"role":"user","content":{"type":"text","text":""#,
            ),
        };
        text(&mut Text::new(self.w));
        match self.kind {
            Kind::Tool => self.w.raw(br#""}],"isError":false}"#),
            Kind::Prompt => self.w.raw(br#""}}]}"#),
        };
        Ok(())
    }

    /// Completes a tool call with a tool error (`isError: true`): the request's own fault,
    /// told to the model.
    pub fn tool_error(&mut self, message: &str) -> Result<(), Failure> {
        self.w
            .raw(br#"{"resultType":"complete","content":[{"type":"text","text":"#)
            .string(message)
            .raw(br#"}],"isError":true}"#);
        Ok(())
    }

    /// Asks without sealing anything: the answers alone complete the request.
    pub fn ask(&mut self, requests: impl FnOnce(&mut Requests<'_, '_>)) -> Result<(), Failure> {
        self.w
            .raw(br#"{"resultType":"input_required","inputRequests":{"#);
        requests(&mut Requests::new(self.w));
        self.w.raw(b"}}");
        Ok(())
    }

    /// Pauses: seals `continuation` into a `requestState` bound to this request and asks
    /// what `requests` writes. At the round cap the request gets the uniform refusal (a
    /// token sealed then could never resume).
    pub fn pause(
        &mut self,
        continuation: &[u8],
        requests: impl FnOnce(&mut Requests<'_, '_>),
    ) -> Result<(), Failure> {
        let sealed = gateway::pause(
            self.engine,
            self.round,
            &self.binding,
            &self.args,
            continuation,
            self.rng,
            self.sealed,
        )
        .map_err(|e| match e {
            GatewayError::Seal(SealError::RoundsExhausted) => {
                defmt::info!(
                    "{=str} {=str}: at the round cap, refused",
                    self.binding.method(),
                    self.binding.target()
                );
                Failure::rejected(self.engine.reject(Reason::RoundsExceeded).wire())
            }
            GatewayError::TimeUnknown => {
                Failure::internal("Internal error: the gateway does not know the time")
            }
            other => {
                defmt::error!("cannot seal requestState: {}", other);
                Failure::internal("Internal error: cannot seal the paused state")
            }
        })?;
        self.w
            .raw(br#"{"resultType":"input_required","inputRequests":{"#);
        requests(&mut Requests::new(self.w));
        self.w
            .raw(br#"},"requestState":"#)
            .string(sealed.as_str())
            .raw(b"}");
        Ok(())
    }
}

/// The members of `inputRequests` being written.
pub struct Requests<'w, 'b> {
    w: &'w mut Writer<'b>,
    first: bool,
}

/// A form with one string property `name`, required.
pub const NAME_SCHEMA: &str =
    r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#;
/// A form with one boolean property `ok`, required.
pub const OK_SCHEMA: &str =
    r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#;
/// A form with one boolean property `confirm`, required.
pub const CONFIRM_SCHEMA: &str =
    r#"{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}"#;

impl<'w, 'b> Requests<'w, 'b> {
    fn new(w: &'w mut Writer<'b>) -> Self {
        Self { w, first: true }
    }

    fn key(&mut self, key: &str) -> &mut Writer<'b> {
        if !core::mem::replace(&mut self.first, false) {
            self.w.raw(b",");
        }
        self.w.string(key).raw(b":");
        self.w
    }

    /// A form elicitation under `key`: the message `message` writes, the JSON Schema
    /// `schema`.
    pub fn form(&mut self, key: &str, message: impl FnOnce(&mut Text<'_, '_>), schema: &str) {
        self.key(key)
            .raw(br#"{"method":"elicitation/create","params":{"mode":"form","message":""#);
        message(&mut Text::new(self.w));
        self.w
            .raw(br#"","requestedSchema":"#)
            .raw(schema.as_bytes())
            .raw(b"}}");
    }

    /// A form elicitation with a fixed message.
    pub fn form_text(&mut self, key: &str, message: &str, schema: &str) {
        self.form(
            key,
            |t| {
                t.str(message);
            },
            schema,
        );
    }

    /// A sampling request under `key`: one user message, `max_tokens`.
    pub fn sampling(&mut self, key: &str, prompt: &str, max_tokens: u32) {
        self.key(key).raw(
            br#"{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"#,
        );
        self.w
            .string(prompt)
            .raw(br#"}}],"maxTokens":"#)
            .u64(u64::from(max_tokens))
            .raw(b"}}");
    }

    /// A `roots/list` request under `key`.
    pub fn roots(&mut self, key: &str) {
        self.key(key).raw(br#"{"method":"roots/list"}"#);
    }
}

/// A continuation being built (JSON, at most [`MAX_CONTINUATION`] bytes).
pub struct State {
    buf: [u8; MAX_CONTINUATION],
}

impl State {
    /// An empty buffer.
    pub const fn new() -> Self {
        Self {
            buf: [0; MAX_CONTINUATION],
        }
    }

    /// Writes the continuation with `f`; `None` if it does not fit.
    pub fn build(&mut self, f: impl FnOnce(&mut Writer<'_>)) -> Option<&[u8]> {
        let mut w = Writer::new(&mut self.buf);
        f(&mut w);
        w.finish().ok()
    }
}

impl Default for State {
    fn default() -> Self {
        Self::new()
    }
}
