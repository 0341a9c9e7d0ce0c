//! Key rings from configuration: an environment variable, a file, or an ephemeral random key.
//!
//! ## Formats
//!
//! Every key is 32 random bytes in base64 (standard or URL-safe alphabet, padding optional),
//! named by a key id of 1–16 characters `A-Z a-z 0-9 . _ -`. Exactly one key is current: it
//! seals new tokens; the others still open tokens sealed before a rotation.
//!
//! **Environment form** ([`MRTR_KEYS`]): `;`-separated items, each `ID:BASE64` or
//! `current=ID`, spaces around items ignored:
//!
//! ```text
//! MRTR_KEYS="current=k2; k2:q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=; k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
//! ```
//!
//! **File form** ([`MRTR_KEYS_FILE`] names the file): one key per line, `ID BASE64` with the
//! word `current` after the current key; blank lines and lines starting with `#` are ignored:
//!
//! ```text
//! # rotated 2026-11-30
//! k2 q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80= current
//! k1 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=
//! ```
//!
//! A new key: `head -c 32 /dev/urandom | base64`. To rotate without downtime, in three
//! phases, each applied to every node before the next: add the new key (not current: it only
//! opens), then mark it current, then, one token TTL later, remove the old key. A key file can
//! be reloaded while serving ([`KeySource`], [`crate::engine::Engine::reload`], and the
//! `reload` module with feature `tokio`); `docs/operations.md` has the runbook.
//!
//! Errors name the source, the entry and the problem (and the key id once it is valid), never
//! the key material. Decoded key bytes live only in buffers that are wiped on drop.
//!
//! ```
//! # #[cfg(all(feature = "aes-gcm", feature = "chacha20poly1305"))]
//! # fn main() -> Result<(), mrtr_std::keys::KeyConfigError> {
//! use mrtr_std::keys::KeyConfig;
//! use mrtr_std::core::key::KeyRing;
//! use mrtr_aes_gcm::Aes256Gcm;
//!
//! let config = KeyConfig::parse_env(
//!     "current=k2; k2:q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=; \
//!      k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
//! )?;
//! let ring: KeyRing<Aes256Gcm, 4> = config.into_ring()?;
//! assert_eq!(ring.current().id().as_str(), "k2");
//! assert!(ring.find(b"k1").is_some());
//!
//! let err = KeyConfig::parse_env("current=k1; k1:AAEC").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "MRTR_KEYS entry 2 (key id \"k1\"): key is 3 bytes after base64 decoding, must be 32"
//! );
//! # Ok(()) }
//! # #[cfg(not(all(feature = "aes-gcm", feature = "chacha20poly1305")))] fn main() {}
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use mrtr_core::cipher::Cipher;
use mrtr_core::key::{KEY_LEN, Key, KeyId, KeyRing, SecretKey};
use rand_core::TryRng;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::rng::OsRng;

mod error;
pub use error::{KeyConfigError, KeyConfigProblem};

/// Environment variable holding the key ring in the environment form.
pub const MRTR_KEYS: &str = "MRTR_KEYS";
/// Environment variable naming a file holding the key ring in the file form.
pub const MRTR_KEYS_FILE: &str = "MRTR_KEYS_FILE";

/// Longest entry accepted (far longer than any valid one), so a stray blob is refused early.
const MAX_ENTRY_LEN: usize = 256;

const LENIENT: GeneralPurposeConfig =
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
const STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);

/// A digest of a key's material: SHA-256 of a fixed label and the 32 random bytes. It reveals
/// nothing about the key, and is still never logged or shown.
fn fingerprint(secret: &SecretKey) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"mrtr key fingerprint v1\0");
    h.update(secret.expose());
    h.finalize().into()
}

/// A parsed key configuration: key ids and their secret keys, one of them current.
///
/// `Debug` shows the key ids only. Turn it into a ring with [`KeyConfig::into_ring`].
pub struct KeyConfig {
    keys: Vec<(KeyId, SecretKey)>,
    current: usize,
}

impl fmt::Debug for KeyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyConfig")
            .field("current", self.current_id())
            .field("ids", &self.keys.iter().map(|k| &k.0).collect::<Vec<_>>())
            .field("material", &"<redacted>")
            .finish()
    }
}

/// Collects entries and checks the whole.
struct Collector<'s> {
    source: &'s str,
    keys: Vec<(KeyId, SecretKey)>,
    current: Option<(usize, KeyId)>,
}

impl<'s> Collector<'s> {
    fn new(source: &'s str) -> Self {
        Self {
            source,
            keys: Vec::new(),
            current: None,
        }
    }

    fn err(&self, entry: usize, problem: KeyConfigProblem) -> KeyConfigError {
        KeyConfigError::new(self.source, problem).at(entry)
    }

    fn id(&self, entry: usize, id: &str) -> Result<KeyId, KeyConfigError> {
        KeyId::new(id).map_err(|_| self.err(entry, KeyConfigProblem::BadKeyId))
    }

    fn mark_current(&mut self, entry: usize, id: KeyId) -> Result<(), KeyConfigError> {
        if self.current.is_some() {
            return Err(self.err(entry, KeyConfigProblem::SeveralCurrentKeys));
        }
        self.current = Some((entry, id));
        Ok(())
    }

    fn add(&mut self, entry: usize, id: KeyId, b64: &str) -> Result<(), KeyConfigError> {
        let secret = decode_key(b64).map_err(|p| self.err(entry, p).with_id(&id))?;
        if self.keys.iter().any(|(k, _)| *k == id) {
            return Err(self
                .err(entry, KeyConfigProblem::DuplicateKeyId)
                .with_id(&id));
        }
        let fp = fingerprint(&secret);
        if self.keys.iter().any(|(_, other)| fingerprint(other) == fp) {
            return Err(self
                .err(entry, KeyConfigProblem::DuplicateKeyMaterial)
                .with_id(&id));
        }
        self.keys.push((id, secret));
        Ok(())
    }

    fn finish(self) -> Result<KeyConfig, KeyConfigError> {
        if self.keys.is_empty() {
            return Err(KeyConfigError::new(self.source, KeyConfigProblem::Empty));
        }
        let Some((entry, id)) = self.current.clone() else {
            return Err(KeyConfigError::new(
                self.source,
                KeyConfigProblem::NoCurrentKey,
            ));
        };
        let Some(current) = self.keys.iter().position(|(k, _)| *k == id) else {
            return Err(self
                .err(entry, KeyConfigProblem::UnknownCurrentKey)
                .with_id(&id));
        };
        Ok(KeyConfig {
            keys: self.keys,
            current,
        })
    }
}

fn decode_key(b64: &str) -> Result<SecretKey, KeyConfigProblem> {
    let b64 = b64.trim();
    if b64.is_empty() {
        return Err(KeyConfigProblem::BadBase64);
    }
    let mut buf = Zeroizing::new(vec![0u8; base64::decoded_len_estimate(b64.len())]);
    let len = STANDARD
        .decode_slice(b64, &mut buf[..])
        .or_else(|_| URL_SAFE.decode_slice(b64, &mut buf[..]))
        .map_err(|_| KeyConfigProblem::BadBase64)?;
    SecretKey::from_slice(&buf[..len]).map_err(|_| KeyConfigProblem::WrongLength { decoded: len })
}

impl KeyConfig {
    /// Parses the environment form (see the [module docs](self)); errors name [`MRTR_KEYS`].
    pub fn parse_env(value: &str) -> Result<Self, KeyConfigError> {
        Self::parse_env_named(MRTR_KEYS, value)
    }

    fn parse_env_named(source: &str, value: &str) -> Result<Self, KeyConfigError> {
        let mut c = Collector::new(source);
        let items = value.split(';').map(str::trim).filter(|s| !s.is_empty());
        for (i, item) in items.enumerate() {
            let entry = i + 1;
            if item.len() > MAX_ENTRY_LEN {
                return Err(c.err(
                    entry,
                    KeyConfigProblem::Syntax("an entry of at most 256 characters"),
                ));
            }
            if let Some(id) = item.strip_prefix("current=") {
                let id = c.id(entry, id.trim())?;
                c.mark_current(entry, id)?;
            } else if let Some((id, b64)) = item.split_once(':') {
                let id = c.id(entry, id.trim())?;
                c.add(entry, id, b64)?;
            } else {
                return Err(c.err(entry, KeyConfigProblem::Syntax("ID:BASE64 or current=ID")));
            }
        }
        c.finish()
    }

    /// Parses the file form (see the [module docs](self)); errors name `source` (the path).
    pub fn parse_file(source: &str, text: &str) -> Result<Self, KeyConfigError> {
        let mut c = Collector::new(source);
        for (i, line) in text.lines().enumerate() {
            let entry = i + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.len() > MAX_ENTRY_LEN {
                return Err(c.err(
                    entry,
                    KeyConfigProblem::Syntax("a line of at most 256 characters"),
                ));
            }
            let mut words = line.split_whitespace();
            let (Some(id), Some(b64)) = (words.next(), words.next()) else {
                return Err(c.err(entry, KeyConfigProblem::Syntax("ID BASE64 [current]")));
            };
            let id = c.id(entry, id)?;
            match (words.next(), words.next()) {
                (None, _) => {}
                (Some("current"), None) => c.mark_current(entry, id.clone())?,
                _ => {
                    return Err(c
                        .err(entry, KeyConfigProblem::Syntax("ID BASE64 [current]"))
                        .with_id(&id));
                }
            }
            c.add(entry, id, b64)?;
        }
        c.finish()
    }

    /// Reads and parses a key file.
    pub fn load_file(path: impl AsRef<Path>) -> Result<Self, KeyConfigError> {
        let path = path.as_ref();
        let source = path.display().to_string();
        let text = Zeroizing::new(
            std::fs::read_to_string(path)
                .map_err(|e| KeyConfigError::new(&source, KeyConfigProblem::Io(e.kind())))?,
        );
        Self::parse_file(&source, &text)
    }

    /// Loads the ring from [`MRTR_KEYS`] if set, else from the file [`MRTR_KEYS_FILE`] names.
    pub fn from_env() -> Result<Self, KeyConfigError> {
        Self::from_vars(|name| std::env::var(name))
    }

    /// Like [`KeyConfig::from_env`], but with neither variable set, an [ephemeral] ring.
    ///
    /// [ephemeral]: KeyConfig::ephemeral
    pub fn from_env_or_ephemeral() -> Result<Self, KeyConfigError> {
        match Self::from_env() {
            Err(e) if *e.problem() == KeyConfigProblem::NotConfigured => Self::ephemeral(),
            other => other,
        }
    }

    /// [`KeyConfig::from_env`] with a custom variable lookup (for tests and other sources).
    pub fn from_vars(
        var: impl Fn(&str) -> Result<String, std::env::VarError>,
    ) -> Result<Self, KeyConfigError> {
        use std::env::VarError;
        match var(MRTR_KEYS) {
            Ok(value) => return Self::parse_env(&Zeroizing::new(value)),
            Err(VarError::NotUnicode(_)) => {
                return Err(KeyConfigError::new(MRTR_KEYS, KeyConfigProblem::NotUnicode));
            }
            Err(VarError::NotPresent) => {}
        }
        match var(MRTR_KEYS_FILE) {
            Ok(path) => Self::load_file(path),
            Err(VarError::NotUnicode(_)) => Err(KeyConfigError::new(
                MRTR_KEYS_FILE,
                KeyConfigProblem::NotUnicode,
            )),
            Err(VarError::NotPresent) => Err(KeyConfigError::new(
                MRTR_KEYS,
                KeyConfigProblem::NotConfigured,
            )),
        }
    }

    /// A single random key, with a random key id `eph-XXXXXXXX`, that lives only in this
    /// process. Logs a warning: tokens sealed with it do not survive a restart and do not
    /// open on other nodes.
    pub fn ephemeral() -> Result<Self, KeyConfigError> {
        let mut bytes = Zeroizing::new([0u8; KEY_LEN]);
        let mut tag = [0u8; 4];
        let source = "ephemeral key";
        OsRng
            .try_fill_bytes(&mut bytes[..])
            .and_then(|_| OsRng.try_fill_bytes(&mut tag))
            .map_err(|_| KeyConfigError::new(source, KeyConfigProblem::Empty))?;
        let id = format!(
            "eph-{:02x}{:02x}{:02x}{:02x}",
            tag[0], tag[1], tag[2], tag[3]
        );
        let id =
            KeyId::new(&id).map_err(|_| KeyConfigError::new(source, KeyConfigProblem::BadKeyId))?;
        tracing::warn!(
            key_id = id.as_str(),
            "mrtr: using an ephemeral random key; requestState tokens will not survive a restart \
             and will not open on other nodes (configure {MRTR_KEYS} or {MRTR_KEYS_FILE})"
        );
        Ok(Self {
            keys: vec![(id, SecretKey::from_bytes(*bytes))],
            current: 0,
        })
    }

    /// The current key's id.
    pub fn current_id(&self) -> &KeyId {
        &self.keys[self.current].0
    }

    /// Every key id, in configuration order.
    pub fn ids(&self) -> impl Iterator<Item = &KeyId> {
        self.keys.iter().map(|k| &k.0)
    }

    /// How many keys are configured.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Always false: a configuration holds at least its current key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// A digest of each key's material, by key id, to tell whether a reload reuses a key id
    /// for other material. SHA-256 of a fixed label and the 32 random bytes: it reveals
    /// nothing about the key, and is still never logged or shown.
    pub(crate) fn fingerprints(&self) -> Vec<(KeyId, [u8; 32])> {
        self.keys
            .iter()
            .map(|(id, secret)| (id.clone(), fingerprint(secret)))
            .collect()
    }

    /// Builds the key ring for cipher `C` with room for `K` keys; the secrets are consumed.
    pub fn into_ring<C: Cipher, const K: usize>(self) -> Result<KeyRing<C, K>, KeyConfigError> {
        self.into_ring_counting(|_| 0)
    }

    /// [`KeyConfig::into_ring`], each key starting with `used(id)` seals already taken from
    /// its budget (to carry the counts of a running ring over a reload).
    pub fn into_ring_counting<C: Cipher, const K: usize>(
        self,
        used: impl Fn(&KeyId) -> u32,
    ) -> Result<KeyRing<C, K>, KeyConfigError> {
        if self.keys.len() > K {
            return Err(KeyConfigError::new(
                "key ring",
                KeyConfigProblem::RingTooBig {
                    keys: self.keys.len(),
                    capacity: K,
                },
            ));
        }
        let mut keys = self.keys;
        let (id, secret) = keys.remove(self.current);
        let n = used(&id);
        let mut ring = KeyRing::new(Key::with_seals_used(id, secret, n));
        for (id, secret) in keys {
            let err_id = id.clone();
            let n = used(&id);
            ring.add_previous(Key::with_seals_used(id, secret, n))
                .map_err(|_| {
                    KeyConfigError::new("key ring", KeyConfigProblem::DuplicateKeyId)
                        .with_id(&err_id)
                })?;
        }
        Ok(ring)
    }
}

/// Where a key configuration comes from, so that it can be read again: a reload re-reads it.
///
/// Only a key file can change while the process runs ([`KeySource::is_reloadable`]): the
/// environment of a running process is fixed, so [`MRTR_KEYS`] needs a restart to change.
///
/// ```
/// use mrtr_std::keys::{KeySource, MRTR_KEYS_FILE};
///
/// let dir = std::env::temp_dir().join(format!("mrtr-keysource-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("keys");
/// std::fs::write(&path, "k1 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8= current\n")?;
///
/// let file = path.to_str().unwrap().to_owned();
/// let source = KeySource::from_vars(|name| match name {
///     MRTR_KEYS_FILE => Ok(file.clone()),
///     _ => Err(std::env::VarError::NotPresent),
/// })?
/// .expect("configured");
/// assert!(source.is_reloadable());
/// assert_eq!(source.load()?.current_id().as_str(), "k1");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeySource {
    /// The [`MRTR_KEYS`] variable (fixed for the life of the process).
    Env,
    /// A key file in the file form ([`MRTR_KEYS_FILE`]).
    File(PathBuf),
}

impl KeySource {
    /// The source the environment configures: [`MRTR_KEYS`] if set, else the file
    /// [`MRTR_KEYS_FILE`] names; `None` when neither is set (use [`KeyConfig::ephemeral`]).
    pub fn from_env() -> Result<Option<Self>, KeyConfigError> {
        Self::from_vars(|name| std::env::var(name))
    }

    /// [`KeySource::from_env`] with a custom variable lookup.
    pub fn from_vars(
        var: impl Fn(&str) -> Result<String, std::env::VarError>,
    ) -> Result<Option<Self>, KeyConfigError> {
        use std::env::VarError;
        match var(MRTR_KEYS) {
            Ok(_) => return Ok(Some(Self::Env)),
            Err(VarError::NotUnicode(_)) => {
                return Err(KeyConfigError::new(MRTR_KEYS, KeyConfigProblem::NotUnicode));
            }
            Err(VarError::NotPresent) => {}
        }
        match var(MRTR_KEYS_FILE) {
            Ok(path) => Ok(Some(Self::File(PathBuf::from(path)))),
            Err(VarError::NotUnicode(_)) => Err(KeyConfigError::new(
                MRTR_KEYS_FILE,
                KeyConfigProblem::NotUnicode,
            )),
            Err(VarError::NotPresent) => Ok(None),
        }
    }

    /// Reads and parses the configuration now.
    pub fn load(&self) -> Result<KeyConfig, KeyConfigError> {
        match self {
            Self::Env => match std::env::var(MRTR_KEYS) {
                Ok(value) => KeyConfig::parse_env(&Zeroizing::new(value)),
                Err(std::env::VarError::NotUnicode(_)) => {
                    Err(KeyConfigError::new(MRTR_KEYS, KeyConfigProblem::NotUnicode))
                }
                Err(std::env::VarError::NotPresent) => Err(KeyConfigError::new(
                    MRTR_KEYS,
                    KeyConfigProblem::NotConfigured,
                )),
            },
            Self::File(path) => KeyConfig::load_file(path),
        }
    }

    /// Whether the configuration can change while the process runs (a key file).
    pub fn is_reloadable(&self) -> bool {
        matches!(self, Self::File(_))
    }

    /// The key file, for a file source.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::File(p) => Some(p),
            Self::Env => None,
        }
    }
}

impl fmt::Display for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Env => f.write_str(MRTR_KEYS),
            Self::File(p) => write!(f, "key file {}", p.display()),
        }
    }
}
