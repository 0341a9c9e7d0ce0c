//! The scanner's tests: its contract, and the differential tests against [`super::reference`].
//! Here: the whole scan judged as the reference scanner judges it (generated, hand-written and
//! benchmark texts), and the walk over a text's structure (one value, depth, the envelope);
//! the tests of numbers, strings and member names are in [`tokens`].

use std::collections::HashSet;

use super::*;

mod tokens;

fn kind(text: &str) -> Option<ViolationKind> {
    check(text.as_bytes()).err().map(|v| v.kind())
}

/// The scan and the reference scanner it replaced give the same result on `text`.
fn same_as_reference(text: &[u8]) -> Option<ViolationKind> {
    let new = scan(text);
    let old = reference::scan(text);
    assert_eq!(new, old, "{:?}", String::from_utf8_lossy(text));
    new.err().map(|v| v.kind())
}

/// A small deterministic generator (xorshift64), so that a failure is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'t>(&mut self, items: &[&'t [u8]]) -> &'t [u8] {
        items[self.below(items.len())]
    }
}

/// Raw string contents: plain, escaped, surrogates (paired, lone), UTF-8 (valid or not),
/// control characters, long runs, and names that collide once unescaped.
const STRINGS: &[&[u8]] = &[
    b"",
    b"a",
    b"\\u0061",
    b"b",
    b"method",
    b"met\\u0068od",
    b"params",
    b"par\\u0061ms",
    b"requestState",
    b"request\\u0053tate",
    b"tools/call",
    b"tools\\/call",
    b"prompts/get",
    b"resources/read",
    b"tools/list",
    b"\xc3\xa9",
    b"\\u00e9",
    b"\xf0\x9f\x98\x80",
    b"\\ud83d\\ude00",
    b"\\uD83D\\uDE00",
    b"\\ud800",
    b"\\udc00",
    b"\\ud800\\u0041",
    b"\\ud800x",
    b"\\ud83d\\ud83d",
    b"\\u00",
    b"\\u00g0",
    b"\\x",
    b"\\",
    b"\\\"",
    b"\\\\",
    b"\\b\\f\\n\\r\\t",
    b"\\u0000",
    b"\x01",
    b"\x1f",
    b"\t",
    b"\x7f",
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xc0\x80",
    b"a/b~c",
    b"abcdefgh",
    b"abcdefghi",
    b"abcdefgh\\u0069",
    b"abcdefghij",
    b"abcdefgh\\u0069j",
    b"abcdefghiJ",
    b"io.modelcontextprotocol/protocolVersion",
    b"io.modelcontextprotocol/clientInfo",
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_ABCDEFGHIJKLMNOPQRSTU",
    b"x y z",
    b"\xc3\xa9t\xc3\xa9 \xe2\x82\xac",
];

/// Number literals around every branch: small and long integers, the double's limits,
/// exponents, and malformed ones.
const NUMBERS: &[&[u8]] = &[
    b"0",
    b"-0",
    b"1",
    b"4",
    b"-7",
    b"0.1",
    b"1.50",
    b"1e21",
    b"1E+21",
    b"100e-2",
    b"123456789012345",
    b"-123456789012345",
    b"1234567890123456",
    b"9007199254740992",
    b"9007199254740993",
    b"-9007199254740993",
    b"18446744073709551615",
    b"1152921504606846976",
    b"295147905179352830000",
    b"3.141592653589793238",
    b"5e-324",
    b"4.9e-324",
    b"1.7976931348623157e308",
    b"1e400",
    b"-1e400",
    b"1e-400",
    b"1e99999999999999999999",
    b"01",
    b"1.",
    b"-",
    b"1e",
    b"1e+",
    b".5",
    b"+1",
    b"-a",
    b"1.e5",
    b"0x10",
    b"1_0",
];

const SPACES: &[&[u8]] = &[
    b"",
    b"",
    b"",
    b" ",
    b"\n",
    b" \t\r\n ",
    b"\x0c",
    b"\xc2\xa0",
];

const LITERALS: &[&[u8]] = &[b"true", b"false", b"null", b"tru", b"nul", b"fals", b"True"];

fn push_space(rng: &mut Rng, out: &mut Vec<u8>) {
    // Mostly compact, sometimes spaced, rarely with a byte JSON does not allow there.
    let space = match rng.below(10) {
        0..=6 => &b""[..],
        7 | 8 => rng.pick(&SPACES[..6]),
        _ => rng.pick(SPACES),
    };
    out.extend_from_slice(space);
}

fn push_string(rng: &mut Rng, out: &mut Vec<u8>) {
    out.push(b'"');
    for _ in 0..1 + rng.below(2) {
        out.extend_from_slice(rng.pick(STRINGS));
    }
    out.push(b'"');
}

fn push_value(rng: &mut Rng, depth: usize, out: &mut Vec<u8>) {
    let kind = if depth >= 6 {
        rng.below(3)
    } else {
        rng.below(6)
    };
    match kind {
        0 => push_string(rng, out),
        1 => out.extend_from_slice(rng.pick(NUMBERS)),
        2 => out.extend_from_slice(rng.pick(LITERALS)),
        3 | 4 => {
            out.push(b'{');
            push_space(rng, out);
            let members = match rng.below(20) {
                0 => 15 + rng.below(4),
                _ => rng.below(5),
            };
            for i in 0..members {
                if i > 0 {
                    out.push(b',');
                    push_space(rng, out);
                }
                push_string(rng, out);
                push_space(rng, out);
                out.push(b':');
                push_space(rng, out);
                push_value(rng, depth + 1, out);
                push_space(rng, out);
            }
            out.push(b'}');
        }
        _ => {
            out.push(b'[');
            push_space(rng, out);
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(b',');
                    push_space(rng, out);
                }
                push_value(rng, depth + 1, out);
                push_space(rng, out);
            }
            out.push(b']');
        }
    }
}

/// A JSON-RPC-like message: an envelope with method, params and requestState members
/// (in any order, sometimes repeated or escaped) around generated values.
fn message(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    push_space(rng, &mut out);
    if rng.below(8) == 0 {
        push_value(rng, 0, &mut out);
        return out;
    }
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(rng.pick(NUMBERS));
    for _ in 0..1 + rng.below(3) {
        out.push(b',');
        push_space(rng, &mut out);
        match rng.below(5) {
            0 | 1 => {
                out.extend_from_slice(rng.pick(&[b"\"method\"", b"\"met\\u0068od\""]));
                out.push(b':');
                match rng.below(4) {
                    0 => push_value(rng, 1, &mut out),
                    _ => push_string(rng, &mut out),
                }
            }
            2 | 3 => {
                out.extend_from_slice(b"\"params\":{\"name\":\"t\"");
                for _ in 0..rng.below(3) {
                    out.push(b',');
                    match rng.below(3) {
                        0 => out.extend_from_slice(
                            rng.pick(&[b"\"requestState\"", b"\"request\\u0053tate\""]),
                        ),
                        _ => push_string(rng, &mut out),
                    }
                    out.push(b':');
                    push_value(rng, 2, &mut out);
                }
                out.push(b'}');
            }
            _ => {
                push_string(rng, &mut out);
                out.push(b':');
                push_value(rng, 1, &mut out);
            }
        }
    }
    out.push(b'}');
    push_space(rng, &mut out);
    out
}

/// The end-to-end benchmark's fresh call and resume bodies.
fn bench_bodies() -> [Vec<u8>; 2] {
    let fresh = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_table","arguments":{"party_size":4},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench-e2e","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}"#;
    let token: String = (0..280)
        .map(|i| {
            let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
            alphabet[i * 7 % 64] as char
        })
        .collect();
    let mut resume = fresh[..fresh.len() - 2].to_vec();
    resume.extend_from_slice(
        format!(
            r#","requestState":"{token}","inputResponses":{{"date":{{"action":"accept","content":{{"date":"2026-12-24"}}}}}}}}}}"#
        )
        .as_bytes(),
    );
    [fresh.to_vec(), resume]
}

#[test]
fn the_bench_bodies_pass_and_every_cut_or_changed_byte_is_judged_as_before() {
    for body in bench_bodies() {
        let env = scan(&body).unwrap();
        assert_eq!(env.method.as_deref(), Some("tools/call"));
        assert_eq!(same_as_reference(&body), None);
        for cut in 0..body.len() {
            same_as_reference(&body[..cut]);
        }
        for at in 0..body.len() {
            for b in [
                b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b' ', 0xff, 1,
            ] {
                let mut changed = body.clone();
                changed[at] = b;
                same_as_reference(&changed);
                changed.insert(at, b);
                same_as_reference(&changed);
            }
            let mut shorter = body.clone();
            shorter.remove(at);
            same_as_reference(&shorter);
        }
    }
}

#[test]
fn generated_texts_are_judged_as_before() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut seen = HashSet::new();
    for _ in 0..20_000 {
        let text = message(&mut rng);
        seen.insert(same_as_reference(&text));
        // And a variant: cut short, or with one byte changed, added or removed.
        let mut variant = text.clone();
        let at = rng.below(text.len() + 1);
        match rng.below(4) {
            0 => variant.truncate(at),
            1 if at < text.len() => {
                variant[at] = *rng
                    .pick(&[b"\"", b"\\", b"{", b"}", b",", b":", b"\xff"])
                    .first()
                    .unwrap_or(&b'x')
            }
            2 => variant.insert(
                at,
                *rng.pick(&[b"\"", b"{", b"[", b"1", b" "])
                    .first()
                    .unwrap_or(&b'x'),
            ),
            _ if at < text.len() => {
                variant.remove(at);
            }
            _ => {}
        }
        seen.insert(same_as_reference(&variant));
    }
    // Every outcome came up: the generator reaches each branch the scans judge.
    for kind in [
        None,
        Some(ViolationKind::NotJson),
        Some(ViolationKind::DuplicateName),
        Some(ViolationKind::LossyNumber),
        Some(ViolationKind::LoneSurrogate),
    ] {
        assert!(seen.contains(&kind), "{kind:?} never came up");
    }
}

#[test]
fn hand_written_texts_are_judged_as_before() {
    let mut texts: Vec<Vec<u8>> = [
        &b""[..],
        b" ",
        b"{}",
        b"[]",
        b"{ }",
        b"[ ]",
        b"{\"a\":1,}",
        b"[1,]",
        b"{,}",
        b"{\"a\"}",
        b"{\"a\":}",
        b"{\"a\" 1}",
        b"{\"a\":1 \"b\":2}",
        b"{1:2}",
        b"[1 2]",
        b"{} {}",
        b"\"abc",
        b"\"abc\\",
        b"\"abc\\u12",
        b"\"\\ud800\\",
        b"\"\\ud800\\u",
        b"\"\\ud800\\udc0",
        b"\"\\ud800\\udc00\"",
        b"\"\\udbff\\udfff\"",
        b"\"\\ud800\\ud800\"",
        b"\"\xff\\ud800\"",
        b"\"\\ud800\xff\"",
        b"{\"\xff\":1,\"\xff\":2}",
        b"{\"a\":\"\xff\",\"a\":1}",
        b"{\"a\":1,\"a\":\"\xff\"}",
        b"{\"a\":9007199254740993,\"a\":1}",
        b"{\"a\":1,\"\\u0061\":9007199254740993}",
        b"[9007199254740993, \"\\ud800\"]",
        b"{\"k\":{\"k\":{\"k\":1,\"k\":2}}}",
        b"{\"a~/b\":{\"c/d\":[0,1,{\"e\":1e400}]}}",
        b"{\"\\u00e9\":1,\"\xc3\xa9\":2}",
        b"{\"\\ud83d\\ude00\":1,\"\xf0\x9f\x98\x80\":2}",
        b"{\"abcdefghij\":1,\"abcdefgh\\u0069j\":2}",
        b"{\"abcdefghij\":1,\"abcdefghiJ\":2}",
        b"{\"abcdefgh\":1,\"abcdefgh\\u0000\":2}",
        b"{\"a\\u0000\":1,\"a\":2}",
        b"{\"\":1,\"\":2}",
        b"{\"method\":\"tools/call\",\"params\":{\"requestState\":1}}",
        b"{\"method\":\"tools\\/call\",\"params\":{\"requestState\":\"t\"}}",
        b"{\"method\":\"\\u0074ools/call\",\"params\":{\"requestState\":null}}",
        b"{\"method\":\"m\xc3\xa9\",\"params\":{\"x\":{\"requestState\":1}}}",
        b"{\"params\":[{\"requestState\":1}],\"method\":\"tools/call\"}",
        b"{\"params\":{\"requestState\":1},\"params\":{}}",
        b"{\"x\":{\"params\":{\"requestState\":1}},\"method\":7}",
        b"{\"params\":{\"a\":{}},\"b\":{\"requestState\":1}}",
        b"[{\"method\":\"tools/call\"}]",
        b"\"method\"",
        b"  true  ",
        b"nul",
        b"-",
        b"-0",
        b"00",
        b"1.0e+",
        b"\t\r\n{\"a\"\t:\r[\ntrue\t,\rnull ]\n}\t",
        b"\x0c{}",
        b"{}\x00",
    ]
    .iter()
    .map(|t| t.to_vec())
    .collect();
    // Deep nesting at and past the limit, with a violation at the bottom.
    for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1] {
        for bottom in [
            &b"1"[..],
            b"9007199254740993",
            b"{\"a\":1,\"a\":2}",
            b"\"\\ud800\"",
            b"x",
        ] {
            let mut arrays = b"[".repeat(depth);
            arrays.extend_from_slice(bottom);
            arrays.extend_from_slice(&b"]".repeat(depth));
            texts.push(arrays);
            let mut objects = b"{\"a\":".repeat(depth);
            objects.extend_from_slice(bottom);
            objects.extend_from_slice(&b"}".repeat(depth));
            texts.push(objects);
            let mut mixed = b"[{\"k\":".repeat(depth / 2);
            mixed.extend_from_slice(bottom);
            mixed.extend_from_slice(&b"}]".repeat(depth / 2));
            texts.push(mixed);
        }
    }
    texts.push(b"[".repeat(100_000));
    texts.push(b"{\"a\":".repeat(100_000));
    // Objects of many members, around the switch to a hash set and far past it, with a
    // duplicate (plain or escaped) first, in the middle and last, and in a nested object.
    for members in [15, 16, 17, 18, 1000, 1100] {
        let names: Vec<String> = (0..members).map(|i| format!("\"k{i}\":{i}")).collect();
        texts.push(format!("{{{}}}", names.join(",")).into_bytes());
        for dup in [0, 15, 16, members / 2, members - 1] {
            for name in [format!("k{dup}"), format!("\\u006b{dup}")] {
                let text = format!("{{{},\"{name}\":0}}", names.join(","));
                texts.push(text.clone().into_bytes());
                texts.push(format!("[{{\"n\":{text},\"m\":1}}]").into_bytes());
                texts.push(format!("{{\"{name}\":0,{}}}", names.join(",")).into_bytes());
            }
        }
        let escaped: Vec<String> = (0..members)
            .map(|i| format!("\"\\u006b{i}\":{{\"k{i}\":1}}"))
            .collect();
        texts.push(format!("{{{}}}", escaped.join(",")).into_bytes());
        texts.push(format!("{{{},\"k7\":1}}", escaped.join(",")).into_bytes());
    }
    for text in texts {
        same_as_reference(&text);
    }
}

#[test]
fn anything_not_one_json_value_is_refused() {
    for bad in [
        "",
        "{",
        "[1,]",
        "{\"a\" 1}",
        "01",
        "1.",
        "-",
        "tru",
        "\"a",
        "{} {}",
        "[1 2]",
        "\"\t\"",
        "'a'",
        "\"\\x\"",
    ] {
        assert_eq!(kind(bad), Some(ViolationKind::NotJson), "{bad:?}");
    }
    assert_eq!(kind(r#""\ud800""#), Some(ViolationKind::LoneSurrogate));
    assert_eq!(kind(r#""\udc00x""#), Some(ViolationKind::LoneSurrogate));
    assert_eq!(
        kind(r#""\ud800\u0041""#),
        Some(ViolationKind::LoneSurrogate)
    );
    assert_eq!(kind(" { \"a\" : [ true , false , null ] } \n"), None);
}

#[test]
fn depth_is_bounded() {
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert_eq!(kind(&ok), None);
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert_eq!(kind(&deep), Some(ViolationKind::TooDeep));
    // Far deeper than the limit: refused without recursing further.
    let very = "[".repeat(1_000_000);
    assert_eq!(kind(&very), Some(ViolationKind::TooDeep));
}

#[test]
fn the_envelope_names_method_and_request_state() {
    let env = scan(br#"{"id":1,"method":"tools/call","params":{"requestState":"t"}}"#).unwrap();
    assert_eq!(env.method.as_deref(), Some("tools/call"));
    assert_eq!(env.request_state, Shape::String);
    // Escaped names and values are read unescaped, as a parser reads them.
    let env =
        scan(br#"{"met\u0068od":"tools\/call","params":{"request\u0053tate":null}}"#).unwrap();
    assert_eq!(env.method.as_deref(), Some("tools/call"));
    assert_eq!(env.request_state, Shape::Other);
    for (text, method, state) in [
        (
            r#"{"method":7,"params":{"requestState":[]}}"#,
            None,
            Shape::Other,
        ),
        (
            r#"{"method":"m","params":[{"requestState":1}]}"#,
            Some("m"),
            Shape::Absent,
        ),
        (
            r#"{"method":"m","params":{"x":{"requestState":1}}}"#,
            Some("m"),
            Shape::Absent,
        ),
        (
            r#"{"requestState":1,"x":{"method":"m"}}"#,
            None,
            Shape::Absent,
        ),
        (
            r#"[{"method":"m","params":{"requestState":1}}]"#,
            None,
            Shape::Absent,
        ),
        (r#""method""#, None, Shape::Absent),
    ] {
        let env = scan(text.as_bytes()).unwrap();
        assert_eq!(
            (env.method.as_deref(), env.request_state),
            (method, state),
            "{text}"
        );
    }
}
