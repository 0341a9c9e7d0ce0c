//! What checking a `requestState` gives: [`Step`] and [`Resumption`], [`Verified`] before
//! the replay record, and [`PauseError`] when a pause issues no token.

use std::fmt;

use mrtr_core::{Rejection, Round, SealError, TokenId};
use zeroize::Zeroize;

use crate::jsonrpc::{JsonRpcError, Method, Unbindable};

/// What a request is, once its `requestState` is checked.
#[derive(Debug)]
pub enum Step {
    /// No `requestState`: a fresh call.
    Fresh,
    /// A valid token: resume from its continuation.
    Resumed(Resumption),
}

impl Step {
    /// The round to seal in if the handler pauses now.
    pub fn next_round(&self) -> Round {
        match self {
            Self::Fresh => Round::FIRST,
            Self::Resumed(r) => r.next_round,
        }
    }
}

/// A token that passed every check, replay cache included: its continuation and round.
/// The continuation is wiped on drop and never shown by `Debug`.
pub struct Resumption {
    pub(super) continuation: WipedBytes,
    pub(super) round: u32,
    pub(super) next_round: Round,
    pub(super) expires_at_ms: u64,
}

impl Resumption {
    /// The handler's continuation bytes, as given when pausing.
    pub fn continuation(&self) -> &[u8] {
        &self.continuation
    }

    /// The round the token was sealed in (this resume is handler invocation `round + 1`).
    pub fn round(&self) -> u32 {
        self.round
    }

    /// The round to seal in if this call pauses again.
    pub fn next_round(&self) -> Round {
        self.next_round
    }

    /// When the token expires, ms since the Unix epoch.
    pub fn expires_at_ms(&self) -> u64 {
        self.expires_at_ms
    }
}

/// Bytes wiped when dropped, with their spare capacity.
///
/// `zeroize::Zeroizing<Vec<u8>>` wipes a vector one byte at a time (a volatile store each);
/// this wipes it as a slice, one fill behind `zeroize`'s optimisation barrier.
pub(super) struct WipedBytes(Vec<u8>);

impl WipedBytes {
    pub(super) fn new(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }
}

impl std::ops::Deref for WipedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for WipedBytes {
    fn drop(&mut self) {
        wipe(&mut self.0);
    }
}

/// A `String` wiped when dropped, as [`WipedBytes`] is.
pub(super) struct WipedText(String);

impl WipedText {
    pub(super) fn new(text: String) -> Self {
        Self(text)
    }
}

impl std::ops::Deref for WipedText {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl Drop for WipedText {
    fn drop(&mut self) {
        wipe(&mut std::mem::take(&mut self.0).into_bytes());
    }
}

/// Zeroes a vector's bytes and its spare capacity, each as one slice.
fn wipe(bytes: &mut Vec<u8>) {
    bytes.as_mut_slice().zeroize();
    bytes.spare_capacity_mut().zeroize();
}

impl fmt::Debug for Resumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resumption")
            .field("round", &self.round)
            .field("continuation", &"<redacted>")
            .field("expires_at_ms", &self.expires_at_ms)
            .finish()
    }
}

/// A request whose `requestState` passed every check but the replay record
/// ([`CipherEngine::verify`](super::CipherEngine::verify)). Commit it
/// ([`CipherEngine::commit`](super::CipherEngine::commit), [`CipherEngine::commit_async`](super::CipherEngine::commit_async))
/// to get the [`Step`]; dropping it leaves the token unspent.
///
/// Its [`Verified::step`] is readable before the commit, for work that has no effects (a
/// handler computing its answer, to be discarded if the commit refuses). Nothing the client
/// could not repeat may happen before the commit succeeds: two replays of one token can both
/// verify, and only one commits.
#[derive(Debug)]
#[must_use = "commit the verified request to record the token and get the step"]
pub struct Verified {
    pub(super) step: Step,
    /// What to record (`None` for a fresh request).
    pub(super) record: Option<Record>,
}

/// A verified token's replay record, and what its log lines name.
#[derive(Debug)]
pub(super) struct Record {
    pub(super) id: TokenId,
    pub(super) expires_at_ms: u64,
    pub(super) method: Method,
    pub(super) target: Box<str>,
}

impl Verified {
    /// Whether the request carried no `requestState` (nothing to record).
    pub fn is_fresh(&self) -> bool {
        self.record.is_none()
    }

    /// The step this request will be once committed. Read it for effect-free work only.
    pub fn step(&self) -> &Step {
        &self.step
    }

    /// The round to seal in if the handler pauses after committing.
    pub fn next_round(&self) -> Round {
        self.step.next_round()
    }
}

/// Why [`CipherEngine::pause`](super::CipherEngine::pause) produced no token. Each maps to the JSON-RPC error the request
/// should be answered with (`JsonRpcError::from`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PauseError {
    /// The chain is at its round cap: a token sealed now could never resume. Answered as
    /// a resume beyond the cap (the rejection with reason `rounds_exceeded`).
    RoundCap(Rejection),
    /// The request's arguments cannot be bound (`-32602` naming the problem).
    Unbindable(Unbindable),
    /// A server-side fault: randomness, key exhaustion, an over-long continuation or an
    /// unbindable target (`-32603`; the detail goes to the log only).
    Seal(SealError),
}

impl fmt::Display for PauseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RoundCap(_) => f.write_str("the resume chain is at its round cap"),
            Self::Unbindable(e) => fmt::Display::fmt(e, f),
            Self::Seal(e) => write!(f, "cannot seal requestState: {e}"),
        }
    }
}

impl std::error::Error for PauseError {}

impl From<PauseError> for JsonRpcError {
    fn from(e: PauseError) -> Self {
        match e {
            PauseError::RoundCap(rejection) => JsonRpcError::from_rejection(rejection),
            PauseError::Unbindable(u) => JsonRpcError::from(&u),
            PauseError::Seal(_) => {
                JsonRpcError::internal("Internal error: cannot seal requestState")
            }
        }
    }
}
