//! The scanner's tests of the text's tokens: numbers (exact or lossy, exponents at the ends of
//! `i64`), member names (duplicates compared unescaped, in objects of any size) and strings
//! (UTF-8, and the word-at-a-time search for the bytes that end or escape them).

use super::*;
use crate::ijson::names::LINEAR_NAMES;
use crate::ijson::strings::specials;

#[test]
fn numbers_pass_when_the_double_carries_their_value() {
    for ok in [
        "0",
        "-0",
        "0.0",
        "1.50",
        "0.1",
        "1e21",
        "1E+21",
        "100e-2",
        "9007199254740992",
        "-9007199254740992",
        "123456789012345",
        "333333333.3333333",
        "5e-324",
        "1.7976931348623157e308",
        "295147905179352830000",
    ] {
        assert!(number_is_exact(ok), "{ok}");
        assert_eq!(kind(ok), None, "{ok}");
    }
    for lossy in [
        "9007199254740993",
        "-9007199254740993",
        "18446744073709551615",
        "1152921504606846976", // 2^60 is a double, but JCS prints it 1152921504606847000
        "3.141592653589793238462643383279",
        "0.10000000000000000001",
        "4.9e-324",
        "1e400",
        "-1e400",
        "1e-400",
        "1e99999999999999999999",
    ] {
        assert!(!number_is_exact(lossy), "{lossy}");
        assert_eq!(kind(lossy), Some(ViolationKind::LossyNumber), "{lossy}");
    }
}

/// Issue 49: an exponent near `i64::MIN` or `i64::MAX` made the decimal exponent overflow
/// (`int_len - lead + exp`): a panic in debug builds, right in release only by luck. Checked
/// arithmetic refuses them as lossy, with the same answer in every build.
#[test]
fn exponents_at_the_edges_of_i64_are_lossy_without_overflow() {
    for lossy in [
        "0.01e-9223372036854775808",
        "-0.001e-9223372036854775808",
        "100e9223372036854775807",
        "1e9223372036854775807",
        "1e-9223372036854775808",
        "1e9223372036854775808",
        "1e-9223372036854775809",
    ] {
        assert!(!number_is_exact(lossy), "{lossy}");
        assert_eq!(kind(lossy), Some(ViolationKind::LossyNumber), "{lossy}");
        let text = format!(r#"{{"n":[1,{lossy}]}}"#);
        assert_eq!(
            same_as_reference(text.as_bytes()),
            Some(ViolationKind::LossyNumber)
        );
    }
    // A zero with an exponent that fits is exact, whatever the exponent; one past i64 is not
    // (the documented rule: the exponent must fit).
    assert_eq!(kind("0.0e-9223372036854775808"), None);
    assert_eq!(kind("0e9223372036854775807"), None);
    assert_eq!(
        kind("0e99999999999999999999"),
        Some(ViolationKind::LossyNumber)
    );
}

#[test]
fn duplicate_names_compare_unescaped() {
    assert_eq!(kind(r#"{"a":1,"b":{"a":2}}"#), None);
    for dup in [
        r#"{"a":1,"a":2}"#,
        r#"{"a":1,"\u0061":2}"#,
        r#"{"x":[{"é":1,"\u00e9":2}]}"#,
        r#"{"😀":1,"\ud83d\ude00":2}"#,
    ] {
        assert_eq!(kind(dup), Some(ViolationKind::DuplicateName), "{dup}");
    }
    let v = check(br#"{"p":{"a/b~c":{"k":1,"k":2}}}"#).unwrap_err();
    assert_eq!(v.path(), "/p/a~1b~0c/k");
    assert_eq!(
        v.to_string(),
        "duplicate member name at /p/a~1b~0c/k",
        "names places, never values"
    );
    let v = check(br#"[0, 1, {"n": 9007199254740993}]"#).unwrap_err();
    assert_eq!(v.path(), "/2/n");
}

#[test]
fn duplicates_are_found_in_objects_of_any_size() {
    // Below and above the size where the scan switches to a hash set, the duplicate first,
    // in the middle and last.
    for members in [2, LINEAR_NAMES - 1, LINEAR_NAMES, LINEAR_NAMES + 1, 200] {
        let names: Vec<String> = (0..members).map(|i| format!("\"k{i}\":{i}")).collect();
        let unique = format!("{{{}}}", names.join(","));
        assert_eq!(kind(&unique), None, "{members} members");
        for dup in [0, members / 2, members - 1] {
            let text = format!("{{{},\"k{dup}\":0}}", names.join(","));
            let v = check(text.as_bytes()).unwrap_err();
            assert_eq!(v.kind(), ViolationKind::DuplicateName, "{members}/{dup}");
            assert_eq!(v.path(), format!("/k{dup}"));
        }
    }
    // Names of sibling and nested objects never collide with each other.
    assert_eq!(
        kind(r#"{"a":{"a":{"a":1}},"b":{"a":2},"c":[{"a":1},{"a":2}]}"#),
        None
    );
}

#[test]
fn strings_must_be_utf8_wherever_they_are() {
    for bad in [
        &b"\"\xff\""[..],
        b"{\"\xc3\":1}",
        b"{\"a\":\"x\\n\xe2\x82\"}",
    ] {
        assert_eq!(check(bad).unwrap_err().kind(), ViolationKind::NotJson);
    }
    assert!(check("{\"é\":\"\\u00e9 ünï\"}".as_bytes()).is_ok());
}

#[test]
fn specials_are_found_at_every_offset_of_a_long_string() {
    let plain = "abcdefghijklmnopqrstuvwxyz0123456789-é_ü";
    for at in 0..plain.len() + 1 {
        if !plain.is_char_boundary(at) {
            continue;
        }
        let (head, tail) = plain.split_at(at);
        assert_eq!(kind(&format!("\"{head}{tail}\"")), None);
        assert_eq!(
            kind(&format!("\"{head}\\n{tail}\"")),
            None,
            "escape at {at}"
        );
        assert_eq!(
            kind(&format!("\"{head}\u{1}{tail}\"")),
            Some(ViolationKind::NotJson)
        );
        assert_eq!(
            kind(&format!("\"{head}\u{1f}{tail}\"")),
            Some(ViolationKind::NotJson)
        );
        assert_eq!(
            kind(&format!("\"{head}\"{tail}\"")),
            Some(ViolationKind::NotJson)
        );
        // Ends exactly here.
        assert_eq!(kind(&format!("[\"{head}\",1]")), None);
        let message = format!("{{\"method\":\"{head}\\/{tail}\"}}");
        let env = scan(message.as_bytes()).unwrap();
        assert_eq!(env.method.unwrap(), format!("{head}/{tail}"));
    }
}

#[test]
fn the_first_special_byte_of_a_word_is_found_exactly() {
    let special = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
    // Every byte value at every offset, over plain, high and special backgrounds (a
    // special byte above the first must not move it).
    for background in [b'a', 0xc3, 0x7f, 0x20, b'"', 0x00, 0x1f, b'\\'] {
        for at in 0..8 {
            for b in 0u8..=255 {
                let mut bytes = [b'x'; 8];
                bytes[at] = b;
                for byte in bytes.iter_mut().skip(at + 1) {
                    *byte = background;
                }
                let marks = specials(u64::from_le_bytes(bytes));
                let first = bytes.iter().position(|&b| special(b));
                let found = (marks != 0).then(|| marks.trailing_zeros() as usize / 8);
                assert_eq!(found, first, "{bytes:?}");
            }
        }
    }
}
