//! Past the tag: the input is a state plaintext, sealed correctly under a fixture key in
//! format v1 or v2, so the fuzzer drives state parsing and the method, expiry, lifetime, issue
//! time, round and argument checks directly. The engine's answer must match the documented
//! format and check order, and `StateView` must agree with an independent parse of the same
//! bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mrtr_core::StateView;
use mrtr_fuzz::{check, expect, fixture, format};

fuzz_target!(|data: &[u8]| {
    let Some((&select, plain)) = data.split_first() else {
        return;
    };

    let view = StateView::new_checked(plain);
    let parsed = format::parse_state(plain);
    assert_eq!(
        view.is_some(),
        parsed.is_some(),
        "StateView disagrees with the format"
    );
    if let (Some(v), Some(p)) = (view, &parsed) {
        assert_eq!(v.round(), p.round);
        assert_eq!(v.issued_at_ms(), p.issued_at);
        assert_eq!(v.expires_at_ms(), p.expires_at);
        assert_eq!(v.token_id(), p.token_id);
        assert_eq!(v.args_digest(), p.args);
        assert_eq!(v.method(), p.method);
        assert_eq!(v.continuation(), p.continuation);
    }

    let key = if select & 1 == 0 {
        fixture::CURRENT
    } else {
        fixture::PREVIOUS
    };
    // Bit 1 picks the format: v2 (bound to the fixture's audience) or v1 (no audience).
    let version = if select & 2 == 0 { 2 } else { 1 };
    let nonce = [select; format::NONCE_LEN];
    let token = format::seal_token(version, key, nonce, plain);
    let text = format::b64(&token);
    let outcome = check::resume_text(&text);
    match expect::before_aead(&token, text.len()) {
        Some(reason) => assert_eq!(outcome.map(|_| ()), Err(reason)),
        None => assert_eq!(outcome, expect::after_aead(plain)),
    }
});
