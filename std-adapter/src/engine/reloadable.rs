//! [`Engine`]: the engine a server holds; an [`AnyEngine`] whose keys can be replaced while it
//! serves.
//!
//! A key reload builds a new engine from the new key configuration and swaps it in; requests
//! already running finish on the engine they started with. The replay store is shared by
//! every generation, so a token spent before a reload stays spent after it. What must not
//! reset is resolved once, at start, and kept across generations: the window in which format
//! v1 tokens open (a reload never reopens it), and a ledger of every key the process has seen
//! (key id → fingerprint of its material, fingerprint → seals), from which each key's seal
//! count carries over, even to a key removed and re-added later.
//!
//! A reload is refused, and nothing changes, when the configuration is invalid, gives a known
//! key id other key material, or gives known key material another id (one id, one material,
//! for the life of the process). It is applied with a warning ([`ReloadWarning`]) when it
//! skips a phase of the rotation procedure (`docs/operations.md`): a key that seals in the
//! same reload that added it, or a key removed less than one token TTL after it stopped
//! sealing.
//!
//! # How the seal budget is bounded
//!
//! Each key may seal [`DEFAULT_SEAL_LIMIT`](mrtr_core::key::DEFAULT_SEAL_LIMIT) tokens. The
//! count lives in this process: a reload carries it over by key material, except the seals made by
//! requests that were already running on the old generation when the reload swapped it (at
//! most one per such request that pauses); a restart starts it again from zero unless the
//! server restores it ([`Engine::with_clock_counting`]); and every node counts its own.
//! The bound that holds for a fleet is therefore the operator's: rotate before the fleet's
//! total of seals under one key nears the limit (`sum by (key_id) (increase(mrtr_seals_total
//! [...]))` counts it across restarts). `docs/operations.md` gives the rule.

use std::fmt;
use std::sync::{Arc, Mutex, RwLock};

use mrtr_core::key::KeyId;
use mrtr_core::replay::{ReplayCache, ReplayError};
use mrtr_core::{Clock, TokenId};

use super::any::AnyEngine;
use super::backend::Backend;
use super::config::{EngineConfig, EngineConfigError};
use super::ledger::Ledger;
use crate::clock::SystemClock;
use crate::keys::KeyConfig;
use mrtr_replay::{AnyReplayCache, AsyncReplayCache};

/// A replay store shared by every generation of an [`Engine`].
pub struct SharedStore<R>(Arc<R>);

impl<R> SharedStore<R> {
    /// The store.
    pub fn get(&self) -> &R {
        &self.0
    }
}

impl<R> Clone for SharedStore<R> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<R: fmt::Debug> fmt::Debug for SharedStore<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl<R: ReplayCache> ReplayCache for SharedStore<R> {
    fn check_and_record(&self, id: &TokenId, exp: u64, now: u64) -> Result<(), ReplayError> {
        self.0.check_and_record(id, exp, now)
    }
}

impl<R: AsyncReplayCache> AsyncReplayCache for SharedStore<R> {
    fn check_and_record(
        &self,
        id: &TokenId,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> impl Future<Output = Result<(), ReplayError>> + Send {
        self.0.check_and_record(id, expires_at_ms, now_ms)
    }
}

/// What a [`Engine::reload`] changed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reloaded {
    /// The sealing key before and after.
    pub current: (KeyId, KeyId),
    /// Keys the new configuration adds (they open tokens at once).
    pub added: Vec<KeyId>,
    /// Keys it drops (tokens under them stop opening at once).
    pub removed: Vec<KeyId>,
    /// Phases of the rotation procedure this reload skipped (it was applied anyway).
    pub warnings: Vec<ReloadWarning>,
}

impl Reloaded {
    /// Whether the reload changed nothing (the same keys, the same current key).
    pub fn is_unchanged(&self) -> bool {
        self.current.0 == self.current.1 && self.added.is_empty() && self.removed.is_empty()
    }
}

impl fmt::Display for Reloaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids = |v: &[KeyId]| {
            let v: Vec<&str> = v.iter().map(KeyId::as_str).collect();
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        if self.current.0 == self.current.1 {
            write!(f, "current key {} (unchanged)", self.current.1)?;
        } else {
            write!(f, "current key {} -> {}", self.current.0, self.current.1)?;
        }
        write!(
            f,
            "; added: {}; removed: {}",
            ids(&self.added),
            ids(&self.removed)
        )
    }
}

/// A phase of the rotation procedure that a reload skipped. The reload is applied (an
/// operator may need to act at once, e.g. to drop a leaked key); the warning is logged.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReloadWarning {
    /// The key seals in the same reload that added it: nodes that do not have it yet cannot
    /// open its tokens. Phase 1 adds it everywhere as open-only first.
    SealsBeforeDistributed(KeyId),
    /// The key was removed less than one token TTL after it stopped sealing (or while it was
    /// sealing): tokens it sealed that are still live stop opening now.
    RemovedWithinTtl(KeyId),
}

impl fmt::Display for ReloadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SealsBeforeDistributed(id) => write!(
                f,
                "key {id} seals in the same reload that added it: nodes that do not have it \
                 yet cannot open its tokens (add it everywhere as open-only first)"
            ),
            Self::RemovedWithinTtl(id) => write!(
                f,
                "key {id} was removed less than one token TTL after it stopped sealing: its \
                 live tokens stop opening now (wait one TTL after promoting its successor)"
            ),
        }
    }
}

/// One engine generation, as a request uses it.
pub type Generation<R, Clk> = AnyEngine<SharedStore<R>, Clk>;

/// The engine a server holds: an [`AnyEngine`] whose keys can be reloaded while it serves.
/// Each request runs on [`Engine::current`], the generation of the moment.
///
/// A key reload builds a new engine from the new key configuration and swaps it in; requests
/// already running finish on the engine they started with. The replay store is shared by
/// every generation, so a token spent before a reload stays spent after it, and each key's
/// seal count carries over to the new generation by key id (a key id must never be reused for
/// other key material).
///
/// ```
/// # #[cfg(all(feature = "aes-gcm", feature = "chacha20poly1305"))]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use mrtr_std::engine::{Backend, Engine, EngineConfig};
/// use mrtr_std::keys::KeyConfig;
/// use mrtr_replay::AnyReplayCache;
///
/// const K1: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
/// const K2: &str = "HyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4=";
/// let keys = KeyConfig::parse_env(&format!("current=k1; k1:{K1}"))?;
/// let engine = Engine::new(Backend::Aes256Gcm, keys, EngineConfig::for_audience("booking-server"), AnyReplayCache::memory(1_000))?;
///
/// // Phase 1 of a rotation: k2 everywhere, open-only. Phase 2: k2 seals.
/// let phase1 = KeyConfig::parse_env(&format!("current=k1; k1:{K1}; k2:{K2}"))?;
/// assert_eq!(engine.reload(phase1)?.added.len(), 1);
/// let phase2 = KeyConfig::parse_env(&format!("current=k2; k1:{K1}; k2:{K2}"))?;
/// assert_eq!(engine.reload(phase2)?.current.1.as_str(), "k2");
/// assert_eq!(engine.current().current_key_id().as_str(), "k2");
/// # Ok(()) }
/// # #[cfg(not(all(feature = "aes-gcm", feature = "chacha20poly1305")))] fn main() {}
/// ```
pub struct Engine<R = AnyReplayCache, Clk = SystemClock> {
    backend: Backend,
    limits: EngineConfig,
    clock: Clk,
    replay: SharedStore<R>,
    current: RwLock<Arc<Generation<R, Clk>>>,
    /// Held for the whole of a reload: one at a time.
    ledger: Mutex<Ledger>,
}

impl<R: Send + Sync + 'static> Engine<R, SystemClock> {
    /// An engine for `backend` with `keys`, `limits` and the replay store `replay`, on the
    /// system clock.
    pub fn new(
        backend: Backend,
        keys: KeyConfig,
        limits: EngineConfig,
        replay: R,
    ) -> Result<Self, EngineConfigError> {
        Self::with_clock(backend, keys, limits, replay, SystemClock)
    }
}

impl<R, Clk> Engine<R, Clk> {
    /// The limits every generation uses (as configured; [`AnyEngine::limits`] reports them as
    /// applied).
    pub fn limits(&self) -> &EngineConfig {
        &self.limits
    }

    /// The current generation, to serve one request with (a snapshot: a reload does not
    /// change it).
    pub fn current(&self) -> Arc<Generation<R, Clk>> {
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
}

impl<R, Clk> Engine<R, Clk>
where
    R: Send + Sync + 'static,
    Clk: Clock + Clone + Send + Sync + 'static,
{
    /// [`Engine::new`] on another clock (a manual clock, in tests).
    pub fn with_clock(
        backend: Backend,
        keys: KeyConfig,
        limits: EngineConfig,
        replay: R,
        clock: Clk,
    ) -> Result<Self, EngineConfigError> {
        Self::with_clock_counting(backend, keys, limits, replay, clock, |_| 0)
    }

    /// [`Engine::with_clock`], each key starting with `used(id)` seals already taken from
    /// its budget: a server that persists the counts restores them here at startup.
    pub fn with_clock_counting(
        backend: Backend,
        keys: KeyConfig,
        limits: EngineConfig,
        replay: R,
        clock: Clk,
        used: impl Fn(&KeyId) -> u32,
    ) -> Result<Self, EngineConfigError> {
        let replay = SharedStore(Arc::new(replay));
        let fingerprints = keys.fingerprints();
        let first = AnyEngine::with_clock_counting(
            backend,
            keys,
            limits.clone(),
            replay.clone(),
            clock.clone(),
            used,
        )?;
        // The v1 window is resolved once, here: a startup window becomes the instant the
        // first generation computed, and every later generation keeps it (a reload must not
        // reopen a window that has closed).
        let limits = EngineConfig {
            accept_v1: first.limits().accept_v1,
            ..limits
        };
        Ok(Self {
            backend,
            limits,
            clock,
            replay,
            current: RwLock::new(Arc::new(first)),
            ledger: Mutex::new(Ledger::new(fingerprints)),
        })
    }

    /// Replaces the keys: builds the next generation from `keys` (same backend, limits,
    /// replay store and clock; seal counts carried over by key id) and swaps it in. Logs what
    /// changed, and a warning for each [`ReloadWarning`].
    ///
    /// On an error nothing changes: an invalid configuration (more keys than the ring holds),
    /// or a key id given other key material than it had ([`EngineConfigError::KeyIdReused`]).
    pub fn reload(&self, keys: KeyConfig) -> Result<Reloaded, EngineConfigError> {
        let result = self.try_reload(keys);
        crate::obs::key_reload(result.is_ok());
        if let Err(e) = &result {
            tracing::error!(target: "mrtr", error = %e, "key reload refused; keys unchanged");
        }
        result
    }

    fn try_reload(&self, keys: KeyConfig) -> Result<Reloaded, EngineConfigError> {
        let mut ledger = self.ledger.lock().unwrap_or_else(|e| e.into_inner());
        let fingerprints = keys.fingerprints();
        ledger.check(&fingerprints)?;
        let old = self.current();
        let counts = old.seals_used();
        ledger.record_seals(&counts);
        let before: Vec<KeyId> = counts.iter().map(|(id, _)| id.clone()).collect();
        let after: Vec<KeyId> = keys.ids().cloned().collect();
        let next = AnyEngine::with_clock_counting(
            self.backend,
            keys,
            self.limits.clone(),
            self.replay.clone(),
            self.clock.clone(),
            |id| ledger.seals(id),
        )?;
        let now = self.clock.now_ms();
        let (was, is) = (old.current_key_id(), next.current_key_id());
        let added: Vec<KeyId> = after
            .iter()
            .filter(|k| !before.contains(k))
            .cloned()
            .collect();
        let removed: Vec<KeyId> = before
            .iter()
            .filter(|k| !after.contains(k))
            .cloned()
            .collect();
        let mut warnings = Vec::new();
        if was != is && added.contains(&is) {
            warnings.push(ReloadWarning::SealsBeforeDistributed(is.clone()));
        }
        if was != is {
            ledger.demoted_at_ms.retain(|(k, _)| *k != was);
            ledger.demoted_at_ms.push((was.clone(), now));
        }
        ledger.demoted_at_ms.retain(|(k, _)| *k != is);
        for id in &removed {
            let sealed_until = ledger
                .demoted_at_ms
                .iter()
                .find(|(k, _)| k == id)
                .map(|(_, at)| *at);
            // A key that sealed in this process less than a TTL ago, or at all if it was never
            // demoted here (a process started with it open-only never saw it seal: no warning).
            if sealed_until.is_some_and(|at| now < at.saturating_add(self.limits.ttl_ms)) {
                warnings.push(ReloadWarning::RemovedWithinTtl(id.clone()));
            }
        }
        ledger.demoted_at_ms.retain(|(k, _)| after.contains(k));
        ledger.admit(fingerprints);
        {
            let mut slot = self.current.write().unwrap_or_else(|e| e.into_inner());
            *slot = Arc::new(next);
        }
        for id in &removed {
            crate::obs::key_removed(id.as_str());
        }
        let reloaded = Reloaded {
            current: (was, is),
            added,
            removed,
            warnings,
        };
        tracing::info!(target: "mrtr", current = %reloaded.current.1,
            added = ?reloaded.added, removed = ?reloaded.removed, "keys reloaded: {reloaded}");
        for w in &reloaded.warnings {
            tracing::warn!(target: "mrtr", "key reload: {w}");
        }
        Ok(reloaded)
    }
}

impl<R: fmt::Debug, Clk> fmt::Debug for Engine<R, Clk> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("backend", &self.backend)
            .field("limits", &self.limits)
            .field("replay", &self.replay)
            .finish_non_exhaustive()
    }
}
