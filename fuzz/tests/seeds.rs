//! The committed seed corpus is what `make_seeds` writes, and each token seed means what its
//! name says: `ok-*` resumes, `<reason>-*` is rejected with that reason.

use std::fs;
use std::path::Path;

use mrtr_core::Reason;
use mrtr_fuzz::{check, expect, format, seeds};

fn expected(name: &str) -> Result<(), Reason> {
    let outcome = name.split('-').next().expect("prefix");
    if outcome == "ok" {
        return Ok(());
    }
    Err(*Reason::ALL
        .iter()
        .find(|r| r.as_str() == outcome)
        .unwrap_or_else(|| panic!("seed {name} names no reason")))
}

#[test]
fn committed_seeds_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    let seeds = seeds::all();
    for (target, name, bytes) in &seeds {
        let path = root.join(target).join(name);
        let committed = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            &committed,
            bytes,
            "{} is stale: run `cargo run --example make_seeds`",
            path.display()
        );
    }
    for target in [
        "unseal_text",
        "unseal_bytes",
        "sealed_state",
        "b64",
        "aad",
        "replay",
        "ijson",
    ] {
        let on_disk = fs::read_dir(root.join(target)).expect("seed dir").count();
        let generated = seeds.iter().filter(|s| s.0 == target).count();
        assert_eq!(on_disk, generated, "{target}: stray or missing seed files");
        assert!(generated > 0, "{target} has no seeds");
    }
}

#[test]
fn token_seeds_resume_as_named() {
    let tokens = seeds::tokens();
    assert!(tokens.iter().filter(|t| t.0.starts_with("ok-")).count() >= 4);
    for (name, text) in tokens {
        let outcome = check::resume_text(&text).map(|_| ());
        assert_eq!(outcome, expected(&name), "{name}");
    }
}

#[test]
fn state_seeds_follow_the_documented_format() {
    let mut reached = 0;
    for (target, name, bytes) in seeds::all() {
        if target != "sealed_state" {
            continue;
        }
        let plain = &bytes[1..];
        let state = format::parse_state(plain).expect("real state parses");
        assert_eq!(
            format::encode_state(&state),
            plain,
            "{name}: encoder differs"
        );
        assert_eq!(
            expect::after_aead(plain).map(|_| ()),
            expected(&name),
            "{name}"
        );
        reached += 1;
    }
    assert!(reached >= 6, "too few states past the tag: {reached}");
}

#[test]
fn json_seeds_resume_as_named() {
    use mrtr_std::engine::Step;
    use mrtr_std::jsonrpc::ResumeRequest;

    let seeds = mrtr_fuzz::json::seeds();
    assert!(seeds.iter().filter(|s| s.0.starts_with("ok-")).count() >= 3);
    for (name, bytes) in seeds {
        let method = mrtr_fuzz::json::METHODS[usize::from(bytes[0] & 3)];
        let params: serde_json::Value = serde_json::from_slice(&bytes[1..]).expect("json");
        let who = mrtr_fuzz::json::principal(bytes[0] & 0x80 != 0);
        let req = ResumeRequest::from_params(method, &params, who).expect("params");
        let Some(req) = req else {
            assert!(name.starts_with("ignored-"), "{name}");
            continue;
        };
        let step = mrtr_fuzz::json::engine().resume(&req);
        match name.split('-').next().unwrap() {
            "ok" => assert!(matches!(step, Ok(Step::Resumed(_))), "{name}: {step:?}"),
            "fresh" => assert!(matches!(step, Ok(Step::Fresh)), "{name}: {step:?}"),
            "malformed" => assert_eq!(
                step.err().and_then(|e| e.rejection()).map(|r| r.reason()),
                Some(Reason::Malformed),
                "{name}"
            ),
            other => panic!("{name}: unknown expectation {other}"),
        }
    }
}

#[test]
fn ijson_seeds_are_judged_as_named() {
    let seeds = seeds::ijson();
    for kind in [
        "ok",
        "duplicate_name",
        "lossy_number",
        "lone_surrogate",
        "too_deep",
    ] {
        assert!(
            seeds.iter().any(|s| s.0.split('-').next() == Some(kind)),
            "no {kind} seed"
        );
    }
    for (name, bytes) in seeds {
        let want = name.split('-').next().expect("prefix");
        let got = match mrtr_std::ijson::check(&bytes) {
            Ok(()) => "ok",
            Err(v) => v.kind().as_str(),
        };
        assert_eq!(got, want, "{name}");
        let oracle = mrtr_fuzz::ijson::validate(
            &bytes,
            &mrtr_fuzz::ijson::Rules {
                max_depth: mrtr_std::ijson::MAX_DEPTH,
                max_members: None,
            },
        );
        assert_eq!(oracle.is_ok(), want == "ok", "oracle on {name}: {oracle:?}");
    }
}
