//! Subscription authorization leases (placeholder: filled in by the subscription work).
