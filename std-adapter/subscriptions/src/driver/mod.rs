//! A tokio driver for the [`Registry`] (feature `tokio`, on by default): one task runs
//! [`Registry::drive`] whenever a check completes or a deadline passes, and routes each event
//! to its subscription.
//!
//! [`RegistryHandle::listen`] returns only once the initial check allowed the subscription
//! (admit before acknowledging), so a server sends the acknowledgment after it and answers a
//! refusal with an error. The [`Listening`] it returns ends when the registry ends the
//! subscription ([`Listening::ended`]), gates every notification
//! ([`Listening::may_deliver`]), and closes the subscription when dropped (without calling the
//! authorizer).
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use mrtr_std::clock::StdMonotonicClock;
//! use mrtr_std::caller::Caller;
//! use mrtr_subscriptions::{Admission, Authorization, AuthorizationContext, Grant,
//!     InvocationFeatures, ListenRefused, NotificationFilter, Registry, RegistryConfig,
//!     RegistryHandle, RequestId, Selector};
//! use mrtr_std::core::lease::EndReason;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // Signed-in callers are allowed unless their subject is "mallory"; anonymous ones are not.
//! let authorizer = |ctx: &AuthorizationContext, _: &InvocationFeatures| {
//!     Ok(match ctx.caller().subject() {
//!         Some(subject) if subject != "mallory" => {
//!             Authorization::Allowed(Grant::for_duration(ctx, Duration::from_secs(60)))
//!         }
//!         _ => Authorization::Denied,
//!     })
//! };
//! let registry =
//!     Registry::new(StdMonotonicClock::new(), Arc::new(authorizer), RegistryConfig::default());
//! let subs = RegistryHandle::spawn(registry);
//!
//! let filter = NotificationFilter { tools_list_changed: true, ..Default::default() };
//! let alice = Admission::of(Caller::user("https://idp.example", "alice"));
//! let listening = subs
//!     .listen(RequestId::Number(1), filter.clone(), alice)
//!     .await
//!     .expect("allowed");
//! assert!(listening.may_deliver()); // acknowledged: send the acknowledgment, then deliver
//!
//! let refused = subs.listen(RequestId::Number(2), filter, Admission::anonymous()).await;
//! assert_eq!(refused.err(), Some(ListenRefused::Refused(EndReason::Denied)));
//!
//! // A policy change about bob re-checks bob's subscriptions only.
//! assert_eq!(subs.reconcile_matching(&Selector::Subject("bob".into())), 0);
//! assert!(listening.may_deliver());
//! drop(listening); // closes the subscription
//! # }
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};

use crate::admission::Admission;
mod session;

use crate::events::{Event, Refused};
use crate::index::Selector;
use crate::key::SubscriptionKey;
use crate::registry::Registry;
use crate::target::{NotificationFilter, RequestId};
use mrtr_core::lease::EndReason;
use mrtr_std::clock::MonotonicClock;
use session::route_retirement;
pub use session::{SessionRetired, SubscribeRefused};

/// How long the driver sleeps when no deadline is pending (a waker call ends it early).
const IDLE: Duration = Duration::from_secs(3600);

pub(super) type Routes = HashMap<SubscriptionKey, mpsc::UnboundedSender<Event>>;

pub(super) struct DriverState<C> {
    pub(super) registry: Mutex<Registry<C>>,
    pub(super) routes: Mutex<Routes>,
    pub(super) wake: Arc<Notify>,
    /// Where 2025-era session retirements go (see `driver/session.rs`).
    pub(super) retirements: Mutex<Option<mpsc::UnboundedSender<SessionRetired>>>,
}

impl<C> DriverState<C> {
    pub(super) fn registry(&self) -> MutexGuard<'_, Registry<C>> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn routes(&self) -> MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<C> Drop for DriverState<C> {
    fn drop(&mut self) {
        // The last handle is gone: let the driver task see it and exit.
        self.wake.notify_one();
    }
}

/// A [`Registry`] driven by a tokio task; cheap to clone. The task stops once every handle
/// and every [`Listening`] is dropped.
pub struct RegistryHandle<C> {
    pub(super) shared: Arc<DriverState<C>>,
}

impl<C> Clone for RegistryHandle<C> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<C> fmt::Debug for RegistryHandle<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never locks the registry (Debug may run inside `with_registry`).
        f.debug_struct("RegistryHandle").finish_non_exhaustive()
    }
}

/// Why [`RegistryHandle::listen`] did not admit a subscription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListenRefused {
    /// The registry holds its maximum number of subscriptions (no check ran).
    AtCapacity,
    /// The initial check denied it or failed; the reason is for logs only (answer the
    /// client uniformly).
    Refused(EndReason),
}

impl fmt::Display for ListenRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AtCapacity => f.write_str("subscription capacity reached"),
            Self::Refused(reason) => write!(f, "subscription not authorized ({})", reason.as_str()),
        }
    }
}

impl std::error::Error for ListenRefused {}

impl<C: MonotonicClock + 'static> RegistryHandle<C> {
    /// Sets the registry's waker and spawns its driving task on the current tokio runtime.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (as `tokio::spawn` does), or if the registry's waker was
    /// already set.
    pub fn spawn(registry: Registry<C>) -> Self {
        let wake = Arc::new(Notify::new());
        let waker = wake.clone();
        registry.set_waker(move || waker.notify_one());
        let shared = Arc::new(DriverState {
            registry: Mutex::new(registry),
            routes: Mutex::default(),
            wake,
            retirements: Mutex::default(),
        });
        tokio::spawn(drive(Arc::downgrade(&shared)));
        Self { shared }
    }

    /// Starts a `subscriptions/listen` subscription and waits for its initial check:
    /// [`Listening`] once allowed (send the acknowledgment now), or why not (answer the
    /// request with an error; nothing was acknowledged). `admission` is what the server
    /// authenticated; the authorizer sees it in every check
    /// ([`AuthorizationContext::caller`](super::AuthorizationContext::caller)) and
    /// its caller selects the subscription for [`reconcile_matching`](Self::reconcile_matching).
    ///
    /// Cancel safe: dropping the future closes the subscription.
    pub async fn listen(
        &self,
        id: RequestId,
        filter: NotificationFilter,
        admission: Admission,
    ) -> Result<Listening<C>, ListenRefused> {
        let (tx, rx) = mpsc::unbounded_channel();
        let key = {
            let mut registry = self.shared.registry();
            let key = registry
                .listen(id, filter, admission)
                .map_err(|e| match e {
                    Refused::AtCapacity | Refused::AlreadySubscribed(_) => {
                        ListenRefused::AtCapacity
                    }
                })?;
            // Routed before the driver can run, so the acknowledgment cannot be missed.
            self.shared.routes().insert(key, tx);
            key
        };
        self.shared.wake.notify_one();
        // Closes the subscription if this future is dropped while waiting.
        let mut listening = Listening {
            key,
            events: rx,
            handle: self.clone(),
        };
        match listening.events.recv().await {
            Some(Event::Acknowledged { .. }) => Ok(listening),
            Some(Event::Rejected { reason, .. })
            | Some(Event::Ended { reason, .. })
            | Some(Event::SessionRetired { reason, .. }) => Err(ListenRefused::Refused(reason)),
            None => Err(ListenRefused::Refused(EndReason::Closed)),
        }
    }
}

impl<C: MonotonicClock> RegistryHandle<C> {
    /// Runs `f` on the locked registry (e.g. [`Registry::reconcile_all`] after a policy
    /// change, or [`Registry::counters`]), then wakes the driver so any work it created is
    /// driven. Keep `f` short: the driver waits for the lock.
    pub fn with_registry<T>(&self, f: impl FnOnce(&mut Registry<C>) -> T) -> T {
        let out = f(&mut self.shared.registry());
        self.shared.wake.notify_one();
        out
    }

    /// Re-checks the subscriptions `selector` picks (after revoking one subject, say):
    /// denied ones end, the others keep delivering untouched. Returns how many.
    /// See [`Registry::reconcile_matching`].
    pub fn reconcile_matching(&self, selector: &Selector) -> usize {
        self.with_registry(|r| r.reconcile_matching(selector))
    }

    /// Re-checks every subscription now (after a policy change that may affect anyone):
    /// denied ones end. The checks are spread through the executor, never failed for lack
    /// of room. Prefer [`reconcile_matching`](Self::reconcile_matching) when the change has
    /// a known scope. Returns how many.
    pub fn reconcile_all(&self) -> usize {
        self.with_registry(Registry::reconcile_all)
    }
}

/// An admitted `subscriptions/listen` subscription. Dropping it closes the subscription
/// (the authorizer is not called).
pub struct Listening<C: MonotonicClock> {
    key: SubscriptionKey,
    events: mpsc::UnboundedReceiver<Event>,
    handle: RegistryHandle<C>,
}

impl<C: MonotonicClock> Listening<C> {
    /// The subscription's key in the registry.
    pub fn key(&self) -> SubscriptionKey {
        self.key
    }

    /// Whether a notification may be sent now; ask before every one.
    pub fn may_deliver(&self) -> bool {
        self.handle.shared.registry().may_deliver(self.key)
    }

    /// Waits until the registry ends the subscription (denied on renewal, expired, a failed
    /// check, or closed) and returns why, for logs. Then send the completion result and
    /// close the stream. Cancel safe (for `select!` with the client's cancellation).
    /// It answers once: after the end, a further call waits forever.
    pub async fn ended(&mut self) -> EndReason {
        loop {
            match self.events.recv().await {
                Some(Event::Ended { reason, .. }) | Some(Event::SessionRetired { reason, .. }) => {
                    return reason;
                }
                Some(Event::Acknowledged { .. }) | Some(Event::Rejected { .. }) => {}
                None => return EndReason::Closed,
            }
        }
    }
}

impl<C: MonotonicClock> Drop for Listening<C> {
    fn drop(&mut self) {
        let was_open = self.handle.shared.registry().close(self.key);
        self.handle.shared.routes().remove(&self.key);
        tracing::debug!(key = %self.key, was_open, "subscription released");
    }
}

impl<C: MonotonicClock> fmt::Debug for Listening<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listening")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// The driving task: runs the registry whenever the waker fires or a deadline passes, and
/// routes each event to its subscription.
async fn drive<C: MonotonicClock>(shared: Weak<DriverState<C>>) {
    loop {
        let Some(s) = shared.upgrade() else { return };
        let wait = s.registry().time_until_next_deadline();
        let wake = s.wake.clone();
        drop(s);
        // Woken, or the deadline passed: either way, drive.
        let _ = tokio::time::timeout(wait.unwrap_or(IDLE), wake.notified()).await;
        let Some(s) = shared.upgrade() else { return };
        let mut events = Vec::new();
        s.registry().drive(&mut events);
        let mut routes = s.routes();
        for event in events {
            let key = match &event {
                Event::Acknowledged { key, .. }
                | Event::Rejected { key, .. }
                | Event::Ended { key, .. } => *key,
                Event::SessionRetired { trigger, .. } => {
                    route_retirement(&s, &mut routes, &event);
                    *trigger
                }
            };
            if let Some(tx) = routes.get(&key) {
                let _ = tx.send(event);
            }
        }
    }
}
