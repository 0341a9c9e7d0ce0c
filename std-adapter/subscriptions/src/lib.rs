#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

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
mod obs;
mod reconcile;
mod registry;
mod target;

pub use admission::{Admission, AppValue};
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
pub use registry::{Registry, RegistryConfig};
pub use target::{NotificationFilter, RequestId, Target, completion_result_json};
