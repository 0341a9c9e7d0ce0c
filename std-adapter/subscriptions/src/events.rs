//! What a registry tells its server, and how.

use std::sync::Arc;
use std::sync::mpsc;

use mrtr_core::lease::EndReason;

use super::key::SubscriptionKey;
use super::target::{RequestId, Target};

/// Something the server must act on, produced by [`Registry::drive`](super::Registry::drive).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The initial check passed. Listen: send `notifications/subscriptions/acknowledged`
    /// (with the honoured filter) as the stream's first message, then deliver while
    /// [`Registry::may_deliver`](super::Registry::may_deliver) says so. 2025 era: answer
    /// `resources/subscribe` with success.
    Acknowledged {
        /// The subscription.
        key: SubscriptionKey,
        /// What it is.
        target: Target,
        /// Its first effective expiry (monotonic ms).
        expires_at_ms: u64,
    },
    /// The initial check did not pass. Listen: answer the request with an error; nothing was
    /// acknowledged and no quota is held. 2025 era: answer `resources/subscribe` with an
    /// error (e.g. -32002); the session stays alive.
    Rejected {
        /// The subscription (already forgotten).
        key: SubscriptionKey,
        /// What it was.
        target: Target,
        /// Denied, or why the check failed (for logs only).
        reason: EndReason,
    },
    /// Listen only: delivery is fenced. If the stream is still writable, send `completion`
    /// as the JSON-RPC result for request `id`, then close the stream. A broken stream may
    /// just close.
    Ended {
        /// The subscription (already forgotten).
        key: SubscriptionKey,
        /// The listen request id.
        id: RequestId,
        /// Why (for logs only).
        reason: EndReason,
        /// `{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":id}}`.
        completion: String,
    },
    /// 2025 era: a grant was lost; the session must be retired (the client re-initializes
    /// and resubscribes). All its grants are already released.
    SessionRetired {
        /// The `Mcp-Session-Id`.
        session: Arc<str>,
        /// Why (for logs only).
        reason: EndReason,
        /// The grant whose loss retired the session.
        trigger: SubscriptionKey,
        /// The session's other grants, released with it.
        released: Vec<SubscriptionKey>,
    },
}

/// Receives a registry's events: a `Vec`, a closure, or an `mpsc::Sender` (a closure around a
/// `tokio::sync::mpsc::UnboundedSender` works the same way).
pub trait EventSink {
    /// Takes one event.
    fn emit(&mut self, event: Event);
}

impl EventSink for Vec<Event> {
    fn emit(&mut self, event: Event) {
        self.push(event);
    }
}

impl<F: FnMut(Event)> EventSink for F {
    fn emit(&mut self, event: Event) {
        self(event)
    }
}

impl EventSink for mpsc::Sender<Event> {
    fn emit(&mut self, event: Event) {
        // A dropped receiver means nobody is serving these subscriptions any more.
        let _ = self.send(event);
    }
}

/// Why a subscription could not even start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The registry holds its maximum number of subscriptions.
    AtCapacity,
    /// The session already holds a grant for this URI.
    AlreadySubscribed(SubscriptionKey),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::AtCapacity => f.write_str("subscription capacity reached"),
            Self::AlreadySubscribed(k) => write!(f, "already subscribed ({k})"),
        }
    }
}

impl std::error::Error for Refused {}
