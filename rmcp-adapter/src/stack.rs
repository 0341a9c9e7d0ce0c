//! mrtr's layers in front of rmcp's Streamable HTTP service, in the one order that works
//! (see [`Stack`]).

use tower_layer::{Identity, Layer};

use crate::auth::CallerLayer;
use crate::layer::{PrecheckLayer, PrecheckService};
use crate::session::OwnerLayer;

/// mrtr's layers, stacked in the one order that works:
///
/// 1. [`CallerLayer`](crate::CallerLayer): authenticates the request and puts its
///    [`Caller`](mrtr_std::caller::Caller) into the extensions. Everything after it reads the caller.
/// 2. [`OwnerLayer`](crate::session::OwnerLayer) (2025-era sessions): refuses a session to
///    anyone but its opener, and binds a new session to its opener. It needs the caller, and
///    it refuses before any body is read.
/// 3. [`PrecheckLayer`]: reads the body once and answers what must be answered before rmcp
///    parses (a `requestState` that is not a string, text that is not I-JSON).
/// 4. rmcp's service.
///
/// Written by hand, the order is easy to get wrong, and nothing would fail loudly: an owner layer
/// before the caller layer binds every session to the anonymous caller. [`Stack`] builds the
/// order from its parts.
///
/// ```
/// # use mrtr_rmcp::mrtr_std::caller::Caller;
/// # use mrtr_rmcp::layer::PrecheckLayer;
/// # use mrtr_rmcp::{CallerLayer, Stack};
/// # use mrtr_rmcp::mrtr_std::core::ErrorDetail;
/// # use tower_layer::Layer;
/// # fn wrap<S>(rmcp_service: S) {
/// let layers = Stack::new(PrecheckLayer::new(ErrorDetail::Uniform))
///     .caller(CallerLayer::new(|_: &http::request::Parts| Some(Caller::Anonymous)));
/// let mcp = layers.layer(rmcp_service); // axum: Router::new().route_service("/mcp", mcp)
/// # let _ = mcp;
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Stack<A = Identity, O = Identity> {
    caller: A,
    owners: O,
    precheck: PrecheckLayer,
}

impl Stack {
    /// The stack with `precheck` only: every caller anonymous, no session owners.
    pub fn new(precheck: PrecheckLayer) -> Self {
        Self {
            caller: Identity::new(),
            owners: Identity::new(),
            precheck,
        }
    }
}

impl<A, O> Stack<A, O> {
    /// Authenticates each request with `caller`, first.
    pub fn caller<F>(self, caller: CallerLayer<F>) -> Stack<CallerLayer<F>, O> {
        Stack {
            caller,
            owners: self.owners,
            precheck: self.precheck,
        }
    }

    /// Binds each 2025-era session to its opener (`owners`, from
    /// [`Sessions::owner_layer`](crate::session::Sessions::owner_layer)), after the caller
    /// is known and before the body is read.
    pub fn owners<P>(self, owners: OwnerLayer<P>) -> Stack<A, OwnerLayer<P>> {
        Stack {
            caller: self.caller,
            owners,
            precheck: self.precheck,
        }
    }
}

impl<S, A, O> Layer<S> for Stack<A, O>
where
    O: Layer<PrecheckService<S>>,
    A: Layer<O::Service>,
{
    type Service = A::Service;

    fn layer(&self, service: S) -> Self::Service {
        self.caller
            .layer(self.owners.layer(self.precheck.layer(service)))
    }
}
