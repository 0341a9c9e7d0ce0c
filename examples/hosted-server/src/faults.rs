//! TEST HOOK, off by default: scripted transient failures of the subscription authorizer, so
//! the 2025-era fault rules can be shown on the wire (three timeouts retire a session; a
//! success in between resets the count).
//!
//! Only a server started with `--test-hooks` has it, and only behind the admin token:
//! `POST /admin/test/faults {"subject": "carol", "script": ["timeout", "timeout", "allow"]}`
//! makes that subject's next checks follow the script, one step per check: `timeout` (the
//! check hangs until the registry gives up on it at its deadline), `error` (the authorizer
//! fails), `allow` (the policy decides as usual). Past the script the policy decides as usual.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use mrtr_subscriptions::{AuthorizeError, InvocationFeatures};
use serde::Deserialize;

/// How long a scripted timeout hangs at most if the registry never cancels it.
const HANG_CAP: Duration = Duration::from_secs(60);

/// One scripted check outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// Hang until cancelled at the check's deadline: a timeout.
    Timeout,
    /// The authorizer fails.
    Error,
    /// No fault: the policy decides.
    Allow,
}

/// Scripts by subject.
#[derive(Debug, Default)]
pub struct Faults {
    scripts: Mutex<HashMap<String, VecDeque<Fault>>>,
}

impl Faults {
    /// Replaces `subject`'s script.
    pub fn set(&self, subject: &str, script: Vec<Fault>) {
        self.scripts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(subject.to_owned(), script.into());
    }

    /// Steps left in `subject`'s script.
    pub fn left(&self, subject: &str) -> usize {
        self.scripts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(subject)
            .map_or(0, VecDeque::len)
    }

    /// Takes `subject`'s next step, if its script has one.
    pub fn next(&self, subject: &str) -> Option<Fault> {
        self.scripts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(subject)
            .and_then(VecDeque::pop_front)
    }
}

/// Plays one step in the authorizer: `Some(error)` for a fault (after hanging until the
/// registry cancels the check, for a timeout), `None` for the policy to decide.
pub fn play(step: Fault, features: &InvocationFeatures) -> Option<AuthorizeError> {
    match step {
        Fault::Allow => None,
        Fault::Error => Some("injected failure (test hook)".into()),
        Fault::Timeout => {
            let started = Instant::now();
            while !features.cancellation().is_cancelled() && started.elapsed() < HANG_CAP {
                std::thread::sleep(Duration::from_millis(5));
            }
            Some("injected timeout (test hook)".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_play_in_order_per_subject() {
        let faults = Faults::default();
        faults.set("carol", vec![Fault::Error, Fault::Allow]);
        assert_eq!(faults.next("alice"), None);
        assert_eq!(faults.next("carol"), Some(Fault::Error));
        assert_eq!(faults.left("carol"), 1);
        assert_eq!(faults.next("carol"), Some(Fault::Allow));
        assert_eq!(faults.next("carol"), None);
        assert_eq!(faults.left("carol"), 0);
    }
}
