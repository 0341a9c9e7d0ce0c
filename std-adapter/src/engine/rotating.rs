//! [`Rotating`]: an [`AnyEngine`] whose keys can be replaced while it serves.
//!
//! A key reload builds a new engine from the new key configuration and swaps it in; requests
//! already running finish on the engine they started with. The replay store is shared by
//! every generation, so a token spent before a reload stays spent after it, and each key's
//! seal count carries over to the new generation by key id (a key id must never be reused for
//! other key material: see `docs/operations.md`).

use std::fmt;
use std::sync::{Arc, RwLock};

use mrtr_core::key::KeyId;
use mrtr_core::replay::{ReplayCache, ReplayError};
use mrtr_core::{Clock, TokenId};

use super::any::{AnyEngine, Backend, EngineConfigError, Limits};
use crate::clock::SystemClock;
use crate::keys::KeyConfig;
use crate::replay::{AnyReplayCache, AsyncReplayCache};

/// A replay store shared by every generation of a [`Rotating`] engine.
pub struct Shared<R>(Arc<R>);

impl<R> Shared<R> {
    /// The store.
    pub fn get(&self) -> &R {
        &self.0
    }
}

impl<R> Clone for Shared<R> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<R: fmt::Debug> fmt::Debug for Shared<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl<R: ReplayCache> ReplayCache for Shared<R> {
    fn check_and_record(&self, id: &TokenId, exp: u64, now: u64) -> Result<(), ReplayError> {
        self.0.check_and_record(id, exp, now)
    }
}

impl<R: AsyncReplayCache> AsyncReplayCache for Shared<R> {
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> impl Future<Output = Result<(), ReplayError>> + Send {
        self.0.check_and_record(id, expires_at_ms, now_ms)
    }
}

/// What a [`Rotating::reload`] changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloaded {
    /// The sealing key before and after.
    pub current: (KeyId, KeyId),
    /// Keys the new configuration adds (they open tokens at once).
    pub added: Vec<KeyId>,
    /// Keys it drops (tokens under them stop opening at once).
    pub removed: Vec<KeyId>,
}

/// One engine generation, as a request uses it.
pub type Generation<R, Clk> = AnyEngine<Shared<R>, Clk>;

/// An [`AnyEngine`] whose keys can be reloaded while it serves.
///
/// A key reload builds a new engine from the new key configuration and swaps it in; requests
/// already running finish on the engine they started with. The replay store is shared by
/// every generation, so a token spent before a reload stays spent after it, and each key's
/// seal count carries over to the new generation by key id (a key id must never be reused for
/// other key material).
///
/// ```
/// use mrtr_std::engine::{Backend, Limits, Rotating};
/// use mrtr_std::keys::KeyConfig;
/// use mrtr_std::replay::AnyReplayCache;
///
/// const K1: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
/// const K2: &str = "HyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4=";
/// let keys = KeyConfig::parse_env(&format!("current=k1; k1:{K1}"))?;
/// let engine = Rotating::new(Backend::Aes256Gcm, keys, Limits::for_audience("booking-server"), AnyReplayCache::memory(1_000))?;
///
/// // Phase 1 of a rotation: k2 everywhere, open-only. Phase 2: k2 seals.
/// let phase1 = KeyConfig::parse_env(&format!("current=k1; k1:{K1}; k2:{K2}"))?;
/// assert_eq!(engine.reload(phase1)?.added.len(), 1);
/// let phase2 = KeyConfig::parse_env(&format!("current=k2; k1:{K1}; k2:{K2}"))?;
/// assert_eq!(engine.reload(phase2)?.current.1.as_str(), "k2");
/// assert_eq!(engine.engine().current_key_id().as_str(), "k2");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Rotating<R = AnyReplayCache, Clk = SystemClock> {
    backend: Backend,
    limits: Limits,
    clock: Clk,
    replay: Shared<R>,
    current: RwLock<Arc<Generation<R, Clk>>>,
}

impl<R> Rotating<R, SystemClock> {
    /// An engine for `backend` with `keys`, `limits` and the replay store `replay`, on the
    /// system clock.
    pub fn new(
        backend: Backend,
        keys: KeyConfig,
        limits: Limits,
        replay: R,
    ) -> Result<Self, EngineConfigError> {
        Self::with_clock(backend, keys, limits, replay, SystemClock)
    }
}

impl<R, Clk: Clock + Clone> Rotating<R, Clk> {
    /// [`Rotating::new`] on another clock (a manual clock, in tests).
    pub fn with_clock(
        backend: Backend,
        keys: KeyConfig,
        limits: Limits,
        replay: R,
        clock: Clk,
    ) -> Result<Self, EngineConfigError> {
        let replay = Shared(Arc::new(replay));
        let first =
            AnyEngine::with_clock(backend, keys, limits.clone(), replay.clone(), clock.clone())?;
        Ok(Self {
            backend,
            limits,
            clock,
            replay,
            current: RwLock::new(Arc::new(first)),
        })
    }

    /// The engine to serve one request with (a snapshot: a reload does not change it).
    pub fn engine(&self) -> Arc<Generation<R, Clk>> {
        // A poisoned lock only means a reload panicked after the swap or before it: the
        // engine inside is whole either way.
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The replay store every generation shares.
    pub fn replay_cache(&self) -> &R {
        self.replay.get()
    }

    /// The backend.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Replaces the keys: builds the next generation from `keys` (same backend, limits,
    /// replay store and clock; seal counts carried over by key id) and swaps it in. On an
    /// error nothing changes.
    pub fn reload(&self, keys: KeyConfig) -> Result<Reloaded, EngineConfigError> {
        let mut slot = self.current.write().unwrap_or_else(|e| e.into_inner());
        let old = slot.clone();
        let counts = old.seals_used();
        let before: Vec<KeyId> = counts.iter().map(|(id, _)| id.clone()).collect();
        let after: Vec<KeyId> = keys.ids().cloned().collect();
        let next = AnyEngine::with_clock_counting(
            self.backend,
            keys,
            self.limits.clone(),
            self.replay.clone(),
            self.clock.clone(),
            |id| counts.iter().find(|(k, _)| k == id).map_or(0, |(_, n)| *n),
        )?;
        let reloaded = Reloaded {
            current: (old.current_key_id(), next.current_key_id()),
            added: after
                .iter()
                .filter(|k| !before.contains(k))
                .cloned()
                .collect(),
            removed: before
                .iter()
                .filter(|k| !after.contains(k))
                .cloned()
                .collect(),
        };
        *slot = Arc::new(next);
        tracing::info!(target: "mrtr", current = %reloaded.current.1,
            added = ?reloaded.added, removed = ?reloaded.removed, "keys reloaded");
        Ok(reloaded)
    }
}

impl<R: fmt::Debug, Clk> fmt::Debug for Rotating<R, Clk> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rotating")
            .field("backend", &self.backend)
            .field("limits", &self.limits)
            .field("replay", &self.replay)
            .finish_non_exhaustive()
    }
}
