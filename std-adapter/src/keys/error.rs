//! What can be wrong with a key configuration, named so that an operator can fix it without
//! the message ever showing key material.

use std::fmt;

use mrtr_core::key::{KEY_LEN, KeyId};

use super::{MRTR_KEYS, MRTR_KEYS_FILE};

/// What is wrong with a key configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyConfigProblem {
    /// Neither [`MRTR_KEYS`] nor [`MRTR_KEYS_FILE`] is set.
    NotConfigured,
    /// The variable is set but is not valid Unicode.
    NotUnicode,
    /// The key file could not be read.
    Io(std::io::ErrorKind),
    /// The configuration holds no key.
    Empty,
    /// An entry does not have the documented shape.
    Syntax(&'static str),
    /// A key id is empty, longer than 16 bytes, or uses a character outside `A-Za-z0-9._-`.
    BadKeyId,
    /// The key is not valid base64.
    BadBase64,
    /// The key does not decode to exactly 32 bytes.
    WrongLength {
        /// The decoded length.
        decoded: usize,
    },
    /// Two keys share an id.
    DuplicateKeyId,
    /// Two ids are given the same key material (each id would count its own seals, so the
    /// key's budget would no longer bound its seals).
    DuplicateKeyMaterial,
    /// No key is marked current.
    NoCurrentKey,
    /// More than one key is marked current.
    SeveralCurrentKeys,
    /// The key marked current is not in the configuration.
    UnknownCurrentKey,
    /// More keys than the key ring holds.
    RingTooBig {
        /// Keys configured.
        keys: usize,
        /// The ring's capacity.
        capacity: usize,
    },
}

/// A key configuration error: where, which key id (when known and valid), and what.
/// Never contains key material.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyConfigError {
    source: String,
    entry: Option<usize>,
    key_id: Option<KeyId>,
    problem: KeyConfigProblem,
}

impl KeyConfigError {
    pub(super) fn new(source: &str, problem: KeyConfigProblem) -> Self {
        Self {
            source: source.to_owned(),
            entry: None,
            key_id: None,
            problem,
        }
    }

    /// The key file `source` cannot be read.
    #[cfg(feature = "tokio")]
    pub(crate) fn io(source: &str, kind: std::io::ErrorKind) -> Self {
        Self::new(source, KeyConfigProblem::Io(kind))
    }

    /// `source` is not valid Unicode.
    #[cfg(feature = "tokio")]
    pub(crate) fn not_unicode(source: &str) -> Self {
        Self::new(source, KeyConfigProblem::NotUnicode)
    }

    pub(super) fn at(mut self, entry: usize) -> Self {
        self.entry = Some(entry);
        self
    }

    pub(super) fn with_id(mut self, id: &KeyId) -> Self {
        self.key_id = Some(id.clone());
        self
    }

    /// The problem.
    pub fn problem(&self) -> &KeyConfigProblem {
        &self.problem
    }

    /// The entry (1-based item of the variable, or line of the file), if one is at fault.
    pub fn entry(&self) -> Option<usize> {
        self.entry
    }

    /// The key id concerned, if it is known and valid.
    pub fn key_id(&self) -> Option<&KeyId> {
        self.key_id.as_ref()
    }
}

impl fmt::Display for KeyConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)?;
        if let Some(n) = self.entry {
            let what = if self.source == MRTR_KEYS {
                "entry"
            } else {
                "line"
            };
            write!(f, " {what} {n}")?;
        }
        if let Some(id) = &self.key_id {
            write!(f, " (key id {:?})", id.as_str())?;
        }
        f.write_str(": ")?;
        match &self.problem {
            KeyConfigProblem::NotConfigured => {
                write!(f, "not set (set {MRTR_KEYS} or {MRTR_KEYS_FILE})")
            }
            KeyConfigProblem::NotUnicode => f.write_str("not valid Unicode"),
            KeyConfigProblem::Io(kind) => write!(f, "cannot read the key file: {kind}"),
            KeyConfigProblem::Empty => f.write_str("no key configured"),
            KeyConfigProblem::Syntax(expected) => write!(f, "expected {expected}"),
            KeyConfigProblem::BadKeyId => {
                f.write_str("key id must be 1-16 characters of A-Z a-z 0-9 . _ -")
            }
            KeyConfigProblem::BadBase64 => f.write_str("key is not valid base64"),
            KeyConfigProblem::WrongLength { decoded } => write!(
                f,
                "key is {decoded} bytes after base64 decoding, must be {KEY_LEN}"
            ),
            KeyConfigProblem::DuplicateKeyId => f.write_str("key id used twice"),
            KeyConfigProblem::DuplicateKeyMaterial => {
                f.write_str("the same key material is given under two key ids")
            }
            KeyConfigProblem::NoCurrentKey => f.write_str("no key is marked current"),
            KeyConfigProblem::SeveralCurrentKeys => {
                f.write_str("more than one key is marked current")
            }
            KeyConfigProblem::UnknownCurrentKey => {
                f.write_str("the key marked current is not configured")
            }
            KeyConfigProblem::RingTooBig { keys, capacity } => write!(
                f,
                "{keys} keys configured, the key ring holds at most {capacity}"
            ),
        }
    }
}

impl std::error::Error for KeyConfigError {}
