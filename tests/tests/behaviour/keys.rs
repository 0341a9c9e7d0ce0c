//! Key ring: exact key-id lookup, rotation, wrong algorithm, seal limits, ring limits.

use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyError, KeyId, KeyRing, SecretKey};
use mrtr_core::{Codec, ManualClock, Reason, Round, SealError};
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;
use mrtr_tests::{Aes256Gcm, ChaCha20Poly1305, XChaCha20Poly1305};

fn an_unknown_key_id_is_rejected<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let k1 = engine::<C, _>(&clock);
    // Same secret, other id: the id alone decides, there is no trial decryption.
    let k2 = Codec::builder(KeyRing::<C, 4>::new(key("k2", 1)), &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    let token = first(&k1, &mut SeqRng::new(1));
    assert_eq!(rejected(&k2, &token, &call(), &ARGS), Reason::UnknownKey);
}

fn the_same_key_id_with_another_secret_is_rejected<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let good = engine::<C, _>(&clock);
    let evil = Codec::builder(KeyRing::<C, 4>::new(key("k1", 2)), &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    let token = first(&evil, &mut SeqRng::new(2));
    assert_eq!(rejected(&good, &token, &call(), &ARGS), Reason::Tampered);
}

fn rotation_keeps_old_tokens_open<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let mut rng = SeqRng::new(3);
    let before = engine::<C, _>(&clock);
    let old_token = first(&before, &mut rng);

    let rotated = KeyRing::<C, 4>::new(key("k2", 2))
        .with_previous(key("k1", 1))
        .unwrap();
    let after = Codec::builder(rotated, &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    assert_eq!(after.keys().current().id().as_str(), "k2");
    assert_eq!(
        resume(&after, &old_token, &call(), &ARGS)
            .unwrap()
            .continuation,
        b"step=date"
    );

    let new_token = first(&after, &mut rng);
    assert_eq!(header(&new_token).2, b"k2");
    assert_eq!(after.keys().current().seals_used(), 1);
    assert_eq!(
        after.keys().find(b"k1").unwrap().seals_used(),
        0,
        "old keys never seal"
    );
    assert!(resume(&after, &new_token, &call(), &ARGS).is_ok());
    // The old engine does not know k2.
    assert_eq!(
        rejected(&before, &new_token, &call(), &ARGS),
        Reason::UnknownKey
    );

    // Dropping k1 from the ring retires its tokens.
    let retired = Codec::builder(KeyRing::<C, 4>::new(key("k2", 2)), &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    assert_eq!(
        rejected(&retired, &old_token, &call(), &ARGS),
        Reason::UnknownKey
    );
    assert!(resume(&retired, &new_token, &call(), &ARGS).is_ok());
}

/// Resumes a token with an engine of algorithm `D` holding the same key.
fn resume_with<D: Cipher>(token: &str, clock: &ManualClock) -> Result<(), Reason> {
    let other = Codec::builder(KeyRing::<D, 4>::new(key("k1", 1)), clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    resume(&other, token, &call(), &ARGS)
        .map(|_| ())
        .map_err(|r| r.reason())
}

fn a_ring_of_another_algorithm_is_rejected<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let token = first(&engine::<C, _>(&clock), &mut SeqRng::new(4));
    let expect = |alg: mrtr_core::cipher::Algorithm| {
        if alg == C::ALGORITHM {
            Ok(())
        } else {
            Err(Reason::WrongAlgorithm)
        }
    };
    assert_eq!(
        resume_with::<Aes256Gcm>(&token, &clock),
        expect(Aes256Gcm::ALGORITHM)
    );
    assert_eq!(
        resume_with::<ChaCha20Poly1305>(&token, &clock),
        expect(ChaCha20Poly1305::ALGORITHM)
    );
    assert_eq!(
        resume_with::<XChaCha20Poly1305>(&token, &clock),
        expect(XChaCha20Poly1305::ALGORITHM)
    );
}

fn a_key_refuses_past_its_seal_limit<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let ring = KeyRing::<C, 4>::new(key("k1", 1)).with_seal_limit(3);
    let mrtr = Codec::builder(ring, &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    let mut rng = SeqRng::new(5);
    let tokens: Vec<String> = (0..3).map(|_| first(&mrtr, &mut rng)).collect();
    let mut out = Buf::new();
    let err = mrtr.pause(Round::FIRST, &call(), &ARGS, b"", &mut rng, &mut out);
    assert_eq!(err.unwrap_err(), SealError::KeyExhausted);
    assert_eq!(mrtr.keys().current().seals_used(), 3);
    // Opening is not sealing: tokens of an exhausted key still resume.
    for t in &tokens {
        assert!(resume(&mrtr, t, &call(), &ARGS).is_ok());
    }
    // Rotating to a fresh key restores sealing, and the exhausted key still opens.
    let exhausted =
        Key::<C>::with_seals_used(KeyId::new("k1").unwrap(), SecretKey::from_bytes([1; 32]), 3);
    let ring = KeyRing::<C, 4>::new(key("k2", 2))
        .with_previous(exhausted)
        .unwrap()
        .with_seal_limit(3);
    let rotated = Codec::builder(ring, &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    assert!(resume(&rotated, &tokens[0], &call(), &ARGS).is_ok());
    assert_eq!(header(&first(&rotated, &mut rng)).2, b"k2");
}

fn the_default_seal_limit_is_u32_max<C: Cipher>() {
    let clock = ManualClock::new(NOW);
    let id = KeyId::new("k1").unwrap();
    let nearly = Key::<C>::with_seals_used(id, SecretKey::from_bytes([1; 32]), u32::MAX - 1);
    let mrtr = Codec::builder(KeyRing::<C, 4>::new(nearly), &clock)
        .audience(AUDIENCE)
        .build()
        .unwrap();
    let mut rng = SeqRng::new(6);
    let token = first(&mrtr, &mut rng);
    assert!(resume(&mrtr, &token, &call(), &ARGS).is_ok());
    let mut out = Buf::new();
    let err = mrtr.pause(Round::FIRST, &call(), &ARGS, b"", &mut rng, &mut out);
    assert_eq!(err.unwrap_err(), SealError::KeyExhausted);
    assert_eq!(mrtr.keys().current().seals_used(), u32::MAX);
}

fn key_ids_and_rings_are_validated<C: Cipher>() {
    for bad in ["", "seventeen-chars-x", "a b", "k/1", "ké", "k\0"] {
        assert_eq!(KeyId::new(bad), Err(KeyError::BadKeyId), "{bad:?}");
    }
    for good in ["k", "sixteen-chars-id", "A.b_c-9"] {
        assert_eq!(KeyId::new(good).unwrap().as_str(), good);
    }
    assert_eq!(
        SecretKey::from_slice(&[0; 31]).unwrap_err(),
        KeyError::BadKeyLength
    );
    assert_eq!(
        SecretKey::from_slice(&[0; 33]).unwrap_err(),
        KeyError::BadKeyLength
    );
    assert!(SecretKey::from_slice(&[0; 32]).is_ok());

    let dup = KeyRing::<C, 4>::new(key("k1", 1)).with_previous(key("k1", 2));
    assert_eq!(dup.err(), Some(KeyError::DuplicateKeyId));
    let mut ring = KeyRing::<C, 2>::new(key("k1", 1));
    assert_eq!(
        ring.add_previous(key("k1", 2)),
        Err(KeyError::DuplicateKeyId)
    );
    assert_eq!(ring.add_previous(key("k2", 2)), Ok(()));
    assert_eq!(ring.add_previous(key("k3", 3)), Err(KeyError::RingFull));
    let ids: Vec<&str> = ring.iter().map(|k| k.id().as_str()).collect();
    assert_eq!(ids, ["k1", "k2"]);
}

fn the_seal_limit_holds_across_threads<C: Cipher + Sync>() {
    let ring = KeyRing::<C, 4>::new(key("k1", 1)).with_seal_limit(100);
    let mrtr = Codec::builder(ring, FixedClock(NOW))
        .audience(AUDIENCE)
        .build()
        .unwrap();
    let sealed: usize = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4u64)
            .map(|t| {
                let mrtr = &mrtr;
                s.spawn(move || {
                    let mut rng = SeqRng::new(t);
                    let mut out = Buf::new();
                    (0..50)
                        .filter(|_| {
                            match mrtr.pause(Round::FIRST, &call(), &ARGS, b"", &mut rng, &mut out)
                            {
                                Ok(_) => true,
                                Err(e) => {
                                    assert_eq!(e, SealError::KeyExhausted);
                                    false
                                }
                            }
                        })
                        .count()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    assert_eq!(sealed, 100);
    assert_eq!(mrtr.keys().current().seals_used(), 100);
}

/// Concurrent seals under no limit: every one succeeds and every one is counted, once.
fn concurrent_seals_are_counted_exactly<C: Cipher + Sync>() {
    let mrtr = Codec::builder(KeyRing::<C, 4>::new(key("k1", 1)), FixedClock(NOW))
        .audience(AUDIENCE)
        .build()
        .unwrap();
    let ids: Vec<[u8; 16]> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4u64)
            .map(|t| {
                let mrtr = &mrtr;
                s.spawn(move || {
                    let mut rng = SeqRng::new(100 + t);
                    let mut out = Buf::new();
                    (0..250)
                        .map(|_| {
                            mrtr.pause(Round::FIRST, &call(), &ARGS, b"", &mut rng, &mut out)
                                .unwrap()
                                .token_id()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    assert_eq!(ids.len(), 1000);
    assert_eq!(mrtr.keys().current().seals_used(), 1000);
}

mrtr_tests::per_backend!(
    concurrent_seals_are_counted_exactly,
    the_seal_limit_holds_across_threads,
    an_unknown_key_id_is_rejected,
    the_same_key_id_with_another_secret_is_rejected,
    rotation_keeps_old_tokens_open,
    a_ring_of_another_algorithm_is_rejected,
    a_key_refuses_past_its_seal_limit,
    the_default_seal_limit_is_u32_max,
    key_ids_and_rings_are_validated,
);
