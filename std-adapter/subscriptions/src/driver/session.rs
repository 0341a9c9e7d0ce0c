//! The 2025-era side of the tokio driver: `resources/subscribe` grants owned by an
//! `Mcp-Session-Id` session.
//!
//! [`RegistryHandle::subscribe_resource`] returns once the initial check allowed the grant
//! (answer `resources/subscribe` with success then) or with why not (answer with an error; the
//! session lives on). The grant belongs to the session, not to any connection: it is renewed
//! on the registry's schedule whether or not the client holds a GET stream open, and it ends
//! only by [`RegistryHandle::unsubscribe_resource`] or [`RegistryHandle::close_session`]
//! (neither calls the authorizer), or by the registry retiring the session: an explicit
//! denial, three consecutive failed checks, or an expired grant. Retirements arrive on the
//! channel [`RegistryHandle::session_retirements`] returns; the server then ends the session
//! (every later request with its id gets HTTP 404).
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use mrtr_std::clock::StdMonotonicClock;
//! use mrtr_std::caller::Caller;
//! use mrtr_subscriptions::{Admission, Authorization, AuthorizationContext, Grant,
//!     InvocationFeatures, Registry, RegistryConfig, RegistryHandle};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let authorizer = |ctx: &AuthorizationContext, _: &InvocationFeatures| {
//!     Ok(if ctx.caller().is_anonymous() {
//!         Authorization::Denied
//!     } else {
//!         Authorization::Allowed(Grant::for_duration(ctx, Duration::from_secs(60)))
//!     })
//! };
//! let registry =
//!     Registry::new(StdMonotonicClock::new(), Arc::new(authorizer), RegistryConfig::default());
//! let subs = RegistryHandle::spawn(registry);
//! let mut retired = subs.session_retirements().expect("first call");
//!
//! let alice = Admission::of(Caller::user("https://idp.example", "alice"));
//! let key = subs.subscribe_resource("session-1", "file:///report", alice).await.unwrap();
//! assert!(subs.may_deliver(key)); // answer resources/subscribe, then deliver updates
//!
//! // Anonymous callers are refused; the session lives on.
//! let refused = subs.subscribe_resource("session-2", "file:///report", Admission::anonymous());
//! assert!(refused.await.is_err());
//!
//! assert!(subs.unsubscribe_resource("session-1", "file:///report")); // no authorizer call
//! assert!(!subs.may_deliver(key));
//! assert!(retired.try_recv().is_err()); // nothing was retired
//! # }
//! ```

use std::fmt;
use std::sync::Arc;

use mrtr_core::lease::EndReason;
use tokio::sync::mpsc;

use super::{DriverState, RegistryHandle, Routes};
use crate::admission::Admission;
use crate::events::{Event, Refused};
use crate::key::SubscriptionKey;
use mrtr_std::clock::MonotonicClock;

/// Why [`RegistryHandle::subscribe_resource`] did not establish a grant. The session is not
/// retired by it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubscribeRefused {
    /// The registry holds its maximum number of subscriptions (no check ran).
    AtCapacity,
    /// The initial check denied the grant or failed; the reason is for logs only.
    Refused(EndReason),
}

impl fmt::Display for SubscribeRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AtCapacity => f.write_str("subscription capacity reached"),
            Self::Refused(reason) => write!(f, "subscription not authorized ({})", reason.as_str()),
        }
    }
}

impl std::error::Error for SubscribeRefused {}

/// A 2025-era session the registry retired: one of its grants was denied on renewal, failed
/// three consecutive checks, or expired. All its grants are already released. End the session
/// now: every later request with its id must get HTTP 404 (there is no subscription-ended
/// notification in this era).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRetired {
    /// The `Mcp-Session-Id`.
    pub session: Arc<str>,
    /// Why (for logs only).
    pub reason: EndReason,
    /// The grant whose loss retired the session.
    pub trigger: SubscriptionKey,
    /// How many grants the session held, the trigger included.
    pub grants: usize,
}

/// Called by the driver task for each [`Event::SessionRetired`]: forwards it to the
/// retirement channel and drops the routes of the released grants.
pub(super) fn route_retirement<C>(shared: &DriverState<C>, routes: &mut Routes, event: &Event) {
    let Event::SessionRetired {
        session,
        reason,
        trigger,
        released,
    } = event
    else {
        return;
    };
    for key in released {
        routes.remove(key);
    }
    let retired = SessionRetired {
        session: session.clone(),
        reason: *reason,
        trigger: *trigger,
        grants: released.len() + 1,
    };
    let sink = shared
        .retirements
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match sink.as_ref().map(|tx| tx.send(retired)) {
        Some(Ok(())) => {}
        _ => tracing::warn!(
            reason = reason.as_str(),
            "a 2025-era session was retired but nobody takes retirements \
             (RegistryHandle::session_retirements)"
        ),
    }
}

/// Closes a grant whose initial check was abandoned (the subscribe future was dropped).
struct Waiting<'a, C: MonotonicClock> {
    handle: &'a RegistryHandle<C>,
    key: SubscriptionKey,
    armed: bool,
}

impl<C: MonotonicClock> Drop for Waiting<'_, C> {
    fn drop(&mut self) {
        self.handle.shared.routes().remove(&self.key);
        if self.armed {
            self.handle.shared.registry().close(self.key);
        }
    }
}

impl<C: MonotonicClock + 'static> RegistryHandle<C> {
    /// `resources/subscribe` in 2025-era session `session`: starts the session's grant for
    /// `uri` and waits for its initial check. `Ok` once allowed (answer the request with
    /// success); a refusal leaves the session alive (answer the request with an error). A
    /// session already holding a grant for `uri` gets that grant back without a check.
    ///
    /// Cancel safe: dropping the future releases the grant (no authorizer call).
    pub async fn subscribe_resource(
        &self,
        session: &str,
        uri: &str,
        admission: Admission,
    ) -> Result<SubscriptionKey, SubscribeRefused> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let key = {
            let mut registry = self.shared.registry();
            match registry.subscribe_resource(session, uri, admission) {
                Ok(key) => {
                    // Routed before the driver can run, so the answer cannot be missed.
                    self.shared.routes().insert(key, tx);
                    key
                }
                Err(Refused::AlreadySubscribed(key)) => return Ok(key),
                Err(Refused::AtCapacity) => return Err(SubscribeRefused::AtCapacity),
            }
        };
        self.shared.wake.notify_one();
        let mut waiting = Waiting {
            handle: self,
            key,
            armed: true,
        };
        let outcome = match rx.recv().await {
            Some(Event::Acknowledged { .. }) => Ok(key),
            Some(Event::Rejected { reason, .. })
            | Some(Event::Ended { reason, .. })
            | Some(Event::SessionRetired { reason, .. }) => Err(SubscribeRefused::Refused(reason)),
            None => Err(SubscribeRefused::Refused(EndReason::Closed)),
        };
        // Answered: the grant is the session's now (or gone), not this future's.
        waiting.armed = false;
        outcome
    }

    /// `resources/unsubscribe`: releases the session's grant for `uri` without calling the
    /// authorizer and without retiring the session. Returns whether there was one.
    pub fn unsubscribe_resource(&self, session: &str, uri: &str) -> bool {
        self.with_registry(|r| r.unsubscribe_resource(session, uri))
    }

    /// The session ended (the client deleted it, it idled out, or the server ended it):
    /// releases its grants without calling the authorizer. Returns how many there were.
    pub fn close_session(&self, session: &str) -> usize {
        self.with_registry(|r| r.close_session(session))
    }

    /// The delivery gate of one subscription: may a notification go out on it now? Ask
    /// before every `notifications/resources/updated`.
    pub fn may_deliver(&self, key: SubscriptionKey) -> bool {
        self.shared.registry().may_deliver(key)
    }

    /// The channel on which retired sessions arrive ([`SessionRetired`]): `Some` on the first
    /// call only. A server with 2025-era sessions takes it at startup and ends each session
    /// it names.
    pub fn session_retirements(&self) -> Option<mpsc::UnboundedReceiver<SessionRetired>> {
        let mut sink = self
            .shared
            .retirements
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if sink.is_some() {
            return None;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        *sink = Some(tx);
        Some(rx)
    }
}
