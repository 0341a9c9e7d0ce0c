//! Each `Error`, from the call that reports it, and the accessors on validated values.

use mrtr_json::{Error, Kind, Limits, Writer, args_digest, canonicalize, parse};

const L: Limits = Limits::DEFAULT;

#[test]
fn not_json() {
    for text in [
        "",
        " ",
        "{",
        "[1,]",
        "{\"a\"}",
        "{\"a\":1,}",
        "01",
        "1.",
        "-",
        "+1",
        "tru",
        "nul",
        "\"abc",
        "\"\\x\"",
        "\"\\u12g4\"",
        "\"a\u{1}\"",
        "[1] 2",
        "{'a':1}",
        "NaN",
    ] {
        assert_eq!(parse(text.as_bytes(), &L), Err(Error::NotJson), "{text:?}");
    }
    // Invalid UTF-8 inside a string, and outside.
    assert_eq!(parse(b"\"\xff\"", &L), Err(Error::NotJson));
    assert_eq!(parse(b"\"\xc3\"", &L), Err(Error::NotJson));
    assert_eq!(parse(b"[\xc3\xa9]", &L), Err(Error::NotJson));
}

#[test]
fn too_deep() {
    let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(parse(nested(64).as_bytes(), &L).is_ok());
    assert_eq!(parse(nested(65).as_bytes(), &L), Err(Error::TooDeep));
    // Never deeper than MAX_DEPTH, whatever the limits say.
    let huge = Limits {
        max_depth: usize::MAX,
        ..L
    };
    assert!(parse(nested(mrtr_json::MAX_DEPTH).as_bytes(), &huge).is_ok());
    assert_eq!(
        parse(nested(mrtr_json::MAX_DEPTH + 1).as_bytes(), &huge),
        Err(Error::TooDeep)
    );
    // The digest's own bound: 64 within the arguments.
    let deep = nested(65);
    let v = parse(
        deep.as_bytes(),
        &Limits {
            max_depth: 128,
            ..L
        },
    )
    .unwrap();
    assert_eq!(args_digest(Some(v)), Err(Error::TooDeep));
    let shallow = Limits { max_depth: 2, ..L };
    let v = parse(b"[[[1]]]", &L).unwrap();
    let mut buf = [0u8; 16];
    let mut w = Writer::new(&mut buf);
    assert_eq!(canonicalize(v, &mut w, &shallow), Err(Error::TooDeep));
}

#[test]
fn too_many_members() {
    let object = |n: usize| {
        let members: Vec<String> = (0..n).map(|i| format!("\"m{i}\":{i}")).collect();
        format!("{{{}}}", members.join(","))
    };
    assert!(parse(object(256).as_bytes(), &L).is_ok());
    assert_eq!(
        parse(object(257).as_bytes(), &L),
        Err(Error::TooManyMembers)
    );
    let ten = object(10);
    let v = parse(ten.as_bytes(), &L).unwrap();
    let few = Limits {
        max_members: 9,
        ..L
    };
    let mut buf = [0u8; 256];
    assert_eq!(
        canonicalize(v, &mut Writer::new(&mut buf), &few),
        Err(Error::TooManyMembers)
    );
}

#[test]
fn too_long() {
    let short = Limits { max_len: 4, ..L };
    assert!(parse(b"1234", &short).is_ok());
    assert_eq!(parse(b"12345", &short), Err(Error::TooLong));
    let v = parse(b"[1,2]", &L).unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(
        canonicalize(v, &mut Writer::new(&mut buf), &short),
        Err(Error::TooLong)
    );
}

#[test]
fn duplicate_name() {
    assert_eq!(parse(br#"{"a":1,"a":2}"#, &L), Err(Error::DuplicateName));
    assert_eq!(
        parse(br#"{"a":1,"\u0061":2}"#, &L),
        Err(Error::DuplicateName)
    );
    assert_eq!(
        parse("{\"\\ud83d\\ude00\":1,\"\u{1F600}\":2}".as_bytes(), &L),
        Err(Error::DuplicateName)
    );
    assert!(parse(br#"{"a":1,"b":{"a":2}}"#, &L).is_ok());
    assert!(parse(br#"{"a":1,"A":2,"a ":3}"#, &L).is_ok());
}

#[test]
fn lossy_number() {
    for n in [
        "9007199254740993",
        "3.141592653589793238",
        "1e400",
        "-1e400",
        "1e-400",
        "0.01e-9223372036854775808",
        "1e9223372036854775808",
    ] {
        assert_eq!(parse(n.as_bytes(), &L), Err(Error::LossyNumber), "{n}");
        assert_eq!(
            parse(format!("{{\"x\":[{n}]}}").as_bytes(), &L),
            Err(Error::LossyNumber),
            "{n}"
        );
    }
    let mut buf = [0u8; 8];
    let mut w = Writer::new(&mut buf);
    assert_eq!(
        mrtr_json::write_number(f64::INFINITY, &mut w),
        Err(Error::LossyNumber)
    );
}

#[test]
fn lone_surrogate() {
    for s in [
        r#""\udc00""#,
        r#""\ud800""#,
        r#""\ud800x""#,
        r#""\ud800\u0041""#,
        r#""\ud800\ud800""#,
    ] {
        assert_eq!(parse(s.as_bytes(), &L), Err(Error::LoneSurrogate), "{s}");
    }
    assert!(parse(br#""\ud800\udc00""#, &L).is_ok());
}

#[test]
fn buffer_too_small_and_wrong_kind() {
    let v = parse(br#""caf\u00e9""#, &L).unwrap();
    let mut small = [0u8; 4];
    assert_eq!(v.unescape_into(&mut small), Err(Error::BufferTooSmall));
    let mut buf = [0u8; 5];
    assert_eq!(v.unescape_into(&mut buf), Ok("café"));
    let n = parse(b"1", &L).unwrap();
    assert_eq!(n.unescape_into(&mut buf), Err(Error::WrongKind));
    let mut w = Writer::new(&mut small);
    w.string("long enough");
    assert_eq!(w.finish(), Err(Error::BufferTooSmall));
}

#[test]
fn error_names_are_stable() {
    let all = [
        (Error::NotJson, "not_json"),
        (Error::TooDeep, "too_deep"),
        (Error::TooManyMembers, "too_many_members"),
        (Error::TooLong, "too_long"),
        (Error::DuplicateName, "duplicate_name"),
        (Error::LossyNumber, "lossy_number"),
        (Error::LoneSurrogate, "lone_surrogate"),
        (Error::BufferTooSmall, "buffer_too_small"),
        (Error::WrongKind, "wrong_kind"),
    ];
    for (e, name) in all {
        assert_eq!(e.as_str(), name);
        assert!(!e.to_string().is_empty());
    }
}

#[test]
fn accessors() {
    let v = parse(
        br#" {"s": "plain", "e": "a\nb", "u": 7, "f": 7.0, "g": 1e2, "n": -3, "z": -0, "b": true, "x": null, "big": 18446744073709551615e0, "a": [1, "two", [3]], "o": {}} "#,
        &L,
    );
    // 18446744073709551615e0 is not exact: use a parse that passes.
    assert_eq!(v, Err(Error::LossyNumber));
    let v = parse(
        br#" {"s": "plain", "e": "a\nb", "u": 7, "f": 7.0, "g": 1e2, "n": -3, "z": -0, "b": true, "x": null, "h": 0.5, "a": [1, "two", [3]], "o": {}} "#,
        &L,
    )
    .unwrap();
    assert_eq!(v.kind(), Kind::Object);
    assert_eq!(v.get("s").and_then(|s| s.as_str()), Some("plain"));
    assert_eq!(v.get("e").and_then(|s| s.as_str()), None);
    assert!(v.get("e").is_some_and(|s| s.str_eq("a\nb")));
    assert_eq!(v.get("u").and_then(|n| n.as_u64()), Some(7));
    assert_eq!(v.get("f").and_then(|n| n.as_u64()), Some(7));
    assert_eq!(v.get("g").and_then(|n| n.as_i64()), Some(100));
    assert_eq!(v.get("n").and_then(|n| n.as_u64()), None);
    assert_eq!(v.get("n").and_then(|n| n.as_i64()), Some(-3));
    assert_eq!(v.get("z").and_then(|n| n.as_u64()), Some(0));
    assert_eq!(v.get("h").and_then(|n| n.as_u64()), None);
    assert_eq!(v.get("h").and_then(|n| n.as_f64()), Some(0.5));
    assert_eq!(v.get("b").and_then(|b| b.as_bool()), Some(true));
    assert_eq!(v.get("x").map(|x| x.kind()), Some(Kind::Null));
    assert_eq!(v.get("missing"), None);
    let items: Vec<_> = v.get("a").unwrap().items().map(|i| i.raw()).collect();
    assert_eq!(items, [&b"1"[..], b"\"two\"", b"[3]"]);
    assert_eq!(v.get("o").unwrap().members().count(), 0);
    assert_eq!(v.members().count(), 12);
    assert_eq!(v.get("s").unwrap().items().count(), 0);
    assert_eq!(parse(b"[]", &L).unwrap().items().count(), 0);
}
