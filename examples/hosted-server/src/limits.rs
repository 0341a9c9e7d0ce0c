//! What one caller may take: per-caller quotas on pauses and resumes, and caps on 2025-era
//! sessions (the flags, and the layer that tells mrtr an anonymous caller's source address).
//!
//! Defaults, and why (`docs/operations.md`, "Quotas and sizing"):
//! * `--quota-resumes 100/200` (the library's [`QuotaConfig::DEFAULT_LIMIT`]): each resume
//!   keeps its token id in the replay store for one TTL, so one caller holds at most
//!   `200 + 100 × 300 s = 30,200` ids at the 5-minute TTL: filling the default 256 MiB store
//!   (5.59 million ids) takes 185 callers resuming flat out, while an interactive client
//!   resumes a few times a second at most. Benchmarks and suites that drive one principal
//!   flat out pass `off`.
//! * `--quota-pauses 100/200`: each pause is a seal (CPU, and a count against the key's seal
//!   budget); the same rate as resumes, since every resume but the last pauses again.
//! * `--quota-max-callers 100000`: the callers tracked at once (a few hundred bytes each);
//!   beyond it a new caller is refused until a tracked one is idle (fail closed).
//! * `--max-sessions 10000`, `--max-sessions-per-caller 16`: each 2025-era session holds a
//!   task, its rmcp state and its owner until it closes or idles out.

use std::net::{IpAddr, SocketAddr};
use std::task::{Context, Poll};

use axum::extract::ConnectInfo;
use clap::Args;
use mrtr_rmcp::session::SessionLimits;
use mrtr_std::quota::{Limit, QuotaConfig};

/// A quota flag: `RATE/BURST` (per second; `20/40`, `0.5/2`), `RATE`, or `off`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QuotaFlag {
    /// No quota.
    Off,
    /// This limit.
    Limit(Limit),
}

impl std::str::FromStr for QuotaFlag {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.eq_ignore_ascii_case("off") {
            return Ok(Self::Off);
        }
        s.parse()
            .map(Self::Limit)
            .map_err(|e| format!("{e}, or off"))
    }
}

impl QuotaFlag {
    fn limit(self) -> Option<Limit> {
        match self {
            Self::Off => None,
            Self::Limit(limit) => Some(limit),
        }
    }
}

/// The quota and session flags.
#[derive(Clone, Debug, Args)]
pub struct LimitArgs {
    /// Resumes (requests carrying a requestState) per caller: RATE/BURST a second, or off.
    /// Charged before the token is opened. A caller is its principal, or without auth its
    /// source address (IPv6 by /64). Refusals are -32029 naming the limit.
    #[arg(long, env = "MRTR_QUOTA_RESUMES", default_value = "100/200")]
    pub quota_resumes: QuotaFlag,

    /// Pauses (tokens sealed) per caller: RATE/BURST a second, or off.
    #[arg(long, env = "MRTR_QUOTA_PAUSES", default_value = "100/200")]
    pub quota_pauses: QuotaFlag,

    /// Most callers whose quotas are tracked at once; beyond it a new caller is refused
    /// until a tracked one is idle (its buckets full again).
    #[arg(long, env = "MRTR_QUOTA_MAX_CALLERS", default_value_t = QuotaConfig::DEFAULT_MAX_CALLERS)]
    pub quota_max_callers: usize,

    /// Most 2025-era sessions open at once (beyond it `initialize` gets HTTP 503).
    #[arg(long, env = "MRTR_MAX_SESSIONS", default_value_t = 10_000)]
    pub max_sessions: usize,

    /// Most 2025-era sessions one caller holds open at once (beyond it HTTP 429).
    #[arg(long, env = "MRTR_MAX_SESSIONS_PER_CALLER", default_value_t = 16)]
    pub max_sessions_per_caller: usize,
}

impl LimitArgs {
    /// The quotas, or `None` when both are off.
    pub fn quotas(&self) -> Option<QuotaConfig> {
        let (pauses, resumes) = (self.quota_pauses.limit(), self.quota_resumes.limit());
        if pauses.is_none() && resumes.is_none() {
            return None;
        }
        Some(QuotaConfig {
            pauses,
            resumes,
            max_callers: self.quota_max_callers,
        })
    }

    /// The session caps.
    pub fn sessions(&self) -> SessionLimits {
        SessionLimits {
            per_caller: Some(self.max_sessions_per_caller),
            total: Some(self.max_sessions),
        }
    }
}

/// Puts the client's address (from axum's `ConnectInfo`) into each request's extensions as an
/// [`IpAddr`], where mrtr reads an anonymous caller's quota key. A plain tower layer: nothing
/// boxed per request.
#[derive(Clone, Copy, Debug, Default)]
pub struct SourceLayer;

impl<S> tower::Layer<S> for SourceLayer {
    type Service = Source<S>;

    fn layer(&self, inner: S) -> Source<S> {
        Source { inner }
    }
}

/// The service of [`SourceLayer`].
#[derive(Clone, Debug)]
pub struct Source<S> {
    inner: S,
}

impl<S, B> tower::Service<axum::http::Request<B>> for Source<S>
where
    S: tower::Service<axum::http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: axum::http::Request<B>) -> S::Future {
        let addr = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip());
        if let Some(ip) = addr {
            request.extensions_mut().insert::<IpAddr>(ip);
        }
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_flags_parse_and_off_turns_them_off() {
        let flag: QuotaFlag = "2/3".parse().unwrap();
        assert_eq!(
            flag.limit().map(|l| (l.per_second(), l.burst())),
            Some((2.0, 3))
        );
        assert_eq!("OFF".parse::<QuotaFlag>(), Ok(QuotaFlag::Off));
        let err = "fast".parse::<QuotaFlag>().unwrap_err();
        assert!(err.contains("RATE[/BURST]") && err.contains("off"), "{err}");
        let args = LimitArgs {
            quota_resumes: QuotaFlag::Off,
            quota_pauses: QuotaFlag::Off,
            quota_max_callers: 10,
            max_sessions: 5,
            max_sessions_per_caller: 2,
        };
        assert_eq!(args.quotas(), None);
        let args = LimitArgs {
            quota_resumes: flag,
            ..args
        };
        let config = args.quotas().unwrap();
        assert_eq!((config.pauses, config.max_callers), (None, 10));
        assert_eq!(
            args.sessions(),
            SessionLimits {
                per_caller: Some(2),
                total: Some(5)
            }
        );
    }
}
