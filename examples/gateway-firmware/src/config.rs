//! The gateway's configuration file: one `name=value` per line, `#` starts a comment line,
//! blank lines are ignored, spaces around names and values too.
//!
//! | name | value | |
//! | --- | --- | --- |
//! | `seed` | 64 hex digits: this boot's DRBG seed (fresh at every boot) | required |
//! | `keys` | `current=ID; ID:BASE64[; ID2:BASE64]`, the hosted server's `MRTR_KEYS` syntax (ids of 1–16 `A-Z a-z 0-9 . _ -`, 32-byte keys in standard or URL-safe base64, padding optional); at most 2 keys | required |
//! | `audience` | the gateway's identity, 1–64 printable ASCII characters | default `gateway-0042` |
//! | `token` | `BEARER ISSUER SUBJECT`: a bearer credential of the HTTP transport and the caller it names (repeatable, up to 8) | optional |
//! | `ttl_ms` | token lifetime in ms | default 300000 |
//! | `max_rounds` | resume-chain cap | default 10 |
//!
//! [`Config::parse`] checks every line and reports each problem by line number; the gateway
//! refuses to start on any. No message ever holds a key, the seed or a bearer credential,
//! and neither does `Debug`.

use core::fmt;

use mrtr_core::{DEFAULT_MAX_ROUNDS, DEFAULT_TTL_MS};

/// The audience when the file names none.
pub const DEFAULT_AUDIENCE: &str = crate::GATEWAY_ID;
/// Longest audience (the serving AAD capacity is sized for it).
pub const MAX_AUDIENCE: usize = 64;
/// Keys the gateway's ring holds: the current one and one previous.
pub const MAX_KEYS: usize = 2;
/// `token=` lines kept.
pub const MAX_TOKENS: usize = 8;
/// Longest issuer or subject (the serving AAD capacity is sized for it).
pub const MAX_PRINCIPAL_FIELD: usize = 64;
/// Longest key id.
pub const MAX_KEY_ID: usize = 16;

/// A key from the `keys=` line. Its bytes are wiped on drop and never printed.
pub struct KeyEntry<'t> {
    /// The key id.
    pub id: &'t str,
    /// The 32 key bytes.
    pub secret: [u8; 32],
}

impl Drop for KeyEntry<'_> {
    fn drop(&mut self) {
        for b in &mut self.secret {
            // Best effort (not a volatile write): the bytes do not linger in a stack slot
            // that is reused later.
            *b = core::hint::black_box(0);
        }
    }
}

impl fmt::Debug for KeyEntry<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyEntry")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// A `token=` line: a bearer credential and the principal it authenticates.
#[derive(Clone, Copy)]
pub struct BearerToken<'t> {
    /// The credential, as the client sends it after `Bearer `.
    pub bearer: &'t str,
    /// The principal's issuer.
    pub issuer: &'t str,
    /// The principal's subject.
    pub subject: &'t str,
}

impl fmt::Debug for BearerToken<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerToken")
            .field("issuer", &self.issuer)
            .field("subject", &self.subject)
            .finish_non_exhaustive()
    }
}

/// The parsed configuration, borrowing the file's text.
pub struct Config<'t> {
    /// This boot's DRBG seed.
    pub seed: [u8; 32],
    /// The key ring: `keys[current]` seals.
    pub keys: [Option<KeyEntry<'t>>; MAX_KEYS],
    /// Index of the current key in `keys`.
    pub current: usize,
    /// The audience.
    pub audience: &'t str,
    /// The bearer tokens (HTTP).
    pub tokens: [Option<BearerToken<'t>>; MAX_TOKENS],
    /// Token lifetime, ms.
    pub ttl_ms: u64,
    /// Round cap.
    pub max_rounds: u32,
}

impl Drop for Config<'_> {
    fn drop(&mut self) {
        for b in &mut self.seed {
            *b = core::hint::black_box(0);
        }
    }
}

impl fmt::Debug for Config<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("keys", &self.keys)
            .field("audience", &self.audience)
            .field("tokens", &self.tokens)
            .field("ttl_ms", &self.ttl_ms)
            .field("max_rounds", &self.max_rounds)
            .finish_non_exhaustive()
    }
}

/// One problem in the file: its line (1-based; 0 for the file as a whole) and what is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, defmt::Format)]
pub struct Problem {
    /// The line, from 1; 0 when a required line is missing.
    pub line: usize,
    /// What is wrong (never the value of a secret).
    pub what: &'static str,
}

impl<'t> Config<'t> {
    /// Parses `text`, calling `report` for every problem; `None` if there was any.
    pub fn parse(text: &'t [u8], mut report: impl FnMut(Problem)) -> Option<Self> {
        let mut config = Config {
            seed: [0; 32],
            keys: [None, None],
            current: 0,
            audience: DEFAULT_AUDIENCE,
            tokens: [None; MAX_TOKENS],
            ttl_ms: DEFAULT_TTL_MS,
            max_rounds: DEFAULT_MAX_ROUNDS,
        };
        let Ok(text) = core::str::from_utf8(text) else {
            report(Problem {
                line: 0,
                what: "the file is not UTF-8 text",
            });
            return None;
        };
        let mut ok = true;
        let mut seen = Seen::default();
        for (i, line) in text.split('\n').enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Err(what) = config.line(line, &mut seen) {
                report(Problem { line: i + 1, what });
                ok = false;
            }
        }
        for (missing, what) in [
            (
                !seen.seed,
                "no seed= line (64 hex digits, fresh at every boot)",
            ),
            (!seen.keys, "no keys= line (current=ID; ID:BASE64)"),
        ] {
            if missing {
                report(Problem { line: 0, what });
                ok = false;
            }
        }
        ok.then_some(config)
    }

    /// The current key.
    pub fn current_key(&self) -> Option<&KeyEntry<'t>> {
        self.keys.get(self.current)?.as_ref()
    }

    /// The key that is not current, if any.
    pub fn previous_key(&self) -> Option<&KeyEntry<'t>> {
        self.keys.get(1 - self.current.min(1))?.as_ref()
    }

    /// The bearer tokens.
    pub fn tokens(&self) -> impl Iterator<Item = &BearerToken<'t>> {
        self.tokens.iter().flatten()
    }

    fn line(&mut self, line: &'t str, seen: &mut Seen) -> Result<(), &'static str> {
        let (name, value) = line
            .split_once('=')
            .ok_or("not name=value (nor a # comment)")?;
        let (name, value) = (name.trim(), value.trim());
        let once = |flag: &mut bool| {
            if core::mem::replace(flag, true) {
                Err("this name appears twice")
            } else {
                Ok(())
            }
        };
        match name {
            "seed" => {
                once(&mut seen.seed)?;
                self.seed = hex32(value).ok_or("seed must be exactly 64 hex digits")?;
            }
            "keys" => {
                once(&mut seen.keys)?;
                self.keys(value)?;
            }
            "audience" => {
                once(&mut seen.audience)?;
                if value.is_empty() || value.len() > MAX_AUDIENCE {
                    return Err("audience must be 1 to 64 characters");
                }
                if !value.bytes().all(|b| b.is_ascii_graphic()) {
                    return Err("audience must be printable ASCII without spaces");
                }
                self.audience = value;
            }
            "token" => self.token(value)?,
            "ttl_ms" => {
                once(&mut seen.ttl)?;
                self.ttl_ms = decimal(value)
                    .filter(|&t| t > 0)
                    .ok_or("ttl_ms must be a positive integer (milliseconds)")?;
            }
            "max_rounds" => {
                once(&mut seen.rounds)?;
                self.max_rounds = decimal(value)
                    .and_then(|r| u32::try_from(r).ok())
                    .filter(|&r| r >= 1)
                    .ok_or("max_rounds must be a positive integer")?;
            }
            _ => return Err("unknown name (seed, keys, audience, token, ttl_ms, max_rounds)"),
        }
        Ok(())
    }

    /// `current=ID; ID:BASE64; ...`
    fn keys(&mut self, value: &'t str) -> Result<(), &'static str> {
        let mut current = None;
        let mut n = 0;
        for item in value.split(';').map(str::trim).filter(|i| !i.is_empty()) {
            if let Some(id) = item.strip_prefix("current=") {
                if current.replace(id.trim()).is_some() {
                    return Err("keys: current= appears twice");
                }
                continue;
            }
            let (id, b64) = item
                .split_once(':')
                .ok_or("keys: an item is neither current=ID nor ID:BASE64")?;
            let id = id.trim();
            if !valid_key_id(id) {
                return Err("keys: a key id must be 1-16 characters A-Z a-z 0-9 . _ -");
            }
            if self.keys.iter().flatten().any(|k| k.id == id) {
                return Err("keys: a key id appears twice");
            }
            let secret = base64_32(b64.trim())
                .ok_or("keys: a key is not 32 bytes of base64 (standard or URL-safe)")?;
            let slot = self
                .keys
                .get_mut(n)
                .ok_or("keys: the gateway holds at most 2 keys (current and previous)")?;
            *slot = Some(KeyEntry { id, secret });
            n += 1;
        }
        let current = current.ok_or("keys: no current=ID item")?;
        self.current = self
            .keys
            .iter()
            .position(|k| k.as_ref().is_some_and(|k| k.id == current))
            .ok_or("keys: current= names no listed key")?;
        Ok(())
    }

    /// `BEARER ISSUER SUBJECT`
    fn token(&mut self, value: &'t str) -> Result<(), &'static str> {
        let mut fields = value.split_ascii_whitespace();
        let (Some(bearer), Some(issuer), Some(subject), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err("token must be three fields: BEARER ISSUER SUBJECT");
        };
        if bearer.len() < 16 || bearer.len() > 256 {
            return Err("token: the bearer credential must be 16 to 256 characters");
        }
        if issuer.len() > MAX_PRINCIPAL_FIELD || subject.len() > MAX_PRINCIPAL_FIELD {
            return Err("token: issuer and subject are at most 64 bytes each");
        }
        let slot = self
            .tokens
            .iter_mut()
            .find(|t| t.is_none())
            .ok_or("token: at most 8 token= lines")?;
        *slot = Some(BearerToken {
            bearer,
            issuer,
            subject,
        });
        Ok(())
    }
}

/// Names that may appear only once, seen so far.
#[derive(Default)]
struct Seen {
    seed: bool,
    keys: bool,
    audience: bool,
    ttl: bool,
    rounds: bool,
}

fn valid_key_id(id: &str) -> bool {
    (1..=MAX_KEY_ID).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn decimal(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    s.bytes().try_fold(0u64, |n, c| {
        c.is_ascii_digit().then(|| n * 10 + u64::from(c - b'0'))
    })
}

fn hex32(s: &str) -> Option<[u8; 32]> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(b.chunks_exact(2)) {
        *o = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(out)
}

/// 32 bytes from base64, standard or URL-safe alphabet, padding optional.
fn base64_32(s: &str) -> Option<[u8; 32]> {
    let s = s.trim_end_matches('=');
    // 32 bytes are 43 characters unpadded.
    if s.len() != 43 {
        return None;
    }
    let sextet = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = [0u8; 32];
    let mut acc = 0u32;
    let mut bits = 0;
    let mut n = 0;
    for &c in s.as_bytes() {
        acc = (acc << 6) | sextet(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            *out.get_mut(n)? = (acc >> bits) as u8;
            n += 1;
            acc &= (1 << bits) - 1;
        }
    }
    // 43 × 6 = 258 bits: 32 bytes and 2 leftover bits, which must be zero (canonical).
    (n == 32 && acc == 0).then_some(out)
}
