//! `precheck_bytes` (one pass over the raw text) decides every message exactly as
//! `precheck_raw` (a parsed message plus the I-JSON check) does, and names the same method.

use mrtr_std::core::ErrorDetail;
use mrtr_std::jsonrpc::{Precheck, precheck_bytes, precheck_raw};
use serde_json::Value;

/// Messages around every branch: each pausable method and others, `requestState` absent, a
/// string, null, a number, an object; arguments that are not I-JSON (duplicates, lossy
/// numbers, lone surrogates) with and without a state; escaped names; duplicated envelope
/// members; batches, scalars and text that is not JSON.
fn corpus() -> Vec<String> {
    let states = [
        "",
        r#","requestState":"tok""#,
        r#","requestState":null"#,
        r#","requestState":42"#,
        r#","requestState":{"a":1}"#,
        r#","request\u0053tate":7"#,
    ];
    let arguments = [
        r#"{"party_size":4}"#,
        r#"{"amount":9007199254740993}"#,
        r#"{"a":1,"a":2}"#,
        r#"{"s":"\ud800"}"#,
        r#"{"n":[1,2,{"x":0.1}]}"#,
        r#"{"big":1e400}"#,
    ];
    let methods = [
        "tools/call",
        "prompts/get",
        "resources/read",
        "tools/list",
        "subscriptions/listen",
        r"tools\/call",
    ];
    let mut out = Vec::new();
    for method in methods {
        for args in arguments {
            for state in states {
                out.push(format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"name":"t","arguments":{args}{state}}}}}"#
                ));
            }
        }
    }
    out.extend(
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list","params":{"requestState":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"requestState":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"requestState":"t","requestState":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"requestState":1},"params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"met\u0068od":"tools/call","params":{"requestState":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[{"requestState":1}]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7,"params":{"requestState":1}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"requestState":1}}]"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#""tools/call""#,
            r#"{"method":"tools/call","params":{"requestState":1}"#,
            "",
            "not json",
        ]
        .map(String::from),
    );
    out
}

#[test]
fn precheck_bytes_decides_as_precheck_raw() {
    let mut rejected = 0;
    let mut unbindable = 0;
    for detail in [ErrorDetail::Uniform, ErrorDetail::Detailed] {
        for text in corpus() {
            let checked = precheck_bytes(text.as_bytes(), detail);
            match serde_json::from_slice::<Value>(text.as_bytes()) {
                Ok(message) => {
                    let expected = precheck_raw(&message, text.as_bytes(), detail);
                    assert_eq!(checked.outcome, expected, "{text}");
                    let method = message.get("method").and_then(Value::as_str);
                    assert_eq!(checked.method.as_deref(), method, "{text}");
                    match expected {
                        Precheck::Reject(_) => rejected += 1,
                        Precheck::Unbindable(_) => unbindable += 1,
                        Precheck::Pass => {}
                    }
                }
                // Not JSON to a parser either: handed on for the SDK to answer.
                Err(_) => assert_eq!(checked.outcome, Precheck::Pass, "{text}"),
            }
        }
    }
    // The corpus reaches every outcome.
    assert!(rejected > 50 && unbindable > 10, "{rejected} {unbindable}");
}

#[test]
fn a_clean_request_borrows_its_method() {
    let raw = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
    let checked = precheck_bytes(raw, ErrorDetail::Uniform);
    assert_eq!(checked.outcome, Precheck::Pass);
    assert!(matches!(
        checked.method,
        Some(std::borrow::Cow::Borrowed("tools/call"))
    ));
}

#[test]
fn nesting_near_the_limits_decides_as_a_parser_reads_it() {
    for depth in 120..136 {
        let text = format!(
            r#"{{"method":"tools/call","params":{{"requestState":1,"x":{}{}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let checked = precheck_bytes(text.as_bytes(), ErrorDetail::Uniform);
        match serde_json::from_slice::<Value>(text.as_bytes()) {
            Ok(message) => assert_eq!(
                checked.outcome,
                precheck_raw(&message, text.as_bytes(), ErrorDetail::Uniform),
                "{depth}"
            ),
            Err(_) => assert_eq!(checked.outcome, Precheck::Pass, "{depth}"),
        }
    }
}
