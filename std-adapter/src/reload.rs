//! Key reloads while serving (feature `tokio`): re-read the key file when it changes or on
//! `SIGHUP`, and swap the keys of an [`Engine`] without a restart.
//!
//! [`KeyReloader`] re-reads a [`KeySource`] and calls [`Engine::reload`]; every reload is
//! logged (target `mrtr`) with what changed, and a configuration that is invalid, unreadable
//! or reuses a key id for other material is refused with an error log, leaving the keys as
//! they were. [`KeyReloader::spawn`] runs the triggers on the tokio runtime:
//!
//! * **a watched file**: the key file is read every [`Triggers::watch_every`] (default 5 s)
//!   and reloaded when its bytes changed. Polling a small file costs nothing and works where
//!   change notifications do not: a file replaced by `rename`, a Kubernetes secret or
//!   ConfigMap volume (a symlink swap), a network file system. A file that stays bad is
//!   refused once, not at every poll;
//! * **`SIGHUP`** (Unix): the source is read and reloaded at once, changed or not.
//!
//! Only a key file ([`MRTR_KEYS_FILE`](crate::keys::MRTR_KEYS_FILE)) can change while the
//! process runs: with keys from [`MRTR_KEYS`](crate::keys::MRTR_KEYS), a reload is refused
//! with a message saying so, and nothing is watched.
//!
//! ```no_run
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use mrtr_std::engine::{Backend, Engine, EngineConfig};
//! use mrtr_std::keys::{KeyConfig, KeySource};
//! use mrtr_std::reload::{KeyReloader, Triggers};
//! use mrtr_replay::AnyReplayCache;
//!
//! let source = KeySource::from_env()?; // MRTR_KEYS or MRTR_KEYS_FILE
//! let keys = match &source {
//!     Some(source) => source.load()?,
//!     None => KeyConfig::ephemeral()?,
//! };
//! let engine = Arc::new(Engine::new(Backend::Aes256Gcm, keys, EngineConfig::for_audience("my-service"),
//!     AnyReplayCache::memory(100_000))?);
//! // Keep the handle for as long as the server runs: dropping it stops the triggers.
//! let _reloads = match source {
//!     Some(source) => Some(KeyReloader::new(engine.clone(), source).spawn(Triggers::default())?),
//!     None => None,
//! };
//! # Ok(()) }
//! ```

use std::fmt;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mrtr_core::Clock;
use sha2::{Digest, Sha256};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use zeroize::Zeroizing;

use crate::engine::{Engine, EngineConfigError, Reloaded};
use crate::keys::{KeyConfig, KeyConfigError, KeySource};

/// Default interval between two readings of a watched key file.
pub const DEFAULT_WATCH_INTERVAL: Duration = Duration::from_secs(5);

/// Why a reload was refused; the keys are unchanged.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReloadError {
    /// The source cannot change while the process runs ([`KeySource::Env`]).
    NotReloadable(KeySource),
    /// The configuration cannot be read or parsed.
    Keys(KeyConfigError),
    /// The engine refused it (too many keys, a key id reused for other key material).
    Engine(EngineConfigError),
}

impl fmt::Display for ReloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotReloadable(source) => write!(
                f,
                "keys come from {source}, which cannot change in a running process; configure \
                 a key file (MRTR_KEYS_FILE) to rotate without a restart"
            ),
            Self::Keys(e) => fmt::Display::fmt(e, f),
            Self::Engine(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for ReloadError {}

/// What started a reload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Trigger {
    /// `SIGHUP`.
    Signal,
    /// The watched key file changed.
    FileChanged,
    /// [`KeyReloader::reload_now`] or [`ReloadHandle::reload_now`].
    Manual,
}

impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Signal => "SIGHUP",
            Self::FileChanged => "key file changed",
            Self::Manual => "requested",
        })
    }
}

/// One reload attempt, as [`ReloadHandle::events`] reports it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ReloadEvent {
    /// 1 for the first attempt, then one more per attempt.
    pub seq: u64,
    /// What started it.
    pub trigger: Trigger,
    /// What changed, or why it was refused (the error's message; never key material).
    pub result: Result<Reloaded, String>,
}

/// Which triggers [`KeyReloader::spawn`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Triggers {
    sighup: bool,
    watch: Option<Duration>,
}

impl Default for Triggers {
    /// `SIGHUP` (on Unix) and a watched key file read every [`DEFAULT_WATCH_INTERVAL`].
    fn default() -> Self {
        Self {
            sighup: cfg!(unix),
            watch: Some(DEFAULT_WATCH_INTERVAL),
        }
    }
}

impl Triggers {
    /// No trigger: reloads happen only through [`ReloadHandle::reload_now`].
    pub fn none() -> Self {
        Self {
            sighup: false,
            watch: None,
        }
    }

    /// Reload on `SIGHUP` (Unix only; ignored elsewhere).
    pub fn on_sighup(mut self, on: bool) -> Self {
        self.sighup = on && cfg!(unix);
        self
    }

    /// Read the key file every `every` and reload when it changed; `None`: do not watch.
    pub fn watch_every(mut self, every: Option<Duration>) -> Self {
        self.watch = every.filter(|d| !d.is_zero());
        self
    }
}

type Apply = dyn Fn(KeyConfig) -> Result<Reloaded, EngineConfigError> + Send + Sync;

/// Re-reads a [`KeySource`] and reloads an [`Engine`]; see the [module docs](self).
pub struct KeyReloader {
    source: KeySource,
    apply: Box<Apply>,
    /// Digest of the key file's bytes as last read (applied or refused), so that an unchanged
    /// file is not reloaded and a bad one is refused once. Reloads run one at a time.
    seen: Mutex<Option<[u8; 32]>>,
    events: watch::Sender<Option<ReloadEvent>>,
}

impl KeyReloader {
    /// A reloader of `engine` (an `Arc<Engine>`, or anything that holds one) from `source`,
    /// which should be where `engine`'s keys were loaded from. A key file is read once here,
    /// so that the watch reloads only when it changes from now on.
    pub fn new<T, R, Clk>(engine: T, source: KeySource) -> Self
    where
        T: AsRef<Engine<R, Clk>> + Send + Sync + 'static,
        R: Send + Sync + 'static,
        Clk: Clock + Clone + Send + Sync + 'static,
    {
        let seen = source.path().and_then(|p| std::fs::read(p).ok()).map(|b| {
            let bytes = Zeroizing::new(b);
            digest(&bytes)
        });
        Self {
            source,
            apply: Box::new(move |keys| engine.as_ref().reload(keys)),
            seen: Mutex::new(seen),
            events: watch::channel(None).0,
        }
    }

    /// The source it reads.
    pub fn source(&self) -> &KeySource {
        &self.source
    }

    /// Reads the source now and reloads, changed or not.
    pub fn reload_now(&self, trigger: Trigger) -> Result<Reloaded, ReloadError> {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let result = match &self.source {
            KeySource::File(path) => match std::fs::read(path) {
                Ok(bytes) => {
                    let bytes = Zeroizing::new(bytes);
                    *seen = Some(digest(&bytes));
                    self.apply_bytes(&bytes)
                }
                Err(e) => Err(ReloadError::Keys(KeyConfigError::io(
                    &path.display().to_string(),
                    e.kind(),
                ))),
            },
            other => Err(ReloadError::NotReloadable(other.clone())),
        };
        self.report(trigger, &result);
        result
    }

    /// Reads the key file and reloads if its bytes changed since the last reading; `None`
    /// when unchanged, unreadable as before, or not a file.
    pub fn reload_if_changed(&self) -> Option<Result<Reloaded, ReloadError>> {
        let KeySource::File(path) = &self.source else {
            return None;
        };
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let (now, read) = match std::fs::read(path) {
            Ok(bytes) => {
                let bytes = Zeroizing::new(bytes);
                (Some(digest(&bytes)), Ok(bytes))
            }
            // Unreadable (mid-replace, deleted): report it once, keep the keys.
            Err(e) => (None, Err(e.kind())),
        };
        if now == *seen {
            return None;
        }
        *seen = now;
        let result = match read {
            Ok(bytes) => self.apply_bytes(&bytes),
            Err(kind) => Err(ReloadError::Keys(KeyConfigError::io(
                &path.display().to_string(),
                kind,
            ))),
        };
        self.report(Trigger::FileChanged, &result);
        Some(result)
    }

    fn apply_bytes(&self, bytes: &[u8]) -> Result<Reloaded, ReloadError> {
        let source = match &self.source {
            KeySource::File(path) => path.display().to_string(),
            other => other.to_string(),
        };
        let text = std::str::from_utf8(bytes)
            .map_err(|_| ReloadError::Keys(KeyConfigError::not_unicode(&source)))?;
        let keys = KeyConfig::parse_file(&source, text).map_err(ReloadError::Keys)?;
        (self.apply)(keys).map_err(ReloadError::Engine)
    }

    /// Logs and publishes an attempt. The engine logs what changed and its own refusals.
    fn report(&self, trigger: Trigger, result: &Result<Reloaded, ReloadError>) {
        match result {
            Ok(r) => tracing::info!(target: "mrtr", source = %self.source, %trigger,
                "key reload applied: {r}"),
            Err(ReloadError::Engine(_)) => {}
            Err(e) => {
                crate::obs::key_reload(false);
                tracing::error!(target: "mrtr", source = %self.source, %trigger,
                    "key reload refused; keys unchanged: {e}");
            }
        }
        let result = match result {
            Ok(r) => Ok(r.clone()),
            Err(e) => Err(e.to_string()),
        };
        self.events.send_modify(|last| {
            let seq = last.as_ref().map_or(1, |e| e.seq + 1);
            *last = Some(ReloadEvent {
                seq,
                trigger,
                result,
            });
        });
    }

    /// Runs `triggers` on the current tokio runtime (call it from inside one). The `SIGHUP`
    /// handler is installed before this returns, so a signal sent afterwards reloads (and
    /// never takes the process's default action, which is to exit). A file is watched only
    /// for a [`KeySource::File`]. Fails if the signal handler cannot be installed.
    pub fn spawn(self, triggers: Triggers) -> io::Result<ReloadHandle> {
        let reloader = Arc::new(self);
        let mut tasks = Vec::new();
        #[cfg(unix)]
        if triggers.sighup {
            use tokio::signal::unix::{SignalKind, signal};
            let mut hangups = signal(SignalKind::hangup())?;
            let r = reloader.clone();
            tasks.push(tokio::spawn(async move {
                while hangups.recv().await.is_some() {
                    let r = r.clone();
                    // File I/O and key schedules: off the async workers.
                    let _ =
                        tokio::task::spawn_blocking(move || r.reload_now(Trigger::Signal)).await;
                }
            }));
        }
        if let (Some(every), true) = (triggers.watch, reloader.source.is_reloadable()) {
            let r = reloader.clone();
            tasks.push(tokio::spawn(async move {
                let mut ticks = tokio::time::interval(every);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    ticks.tick().await;
                    let r = r.clone();
                    let _ = tokio::task::spawn_blocking(move || r.reload_if_changed()).await;
                }
            }));
        }
        tracing::info!(target: "mrtr", source = %reloader.source,
            sighup = triggers.sighup, watch_ms = triggers.watch.map(|d| d.as_millis() as u64),
            "key reload triggers running");
        Ok(ReloadHandle { reloader, tasks })
    }
}

impl fmt::Debug for KeyReloader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyReloader")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// The running triggers of a [`KeyReloader`]; dropping it stops them.
pub struct ReloadHandle {
    reloader: Arc<KeyReloader>,
    tasks: Vec<JoinHandle<()>>,
}

impl ReloadHandle {
    /// Every reload attempt, latest first: `None` until the first one. For tests, and for a
    /// server that reports reloads elsewhere.
    pub fn events(&self) -> watch::Receiver<Option<ReloadEvent>> {
        self.reloader.events.subscribe()
    }

    /// [`KeyReloader::reload_now`] (blocking: file I/O and key schedules).
    pub fn reload_now(&self) -> Result<Reloaded, ReloadError> {
        self.reloader.reload_now(Trigger::Manual)
    }
}

impl Drop for ReloadHandle {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl fmt::Debug for ReloadHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReloadHandle")
            .field("reloader", &self.reloader)
            .field("tasks", &self.tasks.len())
            .finish()
    }
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}
