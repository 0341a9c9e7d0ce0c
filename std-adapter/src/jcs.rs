//! RFC 8785 JSON Canonicalization Scheme (JCS), and the argument digest built on it.
//!
//! The canonical form of a JSON value is its shortest, unambiguous serialization:
//!
//! * no whitespace;
//! * object members sorted by their names compared as UTF-16 code units;
//! * strings with only `"` `\` and control characters escaped (`\b \t \n \f \r`, otherwise
//!   `\u00xx` in lowercase hex), everything else as literal UTF-8;
//! * numbers as IEEE 754 doubles printed the way ECMAScript's `Number.prototype.toString`
//!   prints them (`1e+30`, `0.002`, `4.5`, `-0` as `0`).
//!
//! **What the argument digest binds.** RFC 8785 writes `1` and `1.0` alike, and `0` and `-0`,
//! while a handler does not read them alike: serde_json holds `1` as an integer (`as_u64()`
//! is `Some(1)`, a `u32` field accepts it) and `1.0`, `1e2` and `-0` as doubles (`as_u64()`
//! is `None`, a `u32` field refuses them). So the digest hashes the **binding form**
//! ([`to_binding_string`]): the canonical form, except that a number keeps its kind. An
//! integer (serde_json's `u64` or `i64`) is written as RFC 8785 writes it; a double is written
//! as RFC 8785 writes it with `.0` appended when that text has neither `.` nor `e`, and
//! `-0.0` for negative zero: `1`, `1.0`, `100.0` (for `1e2`), `-0.0` (for `-0`). Requests that
//! serde_json reads as different values, or as values of different kinds, never share a
//! digest; texts it reads alike (`1.50` and `1.5`, `1E2` and `1e2`, `"\u0061"` and `"a"`,
//! members in another order) still do. On raw text the same form is
//! [`mrtr_json::write_binding_form`], byte for byte: an integer literal (no `.`, `e`, `E`)
//! other than `-0` within `-2^63 ..= 2^64 - 1` is an integer, any other number a double, as
//! serde_json reads it.
//!
//! Digest input must be I-JSON (RFC 7493), as RFC 8785 requires: nesting deeper than
//! [`MAX_DEPTH`] arrays and objects, numbers that are not finite doubles, and integers a double
//! does not carry exactly (beyond ±2^53, unless written as JCS prints them) cannot be
//! canonicalized and give a [`JcsError`]: otherwise `9007199254740993` and `9007199254740992`
//! would share a digest. Duplicate member names and over-precise decimals are gone once a
//! parser has built a [`Value`]; [`crate::ijson::check`] finds them in the raw text.
//!
//! ```
//! use mrtr_std::jcs::{to_binding_string, to_canonical_string};
//! use serde_json::json;
//!
//! let v = json!({"b": [1.0, 2.50, 1e21, 7], "a": "€\n"});
//! assert_eq!(to_canonical_string(&v)?, r#"{"a":"€\n","b":[1,2.5,1e+21,7]}"#);
//! assert_eq!(to_binding_string(&v)?, r#"{"a":"€\n","b":[1.0,2.5,1e+21,7]}"#);
//! # Ok::<(), mrtr_std::jcs::JcsError>(())
//! ```

use std::fmt;

use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};

use mrtr_core::ArgsDigest;

/// Deepest nesting of arrays and objects that is canonicalized (the top-level container is
/// depth 1). Deeper values are refused rather than risk the stack.
pub const MAX_DEPTH: usize = 64;

/// Why a value cannot be canonicalized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JcsError {
    /// Arrays and objects are nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A number is not a finite IEEE 754 double (possible only with arbitrary-precision
    /// numbers, such as `1e400`).
    NonFiniteNumber,
    /// An integer a double does not carry exactly (such as `9007199254740993`): its canonical
    /// form would denote another value.
    LossyNumber,
}

impl fmt::Display for JcsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooDeep => write!(
                f,
                "arguments are nested deeper than {MAX_DEPTH} arrays/objects"
            ),
            Self::NonFiniteNumber => {
                f.write_str("arguments hold a number outside the range of a double")
            }
            Self::LossyNumber => {
                f.write_str("arguments hold an integer a double does not carry exactly")
            }
        }
    }
}

impl std::error::Error for JcsError {}

/// How numbers are written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// RFC 8785: `1.0` as `1`, `-0` as `0`.
    Canonical,
    /// The binding form: a double keeps its kind (`1.0`, `-0.0`).
    Binding,
}

/// The RFC 8785 canonical form of `value`.
pub fn to_canonical_string(value: &Value) -> Result<String, JcsError> {
    to_string(value, Form::Canonical)
}

/// The argument binding form of `value` (see the [module docs](self)): the canonical form,
/// with every double written as a float (`1.0`, `100.0`, `-0.0`, `1.5`, `1e+21`) and every
/// integer as an integer (`1`, `100`, `0`).
///
/// ```
/// use mrtr_std::jcs::to_binding_string;
///
/// let v = serde_json::from_str(r#"{"n": [1, 1.0, 100, 1e2, 0, -0, 1.50, 1E2]}"#).unwrap();
/// assert_eq!(to_binding_string(&v)?, r#"{"n":[1,1.0,100,100.0,0,-0.0,1.5,100.0]}"#);
/// # Ok::<(), mrtr_std::jcs::JcsError>(())
/// ```
pub fn to_binding_string(value: &Value) -> Result<String, JcsError> {
    to_string(value, Form::Binding)
}

fn to_string(value: &Value, form: Form) -> Result<String, JcsError> {
    let mut out = Vec::new();
    write_value(&mut out, value, 0, form)?;
    // Only UTF-8 strings and ASCII are ever written.
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// SHA-256 of the binding form of `value` ([`to_binding_string`]), computed without building
/// the string.
pub fn digest(value: &Value) -> Result<[u8; 32], JcsError> {
    let mut hasher = Sha256::new();
    write_value(&mut hasher, value, 0, Form::Binding)?;
    Ok(hasher.finalize().into())
}

/// The argument digest of a call: SHA-256 of the binding form ([`to_binding_string`]) of its
/// `arguments`, where absent, `null` and `{}` all count as `{}` (they mean "no arguments"
/// alike).
///
/// ```
/// use mrtr_std::jcs::args_digest;
/// use serde_json::json;
///
/// assert_eq!(args_digest(None)?, args_digest(Some(&json!(null)))?);
/// assert_eq!(args_digest(None)?, args_digest(Some(&json!({})))?);
/// assert_ne!(args_digest(Some(&json!({"n": 1})))?, args_digest(Some(&json!({"n": "1"})))?);
/// assert_ne!(args_digest(Some(&json!({"n": 1})))?, args_digest(Some(&json!({"n": 1.0})))?);
/// # Ok::<(), mrtr_std::jcs::JcsError>(())
/// ```
pub fn args_digest(arguments: Option<&Value>) -> Result<ArgsDigest, JcsError> {
    match arguments {
        None | Some(Value::Null) => args_digest_map(None),
        Some(v) => digest(v),
    }
}

/// [`args_digest`] for arguments held as a JSON object map (as SDKs type `arguments`),
/// canonicalized in place: no copy into a [`Value`]. Absent counts as `{}`, and a map digests
/// exactly as the same map inside [`Value::Object`] does.
///
/// ```
/// use mrtr_std::jcs::{args_digest, args_digest_map};
/// use serde_json::{Value, json};
///
/// let Value::Object(map) = json!({"party": 4, "name": "Ada"}) else { unreachable!() };
/// assert_eq!(args_digest_map(Some(&map))?, args_digest(Some(&Value::Object(map.clone())))?);
/// assert_eq!(args_digest_map(None)?, args_digest(None)?);
/// # Ok::<(), mrtr_std::jcs::JcsError>(())
/// ```
pub fn args_digest_map(arguments: Option<&Map<String, Value>>) -> Result<ArgsDigest, JcsError> {
    let mut hasher = Sha256::new();
    match arguments {
        None => hasher.put(b"{}"),
        Some(members) => write_object(&mut hasher, members, 0, Form::Binding)?,
    }
    Ok(hasher.finalize().into())
}

/// Where canonical bytes go: a buffer or a running hash.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl Sink for Sha256 {
    fn put(&mut self, bytes: &[u8]) {
        self.update(bytes);
    }
}

/// One of this module's sinks as a [`mrtr_json::Sink`]: strings and numbers are written by
/// mrtr-json's canonical writers, the ones the no_std digest uses (one canonicalizer).
struct Json<'s, S>(&'s mut S);

impl<S: Sink> mrtr_json::Sink for Json<'_, S> {
    fn write(&mut self, bytes: &[u8]) {
        self.0.put(bytes);
    }
}

fn write_value<S: Sink>(
    out: &mut S,
    value: &Value,
    depth: usize,
    form: Form,
) -> Result<(), JcsError> {
    match value {
        Value::Null => out.put(b"null"),
        Value::Bool(true) => out.put(b"true"),
        Value::Bool(false) => out.put(b"false"),
        Value::Number(n) => write_number(out, n, form)?,
        Value::String(s) => mrtr_json::write_string(s, &mut Json(out)),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(JcsError::TooDeep);
            }
            out.put(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                write_value(out, item, depth + 1, form)?;
            }
            out.put(b"]");
        }
        Value::Object(members) => write_object(out, members, depth, form)?,
    }
    Ok(())
}

fn write_object<S: Sink>(
    out: &mut S,
    members: &Map<String, Value>,
    depth: usize,
    form: Form,
) -> Result<(), JcsError> {
    if depth >= MAX_DEPTH {
        return Err(JcsError::TooDeep);
    }
    let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
    sorted.sort_unstable_by(|a, b| mrtr_json::name_order(a.0, b.0));
    out.put(b"{");
    for (i, (name, member)) in sorted.into_iter().enumerate() {
        if i > 0 {
            out.put(b",");
        }
        mrtr_json::write_string(name, &mut Json(out));
        out.put(b":");
        write_value(out, member, depth + 1, form)?;
    }
    out.put(b"}");
    Ok(())
}

fn write_number<S: Sink>(out: &mut S, n: &Number, form: Form) -> Result<(), JcsError> {
    // An integer a double carries exactly (|i| <= 2^53 < 10^21) prints as its decimal digits:
    // the common case, written without formatting a double.
    const EXACT: u64 = 1 << 53;
    let small = match (n.as_u64(), n.as_i64()) {
        (Some(u), _) if u <= EXACT => Some((false, u)),
        (None, Some(i)) if i.unsigned_abs() <= EXACT => Some((i < 0, i.unsigned_abs())),
        _ => None,
    };
    if let Some((negative, magnitude)) = small {
        write_integer(out, negative && magnitude != 0, magnitude);
        return Ok(());
    }
    let x = n
        .as_f64()
        .filter(|x| x.is_finite())
        .ok_or(JcsError::NonFiniteNumber)?;
    let mut text = Number24::default();
    let written = if n.is_f64() && form == Form::Binding {
        mrtr_json::write_float(x, &mut text)
    } else {
        mrtr_json::write_number(x, &mut text)
    };
    written.map_err(|_| JcsError::NonFiniteNumber)?;
    let text = text.as_bytes();
    // An integer (u64 or i64) must print as itself; floats are doubles already.
    let exact = match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => u <= EXACT || text == u.to_string().as_bytes(),
        (None, Some(i)) => i.unsigned_abs() <= EXACT || text == i.to_string().as_bytes(),
        (None, None) => true,
    };
    if !exact {
        return Err(JcsError::LossyNumber);
    }
    out.put(text);
    Ok(())
}

/// A number's canonical or binding text, on the stack: ECMAScript prints a double in at most
/// 25 bytes (`-1.7976931348623157e+308`, `-0.0000033333333333333333`), the binding form adds
/// at most `.0`.
#[derive(Default)]
struct Number24 {
    buf: [u8; 32],
    len: usize,
}

impl Number24 {
    fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }
}

impl mrtr_json::Sink for Number24 {
    fn write(&mut self, bytes: &[u8]) {
        let end = self.len + bytes.len();
        if let Some(dst) = self.buf.get_mut(self.len..end) {
            dst.copy_from_slice(bytes);
            self.len = end;
        }
    }
}

/// Writes `magnitude` in decimal, after a minus sign when `negative`.
fn write_integer<S: Sink>(out: &mut S, negative: bool, mut magnitude: u64) {
    let mut buf = [0u8; 21];
    let mut at = buf.len();
    loop {
        at -= 1;
        // A digit: the remainder is below 10.
        buf[at] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    if negative {
        at -= 1;
        buf[at] = b'-';
    }
    out.put(&buf[at..]);
}

/// The canonical (ECMAScript `Number::toString`) text of a finite double, as RFC 8785 prints
/// numbers (mrtr-json's [`mrtr_json::write_number`]). Non-finite values have no canonical
/// form and print as `"null"`.
///
/// ```
/// use mrtr_std::jcs::format_number;
/// assert_eq!(format_number(1e21), "1e+21");
/// assert_eq!(format_number(0.000001), "0.000001");
/// assert_eq!(format_number(9007199254740993.0), "9007199254740992");
/// ```
pub fn format_number(x: f64) -> String {
    let mut text = Number24::default();
    match mrtr_json::write_number(x, &mut text) {
        Ok(()) => String::from_utf8_lossy(text.as_bytes()).into_owned(),
        Err(_) => "null".to_owned(),
    }
}

/// ECMAScript `Number::toString(x)` for a finite double.
#[cfg(test)]
fn format_es(x: f64) -> String {
    format_number(x)
}

#[cfg(test)]
mod tests;
