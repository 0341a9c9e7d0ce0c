//! The I-JSON scanner, differentially: on the same bytes, `mrtr_std::ijson::check` (and
//! `scan`), the no_std `mrtr_json::parse` with its default limits, serde_json, and the
//! independent oracle of `mrtr_fuzz::ijson` (a slow recursive validator: duplicate names
//! after unescaping in a `HashSet`, exactness through serde_json's double and the standard
//! library's shortest printing). The scanners must agree with the oracle on accept or refuse
//! and on the kind of the first violation, and with serde_json wherever its verdict is
//! comparable (it accepts duplicates and rounded numbers; see `ijson::serde_agrees`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mrtr_fuzz::ijson::{self as oracle, Kind, Rules};
use mrtr_std::ijson::{self, Shape, ViolationKind};
use serde_json::Value;

/// `mrtr_std::ijson`: depth up to `ijson::MAX_DEPTH` (the top-level container is 1), no
/// member bound.
const STD: Rules = Rules {
    max_depth: ijson::MAX_DEPTH,
    max_members: None,
};

/// `mrtr_json::Limits::DEFAULT`: depth 64, 256 members per object (the length bound,
/// `u32::MAX`, is out of a fuzz input's reach).
const NO_STD: Rules = Rules {
    max_depth: mrtr_json::Limits::DEFAULT.max_depth,
    max_members: Some(mrtr_json::Limits::DEFAULT.max_members),
};

fn std_kind(v: ViolationKind) -> Kind {
    match v {
        ViolationKind::NotJson => Kind::NotJson,
        ViolationKind::DuplicateName => Kind::DuplicateName,
        ViolationKind::LossyNumber => Kind::LossyNumber,
        ViolationKind::LoneSurrogate => Kind::LoneSurrogate,
        ViolationKind::TooDeep => Kind::TooDeep,
        other => panic!("a violation kind the oracle does not know: {other:?}"),
    }
}

fn no_std_kind(e: mrtr_json::Error) -> Kind {
    match e {
        mrtr_json::Error::NotJson => Kind::NotJson,
        mrtr_json::Error::DuplicateName => Kind::DuplicateName,
        mrtr_json::Error::LossyNumber => Kind::LossyNumber,
        mrtr_json::Error::LoneSurrogate => Kind::LoneSurrogate,
        mrtr_json::Error::TooDeep => Kind::TooDeep,
        mrtr_json::Error::TooManyMembers => Kind::TooManyMembers,
        other => panic!("parse returned {other:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    // (a) the std scanner, (d) the oracle under the same rules.
    let scanned = ijson::scan(data);
    let expected = oracle::validate(data, &STD);
    assert_eq!(
        scanned.as_ref().map(drop).map_err(|v| std_kind(v.kind())),
        expected.map(drop),
        "mrtr_std::ijson::scan and the oracle disagree"
    );
    assert_eq!(
        ijson::check(data).map_err(|v| v.kind()),
        scanned.as_ref().map(drop).map_err(|v| v.kind()),
        "check and scan disagree"
    );

    // (b) the no_std parser, against the oracle under its limits.
    let parsed = mrtr_json::parse(data, &mrtr_json::Limits::DEFAULT);
    assert_eq!(
        parsed.map(drop).map_err(no_std_kind),
        oracle::validate(data, &NO_STD).map(drop),
        "mrtr_json::parse and the oracle disagree"
    );
    if let Ok(value) = parsed {
        // The value is the whole text but its surrounding whitespace.
        assert_eq!(value.raw(), data.trim_ascii());
    }

    // (c) serde_json.
    let serde = serde_json::from_slice::<Value>(data);
    assert!(
        oracle::serde_agrees(serde.is_ok(), expected),
        "serde_json ({:?}) and the oracle ({expected:?}) disagree",
        serde.as_ref().map(drop).map_err(|e| e.classify())
    );

    // What the scan learns of a JSON-RPC envelope is what serde_json reads.
    if let (Ok(envelope), Ok(message)) = (&scanned, &serde) {
        assert_eq!(
            envelope.method.as_deref(),
            message.get("method").and_then(Value::as_str),
            "method"
        );
        let state = match message.get("params").and_then(|p| p.get("requestState")) {
            None => Shape::Absent,
            Some(Value::String(_)) => Shape::String,
            Some(_) => Shape::Other,
        };
        assert_eq!(envelope.request_state, state, "params.requestState");
    }

    // A text that is one number: the exactness tests agree with the oracle's.
    if let Ok(lit) = std::str::from_utf8(data)
        && lit.len() < 512
        && lit
            .bytes()
            .all(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
    {
        let grammatical = oracle::validate(data, &STD) != Err(Kind::NotJson);
        let exact = grammatical && oracle::exact(lit);
        assert_eq!(ijson::number_is_exact(lit), exact, "number_is_exact({lit})");
        assert_eq!(
            mrtr_json::number_is_exact(data),
            exact,
            "mrtr_json::number_is_exact({lit})"
        );
    }
});
