//! [`SubscriptionKey`]: names one subscription of a registry. Its own module, so that the
//! registry, its events, executor and indexes all name subscriptions without importing each
//! other.

use std::fmt;

/// Identifies one subscription inside a registry. Never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SubscriptionKey(u64);

impl SubscriptionKey {
    /// The raw number.
    pub fn get(self) -> u64 {
        self.0
    }

    /// The key numbered `raw` (the registry numbers its subscriptions from 1).
    pub(super) const fn new(raw: u64) -> Self {
        Self(raw)
    }
}

impl fmt::Display for SubscriptionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sub-{}", self.0)
    }
}
