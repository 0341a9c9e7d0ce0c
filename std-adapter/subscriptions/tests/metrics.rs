//! Each subscription event moves its metric (feature `metrics`): read back from a test
//! recorder installed for the test's own thread, never from timing.

#[path = "../../tests/support/metrics.rs"]
#[allow(dead_code)] // the replay and engine tests use the rest
mod recorder;
mod support;

use std::sync::Arc;
use std::time::Duration;

use metrics::with_local_recorder;
use mrtr_std::caller::Caller;
use mrtr_std::clock::ManualClock;
use mrtr_std::metrics::names;
use mrtr_subscriptions::{
    Admission, Authorization, AuthorizationContext, AuthorizeError, Grant, InvocationFeatures,
    NotificationFilter, Registry, RegistryConfig, RequestId,
};
use recorder::TestRecorder;
use support::registry::settle;

#[test]
fn subscriptions_count_grants_checks_failures_and_ends() {
    let rec = TestRecorder::default();
    with_local_recorder(&rec, || {
        let authorizer =
            |ctx: &AuthorizationContext, _: &InvocationFeatures| match ctx.caller().subject() {
                Some("alice") => Ok(Authorization::Allowed(Grant::for_duration(
                    ctx,
                    Duration::from_secs(60),
                ))),
                Some("mallory") => Ok(Authorization::Denied),
                _ => Err(AuthorizeError::from("directory down")),
            };
        let clock = ManualClock::new(1_000);
        let mut reg = Registry::new(
            clock.clone(),
            Arc::new(authorizer),
            RegistryConfig::default(),
        );
        let filter = NotificationFilter {
            tools_list_changed: true,
            ..Default::default()
        };
        let who = |s: &str| Admission::of(Caller::user("https://idp.example", s));
        let alice = reg
            .listen(RequestId::Number(1), filter.clone(), who("alice"))
            .unwrap();
        settle(&mut reg);
        let listen = [("target", "listen")];
        assert_eq!(
            rec.gauge(names::SUBSCRIPTION_GRANTS_ACTIVE, &listen),
            Some(1.0)
        );
        assert_eq!(rec.counter(names::SUBSCRIPTIONS_ACKNOWLEDGED, &[]), 1);
        assert_eq!(
            rec.counter(names::SUBSCRIPTION_CHECKS, &[("kind", "initial")]),
            1
        );
        let allowed = [("outcome", "allowed")];
        assert_eq!(rec.counter(names::SUBSCRIPTION_CHECK_ANSWERS, &allowed), 1);

        // A renewal when the lease asks for one.
        let renew_at = reg.lease(alice).unwrap().renew_at_ms().unwrap();
        clock.set(renew_at);
        settle(&mut reg);
        assert_eq!(
            rec.counter(names::SUBSCRIPTION_CHECKS, &[("kind", "renewal")]),
            1
        );
        assert_eq!(rec.counter(names::SUBSCRIPTION_CHECK_ANSWERS, &allowed), 2);

        // Denied and failing initial checks: rejected, counted by answer and failure.
        reg.listen(RequestId::Number(2), filter.clone(), who("mallory"))
            .unwrap();
        settle(&mut reg);
        reg.listen(RequestId::Number(3), filter, who("eve"))
            .unwrap();
        settle(&mut reg);
        assert_eq!(rec.counter(names::SUBSCRIPTIONS_REJECTED, &[]), 2);
        let denied = [("outcome", "denied")];
        assert_eq!(rec.counter(names::SUBSCRIPTION_CHECK_ANSWERS, &denied), 1);
        let error = [("failure", "error")];
        assert_eq!(rec.counter(names::SUBSCRIPTION_CHECK_FAILURES, &error), 1);
        assert_eq!(
            rec.gauge(names::SUBSCRIPTION_GRANTS_ACTIVE, &listen),
            Some(1.0)
        );

        // The client goes away.
        assert!(reg.close(alice));
        assert_eq!(
            rec.counter(names::SUBSCRIPTION_ENDS, &[("reason", "closed")]),
            1
        );
        assert_eq!(
            rec.gauge(names::SUBSCRIPTION_GRANTS_ACTIVE, &listen),
            Some(0.0)
        );
    });
}
