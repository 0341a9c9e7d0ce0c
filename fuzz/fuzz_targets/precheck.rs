//! `mrtr_std::jsonrpc::precheck_bytes` (one pass over the raw text, no parse tree) on arbitrary
//! bytes: it never panics, it decides exactly as `precheck_raw` does on the message a JSON
//! parser reads from the same text, it names the method that parser reads, and text a parser
//! refuses is handed on (`Pass`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mrtr_std::core::ErrorDetail;
use mrtr_std::jsonrpc::{Precheck, precheck_bytes, precheck_raw};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let checked = precheck_bytes(data, ErrorDetail::Uniform);
    match serde_json::from_slice::<Value>(data) {
        Ok(message) => {
            assert_eq!(
                checked.outcome,
                precheck_raw(&message, data, ErrorDetail::Uniform)
            );
            assert_eq!(
                checked.method.as_deref(),
                message.get("method").and_then(Value::as_str)
            );
        }
        Err(_) => assert_eq!(checked.outcome, Precheck::Pass),
    }
});
