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
//! Digest input must be I-JSON (RFC 7493), as RFC 8785 requires: nesting deeper than
//! [`MAX_DEPTH`] arrays and objects, numbers that are not finite doubles, and integers a double
//! does not carry exactly (beyond ±2^53, unless written as JCS prints them) cannot be
//! canonicalized and give a [`JcsError`]: otherwise `9007199254740993` and `9007199254740992`
//! would share a digest. Duplicate member names and over-precise decimals are gone once a
//! parser has built a [`Value`]; [`crate::ijson::check`] finds them in the raw text.
//!
//! ```
//! use mrtr_std::jcs::to_canonical_string;
//! use serde_json::json;
//!
//! let v = json!({"b": [1.0, 2.50, 1e21], "a": "€\n"});
//! assert_eq!(to_canonical_string(&v)?, r#"{"a":"€\n","b":[1,2.5,1e+21]}"#);
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

/// The RFC 8785 canonical form of `value`.
pub fn to_canonical_string(value: &Value) -> Result<String, JcsError> {
    let mut out = Vec::new();
    write_value(&mut out, value, 0)?;
    // Only UTF-8 strings and ASCII are ever written.
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// SHA-256 of the canonical form of `value`, computed without building the string.
pub fn digest(value: &Value) -> Result<[u8; 32], JcsError> {
    let mut hasher = Sha256::new();
    write_value(&mut hasher, value, 0)?;
    Ok(hasher.finalize().into())
}

/// The argument digest of a call: SHA-256 of the canonical JSON of its `arguments`, where
/// absent, `null` and `{}` all count as `{}` (they mean "no arguments" alike).
///
/// ```
/// use mrtr_std::jcs::args_digest;
/// use serde_json::json;
///
/// assert_eq!(args_digest(None)?, args_digest(Some(&json!(null)))?);
/// assert_eq!(args_digest(None)?, args_digest(Some(&json!({})))?);
/// assert_ne!(args_digest(Some(&json!({"n": 1})))?, args_digest(Some(&json!({"n": "1"})))?);
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
        Some(members) => write_object(&mut hasher, members, 0)?,
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

fn write_value<S: Sink>(out: &mut S, value: &Value, depth: usize) -> Result<(), JcsError> {
    match value {
        Value::Null => out.put(b"null"),
        Value::Bool(true) => out.put(b"true"),
        Value::Bool(false) => out.put(b"false"),
        Value::Number(n) => write_number(out, n)?,
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
                write_value(out, item, depth + 1)?;
            }
            out.put(b"]");
        }
        Value::Object(members) => write_object(out, members, depth)?,
    }
    Ok(())
}

fn write_object<S: Sink>(
    out: &mut S,
    members: &Map<String, Value>,
    depth: usize,
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
        write_value(out, member, depth + 1)?;
    }
    out.put(b"}");
    Ok(())
}

fn write_number<S: Sink>(out: &mut S, n: &Number) -> Result<(), JcsError> {
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
    mrtr_json::write_number(x, &mut text).map_err(|_| JcsError::NonFiniteNumber)?;
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

/// A number's canonical text, on the stack: ECMAScript prints a double in at most 25 bytes
/// (`-1.7976931348623157e+308`, `-0.0000033333333333333333`).
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
mod tests {
    use super::*;
    use serde_json::json;

    fn canon(text: &str) -> String {
        to_canonical_string(&serde_json::from_str(text).unwrap()).unwrap()
    }

    #[test]
    fn rfc8785_section_3_2_2_example() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let expected = "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"\u{20ac}$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}";
        assert_eq!(canon(input), expected);
    }

    #[test]
    fn rfc8785_section_3_2_3_sorting_by_utf16_code_units() {
        let input = r#"{
          "\u20ac": "Euro Sign",
          "\r": "Carriage Return",
          "\ufb33": "Hebrew Letter Dalet With Dagesh",
          "1": "One",
          "\ud83d\ude00": "Emoji: Grinning Face",
          "\u0080": "Control",
          "\u00f6": "Latin Small Letter O With Diaeresis"
        }"#;
        let out = canon(input);
        let v: Value = serde_json::from_str(input).unwrap();
        let order: Vec<&str> = [
            "Carriage Return",
            "One",
            "Control",
            "Latin Small Letter O With Diaeresis",
            "Euro Sign",
            "Emoji: Grinning Face",
            "Hebrew Letter Dalet With Dagesh",
        ]
        .to_vec();
        let positions: Vec<usize> = order.iter().map(|s| out.find(s).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{out}");
        // Code-point (UTF-8) order would put U+FB33 before the emoji.
        assert_eq!(v.as_object().unwrap().len(), 7);
        assert!(out.starts_with("{\"\\r\":\"Carriage Return\",\"1\":\"One\""));
    }

    #[test]
    fn rfc8785_appendix_b_numbers() {
        let cases: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
            (0x4340000000000001, "9007199254740994"),
        ];
        for &(bits, expected) in cases {
            let x = f64::from_bits(bits);
            assert_eq!(format_es(x), expected, "{bits:016x}");
            let v = Value::Number(Number::from_f64(x).unwrap());
            assert_eq!(to_canonical_string(&v).unwrap(), expected, "{bits:016x}");
        }
    }

    #[test]
    fn random_doubles_read_back_exactly_with_the_fewest_digits() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            if !v.is_finite() {
                continue;
            }
            let s = format_es(v);
            assert_eq!(s.parse::<f64>().unwrap(), v, "{s} for {x:016x}");
            // As many significant digits as Rust's shortest round trip.
            let sig = |t: &str| {
                let m = t.split(['e', 'E']).next().unwrap_or("");
                let d: String = m.chars().filter(char::is_ascii_digit).collect();
                d.trim_matches('0').len()
            };
            assert_eq!(sig(&s), sig(&format!("{:e}", v.abs())), "{x:016x}");
        }
    }

    #[test]
    fn ties_between_two_shortest_candidates_go_to_the_even_digit() {
        // Doubles near 1.4e15 are 0.25 apart: 1424953923781206.25 reads back from ...206.2 and
        // ...206.3 alike, both 0.05 away; ECMAScript picks the even last digit.
        let x = f64::from_bits(0x4314_3ff3_c1cb_0959);
        assert_eq!(x, 1424953923781206.0 + 0.25);
        assert_eq!(format_es(x), "1424953923781206.2");
        assert_eq!(format_es(-x), "-1424953923781206.2");
        // Not a tie: one candidate is strictly closer.
        assert_eq!(format_es(1424953923781206.5), "1424953923781206.5");
    }

    #[test]
    fn integers_and_simple_decimals() {
        assert_eq!(
            canon("[1, -1, 10, 1.0, 100e-2, 123456789012, -0.0, 0.5, 1e-7]"),
            "[1,-1,10,1,1,123456789012,0,0.5,1e-7]"
        );
        // An integer a double carries exactly, written as JCS prints it, is fine.
        assert_eq!(canon("9007199254740992"), "9007199254740992");
        assert_eq!(canon("-9007199254740992"), "-9007199254740992");
        assert_eq!(canon("18446744073709552000"), "18446744073709552000");
        // Beyond 2^53 an integer that would print as another value is refused (I-JSON):
        // otherwise 2^53 + 1 and 2^53 would share a digest.
        for lossy in [
            "9007199254740993",
            "-9007199254740993",
            "18446744073709551615",
            "-9223372036854775808",
        ] {
            let v: Value = serde_json::from_str(lossy).unwrap();
            assert_eq!(
                to_canonical_string(&v),
                Err(JcsError::LossyNumber),
                "{lossy}"
            );
        }
        assert_eq!(
            args_digest(Some(&json!({"amount": 9007199254740993u64}))),
            Err(JcsError::LossyNumber)
        );
    }

    #[test]
    fn strings_escape_only_what_jcs_escapes() {
        assert_eq!(
            to_canonical_string(&json!("a\u{0}\u{1f}\u{7f}\u{2028}/\u{8}\u{c}\t")).unwrap(),
            "\"a\\u0000\\u001f\u{7f}\u{2028}/\\b\\f\\t\""
        );
    }

    #[test]
    fn key_order_is_irrelevant_but_types_matter() {
        let a = args_digest(Some(&json!({"x": 1, "y": [true, null]}))).unwrap();
        let b = args_digest(Some(
            &serde_json::from_str(r#"{ "y" : [ true , null ], "x" : 1.0 }"#).unwrap(),
        ))
        .unwrap();
        assert_eq!(a, b);
        let one = args_digest(Some(&json!(1))).unwrap();
        let s = args_digest(Some(&json!("1"))).unwrap();
        let arr = args_digest(Some(&json!([1]))).unwrap();
        assert_ne!(one, s);
        assert_ne!(one, arr);
        assert_ne!(s, arr);
        assert_ne!(
            args_digest(Some(&json!({}))).unwrap(),
            args_digest(Some(&json!([]))).unwrap()
        );
    }

    #[test]
    fn absent_null_and_empty_object_hash_alike() {
        let empty = args_digest(None).unwrap();
        assert_eq!(args_digest(Some(&Value::Null)).unwrap(), empty);
        assert_eq!(args_digest(Some(&json!({}))).unwrap(), empty);
        // And it is the SHA-256 of "{}".
        let expected: [u8; 32] = Sha256::digest(b"{}").into();
        assert_eq!(empty, expected);
    }

    #[test]
    fn digest_hashes_the_canonical_string() {
        let v = json!({"b": "é", "a": [1.5, {"z": false, "m": null}]});
        let s = to_canonical_string(&v).unwrap();
        assert_eq!(s, r#"{"a":[1.5,{"m":null,"z":false}],"b":"é"}"#);
        let expected: [u8; 32] = Sha256::digest(s.as_bytes()).into();
        assert_eq!(digest(&v).unwrap(), expected);
    }

    fn nested(depth: usize) -> Value {
        let mut v = json!(1);
        for i in 0..depth {
            v = if i % 2 == 0 {
                Value::Array(vec![v])
            } else {
                Value::Object(Map::from_iter([("k".to_owned(), v)]))
            };
        }
        v
    }

    #[test]
    fn nesting_limit_is_exact() {
        assert!(to_canonical_string(&nested(MAX_DEPTH)).is_ok());
        assert_eq!(
            to_canonical_string(&nested(MAX_DEPTH + 1)),
            Err(JcsError::TooDeep)
        );
        assert_eq!(
            args_digest(Some(&nested(MAX_DEPTH + 1))),
            Err(JcsError::TooDeep)
        );
        // Far deeper than the limit: refused, not a stack overflow.
        let mut deep = json!(null);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        assert_eq!(digest(&deep), Err(JcsError::TooDeep));
        // serde_json drops deep values recursively; leak it to keep the test about JCS.
        std::mem::forget(deep);
        assert!(JcsError::TooDeep.to_string().contains("64"));
    }

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            other => Map::from_iter([("k".to_owned(), other)]),
        }
    }

    #[test]
    fn map_arguments_digest_as_the_same_object_value() {
        let cases = [
            json!({}),
            json!({"b": [1.0, 2.50, 1e21], "a": "€\n", "\u{10000}": 1, "\u{ffff}": 2}),
            json!({"party": 4, "when": {"date": "2026-12-24", "flex": null}}),
        ];
        for v in cases {
            let map = object(v.clone());
            assert_eq!(args_digest_map(Some(&map)), args_digest(Some(&v)), "{v}");
        }
        // Absent is `{}`, not the digest of nothing.
        assert_eq!(args_digest_map(None), args_digest(Some(&json!({}))));
        assert_eq!(args_digest_map(None), args_digest(None));
        let empty: [u8; 32] = Sha256::digest(b"{}").into();
        assert_eq!(args_digest_map(None), Ok(empty));
        // Different arguments, different digests.
        assert_ne!(
            args_digest_map(Some(&object(json!({"n": 1})))),
            args_digest_map(Some(&object(json!({"n": "1"}))))
        );
    }

    #[test]
    fn map_arguments_share_the_nesting_limit() {
        // The map is the top-level container (depth 1), as inside a Value.
        let wrap = |v: Value| Map::from_iter([("k".to_owned(), v)]);
        let at_limit = wrap(nested(MAX_DEPTH - 1));
        assert!(args_digest_map(Some(&at_limit)).is_ok());
        let over = wrap(nested(MAX_DEPTH));
        assert_eq!(args_digest_map(Some(&over)), Err(JcsError::TooDeep));
    }

    #[test]
    fn integers_print_as_the_double_they_are() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut cases: Vec<i64> = vec![0, 1, -1, 9, 10, -10, 1 << 53, -(1 << 53), 1_000_000];
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push((x >> (x % 64)) as i64 % (1 << 53));
        }
        for i in cases {
            let v = serde_json::json!(i);
            assert_eq!(
                to_canonical_string(&v).unwrap(),
                format_number(i as f64),
                "{i}"
            );
        }
        assert_eq!(
            to_canonical_string(&serde_json::json!(u64::MAX)),
            Err(JcsError::LossyNumber)
        );
    }
}
