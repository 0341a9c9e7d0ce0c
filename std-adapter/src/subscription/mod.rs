//! Subscription authorization runtime (placeholder: filled in by the subscription work).
