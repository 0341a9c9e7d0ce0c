//! Cheap self-checks of a [`Lease`], for fuzzers and debug assertions.

use super::machine::{Lease, Phase};
use super::types::CheckId;

impl Lease {
    /// Checks the machine's safety invariants at `now_ms`, naming the first one broken.
    ///
    /// * no delivery while pending, fenced, ended or at/after expiry;
    /// * delivery only under a grant at least as new as the last reconciliation;
    /// * never two checks in flight: the one in flight is always the newest started;
    /// * the effective expiry never exceeds the subscription's lifetime, nor the grant cap
    ///   counted from when the grant was applied;
    /// * a renewal is always scheduled before expiry; retries exist only fenced, after a
    ///   transient failure, within the retry budget;
    /// * a live lease always has a next deadline (it cannot get stuck).
    ///
    /// Runs in constant time and never panics.
    pub fn check_invariants(&self, now_ms: u64) -> Result<(), &'static str> {
        let delivering = self.may_deliver(now_ms);
        let newest = self.next_id.checked_sub(1).map(CheckId::from_raw);
        if self.in_flight.is_some_and(|f| Some(f.id) != newest) {
            return Err("the check in flight is not the newest check");
        }
        if self.granted_by.is_some_and(|g| Some(g) > newest) {
            return Err("grant from a check that was never started");
        }
        if self.failures >= self.cfg.max_consecutive_failures.max(1) && !self.is_ended() {
            return Err("live lease beyond its retry budget");
        }
        if self.failures != 0 && !self.fenced {
            return Err("transient failures counted while delivering");
        }
        match self.phase {
            Phase::Pending => {
                if delivering {
                    return Err("delivering before acknowledgment");
                }
                if self.expires_at_ms.is_some() || self.granted_by.is_some() {
                    return Err("pending lease holds a grant");
                }
                if self.in_flight.is_none() {
                    return Err("pending lease with no check in flight");
                }
            }
            Phase::Established => {
                let Some(expiry) = self.expires_at_ms else {
                    return Err("established lease without expiry");
                };
                if self.granted_by.is_none() {
                    return Err("established lease without a grant");
                }
                if expiry > self.end_of_life_ms {
                    return Err("lease beyond the subscription lifetime");
                }
                if expiry
                    > self
                        .granted_at_ms
                        .saturating_add(self.cfg.max_authorization_ms)
                {
                    return Err("lease beyond the grant cap");
                }
                if self.granted_at_ms > self.high_water_ms {
                    return Err("grant applied in the future");
                }
                if delivering && (self.fenced || now_ms.max(self.high_water_ms) >= expiry) {
                    return Err("delivering while fenced or expired");
                }
                if delivering && self.fence_floor.is_some_and(|f| self.granted_by < Some(f)) {
                    return Err("delivering under a grant older than the last reconciliation");
                }
                if self.renew_at_ms.is_some_and(|r| r >= expiry) {
                    return Err("renewal scheduled at or after expiry");
                }
                if self.retry_at_ms.is_some() && (!self.fenced || self.failures == 0) {
                    return Err("retry scheduled outside a fenced transient failure");
                }
                if self.next_deadline().is_none() {
                    return Err("live lease with no deadline");
                }
            }
            Phase::Ended(_) => {
                if delivering {
                    return Err("delivering after the end");
                }
                if self.in_flight.is_some() {
                    return Err("ended lease with a check in flight");
                }
                if self.renew_at_ms.is_some() || self.retry_at_ms.is_some() {
                    return Err("ended lease with a timer");
                }
            }
        }
        Ok(())
    }
}
