//! The `mrtr-std` JSON-RPC glue on arbitrary request params: `ResumeRequest::from_params`
//! then `CipherEngine::resume`. The glue must bind exactly what the params say (target, protocol
//! version, argument digest), agree with `mrtr-core` run directly on the same token and
//! binding, answer every rejected `requestState` with the one uniform error object, never echo
//! the token, and accept a token at most once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mrtr_core::{Reason, TokenBuf};
use mrtr_fuzz::{fixture, json};
use mrtr_std::engine::Step;
use mrtr_std::jcs;
use mrtr_std::jsonrpc::{Method, RequestState, ResumeRequest};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&select, text)) = data.split_first() else {
        return;
    };
    let Ok(params) = serde_json::from_slice::<Value>(text) else {
        return;
    };
    let name = json::METHODS[usize::from(select & 3)];
    let principal = json::principal(select & 0x80 != 0);
    let state_text = params
        .get("requestState")
        .and_then(Value::as_str)
        .unwrap_or("");
    // Echoing the token means showing it where no other field of the request holds it.
    let mut others = params.clone();
    if let Some(obj) = others.as_object_mut() {
        obj.remove("requestState");
    }
    let others = others.to_string();
    let echoes =
        |v: &str| state_text.len() >= 8 && v.contains(state_text) && !others.contains(state_text);

    let req = match ResumeRequest::from_params(name, &params, principal) {
        Ok(None) => {
            assert!(Method::from_name(name).is_none(), "{name} must be pausable");
            return;
        }
        Ok(Some(req)) => req,
        Err(e) => {
            assert_eq!(e.code(), -32602);
            assert!(
                e.rejection().is_none(),
                "bad params are not a token rejection"
            );
            assert!(!echoes(&e.to_value().to_string()), "error echoes the token");
            return;
        }
    };

    // The glue binds what the params say.
    let method = Method::from_name(name).expect("pausable");
    assert_eq!(req.method(), method);
    assert_eq!(Some(req.target()), params[method.target_field()].as_str());
    let version = &params["_meta"]["io.modelcontextprotocol/protocolVersion"];
    if let Ok(binding) = req.binding() {
        assert_eq!(binding.protocol_version(), version.as_str().unwrap_or(""));
    }
    let arguments = if method.has_arguments() {
        params.get("arguments")
    } else {
        None
    };
    assert_eq!(
        req.args_digest().ok().copied(),
        jcs::args_digest(arguments).ok()
    );
    assert!(!echoes(&format!("{req:?}")), "Debug shows the token");

    // The same answer as the core engine on the same token, binding and digest.
    let expected: Result<Option<(Vec<u8>, u32)>, Reason> = match req.request_state() {
        RequestState::Absent => Ok(None),
        RequestState::NotAString => Err(Reason::Malformed),
        RequestState::Token(token) => match (req.args_digest(), req.binding()) {
            (Err(_), _) => Err(Reason::ArgumentsUnbindable),
            (_, Err(_)) => Err(Reason::InvalidBinding),
            (Ok(args), Ok(binding)) => {
                let mrtr = fixture::engine(mrtr_core::ErrorDetail::Uniform);
                let mut buf: Box<TokenBuf<{ mrtr_std::engine::MAX_TOKEN_LEN }>> =
                    Box::new(TokenBuf::new());
                mrtr.resume(token, binding, args, &mut buf)
                    .map(|r| Some((r.continuation().to_vec(), r.round())))
                    .map_err(|e| e.reason())
            }
        },
    };
    let engine = json::engine();
    let got = match engine.resume(&req) {
        Ok(Step::Fresh) => Ok(None),
        Ok(Step::Resumed(r)) => Ok(Some((r.continuation().to_vec(), r.round()))),
        Err(e) => {
            let rejection = e.rejection().expect("a token rejection");
            let object = e.to_value();
            assert_eq!(object, json::uniform_error(), "not the uniform error");
            assert!(!echoes(&object.to_string()), "error echoes the token");
            Err(rejection.reason())
        }
    };
    assert_eq!(got, expected, "std glue and core disagree");

    // Single use through the engine's replay set.
    if let Ok(Some(_)) = got {
        let again = engine
            .resume(&req)
            .map(|_| ())
            .map_err(|e| e.rejection().map(|r| r.reason()));
        assert_eq!(again, Err(Some(Reason::Replayed)));
    }
});
