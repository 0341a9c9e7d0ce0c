//! Authentic tokens whose sealed state is not well formed (a bug, or a foreign sealer holding
//! the key) are refused as `BadState`, never trusted or panicked on. The tokens are built here
//! from the documented format with the backend's cipher directly.

use mrtr_core::Aad;
use mrtr_core::cipher::Cipher;
use mrtr_core::key::SecretKey;
use mrtr_core::{Binding, ManualClock, Reason};
use mrtr_tests::b64;
use mrtr_tests::fixture::*;

/// The fields of a state, written per `core/src/state.rs`; each can be made wrong.
#[derive(Clone)]
struct State {
    version: u8,
    round: u32,
    issued_at: u64,
    expires_at: u64,
    method: Vec<u8>,
    method_len: Option<u8>,
    continuation: Vec<u8>,
    continuation_len: Option<u16>,
    trailing: Vec<u8>,
}

impl State {
    fn valid() -> Self {
        Self {
            version: 1,
            round: 1,
            issued_at: NOW,
            expires_at: NOW + 1_000,
            method: b"tools/call".to_vec(),
            method_len: None,
            continuation: b"cont".to_vec(),
            continuation_len: None,
            trailing: Vec::new(),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = vec![self.version];
        out.extend_from_slice(&self.round.to_be_bytes());
        out.extend_from_slice(&self.issued_at.to_be_bytes());
        out.extend_from_slice(&self.expires_at.to_be_bytes());
        out.extend_from_slice(&[0x33; 16]);
        out.extend_from_slice(&ARGS);
        out.push(self.method_len.unwrap_or(self.method.len() as u8));
        out.extend_from_slice(&self.method);
        let c = self
            .continuation_len
            .unwrap_or(self.continuation.len() as u16);
        out.extend_from_slice(&c.to_be_bytes());
        out.extend_from_slice(&self.continuation);
        out.extend_from_slice(&self.trailing);
        out
    }
}

/// Seals `state` bytes as key `k1` of [`ring`] would, in format v2 for [`AUDIENCE`], bound to
/// `binding`.
fn forge<C: Cipher>(state: &[u8], binding: &Binding<'_>) -> String {
    let header = [2, C::ALGORITHM.id(), 2, b'k', b'1'];
    let nonce = vec![0x42; C::ALGORITHM.nonce_len()];
    let aad = Aad::build(&header, Some(AUDIENCE), binding).unwrap();
    let mut body = state.to_vec();
    let tag = C::new(&SecretKey::from_bytes([1; 32]))
        .seal_in_place(&nonce, aad.as_bytes(), &mut body)
        .unwrap();
    b64::encode(&[&header[..], &nonce, &body, &tag].concat())
}

fn check<C: Cipher>(state: &State) -> Result<Opened, Reason> {
    let clock = ManualClock::new(NOW);
    let mrtr = engine::<C, _>(&clock);
    resume(&mrtr, &forge::<C>(&state.bytes(), &call()), &call(), &ARGS).map_err(|r| r.reason())
}

fn a_forged_well_formed_state_opens<C: Cipher>() {
    // The control: the forger writes the documented format correctly.
    let opened = check::<C>(&State::valid()).unwrap();
    assert_eq!(
        (opened.round, opened.continuation.as_slice()),
        (1, &b"cont"[..])
    );
    assert_eq!(opened.token_id, [0x33; 16]);
    let mut empty = State::valid();
    empty.continuation.clear();
    assert!(check::<C>(&empty).unwrap().continuation.is_empty());
}

fn malformed_states_are_bad_state<C: Cipher>() {
    let v = State::valid;
    let cases: Vec<(&str, State)> = vec![
        ("state version 0", State { version: 0, ..v() }),
        ("state version 2", State { version: 2, ..v() }),
        ("round 0", State { round: 0, ..v() }),
        (
            "issued after expiry",
            State {
                issued_at: NOW + 2_000,
                ..v()
            },
        ),
        (
            "method length 0",
            State {
                method_len: Some(0),
                ..v()
            },
        ),
        (
            "method length over 32",
            State {
                method: vec![b'm'; 33],
                ..v()
            },
        ),
        (
            "method length too long",
            State {
                method_len: Some(11),
                ..v()
            },
        ),
        (
            "method length too short",
            State {
                method_len: Some(9),
                ..v()
            },
        ),
        (
            "method not UTF-8",
            State {
                method: b"tools/\xffall".to_vec(),
                ..v()
            },
        ),
        (
            "continuation length too long",
            State {
                continuation_len: Some(5),
                ..v()
            },
        ),
        (
            "continuation length too short",
            State {
                continuation_len: Some(3),
                ..v()
            },
        ),
        (
            "continuation length huge",
            State {
                continuation_len: Some(u16::MAX),
                ..v()
            },
        ),
        (
            "trailing byte",
            State {
                trailing: vec![0],
                ..v()
            },
        ),
    ];
    for (what, state) in cases {
        assert_eq!(check::<C>(&state).unwrap_err(), Reason::BadState, "{what}");
    }
}

fn truncated_states_are_refused<C: Cipher>() {
    let full = State::valid().bytes();
    for len in 0..full.len() {
        let clock = ManualClock::new(NOW);
        let mrtr = engine::<C, _>(&clock);
        let token = forge::<C>(&full[..len], &call());
        let reason = rejected(&mrtr, &token, &call(), &ARGS);
        // Too short to frame a state at all, or framed but not a state.
        assert!(
            matches!(reason, Reason::Malformed | Reason::BadState),
            "{len}: {reason:?}"
        );
    }
}

fn a_state_sealed_for_another_method_is_method_mismatch<C: Cipher>() {
    // Only a foreign sealer can produce this: core always seals the binding's method.
    let state = State {
        method: b"prompts/get".to_vec(),
        ..State::valid()
    };
    assert_eq!(check::<C>(&state).unwrap_err(), Reason::MethodMismatch);
}

mrtr_tests::per_backend!(
    a_forged_well_formed_state_opens,
    malformed_states_are_bad_state,
    truncated_states_are_refused,
    a_state_sealed_for_another_method_is_method_mismatch,
);
