//! Tests of [`crate::jcs`]: RFC 8785 vectors, the binding form, limits.

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
        &serde_json::from_str(r#"{ "y" : [ true , null ], "x" : 1 }"#).unwrap(),
    ))
    .unwrap();
    assert_eq!(a, b);
    // 1.0 is a double, 1 an integer: a handler reads them differently, and so does the digest.
    let float = args_digest(Some(
        &serde_json::from_str(r#"{ "y" : [ true , null ], "x" : 1.0 }"#).unwrap(),
    ))
    .unwrap();
    assert_ne!(a, float);
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
fn digest_hashes_the_binding_string() {
    let v = json!({"b": "é", "a": [1.5, 2.0, 3, {"z": false, "m": null}]});
    let s = to_binding_string(&v).unwrap();
    assert_eq!(s, r#"{"a":[1.5,2.0,3,{"m":null,"z":false}],"b":"é"}"#);
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

/// What serde_json hands a handler for `text` (`{"n": <text>}`), as the handler would tell
/// values apart: the number's `as_u64`, `as_i64`, the bits of its `as_f64`, and whether it is
/// a double.
fn read_by_handler(text: &str) -> (Option<u64>, Option<i64>, Option<u64>, bool) {
    let v: Value = serde_json::from_str(&format!(r#"{{"n": {text}}}"#)).unwrap();
    let n = v["n"].as_number().unwrap().clone();
    (
        n.as_u64(),
        n.as_i64(),
        n.as_f64().map(f64::to_bits),
        n.is_f64(),
    )
}

fn bound(text: &str) -> String {
    let v: Value = serde_json::from_str(&format!(r#"{{"n": {text}}}"#)).unwrap();
    to_binding_string(&v).unwrap()
}

#[test]
fn what_a_handler_reads_differently_binds_differently() {
    // The pairs of issue 49 (section 4), negative zero, and one across the 64-bit range:
    // serde_json reads each pair differently, and the binding tells them apart.
    for (a, b) in [
        ("1", "1.0"),
        ("100", "1e2"),
        ("0", "-0"),
        ("0", "-0.0"),
        ("0.0", "-0.0"),
        ("0", "0.0"),
        ("7", "7.0"),
        ("-3", "-3e0"),
    ] {
        assert_ne!(read_by_handler(a), read_by_handler(b), "{a} {b}");
        assert_ne!(bound(a), bound(b), "{a} {b}");
        let (da, db) = (
            args_digest(Some(
                &serde_json::from_str(&format!(r#"{{"n":{a}}}"#)).unwrap(),
            )),
            args_digest(Some(
                &serde_json::from_str(&format!(r#"{{"n":{b}}}"#)).unwrap(),
            )),
        );
        assert_ne!(da, db, "{a} {b}");
    }
    // Texts serde_json reads alike bind alike.
    for (a, b) in [
        ("1.50", "1.5"),
        ("1E2", "1e2"),
        ("100.0", "1e2"),
        ("-0", "-0.0"),
        ("1e21", "1000000000000000000000"),
        ("100000000000000000000", "1e20"),
        ("\"\\u0061\"", "\"a\""),
    ] {
        assert_eq!(bound(a), bound(b), "{a} {b}");
    }
    assert_eq!(bound("1"), r#"{"n":1}"#);
    assert_eq!(bound("1.0"), r#"{"n":1.0}"#);
    assert_eq!(bound("1e2"), r#"{"n":100.0}"#);
    assert_eq!(bound("-0"), r#"{"n":-0.0}"#);
    assert_eq!(bound("0.0"), r#"{"n":0.0}"#);
    assert_eq!(bound("1e21"), r#"{"n":1e+21}"#);
    assert_eq!(bound("1e-7"), r#"{"n":1e-7}"#);
    assert_eq!(
        bound("18446744073709552000"),
        r#"{"n":18446744073709552000.0}"#
    );
    // The canonical form stays RFC 8785's.
    let v: Value = serde_json::from_str(r#"[1, 1.0, 1e2, -0, -0.0, 0.0]"#).unwrap();
    assert_eq!(to_canonical_string(&v).unwrap(), "[1,1,100,0,0,0]");
    assert_eq!(
        to_binding_string(&v).unwrap(),
        "[1,1.0,100.0,-0.0,-0.0,0.0]"
    );
}
