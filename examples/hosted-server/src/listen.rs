//! Subscriptions of both eras guarded by one mrtr-std authorizer runtime: 2026-07-28
//! `subscriptions/listen` streams and 2025-era `resources/subscribe` grants owned by a session
//! ([`Subscriptions::grants`], served by `mrtr_rmcp::session`).
//!
//! Admission (the initial check, before rmcp acknowledges) runs in the precheck layer's hook
//! through `mrtr_rmcp::listen::admit` ([`Subscriptions::registry`]); [`serve`] takes the
//! admitted subscription and delivers the bookings report's updates while its grant holds.
//!
//! The example policy: a signed-in caller may listen unless its subject is revoked; anonymous
//! callers may not. Each subscription is admitted with the caller's principal (issuer and
//! subject). Revoking a subject ([`Subscriptions::revoke`]) reconciles that subject's
//! subscriptions only (listens and 2025-era grants alike), found through the registry's index:
//! they are fenced at once and end when their checks deny them (a listen stream ends with its
//! tagged completion; a 2025-era session is retired, HTTP 404 from then on); every other
//! subscription keeps delivering and runs no check.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use mrtr_rmcp::session::ResourceGrants;
use mrtr_std::clock::StdMonotonicClock;
use mrtr_std::core::lease::{CheckKind, LeaseConfig};
use mrtr_subscriptions::{
    Authorization, AuthorizationContext, Grant, InvocationFeatures, Registry, RegistryConfig,
    RegistryHandle, Selector,
};
use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;
use tokio::sync::broadcast;

#[cfg(feature = "testing")]
use crate::faults::{self, Faults};
use crate::resources::REPORT_URI;

/// How the example policy runs its checks.
#[derive(Clone, Copy, Debug)]
pub struct PolicyConfig {
    /// Grant length (the registry caps grants at one minute).
    pub lease: Duration,
    /// How long a check may take before it fails closed.
    pub check_timeout: Duration,
    /// Whether the authorizer follows scripted faults (`--test-hooks`).
    #[cfg(feature = "testing")]
    pub test_hooks: bool,
}

/// Authorizer calls for one subject, by kind of check (what `GET /admin/subscriptions` shows).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Checks {
    /// Initial checks.
    pub initial: u64,
    /// Renewals (and 2025-era retries).
    pub renewal: u64,
    /// Reconciliations (after a revocation).
    pub reconciliation: u64,
}

/// The registry (driven by mrtr-std's tokio driver) and the example policy's state.
pub struct Subscriptions {
    registry: RegistryHandle<StdMonotonicClock>,
    grants: ResourceGrants<StdMonotonicClock>,
    revoked: Arc<RwLock<HashSet<String>>>,
    checks: Arc<Mutex<HashMap<String, Checks>>>,
    #[cfg(feature = "testing")]
    faults: Option<Arc<Faults>>,
    bookings: broadcast::Sender<()>,
}

impl Subscriptions {
    /// Starts the registry and its driver task.
    pub fn start(config: PolicyConfig) -> Arc<Self> {
        let revoked: Arc<RwLock<HashSet<String>>> = Arc::default();
        let checks: Arc<Mutex<HashMap<String, Checks>>> = Arc::default();
        #[cfg(feature = "testing")]
        let faults = config.test_hooks.then(|| Arc::new(Faults::default()));
        #[cfg(feature = "testing")]
        let policy_faults = faults.clone();
        let (policy_revoked, policy_checks) = (revoked.clone(), checks.clone());
        let lease = config.lease;
        let authorizer = move |ctx: &AuthorizationContext, features: &InvocationFeatures| {
            let Some(subject) = ctx.caller().subject() else {
                return Ok(Authorization::Denied);
            };
            count(&policy_checks, subject, ctx.kind());
            #[cfg(not(feature = "testing"))]
            let _ = features;
            #[cfg(feature = "testing")]
            if let Some(fault) = policy_faults.as_ref().and_then(|f| f.next(subject))
                && let Some(error) = faults::play(fault, features)
            {
                return Err(error);
            }
            let revoked = policy_revoked
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            if revoked.contains(subject) {
                return Ok(Authorization::Denied);
            }
            Ok(Authorization::Allowed(Grant::for_duration(ctx, lease)))
        };
        let registry_config = RegistryConfig {
            lease: LeaseConfig {
                check_timeout_ms: config.check_timeout.as_millis() as u64,
                ..LeaseConfig::DEFAULT
            },
            ..RegistryConfig::default()
        };
        let registry = Registry::new(
            StdMonotonicClock::new(),
            Arc::new(authorizer),
            registry_config,
        );
        let registry = RegistryHandle::spawn(registry);
        Arc::new(Self {
            grants: ResourceGrants::new(registry.clone()),
            registry,
            revoked,
            checks,
            #[cfg(feature = "testing")]
            faults,
            bookings: broadcast::channel(64).0,
        })
    }

    /// The 2025-era resource grants.
    pub fn grants(&self) -> &ResourceGrants<StdMonotonicClock> {
        &self.grants
    }

    /// The scripted faults, when the server runs with `--test-hooks`.
    #[cfg(feature = "testing")]
    pub fn faults(&self) -> Option<&Faults> {
        self.faults.as_deref()
    }

    /// Authorizer calls so far, by subject.
    pub fn checks(&self) -> HashMap<String, Checks> {
        self.checks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Revokes `subject`: its running subscriptions are fenced now and end once their
    /// checks deny them; new ones are denied. Nobody else's subscription is re-checked.
    /// Returns how many subscriptions are being reconciled.
    pub fn revoke(&self, subject: &str) -> usize {
        self.revoked
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(subject.to_owned());
        // After the policy change, so every check it starts sees the revocation.
        let n = self
            .registry
            .reconcile_matching(&Selector::Subject(subject.to_owned()));
        tracing::info!(subject, reconciling = n, "subject revoked");
        n
    }

    /// Lifts a revocation.
    pub fn restore(&self, subject: &str) {
        self.revoked
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(subject);
    }

    /// The registry, for admission in the precheck layer.
    pub fn registry(&self) -> &RegistryHandle<StdMonotonicClock> {
        &self.registry
    }

    /// Tells subscribers of the bookings report that it changed: listen streams, and 2025-era
    /// sessions whose grant passes the delivery gate.
    pub async fn bookings_changed(&self) {
        let _ = self.bookings.send(());
        let sessions = self.grants.notify_updated(REPORT_URI).await;
        tracing::debug!(sessions, "bookings report update sent to 2025-era sessions");
    }
}

fn count(checks: &Mutex<HashMap<String, Checks>>, subject: &str, kind: CheckKind) {
    let mut checks = checks.lock().unwrap_or_else(PoisonError::into_inner);
    let c = checks.entry(subject.to_owned()).or_default();
    match kind {
        CheckKind::Initial => c.initial += 1,
        CheckKind::Renewal => c.renewal += 1,
        CheckKind::Reconciliation => c.reconciliation += 1,
    }
}

/// The part of a requested filter this server serves: updates of the bookings report.
pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    let uris: Vec<String> = requested
        .resource_subscriptions
        .iter()
        .flatten()
        .filter(|u| u.as_str() == REPORT_URI)
        .cloned()
        .collect();
    if !uris.is_empty() {
        accepted.resource_subscriptions = Some(uris);
    }
    accepted
}

/// Runs one admitted subscription until the client leaves or the registry ends it.
pub async fn serve(subs: &Subscriptions, sub: SubscriptionContext) -> Result<(), rmcp::ErrorData> {
    let mut listening = mrtr_rmcp::listen::take::<StdMonotonicClock>(&sub)?;
    let wants_report = sub
        .accepted()
        .resource_subscriptions
        .as_ref()
        .is_some_and(|u| u.iter().any(|u| u == REPORT_URI));
    let mut bookings = subs.bookings.subscribe();
    loop {
        tokio::select! {
            _ = sub.cancelled() => return Ok(()),
            reason = listening.ended() => {
                tracing::info!(key = %listening.key(), ?reason, "subscription ended");
                return Ok(());
            }
            changed = bookings.recv() => {
                if changed.is_err() && !matches!(changed, Err(broadcast::error::RecvError::Lagged(_))) {
                    continue;
                }
                let deliver = wants_report && listening.may_deliver();
                if deliver && sub.sink().notify_resource_updated(REPORT_URI).await.is_err() {
                    return Ok(());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mrtr_std::caller::Caller;
    use mrtr_std::core::lease::EndReason;
    use mrtr_subscriptions::{Admission, ListenRefused, Listening, NotificationFilter, RequestId};

    async fn admit(
        subs: &Subscriptions,
        id: i64,
        caller: &Caller,
    ) -> Result<Listening<StdMonotonicClock>, ListenRefused> {
        let f = NotificationFilter::default();
        subs.registry()
            .listen(RequestId::Number(id), f, Admission::of(caller.clone()))
            .await
    }

    #[tokio::test]
    async fn policy_admits_users_denies_anonymous_and_revoked_subjects() {
        let subs = Subscriptions::start(PolicyConfig {
            lease: Duration::from_secs(30),
            check_timeout: Duration::from_secs(5),
            #[cfg(feature = "testing")]
            test_hooks: false,
        });
        let alice = Caller::user("i", "alice");
        let a = admit(&subs, 1, &alice).await;
        let b = admit(&subs, 5, &Caller::user("i", "bob")).await;
        let anon = admit(&subs, 2, &Caller::Anonymous).await;
        assert_eq!(anon.err(), Some(ListenRefused::Refused(EndReason::Denied)));
        // Revoking alice re-checks alice's subscription only: it ends as denied.
        let mut listening = a.expect("admitted");
        let bob = b.expect("admitted");
        assert_eq!(subs.revoke("alice"), 1);
        assert!(!listening.may_deliver(), "fenced at once");
        let ended = tokio::time::timeout(Duration::from_secs(10), listening.ended())
            .await
            .unwrap();
        assert_eq!(ended, EndReason::Denied);
        assert!(bob.may_deliver(), "bob's stream is untouched");
        let checks = subs.registry.with_registry(|r| r.counters());
        assert_eq!(
            checks.reconciliation_checks, 1,
            "nobody else was re-checked"
        );
        let again = admit(&subs, 3, &alice).await;
        assert_eq!(again.err(), Some(ListenRefused::Refused(EndReason::Denied)));
        subs.restore("alice");
        assert!(admit(&subs, 4, &alice).await.is_ok());
    }
}
