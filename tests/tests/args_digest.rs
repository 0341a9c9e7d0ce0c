//! Golden vectors for the argument digest (`tests/vectors/args-digest.json`): each input is
//! raw JSON text; an I-JSON input has its RFC 8785 canonical text, its binding text (the
//! canonical text with every number keeping its kind: `1.0`, `-0.0`) and the SHA-256 of the
//! binding text, any other is refused with its reason. The vectors are regenerated from
//! `VECTORS` below and compared with the file; `MRTR_BLESS=1` rewrites it. Every vector must
//! also appear in `docs/token-format.md`. `tests/vectors/check_args_digest.py` checks the file
//! independently. The no_std writer (`mrtr_json`, the gateway firmware's) must give the same
//! binding text and digest from the raw text, and the pairs of issue 49 (section 4) must bind
//! apart on every path.

use std::fmt::Write as _;
use std::path::PathBuf;

use mrtr_std::ijson;
use mrtr_std::jcs::{self, JcsError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// (name, raw arguments text).
const VECTORS: &[(&str, &str)] = &[
    ("empty object", "{}"),
    ("null means no arguments", "null"),
    (
        "RFC 8785 3.2.2 example",
        r#"{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"#,
    ),
    (
        "RFC 8785 3.2.2 example, first number as a double prints it",
        r#"{
  "numbers": [333333333.3333333, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"#,
    ),
    (
        "RFC 8785 3.2.3 sorting",
        r#"{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}"#,
    ),
    (
        "RFC 8785 appendix B numbers",
        r#"{"n": [0, -0, 5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308,
  9007199254740992, -9007199254740992, 295147905179352830000, 9.999999999999997e22,
  1e23, 1.0000000000000001e23, 999999999999999700000, 999999999999999900000, 1e21,
  9.999999999999997e-7, 0.000001, 333333333.3333332, 333333333.33333325, 333333333.3333333,
  333333333.3333334, 333333333.33333343, -0.0000033333333333333333, 1424953923781206.2]}"#,
    ),
    (
        "UTF-16 order differs from code point order",
        r#"{"\ufb33": "U+FB33", "\ud83d\ude00": "U+1F600", "\uffff": "U+FFFF", "\ud800\udc00": "U+10000"}"#,
    ),
    (
        "nested arrays and objects",
        r#"{"b": [[1, [2, [3, {"z": [], "y": {}}]]], []], "a": {"c": [true, [null]]}}"#,
    ),
    (
        "strings: escapes, controls, no normalization",
        r#"{"s": "tab\tnl\ncr\rff\fbs\b\u0000\u001f\u007f\u2028/", "\u00e9": 1, "e\u0301": 2}"#,
    ),
    ("2^53 is a double", r#"{"amount": 9007199254740992}"#),
    (
        "numbers keep their kind",
        r#"{"int": [1, 100, 0, -7, 9007199254740992, 10000000000000000000],
  "float": [1.0, 100e-2, 1e2, -0, -0.0, 0.0, 1.50, 1E2, 1e21, 5e-324, 100000000000000000000]}"#,
    ),
    ("refused: 2^53 + 1", r#"{"amount": 9007199254740993}"#),
    (
        "refused: more precision than a double",
        r#"{"pi": 3.141592653589793238}"#,
    ),
    ("refused: out of range", r#"{"x": 1e400}"#),
    (
        "refused: duplicate member name",
        r#"{"a": 1, "b": 2, "a": 3}"#,
    ),
    (
        "refused: duplicate after unescaping",
        r#"{"k": {"\u00e9": 1, "é": 2}}"#,
    ),
    ("refused: lone surrogate", r#"{"s": "\udc00"}"#),
    (
        "refused: nested 65 deep",
        r#"{"d": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
    ),
];

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Vector {
    name: String,
    /// The raw arguments text, exactly as a client sends it.
    arguments: String,
    /// The RFC 8785 canonical text (absent when refused).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    canonical: Option<String>,
    /// The binding text: the canonical text with numbers keeping their kind (absent when
    /// refused).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    bound: Option<String>,
    /// SHA-256 of the binding text, hex (absent when refused).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    sha256_hex: Option<String>,
    /// Why the input cannot be bound (absent when accepted).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    refused: Option<String>,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct File {
    description: String,
    vectors: Vec<Vector>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// What mrtr makes of one raw input: the raw I-JSON check, then the canonical form.
fn compute(name: &str, raw: &str) -> Vector {
    let mut v = Vector {
        name: name.to_owned(),
        arguments: raw.to_owned(),
        canonical: None,
        bound: None,
        sha256_hex: None,
        refused: None,
    };
    if let Err(violation) = ijson::check(raw.as_bytes()) {
        v.refused = Some(violation.kind().as_str().to_owned());
        return v;
    }
    let value: Value = serde_json::from_str(raw).expect("I-JSON text parses");
    // Absent and null mean no arguments: the digest of `{}`.
    let value = if value.is_null() {
        Value::Object(Default::default())
    } else {
        value
    };
    match jcs::to_canonical_string(&value) {
        Ok(text) => {
            let bound = jcs::to_binding_string(&value).expect("canonical, so bound");
            let digest = jcs::args_digest(Some(&value)).expect("canonical");
            v.sha256_hex = Some(hex(&digest));
            v.canonical = Some(text);
            v.bound = Some(bound);
        }
        Err(JcsError::TooDeep) => v.refused = Some("too_deep".into()),
        Err(e) => v.refused = Some(format!("{e:?}")),
    }
    v
}

fn path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn expected() -> File {
    File {
        description: "Argument digest vectors: the RFC 8785 canonical JSON of the call's \
                      arguments, its binding form (numbers keep their kind: a float is written \
                      with a fraction or an exponent, 1.0, -0.0) and the SHA-256 of the binding \
                      form; inputs that are not I-JSON are refused. See docs/token-format.md, \
                      section \"Argument digest\"."
            .into(),
        vectors: VECTORS.iter().map(|(n, raw)| compute(n, raw)).collect(),
    }
}

#[test]
fn the_vector_file_matches_the_implementation() {
    let want = expected();
    let file = path("vectors/args-digest.json");
    if std::env::var("MRTR_BLESS").as_deref() == Ok("1") {
        let text = serde_json::to_string_pretty(&want).unwrap() + "\n";
        std::fs::write(&file, text).unwrap();
    }
    let text = std::fs::read_to_string(&file).expect("tests/vectors/args-digest.json");
    let have: File = serde_json::from_str(&text).unwrap();
    assert_eq!(
        have, want,
        "stale vectors: MRTR_BLESS=1 cargo test -p mrtr-tests --test args_digest"
    );
}

#[test]
fn the_vectors_cover_what_they_claim() {
    let want = expected();
    let refused: Vec<&str> = want
        .vectors
        .iter()
        .filter_map(|v| v.refused.as_deref())
        .collect();
    for kind in [
        "lossy_number",
        "duplicate_name",
        "lone_surrogate",
        "too_deep",
    ] {
        assert!(refused.contains(&kind), "no vector refused as {kind}");
    }
    // The empty object and null digest alike: SHA-256("{}").
    assert_eq!(want.vectors[0].sha256_hex, want.vectors[1].sha256_hex);
    assert_eq!(
        want.vectors[0].sha256_hex.as_deref(),
        Some("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a")
    );
    // UTF-16 order: the emoji (D83D DE00) and U+10000 (D800 DC00) sort before U+FB33 and
    // U+FFFF, unlike code point order.
    // RFC 8785's own example is refused as written (333333333.33333329 has more digits than a
    // double keeps) and gives the RFC's canonical text once that number is written as a double
    // prints it.
    assert_eq!(want.vectors[2].refused.as_deref(), Some("lossy_number"));
    assert_eq!(
        want.vectors[3].canonical.as_deref(),
        Some(concat!(
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"#,
            "\"string\":\"\u{20ac}$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}"
        ))
    );
    let sorted = want.vectors[6].canonical.as_deref().unwrap();
    let pos = |s: &str| sorted.find(s).unwrap();
    assert!(pos("U+10000") < pos("U+1F600") && pos("U+1F600") < pos("U+FB33"));
    assert!(pos("U+FB33") < pos("U+FFFF"), "{sorted}");
}

#[test]
fn every_vector_is_in_the_document() {
    let doc = std::fs::read_to_string(path("../docs/token-format.md")).unwrap();
    for v in expected().vectors {
        let shown = match (&v.sha256_hex, &v.refused) {
            (Some(h), _) => h.clone(),
            (None, Some(r)) => format!("refused: `{r}`"),
            (None, None) => unreachable!(),
        };
        assert!(
            doc.contains(&format!("| {} | ", v.name)) && doc.contains(&shown),
            "docs/token-format.md does not list vector {:?} ({shown})",
            v.name
        );
    }
}

/// mrtr-json's binding text and digest of raw `text` (as the gateway firmware computes them).
fn gateway(text: &str) -> Result<(String, [u8; 32]), mrtr_json::Error> {
    let limits = mrtr_json::Limits {
        max_depth: 128,
        ..mrtr_json::Limits::DEFAULT
    };
    let value = mrtr_json::parse(text.as_bytes(), &limits)?;
    let digest = mrtr_json::args_digest(Some(value))?;
    let value = match value.kind() {
        mrtr_json::Kind::Null => mrtr_json::parse(b"{}", &limits)?,
        _ => value,
    };
    let mut buf = vec![0u8; text.len() * 2 + 16];
    let mut w = mrtr_json::Writer::new(&mut buf);
    mrtr_json::write_binding_form(value, &mut w, &mrtr_json::Limits::DEFAULT)?;
    let bound = String::from_utf8(w.finish()?.to_vec()).expect("UTF-8");
    Ok((bound, digest))
}

/// mrtr-std's digest of the same text, as the hosted server computes it: serde_json's value,
/// held as rmcp hands it to a typed `Parameters<P>` handler (a `Map`).
fn host(text: &str) -> [u8; 32] {
    let value: Value = serde_json::from_str(text).unwrap();
    let by_value = jcs::args_digest(Some(&value)).unwrap();
    if let Value::Object(map) = &value {
        assert_eq!(jcs::args_digest_map(Some(map)).unwrap(), by_value, "{text}");
    }
    by_value
}

#[test]
fn the_gateway_binds_every_vector_as_the_host_does() {
    for v in expected().vectors {
        match (&v.bound, &v.sha256_hex) {
            (Some(bound), Some(sha)) => {
                let (text, digest) =
                    gateway(&v.arguments).unwrap_or_else(|e| panic!("{}: {e}", v.name));
                assert_eq!(&text, bound, "{}", v.name);
                assert_eq!(&hex(&digest), sha, "{}", v.name);
            }
            _ => assert!(gateway(&v.arguments).is_err(), "{} is refused", v.name),
        }
    }
}

/// What a typed handler reads from `{"n": <lit>}`: a `u64` field, or why it refuses.
fn typed_u64(lit: &str) -> Result<u64, String> {
    #[derive(Deserialize)]
    struct Args {
        n: u64,
    }
    serde_json::from_str::<Args>(&format!(r#"{{"n":{lit}}}"#))
        .map(|a| a.n)
        .map_err(|e| e.to_string())
}

#[test]
fn requests_a_handler_reads_differently_never_share_a_digest() {
    let digests = |lit: &str| {
        let text = format!(r#"{{"n":{lit}}}"#);
        let (_, gateway) = gateway(&text).unwrap();
        let host = host(&text);
        assert_eq!(gateway, host, "{text}: the gateway and the host bind alike");
        host
    };
    // Issue 49's pairs: RFC 8785 writes each pair alike; a typed handler does not read them
    // alike (a `u64` field takes the first and refuses the second).
    for (a, b) in [("1", "1.0"), ("100", "1e2"), ("0", "-0")] {
        assert_ne!(typed_u64(a), typed_u64(b), "{a} {b}");
        assert_ne!(digests(a), digests(b), "{a} {b}");
    }
    // Texts every reader reads alike still bind alike.
    for (a, b) in [
        ("1.0", "1.00"),
        ("1e2", "1E2"),
        ("1e2", "100.0"),
        ("-0", "-0.0"),
        ("1.5", "1.50"),
        ("7", "7"),
    ] {
        assert_eq!(digests(a), digests(b), "{a} {b}");
    }
}

/// The rows of the document's table of numbers (`| number as written | RFC 8785 text |
/// binding text |`): each cell's text between backquotes.
fn documented_numbers() -> Vec<[String; 3]> {
    let doc = std::fs::read_to_string(path("../docs/token-format.md")).unwrap();
    let table = doc
        .split("| number as written | RFC 8785 text | binding text |")
        .nth(1)
        .expect("docs/token-format.md has the table of numbers");
    table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let cells: Vec<String> = row
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_owned())
                .filter(|c| !c.is_empty())
                .collect();
            [cells[0].clone(), cells[1].clone(), cells[2].clone()]
        })
        .collect()
}

#[test]
fn the_documented_numbers_are_what_both_writers_write() {
    let rows = documented_numbers();
    assert!(rows.len() >= 10, "{rows:?}");
    for [written, canonical, bound] in rows {
        let text = format!("[{written}]");
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            jcs::to_canonical_string(&value).unwrap(),
            format!("[{canonical}]"),
            "{written}"
        );
        assert_eq!(
            jcs::to_binding_string(&value).unwrap(),
            format!("[{bound}]"),
            "{written}"
        );
        let (gateway_text, _) = gateway(&text).unwrap();
        assert_eq!(gateway_text, format!("[{bound}]"), "{written}");
    }
}
