//! The Prometheus recorder (feature `prometheus`): installed once per process (it is global),
//! so this file holds one test.

mod support;

use mrtr_replay::AnyReplayCache;
use mrtr_std::core::Round;
use mrtr_std::engine::{AnyEngine, Backend, EngineConfig};
use mrtr_std::keys::KeyConfig;
use mrtr_std::metrics::{Prometheus, names};
use support::{KEY1_B64 as KEY, booking};

#[test]
fn metrics_render_in_prometheus_text_with_help_and_types_and_no_secret() {
    let prometheus = Prometheus::install().expect("first install");
    assert!(
        Prometheus::install().is_err(),
        "a second recorder cannot be installed"
    );
    let keys = KeyConfig::parse_env(&format!("current=k1; k1:{KEY}")).unwrap();
    let engine = AnyEngine::new(
        Backend::Aes256Gcm,
        keys,
        EngineConfig::for_audience("test-service"),
        AnyReplayCache::memory(100),
    )
    .unwrap();
    let token = engine
        .pause(&booking(None), Round::FIRST, b"secret continuation")
        .unwrap();
    engine.resume(&booking(Some(&token))).unwrap();
    assert!(engine.resume(&booking(Some(&token))).is_err());

    let text = prometheus.render();
    for line in [
        "# TYPE mrtr_seals_total counter",
        "# HELP mrtr_seals_total requestState tokens sealed",
        "mrtr_seals_total{backend=\"aes-256-gcm\",key_id=\"k1\"} 1",
        "# TYPE mrtr_key_seals_remaining gauge",
        "mrtr_key_seals_remaining{key_id=\"k1\"} 4294967294",
        "mrtr_key_current{key_id=\"k1\"} 1",
        "mrtr_resumes_total{method=\"tools/call\",outcome=\"resumed\"} 1",
        "mrtr_resumes_total{method=\"tools/call\",outcome=\"replayed\"} 1",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in:\n{text}"
        );
    }
    for name in [names::SEALS, names::RESUMES, names::KEY_CURRENT] {
        assert!(name.starts_with("mrtr_"));
    }
    assert!(!text.contains(&token) && !text.contains(KEY), "{text}");
    assert!(Prometheus::CONTENT_TYPE.starts_with("text/plain; version=0.0.4"));
}
