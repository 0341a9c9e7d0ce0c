//! # mrtr-std
//!
//! The std adapter for hosted MCP servers: everything around [`mrtr_core`].
//!
//! * [`clock`]: wall-clock, monotonic and manual clocks;
//! * [`rng`]: the OS CSPRNG ([`OsRng`]) for [`mrtr_core::Mrtr::pause`];
//! * [`rng_fast`]: a reseeding, fork-aware userspace CSPRNG, for AES-256-GCM-SIV only;
//! * [`keys`]: key rings from `MRTR_KEYS` / `MRTR_KEYS_FILE`, or an ephemeral key;
//! * [`replay_mem`]: a concurrent, bounded in-process replay cache;
//! * [`replay_redis`] (feature `redis`, on by default): a Redis replay cache shared by nodes;
//! * [`jcs`]: RFC 8785 canonical JSON and the argument digest;
//! * [`jsonrpc`] and [`engine`]: from request params to `Fresh` / `Resumed` / a JSON-RPC
//!   error, and the `input_required` result, sync or async; [`engine::AnyEngine`] with the
//!   AEAD chosen at run time and [`replay::AnyReplayCache`] with the replay store chosen at
//!   run time;
//! * [`subscription`]: the subscription authorizer runtime.
//!
//! ## A handler that pauses and resumes
//!
//! ```
//! use mrtr_std::core::{Mrtr, Principal};
//! use mrtr_std::engine::{Engine, Step};
//! use mrtr_std::jsonrpc::ResumeRequest;
//! use mrtr_std::keys::KeyConfig;
//! use mrtr_std::replay_mem::MemoryReplayCache;
//! use mrtr_std::{Aes256Gcm, SystemClock};
//! use serde_json::{Value, json};
//!
//! // Startup: keys from the environment form (normally `KeyConfig::from_env()`).
//! let keys = KeyConfig::parse_env("current=k1; k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")?;
//! let mrtr = Mrtr::builder(keys.into_ring::<Aes256Gcm, 4>()?, SystemClock).build()?;
//! let engine = Engine::new(mrtr, MemoryReplayCache::new(100_000));
//!
//! /// `tools/call` for a tool that asks the user which date to book.
//! fn call_tool(
//!     engine: &Engine<Aes256Gcm, MemoryReplayCache>,
//!     params: &Value,
//!     who: Principal<'_>,
//! ) -> Result<Value, Value> {
//!     let req = ResumeRequest::from_params("tools/call", params, who)
//!         .map_err(|e| e.to_value())?
//!         .expect("tools/call can pause");
//!     let step = engine.resume(&req).map_err(|e| e.to_value())?;
//!     match (&step, params.pointer("/inputResponses/date/content/date")) {
//!         // Resumed with the answer: finish the call.
//!         (Step::Resumed(r), Some(date)) => {
//!             assert_eq!(r.continuation(), b"awaiting date");
//!             Ok(json!({"resultType": "complete",
//!                       "content": [{"type": "text", "text": format!("booked for {date}")}]}))
//!         }
//!         // Fresh call (or no answer yet): ask, and seal where we are.
//!         _ => engine
//!             .input_required(&req, step.next_round(), b"awaiting date", Some(json!({
//!                 "date": {"method": "elicitation/create", "params": {
//!                     "message": "Which date?",
//!                     "requestedSchema": {"type": "object",
//!                                         "properties": {"date": {"type": "string"}}}}}
//!             })))
//!             .map_err(|e| json!({"code": -32603, "message": e.to_string()})),
//!     }
//! }
//!
//! let who = Principal::User { issuer: "https://idp.example", subject: "alice" };
//! let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
//!
//! // Round 1: the client calls the tool; the server asks for input.
//! let first = json!({"name": "book_table", "arguments": {"party": 4}, "_meta": meta});
//! let paused = call_tool(&engine, &first, who).expect("input_required");
//! assert_eq!(paused["resultType"], "input_required");
//! let state = paused["requestState"].as_str().unwrap().to_owned();
//!
//! // Round 2: the client retries with the answer and the state, byte for byte.
//! let retry = json!({"name": "book_table", "arguments": {"party": 4}, "_meta": meta,
//!                    "inputResponses": {"date": {"action": "accept",
//!                                                "content": {"date": "2026-12-24"}}},
//!                    "requestState": state});
//! let done = call_tool(&engine, &retry, who).expect("complete");
//! assert_eq!(done["content"][0]["text"], "booked for \"2026-12-24\"");
//!
//! // The same state again is a replay: the uniform JSON-RPC error.
//! let err = call_tool(&engine, &retry, who).unwrap_err();
//! assert_eq!(err, json!({"code": -32602, "message": "Invalid or expired requestState",
//!                        "data": {"reason": "invalid_request_state"}}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use mrtr_aes_gcm::Aes256Gcm;
pub use mrtr_chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
pub use mrtr_core as core;
pub use mrtr_core::cipher::Algorithm;

pub use clock::SystemClock;
pub use rng::OsRng;

pub mod clock;
pub mod engine;
pub mod jcs;
pub mod jsonrpc;
pub mod keys;
pub mod replay;
pub mod replay_mem;
#[cfg(feature = "redis")]
pub mod replay_redis;
#[cfg(feature = "redis")]
pub mod replay_redis_sync;
pub mod rng;
pub mod rng_fast;
pub mod subscription;
