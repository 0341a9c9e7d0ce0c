//! The nonce source as an engine setting: the OS generator by default, the fast userspace
//! generator only with AES-256-GCM-SIV, refused at build time with any other algorithm.

// Built without `aes-gcm-siv`, only the refusals run; the helpers of the GCM-SIV tests rest.
#![cfg_attr(not(feature = "aes-gcm-siv"), allow(dead_code, unused_imports))]

mod support;

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_replay::AnyReplayCache;
use mrtr_std::clock::SystemClock;
use mrtr_std::core::cipher::Algorithm;
use mrtr_std::core::{Codec, Round};
#[cfg(feature = "aes-gcm-siv")]
use mrtr_std::engine::Step;
use mrtr_std::engine::{
    AnyEngine, Backend, CipherEngine, Engine, EngineConfig, EngineConfigError, NonceSource,
};
use mrtr_std::keys::KeyConfig;
use mrtr_std::rng_fast::FastRng;
use support::{KEY1_B64, KEY2_B64, booking};

fn keys() -> KeyConfig {
    KeyConfig::parse_env(&format!("current=k2; k2:{KEY2_B64}; k1:{KEY1_B64}")).unwrap()
}

fn limits(nonce_source: NonceSource) -> EngineConfig {
    EngineConfig {
        nonce_source,
        ..EngineConfig::for_audience("nonce-tests")
    }
}

fn is_refusal(err: &EngineConfigError, algorithm: Algorithm) -> bool {
    matches!(
        err,
        EngineConfigError::NonceSourceUnsafe { nonce_source: NonceSource::Fast, algorithm: a }
            if *a == algorithm
    )
}

#[test]
fn the_default_is_the_os_generator_for_every_backend() {
    assert_eq!(EngineConfig::default().nonce_source, NonceSource::Os);
    for &backend in Backend::enabled() {
        let e = AnyEngine::new(backend, keys(), limits(NonceSource::Os), ()).unwrap();
        assert_eq!(e.nonce_source(), NonceSource::Os);
        assert_eq!(e.limits().nonce_source, NonceSource::Os);
    }
}

#[test]
fn fast_is_refused_at_build_time_for_every_algorithm_but_gcm_siv() {
    let mut refused = 0;
    for &backend in Backend::enabled() {
        let algorithm = backend.algorithm();
        if algorithm == Algorithm::Aes256GcmSiv {
            continue;
        }
        let err = AnyEngine::new(backend, keys(), limits(NonceSource::Fast), ()).unwrap_err();
        assert!(is_refusal(&err, algorithm), "{backend}: {err:?}");
        let text = err.to_string();
        assert!(
            text.contains("nonce source fast") && text.contains("aes-256-gcm-siv"),
            "{text}"
        );
        let err = Engine::new(
            backend,
            keys(),
            limits(NonceSource::Fast),
            AnyReplayCache::Off,
        )
        .unwrap_err();
        assert!(is_refusal(&err, algorithm), "{backend}: {err:?}");
        refused += 1;
    }
    assert!(refused >= 3, "AES-256-GCM and both ChaCha20 variants");
}

#[test]
fn a_typed_engine_refuses_fast_unless_its_cipher_is_gcm_siv() {
    let mrtr = Codec::builder(keys().into_ring::<Aes256Gcm, 4>().unwrap(), SystemClock)
        .without_audience()
        .build()
        .unwrap();
    let engine = CipherEngine::new(mrtr, ());
    assert_eq!(engine.nonce_source(), NonceSource::Os);
    let err = engine.with_nonce_source(NonceSource::Fast).unwrap_err();
    assert!(is_refusal(&err, Algorithm::Aes256Gcm), "{err:?}");
}

/// Seals one token on a fresh thread and reports how many bytes that thread's fast generator
/// drew: 28 (token id and nonce) when the engine uses it, 0 when it seals from the OS.
fn fast_bytes_drawn_by_one_seal(engine: &AnyEngine<AnyReplayCache>) -> u64 {
    std::thread::scope(|s| {
        s.spawn(|| {
            assert_eq!(FastRng::drawn(), 0);
            engine
                .pause(&booking(None), Round::FIRST, b"state")
                .unwrap();
            FastRng::drawn()
        })
        .join()
        .unwrap()
    })
}

#[cfg(feature = "aes-gcm-siv")]
#[test]
fn gcm_siv_seals_with_the_source_it_was_given() {
    let backend = Backend::Aes256GcmSiv;
    let fast = AnyEngine::new(
        backend,
        keys(),
        limits(NonceSource::Fast),
        AnyReplayCache::memory(100),
    )
    .unwrap();
    assert_eq!(fast.nonce_source(), NonceSource::Fast);
    assert_eq!(fast.limits().nonce_source, NonceSource::Fast);
    assert_eq!(fast_bytes_drawn_by_one_seal(&fast), 28);
    let os = AnyEngine::new(
        backend,
        keys(),
        limits(NonceSource::Os),
        AnyReplayCache::memory(100),
    )
    .unwrap();
    assert_eq!(fast_bytes_drawn_by_one_seal(&os), 0);

    // Tokens from the fast source are ordinary tokens: distinct, they resume (on an engine
    // with either source), and once only.
    let a = fast.pause(&booking(None), Round::FIRST, b"a").unwrap();
    let b = fast.pause(&booking(None), Round::FIRST, b"a").unwrap();
    assert_ne!(a, b);
    let Step::Resumed(r) = os.resume(&booking(Some(&a))).unwrap() else {
        panic!("not resumed")
    };
    assert_eq!(r.continuation(), b"a");
    assert!(fast.resume(&booking(Some(&b))).is_ok());
    assert!(fast.resume(&booking(Some(&b))).is_err());

    // A key reload keeps the source.
    let rotating = Engine::new(
        backend,
        keys(),
        limits(NonceSource::Fast),
        AnyReplayCache::Off,
    )
    .unwrap();
    rotating.reload(keys()).unwrap();
    assert_eq!(rotating.current().nonce_source(), NonceSource::Fast);
}
