//! The subscription authorization runtime for hosted servers: an [`Authorizer`] trait, a
//! bounded worker pool that runs checks off the event loop, and a [`Registry`] that drives
//! every subscription's [`mrtr_core::lease::Lease`] from one timer heap.
//!
//! # Using it from a server
//!
//! 1. Build one [`Registry`] with a [`MonotonicClock`](crate::clock::MonotonicClock)
//!    ([`StdMonotonicClock`](crate::clock::StdMonotonicClock) in production,
//!    [`ManualClock`](crate::clock::ManualClock) in tests) and share it as
//!    `Arc<Mutex<Registry<_>>>`.
//! 2. On `subscriptions/listen` call [`Registry::listen`]; on `resources/subscribe`,
//!    [`Registry::subscribe_resource`]. Send nothing until [`Event::Acknowledged`] arrives for
//!    that key; on [`Event::Rejected`] answer the request with an error.
//! 3. Before every notification, ask [`Registry::may_deliver`].
//! 4. On [`Event::Ended`] send its `completion` as the listen result (if the stream is still
//!    writable) and close the stream; on [`Event::SessionRetired`] retire the session.
//! 5. On client cancel, stream close or `resources/unsubscribe`, call [`Registry::close`] or
//!    [`Registry::unsubscribe_resource`] (the authorizer is not called).
//! 6. When policy changes, reconcile what it affects: [`Registry::reconcile_matching`] with
//!    a [`Selector`] (a subject or principal, a resource URI, a notification family, a
//!    session), found through indexes; [`Registry::reconcile_all`] only when anyone may be
//!    affected. Reconciliations fence delivery at once and wait their turn for the bounded
//!    executor; none fails for lack of room.
//! 7. Drive it from one task: call [`Registry::drive`] whenever the waker set with
//!    [`Registry::set_waker`] fires or [`Registry::time_until_next_deadline`] elapses. With
//!    tokio: a `Notify` as waker and `tokio::time::sleep` for the deadline, in a `select!`.
//!    `drive` never blocks: authorizers run on the registry's own threads.
//!    [`RegistryHandle`] (feature `tokio`, on by default) is that loop, with
//!    admit-before-acknowledge [`RegistryHandle::listen`] and close-on-drop [`Listening`].
//!
//! `docs/subscriptions.md` has the state machine, a tokio driving loop and the scale numbers.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use mrtr_std::clock::StdMonotonicClock;
//! use mrtr_std::subscription::{Admission, Authorization, AuthorizationContext, Event, Grant,
//!     InvocationFeatures, NotificationFilter, Principal, Registry, RegistryConfig, RequestId};
//!
//! let authorizer = |ctx: &AuthorizationContext, _: &InvocationFeatures| {
//!     Ok(Authorization::Allowed(Grant::for_duration(ctx, Duration::from_secs(60))))
//! };
//! let mut registry =
//!     Registry::new(StdMonotonicClock::new(), Arc::new(authorizer), RegistryConfig::default());
//!
//! let filter = NotificationFilter { tools_list_changed: true, ..Default::default() };
//! let alice = Admission::of(Principal::new("https://idp.example", "alice"));
//! let key = registry.listen(RequestId::Number(1), filter, alice).unwrap();
//! assert!(!registry.may_deliver(key)); // not before the acknowledgment
//!
//! let mut events = Vec::new();
//! while events.is_empty() {
//!     assert!(registry.wait_for_completions(Duration::from_secs(10)));
//!     registry.drive(&mut events);
//! }
//! assert!(matches!(events[0], Event::Acknowledged { key: k, .. } if k == key));
//! assert!(registry.may_deliver(key));
//!
//! registry.close(key); // the client went away: no authorizer call
//! assert!(!registry.may_deliver(key));
//! ```

mod admission;
mod authorizer;
mod counters;
mod dispatch;
#[cfg(feature = "tokio")]
mod driver;
mod events;
mod executor;
mod index;
mod key;
mod reconcile;
mod registry;
mod target;

pub use admission::{Admission, AppValue, Principal};
pub use authorizer::{
    Authorization, AuthorizationContext, AuthorizeError, Authorizer, CancellationToken, DenyAll,
    Grant, InvocationFeatures, deny_all,
};
pub use counters::Counters;
#[cfg(feature = "tokio")]
pub use driver::{ListenRefused, Listening, RegistryHandle, SessionRetired, SubscribeRefused};
pub use events::{Event, EventSink, Refused};
pub use index::{Family, Selector};
pub use key::SubscriptionKey;
pub use mrtr_core::lease::{CheckKind, EndReason, Failure, LeaseConfig, Phase, TimeoutPhase};
pub use registry::{Registry, RegistryConfig};
pub use target::{NotificationFilter, RequestId, Target, completion_result_json};
