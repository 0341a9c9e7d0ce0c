//! mrtr-json's fast paths against the slow ones, on many generated inputs:
//!
//! * numbers: `number_is_exact` and the canonical form `canonicalize` writes (short integers
//!   copied, decimals of at most 15 significant digits placed without a double) against a
//!   reference built here the slow way: std's `f64` parser, the ECMAScript printer
//!   (`write_number`), and a comparison of decimal values;
//! * member selection: objects of up to 256 members (more than one batch of sorted names),
//!   nested objects between them, names with escapes and names whose UTF-16 order is not
//!   their UTF-8 order, against `mrtr_std::jcs::args_digest`; duplicate names (however
//!   escaped) refused by both;
//! * duplicate detection in `parse` (its filter of name hashes) against `mrtr_std::ijson`.

use mrtr_json::{Limits, Writer, args_digest, canonicalize, number_is_exact, parse, write_number};
use mrtr_std::{ijson, jcs};
use proptest::prelude::*;

/// A decimal value: sign, significant digits (no leading or trailing zeros; none for zero)
/// and `n` such that the value is `0.digits × 10^n`. `None` when the exponent does not fit
/// an `i64` (the crate calls such a literal inexact).
fn decimal(lit: &str) -> Option<(bool, String, i128)> {
    let (negative, rest) = match lit.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, lit),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let int_len = mantissa.find('.').unwrap_or(mantissa.len());
    let all: String = mantissa.chars().filter(|&c| c != '.').collect();
    let lead = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_start_matches('0').trim_end_matches('0').to_owned();
    if digits.is_empty() {
        return Some((false, String::new(), 0));
    }
    Some((
        negative,
        digits,
        int_len as i128 - lead as i128 + i128::from(exp),
    ))
}

/// The slow reference: the literal read as a double (std), printed as ECMAScript does, and
/// exact when the printed value is the literal's value. Returns the canonical form then.
fn reference(lit: &str) -> Option<String> {
    let x: f64 = lit.parse().ok()?;
    if !x.is_finite() {
        return None;
    }
    let mut buf = [0u8; 64];
    let mut w = Writer::new(&mut buf);
    write_number(x, &mut w).ok()?;
    let printed = std::str::from_utf8(w.finish().ok()?).ok()?.to_owned();
    let want = decimal(lit)?;
    // The crate also refuses literals whose `n` overflows an i64.
    i64::try_from(want.2).ok()?;
    (decimal(&printed)? == want).then_some(printed)
}

/// What mrtr-json does with a literal: exact or not, and its canonical form.
fn fast(lit: &str) -> Option<String> {
    if !number_is_exact(lit.as_bytes()) {
        assert!(
            parse(lit.as_bytes(), &Limits::DEFAULT).is_err(),
            "{lit}: inexact but parsed"
        );
        return None;
    }
    let v = parse(lit.as_bytes(), &Limits::DEFAULT).expect("an exact literal parses");
    let mut buf = [0u8; 64];
    let mut w = Writer::new(&mut buf);
    canonicalize(v, &mut w, &Limits::DEFAULT).expect("an exact literal is written");
    Some(std::str::from_utf8(w.finish().unwrap()).unwrap().to_owned())
}

/// JSON number literals: short and long integers, decimals with runs of zeros, exponents
/// near the ends of the double range and absurd ones.
fn literal() -> impl Strategy<Value = String> {
    let int = prop_oneof![
        Just("0".to_owned()),
        "[1-9][0-9]{0,14}",
        "[1-9][0-9]{15,22}",
        "[1-9]0{0,25}",
        "9007199254740[0-9]{3}",
    ];
    let frac = prop_oneof![
        Just(String::new()),
        "\\.[0-9]{1,8}",
        "\\.0{0,10}[0-9]{1,16}",
        "\\.[0-9]{1,6}0{1,8}",
        "\\.[0-9]{14,24}",
    ];
    let exp = prop_oneof![
        3 => Just(String::new()),
        1 => "[eE][+-]?0{0,2}[0-9]{1,2}",
        1 => "[eE][+-]?(2[89][0-9]|3[0-3][0-9])",
        1 => "[eE][+-]?[0-9]{4,22}",
    ];
    ("-?", int, frac, exp).prop_map(|(s, i, f, e)| format!("{s}{i}{f}{e}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn numbers_agree_with_the_slow_path(lit in literal()) {
        prop_assert_eq!(fast(&lit), reference(&lit), "{}", lit);
    }
}

#[test]
fn number_edges_agree_with_the_slow_path() {
    for lit in [
        "0",
        "-0",
        "0.0",
        "-0.0",
        "0e5",
        "-0e-5",
        "1",
        "21.5",
        "-21.50",
        "999999999999999",
        "-999999999999999",
        "1000000000000000",
        "9007199254740992",
        "9007199254740993",
        "99999999999999.9",
        "0.999999999999999",
        "0.1",
        "0.000001",
        "0.0000001",
        "0.00000123",
        "1e21",
        "1e20",
        "123456789012345e6",
        "1.5e-7",
        "1e300",
        "9.99999999999999e299",
        "1e-300",
        "1e-301",
        "1e308",
        "1.7976931348623157e308",
        "5e-324",
        "1e-400",
        "1e400",
        "0.30000000000000004",
        "100000000000000000000.0",
        "2.675",
        "1.005",
        "33333333.33333333",
        "0e99999999999999999999",
        "0.01e-9223372036854775808",
    ] {
        assert_eq!(fast(lit), reference(lit), "{lit}");
    }
}

/// Member names: ASCII, escaped (short and `\u` escapes), non-ASCII, and around U+E000
/// and supplementary characters (UTF-16 order differs from UTF-8 order there).
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z]{1,3}",
        2 => "[a-c_]{1,8}",
        1 => "[a-b]{0,2}(\\\\u00e9|\\\\u0041|\\\\n|\\\\\\\\|\\\\\")[a-b]{0,2}",
        1 => "[a-b]{0,2}[\u{e9}\u{e000}\u{ff5e}\u{1f600}\u{10000}]{1,2}",
        1 => "[a-b]{0,1}(\\\\ud83d\\\\ude00|\\\\uE000|\\\\uffff)",
    ]
}

/// A value: mostly scalars, sometimes a small nested object or an array holding one (the
/// parent's sorted names are then found again).
fn value() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        Just("1".to_owned()),
        Just("-2.50".to_owned()),
        Just("true".to_owned()),
        Just("null".to_owned()),
        Just("\"x\\u00e9\"".to_owned()),
        "\"[a-z ]{0,12}\"",
    ];
    scalar.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec((name(), inner.clone()), 0..4).prop_map(|m| object(&m)),
            prop::collection::vec(inner, 0..3).prop_map(|v| format!("[{}]", v.join(", "))),
        ]
    })
}

fn object(members: &[(String, String)]) -> String {
    let inner: Vec<String> = members
        .iter()
        .map(|(n, v)| format!("\"{n}\" : {v}"))
        .collect();
    format!("{{ {} }}", inner.join(","))
}

/// Both sides on one text: the same digest, or both refusing.
fn agree(text: &str) -> Result<(), TestCaseError> {
    let limits = Limits {
        max_depth: 128,
        ..Limits::DEFAULT
    };
    let gateway = parse(text.as_bytes(), &limits).and_then(|v| args_digest(Some(v)));
    let host = ijson::check(text.as_bytes())
        .map_err(|v| v.kind().as_str().to_owned())
        .and_then(|()| {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            jcs::args_digest(Some(&value)).map_err(|e| format!("{e:?}"))
        });
    match (gateway, host) {
        (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "{}", text),
        (Err(e), Err(h)) => prop_assert_eq!(e.as_str(), h.as_str(), "{}", text),
        (g, h) => prop_assert!(false, "{}: gateway {:?}, host {:?}", text, g, h),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Objects of up to 256 members (the default limit; batches of 65 sorted names):
    /// duplicate names are frequent among short names, and refused alike.
    #[test]
    fn large_objects_agree_with_the_host(
        members in prop::collection::vec((name(), value()), 0..=256)
    ) {
        agree(&object(&members))?;
    }

    /// The same members, without duplicates: the digest itself is compared.
    #[test]
    fn large_objects_without_duplicates_agree_with_the_host(
        members in prop::collection::btree_map(
            "[a-z]{1,6}|[\u{e000}\u{1f600}][a-z]{0,2}",
            value(),
            0..=256,
        )
    ) {
        let members: Vec<(String, String)> = members.into_iter().collect();
        agree(&object(&members))?;
    }
}
