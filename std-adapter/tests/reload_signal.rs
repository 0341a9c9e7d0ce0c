//! A key reload on a real `SIGHUP` sent to this test process. One test in its own binary: the
//! handler, once installed, stays for the life of the process.

#![cfg(unix)]

use std::sync::Arc;
use std::time::Duration;

use mrtr_replay::AnyReplayCache;
use mrtr_std::engine::{Backend, Engine, EngineConfig};
use mrtr_std::keys::{KeyConfig, KeySource};
use mrtr_std::reload::{KeyReloader, Trigger, Triggers};

const KEY1: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const KEY2: &str = "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_rereads_the_key_file() {
    let dir = std::env::temp_dir().join(format!("mrtr-reload-signal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("keys");
    std::fs::write(&path, format!("k1 {KEY1} current\n")).unwrap();
    let engine = Arc::new(
        Engine::new(
            Backend::ChaCha20Poly1305,
            KeyConfig::load_file(&path).unwrap(),
            EngineConfig::for_audience("test-service"),
            AnyReplayCache::memory(100),
        )
        .unwrap(),
    );
    // SIGHUP only: the file change alone is not picked up.
    let handle = KeyReloader::new(engine.clone(), KeySource::File(path.clone()))
        .spawn(Triggers::none().on_sighup(true))
        .unwrap();
    let mut events = handle.events();
    std::fs::write(&path, format!("k1 {KEY1} current\nk2 {KEY2}\n")).unwrap();

    let status = std::process::Command::new("kill")
        .args(["-HUP", &std::process::id().to_string()])
        .status()
        .expect("kill(1) runs");
    assert!(status.success());
    let event = tokio::time::timeout(Duration::from_secs(60), events.wait_for(|e| e.is_some()))
        .await
        .expect("no reload within 60 s of SIGHUP")
        .unwrap()
        .clone()
        .unwrap();
    assert_eq!(event.trigger, Trigger::Signal);
    let r = event.result.unwrap();
    assert_eq!(r.added.len(), 1);
    assert_eq!(r.added[0].as_str(), "k2");
    assert_eq!(engine.current().seals_used().len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}
