//! Key reloads from a watched key file: a real file changed on disk, picked up by the
//! watcher; bad files refused without changing anything. Waits are for events, with
//! generous timeouts; no duration is asserted.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mrtr_replay::AnyReplayCache;
use mrtr_std::core::{Reason, Round};
use mrtr_std::engine::{Backend, Engine, EngineConfig, ReloadWarning, Step};
use mrtr_std::jsonrpc::ResumeRequest;
use mrtr_std::keys::{KeyConfig, KeySource};
use mrtr_std::reload::{KeyReloader, ReloadError, ReloadEvent, Trigger, Triggers};
use support::{KEY1_B64, KEY2_B64, capture_logs};
use tokio::sync::watch;

/// Long enough for any loaded machine; the watcher polls every 20 ms.
const PATIENCE: Duration = Duration::from_secs(60);

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mrtr-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Replaces the file the way operators should: write beside it, then rename over it.
fn replace(path: &Path, text: &str) {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn file(spec: &[(&str, &str, bool)]) -> String {
    spec.iter()
        .map(|(id, key, current)| format!("{id} {key}{}\n", if *current { " current" } else { "" }))
        .collect()
}

fn request(state: Option<&str>) -> ResumeRequest<'_> {
    support::call("t", state)
}

async fn next(rx: &mut watch::Receiver<Option<ReloadEvent>>, after: u64) -> ReloadEvent {
    let seen = tokio::time::timeout(
        PATIENCE,
        rx.wait_for(|e| e.as_ref().is_some_and(|e| e.seq > after)),
    )
    .await
    .expect("no reload event in time")
    .expect("the reloader stopped");
    seen.clone().unwrap()
}

fn node(path: &Path) -> Arc<Engine> {
    let keys = KeyConfig::load_file(path).unwrap();
    Arc::new(
        Engine::new(
            Backend::Aes256Gcm,
            keys,
            EngineConfig::for_audience("test-service"),
            AnyReplayCache::memory(1_000),
        )
        .unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_key_file_is_reloaded_and_a_bad_one_changes_nothing() {
    let dir = TempDir::new("reload-watch");
    let path = dir.0.join("keys");
    std::fs::write(&path, file(&[("k1", KEY1_B64, true)])).unwrap();
    let engine = node(&path);
    let handle = KeyReloader::new(engine.clone(), KeySource::File(path.clone()))
        .spawn(
            Triggers::none()
                .on_sighup(false)
                .watch_every(Some(Duration::from_millis(20))),
        )
        .unwrap();
    let mut events = handle.events();

    // Phase 1: k2 open-only. A token k2 sealed elsewhere opens here from now on.
    replace(
        &path,
        &file(&[("k1", KEY1_B64, true), ("k2", KEY2_B64, false)]),
    );
    let e = next(&mut events, 0).await;
    assert_eq!(e.trigger, Trigger::FileChanged);
    let r = e.result.unwrap();
    assert_eq!(r.added.len(), 1);
    assert_eq!(r.added[0].as_str(), "k2");
    assert_eq!(engine.current().current_key_id().as_str(), "k1");
    let elsewhere = Engine::new(
        Backend::Aes256Gcm,
        KeyConfig::parse_env(&format!("current=k2; k2:{KEY2_B64}")).unwrap(),
        EngineConfig::for_audience("test-service"),
        AnyReplayCache::Off,
    )
    .unwrap();
    let under_k2 = elsewhere
        .current()
        .pause(&request(None), Round::FIRST, b"x")
        .unwrap();
    assert!(matches!(
        engine.current().resume(&request(Some(&under_k2))),
        Ok(Step::Resumed(_))
    ));

    // A bad file (a truncated key) is refused: the keys stay as they were.
    replace(
        &path,
        &file(&[("k1", KEY1_B64, true), ("k2", "AAEC", false)]),
    );
    let e = next(&mut events, 1).await;
    let err = e.result.unwrap_err();
    assert!(err.contains("line 2") && err.contains("k2"), "{err}");
    assert!(!err.contains(KEY1_B64), "{err}");
    let keys: Vec<String> = engine
        .current()
        .seals_used()
        .into_iter()
        .map(|(id, _)| id.as_str().to_owned())
        .collect();
    assert_eq!(keys, ["k1", "k2"]);

    // The same key id with other material: refused too.
    replace(&path, &file(&[("k1", KEY2_B64, true)]));
    let err = next(&mut events, 2).await.result.unwrap_err();
    assert!(err.contains("\"k1\"") && err.contains("reused"), "{err}");
    assert_eq!(engine.current().current_key_id().as_str(), "k1");

    // Phase 2, written in place this time: k2 seals. The watcher may catch the file half
    // written and refuse it; the next reading applies it.
    std::fs::write(
        &path,
        file(&[("k2", KEY2_B64, true), ("k1", KEY1_B64, false)]),
    )
    .unwrap();
    let r = tokio::time::timeout(
        PATIENCE,
        events.wait_for(|e| e.as_ref().is_some_and(|e| e.seq > 3 && e.result.is_ok())),
    )
    .await
    .expect("phase 2 not applied in time")
    .unwrap()
    .clone()
    .unwrap()
    .result
    .unwrap();
    assert_eq!(r.current.1.as_str(), "k2");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(engine.current().current_key_id().as_str(), "k2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_file_is_not_reloaded_and_a_manual_reload_always_is() {
    let dir = TempDir::new("reload-manual");
    let path = dir.0.join("keys");
    std::fs::write(&path, file(&[("k1", KEY1_B64, true)])).unwrap();
    let engine = node(&path);
    let reloader = KeyReloader::new(engine.clone(), KeySource::File(path.clone()));
    assert!(
        reloader.reload_if_changed().is_none(),
        "read at construction"
    );
    let r = reloader.reload_now(Trigger::Manual).unwrap();
    assert!(r.is_unchanged());

    // Skipping phases is applied, with a warning for each.
    std::fs::write(&path, file(&[("k2", KEY2_B64, true)])).unwrap();
    let (r, logs) = capture_logs(|| reloader.reload_if_changed().unwrap().unwrap());
    assert_eq!(
        r.warnings,
        [
            ReloadWarning::SealsBeforeDistributed(r.current.1.clone()),
            ReloadWarning::RemovedWithinTtl(r.current.0.clone()),
        ]
    );
    assert!(
        logs.contains("WARN") && logs.contains("key k2 seals in the same reload"),
        "{logs}"
    );
    assert!(
        !logs.contains(KEY2_B64) && !logs.contains(KEY1_B64),
        "{logs}"
    );

    // A deleted file is refused once, then left alone until it changes again.
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(
        reloader.reload_if_changed(),
        Some(Err(ReloadError::Keys(_)))
    ));
    assert!(reloader.reload_if_changed().is_none());
    assert_eq!(engine.current().current_key_id().as_str(), "k2");
}

#[test]
fn keys_from_the_environment_cannot_be_reloaded_and_say_how_to() {
    let engine = Arc::new(
        Engine::new(
            Backend::Aes256Gcm,
            KeyConfig::parse_env(&format!("current=k1; k1:{KEY1_B64}")).unwrap(),
            EngineConfig::for_audience("test-service"),
            AnyReplayCache::Off,
        )
        .unwrap(),
    );
    let reloader = KeyReloader::new(engine, KeySource::Env);
    let err = reloader.reload_now(Trigger::Signal).unwrap_err();
    assert!(matches!(err, ReloadError::NotReloadable(KeySource::Env)));
    assert!(err.to_string().contains("MRTR_KEYS_FILE"), "{err}");
    assert!(reloader.reload_if_changed().is_none());
}

#[test]
fn a_replay_after_a_reload_is_still_a_replay() {
    let dir = TempDir::new("reload-replay");
    let path = dir.0.join("keys");
    std::fs::write(&path, file(&[("k1", KEY1_B64, true)])).unwrap();
    let engine = node(&path);
    let token = engine
        .current()
        .pause(&request(None), Round::FIRST, b"x")
        .unwrap();
    engine.current().resume(&request(Some(&token))).unwrap();
    std::fs::write(
        &path,
        file(&[("k1", KEY1_B64, true), ("k2", KEY2_B64, false)]),
    )
    .unwrap();
    let reloader = KeyReloader::new(engine.clone(), KeySource::File(path.clone()));
    reloader.reload_now(Trigger::Manual).unwrap();
    let err = engine.current().resume(&request(Some(&token))).unwrap_err();
    assert_eq!(err.rejection().unwrap().reason(), Reason::Replayed);
}
