//! Bearer authentication: `Authorization: Bearer <credential>` names the caller (issuer and
//! subject) that every token the gateway seals for the request is bound to.
//!
//! The presented credential is compared with every configured one, in constant time and
//! without an early exit: each side is zero-padded to [`MAX_BEARER`] bytes and the padded
//! arrays and the lengths are compared with `subtle`, every configured credential is compared
//! whatever matched before, and the match is selected with `ConditionallySelectable`. What
//! the time of a refusal can tell is the number of configured credentials, never which one
//! matched or came close, nor how long any is. (The presented credential's own length shows
//! in the time of copying it; that is the client's own secret.)

use mrtr_core::Principal;
use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};

use crate::config::{BearerToken, MAX_PRINCIPAL_FIELD, MAX_TOKENS};

/// Longest bearer credential (the configuration file's limit).
pub const MAX_BEARER: usize = 256;

/// The credential accepted when the configuration names none: for demonstrations only (the
/// boot log and `serve.sh` warn when it is in use).
pub const DEMO_BEARER: &str = "gateway-demo-token";
/// The caller the demo credential authenticates.
pub const DEMO_CALLER: BearerToken<'static> = BearerToken {
    bearer: DEMO_BEARER,
    issuer: "urn:gateway:demo",
    subject: "demo",
};

/// Longest issuer or subject kept.
pub const MAX_FIELD: usize = MAX_PRINCIPAL_FIELD;

/// One accepted credential and its caller, copied out of the configuration (whose text the
/// boot wipes), the credential zero-padded to [`MAX_BEARER`] bytes.
#[derive(Clone, Copy)]
struct Entry {
    bearer: [u8; MAX_BEARER],
    bearer_len: u32,
    issuer: [u8; MAX_FIELD],
    issuer_len: usize,
    subject: [u8; MAX_FIELD],
    subject_len: usize,
}

impl Entry {
    const EMPTY: Self = Self {
        bearer: [0; MAX_BEARER],
        bearer_len: 0,
        issuer: [0; MAX_FIELD],
        issuer_len: 0,
        subject: [0; MAX_FIELD],
        subject_len: 0,
    };

    /// A copy of `token`; `None` if a field is empty or longer than its limit.
    fn of(token: &BearerToken<'_>) -> Option<Self> {
        let mut e = Self::EMPTY;
        let (b, i, s) = (
            token.bearer.as_bytes(),
            token.issuer.as_bytes(),
            token.subject.as_bytes(),
        );
        if b.is_empty() || i.is_empty() || s.is_empty() {
            return None;
        }
        e.bearer.get_mut(..b.len())?.copy_from_slice(b);
        e.issuer.get_mut(..i.len())?.copy_from_slice(i);
        e.subject.get_mut(..s.len())?.copy_from_slice(s);
        e.bearer_len = b.len() as u32;
        e.issuer_len = i.len();
        e.subject_len = s.len();
        Some(e)
    }

    fn principal(&self) -> Option<Principal<'_>> {
        Some(Principal::User {
            issuer: core::str::from_utf8(self.issuer.get(..self.issuer_len)?).ok()?,
            subject: core::str::from_utf8(self.subject.get(..self.subject_len)?).ok()?,
        })
    }
}

/// The credentials the gateway accepts: the configured ones (`token=` lines), or the demo
/// credential alone when none is configured. Fixed size (about 3 KiB): keep it in a static.
pub struct Bearers {
    entries: [Entry; MAX_TOKENS],
    count: usize,
    demo: bool,
}

impl core::fmt::Debug for Bearers {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Bearers")
            .field("count", &self.count)
            .field("demo", &self.demo)
            .finish_non_exhaustive()
    }
}

impl Default for Bearers {
    fn default() -> Self {
        Self::new()
    }
}

impl Bearers {
    /// The demo credential alone.
    pub const fn new() -> Self {
        let mut entries = [Entry::EMPTY; MAX_TOKENS];
        let mut i = 0;
        let demo = DEMO_BEARER.as_bytes();
        while i < demo.len() {
            entries[0].bearer[i] = demo[i];
            i += 1;
        }
        entries[0].bearer_len = demo.len() as u32;
        let (issuer, subject) = (
            DEMO_CALLER.issuer.as_bytes(),
            DEMO_CALLER.subject.as_bytes(),
        );
        let mut i = 0;
        while i < issuer.len() {
            entries[0].issuer[i] = issuer[i];
            i += 1;
        }
        let mut i = 0;
        while i < subject.len() {
            entries[0].subject[i] = subject[i];
            i += 1;
        }
        entries[0].issuer_len = issuer.len();
        entries[0].subject_len = subject.len();
        Self {
            entries,
            count: 1,
            demo: true,
        }
    }

    /// Replaces the credentials with `configured` (unusable ones, empty or over the limits,
    /// are left out); with none usable, the demo credential alone. Returns how many were
    /// taken.
    pub fn load<'c>(&mut self, configured: impl IntoIterator<Item = &'c BearerToken<'c>>) -> usize {
        let mut count = 0;
        for token in configured {
            if let (Some(slot), Some(entry)) = (self.entries.get_mut(count), Entry::of(token)) {
                *slot = entry;
                count += 1;
            }
        }
        if count == 0 {
            *self = Self::new();
            return 0;
        }
        for slot in self.entries.iter_mut().skip(count) {
            *slot = Entry::EMPTY;
        }
        self.count = count;
        self.demo = false;
        count
    }

    /// Whether only the demo credential is accepted.
    pub fn is_demo(&self) -> bool {
        self.demo
    }

    /// The caller named by an `Authorization` header value, if it carries an accepted
    /// bearer credential.
    pub fn authenticate(&self, authorization: Option<&[u8]>) -> Option<Principal<'_>> {
        let presented = credential(authorization?)?;
        let mut padded = [0u8; MAX_BEARER];
        padded
            .get_mut(..presented.len())?
            .copy_from_slice(presented);
        let presented_len = presented.len() as u32;
        let mut found = Choice::from(0);
        let mut index = 0u32;
        for (i, entry) in self.entries.iter().take(self.count).enumerate() {
            let same = entry.bearer.ct_eq(&padded) & entry.bearer_len.ct_eq(&presented_len);
            index.conditional_assign(&(i as u32), same);
            found |= same;
        }
        if !bool::from(found) {
            return None;
        }
        self.entries.get(index as usize)?.principal()
    }
}

/// The credential of `Bearer <credential>` (scheme case-insensitive, spaces around the
/// credential ignored); `None` for another scheme, an empty or an overlong credential.
fn credential(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(6)?;
    if !scheme.eq_ignore_ascii_case(b"Bearer") || rest.first() != Some(&b' ') {
        return None;
    }
    let rest = rest.trim_ascii();
    (!rest.is_empty() && rest.len() <= MAX_BEARER && !rest.contains(&b' ')).then_some(rest)
}
