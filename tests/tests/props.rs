//! Property tests, per backend: arbitrary states and audiences round-trip; any changed field
//! (audience included) is refused; arbitrary strings, bytes and base64url never panic and are
//! never accepted.

use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::replay::NoReplayCache;
use mrtr_core::{Binding, Codec, ManualClock, Principal, Round, TokenBuf};
use mrtr_tests::b64;
use mrtr_tests::fixture::*;
use mrtr_tests::rng::SeqRng;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

/// Cuts `s` to at most `max` bytes, on a character boundary.
fn bounded(mut s: String, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s
}

#[derive(Clone, Debug)]
struct Case {
    /// The engine's audience; `None`: built without one.
    audience: Option<String>,
    key_id: String,
    secret: [u8; 32],
    method: String,
    version: String,
    target: String,
    principal: Option<(String, String)>,
    args: [u8; 32],
    continuation: Vec<u8>,
    now: u64,
    ttl: u64,
    pauses: u32,
    seed: u64,
}

impl Case {
    fn principal(&self) -> Principal<'_> {
        match &self.principal {
            None => Principal::Anonymous,
            Some((issuer, subject)) => Principal::User { issuer, subject },
        }
    }

    fn binding(&self) -> Binding<'_> {
        bind(&self.method, &self.version, &self.target, self.principal())
    }

    /// An engine over `ring` bound to this case's audience, with its TTL.
    fn engine<'c, C: Cipher, const K: usize>(
        &self,
        ring: KeyRing<C, K>,
        clock: &'c ManualClock,
    ) -> Codec<C, &'c ManualClock, NoReplayCache, K> {
        choose_audience(Codec::builder(ring, clock), self.audience.as_deref())
            .ttl_ms(self.ttl)
            .build()
            .unwrap()
    }
}

fn cases() -> impl Strategy<Value = Case> {
    let field = |re: &'static str, max: usize| re.prop_map(move |s: String| bounded(s, max));
    (
        (
            prop::option::of(field("(?s).{1,40}", 255)),
            "[A-Za-z0-9._-]{1,16}",
        ),
        any::<[u8; 32]>(),
        field("[^\\x00]{1,32}", 32),
        field("[^\\x00]{0,32}", 32),
        field("(?s).{0,300}", 1024),
        prop::option::of((field("(?s).{0,40}", 255), field("(?s).{0,40}", 255))),
        any::<[u8; 32]>(),
        prop::collection::vec(any::<u8>(), 0..=256),
        (0..=u64::MAX / 2, 1..=u64::MAX / 4, 1..=5u32, any::<u64>()),
    )
        .prop_map(
            |(
                (audience, key_id),
                secret,
                method,
                version,
                target,
                principal,
                args,
                continuation,
                t,
            )| Case {
                audience,
                key_id,
                secret,
                method,
                version,
                target,
                principal,
                args,
                continuation,
                now: t.0,
                ttl: t.1,
                pauses: t.2,
                seed: t.3,
            },
        )
}

fn arbitrary_states_round_trip<C: Cipher>() {
    runner(96)
        .run(&cases(), |case| {
            let clock = ManualClock::new(case.now);
            let key = Key::<C>::new(
                KeyId::new(&case.key_id).unwrap(),
                SecretKey::from_bytes(case.secret),
            );
            let mrtr = case.engine(KeyRing::<C, 1>::new(key), &clock);
            let b = case.binding();
            let mut rng = SeqRng::new(case.seed);
            let mut token = seal(&mrtr, Round::FIRST, &b, &case.args, b"first", &mut rng);
            for _ in 1..case.pauses {
                let next = resume(&mrtr, &token, &b, &case.args).unwrap().next_round;
                token = seal(&mrtr, next, &b, &case.args, &case.continuation, &mut rng);
            }
            let got = resume(&mrtr, &token, &b, &case.args).unwrap();
            let want: &[u8] = if case.pauses == 1 {
                b"first"
            } else {
                &case.continuation
            };
            prop_assert_eq!(got.continuation.as_slice(), want);
            prop_assert_eq!(got.round, case.pauses);
            prop_assert_eq!(&got.method, &case.method);
            prop_assert_eq!(got.issued_at_ms, case.now);
            prop_assert_eq!(got.expires_at_ms, case.now + case.ttl);
            prop_assert_eq!(header(&token).2, case.key_id.as_bytes());
            Ok(())
        })
        .unwrap();
}

fn any_changed_field_is_rejected<C: Cipher>() {
    runner(96)
        .run(&(cases(), 0..7usize), |(case, field)| {
            let clock = ManualClock::new(case.now);
            let mrtr = case.engine(ring::<C>(), &clock);
            let b = case.binding();
            let token = seal(
                &mrtr,
                Round::FIRST,
                &b,
                &case.args,
                &case.continuation,
                &mut SeqRng::new(case.seed),
            );
            let mut other = case.clone();
            let toggle = |s: &mut String, max: usize, c: char| {
                if s.len() < max {
                    s.push(c)
                } else {
                    s.pop();
                }
            };
            match field {
                0 => {
                    other.method = if case.method == "x" {
                        "y".into()
                    } else {
                        "x".into()
                    }
                }
                1 => toggle(&mut other.version, 32, '.'),
                2 => toggle(&mut other.target, 1024, '\0'),
                3 => {
                    other.principal = match case.principal {
                        None => Some((String::new(), String::new())),
                        Some(_) => None,
                    }
                }
                4 => match &mut other.principal {
                    None => other.principal = Some(("i".into(), "s".into())),
                    // Move one character across the issuer/subject boundary, or add one.
                    Some((issuer, subject)) => match issuer.pop() {
                        Some(c) if subject.len() + c.len_utf8() <= 255 => subject.insert(0, c),
                        _ => toggle(subject, 255, 's'),
                    },
                },
                5 => other.args[0] ^= 1,
                // Another audience, "no audience" for one, or an audience for none (the byte
                // 0x00 is an audience, not the "none" marker).
                _ => {
                    other.audience = match &case.audience {
                        None => Some("\0".into()),
                        Some(a) if a.len() < 255 => Some(format!("{a}x")),
                        Some(_) => None,
                    }
                }
            }
            let ob = other.binding();
            prop_assume!(ob != b || other.args != case.args || other.audience != case.audience);
            let opener = other.engine(ring::<C>(), &clock);
            prop_assert!(resume(&opener, &token, &ob, &other.args).is_err());
            Ok(())
        })
        .unwrap();
}

/// Resumes `text` against a default engine with both a normal and a tiny buffer.
fn refuse<C: Cipher>(text: &str) -> Result<(), TestCaseError> {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    prop_assert!(resume(&mrtr, text, &call(), &ARGS).is_err());
    let mut tiny: TokenBuf<4> = TokenBuf::new();
    prop_assert!(mrtr.resume(text, &call(), &ARGS, &mut tiny).is_err());
    Ok(())
}

fn arbitrary_strings_are_rejected<C: Cipher>() {
    runner(512)
        .run(&any::<String>(), |s| refuse::<C>(&s))
        .unwrap();
    runner(256)
        .run(&"(?s).{0,700}", |s| refuse::<C>(&s))
        .unwrap();
}

fn arbitrary_bytes_are_rejected<C: Cipher>() {
    let bytes = prop::collection::vec(any::<u8>(), 0..700);
    runner(256)
        .run(&bytes, |b| {
            refuse::<C>(&b64::encode(&b))?;
            refuse::<C>(&String::from_utf8_lossy(&b))
        })
        .unwrap();
}

fn arbitrary_base64url_is_never_accepted<C: Cipher>() {
    let text = "[A-Za-z0-9_-]{0,600}".prop_filter("possible length", |s| s.len() % 4 != 1);
    runner(512).run(&text, |s| refuse::<C>(&s)).unwrap();
}

fn random_bodies_behind_a_valid_header_are_rejected<C: Cipher>() {
    // Passes version, algorithm and key lookup, so it reaches framing and the AEAD.
    let body = prop::collection::vec(any::<u8>(), 0..400);
    runner(512)
        .run(&body, |body| {
            let mut bytes = vec![1, C::ALGORITHM.id(), 2, b'k', b'1'];
            bytes.extend_from_slice(&body);
            refuse::<C>(&b64::encode(&bytes))
        })
        .unwrap();
}

mrtr_tests::per_backend!(
    arbitrary_states_round_trip,
    any_changed_field_is_rejected,
    arbitrary_strings_are_rejected,
    arbitrary_bytes_are_rejected,
    arbitrary_base64url_is_never_accepted,
    random_bodies_behind_a_valid_header_are_rejected,
);
