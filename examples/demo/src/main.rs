//! A full multi-round-trip chain on the host, once per backend.
//!
//! A "booking" handler pauses on every invocation until the round cap refuses the next
//! resume; each step prints the round, a shortened token and the continuation it carries.
//! Then it shows what the checks refuse: a tampered token, another caller, another tool,
//! other arguments, another service sharing the key (another audience), and an expired token.

#[macro_use]
mod out;

use getrandom::SysRng;
use mrtr_aes_gcm::Aes256Gcm;
use mrtr_aes_gcm_siv::Aes256GcmSiv;
use mrtr_chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use mrtr_core::cipher::Cipher;
use mrtr_core::key::{Key, KeyId, KeyRing, SecretKey};
use mrtr_core::{
    Binding, Codec, ManualClock, Principal, Reason, Round, SealError, TokenBuf, token_len_for,
};

const CAP: usize = token_len_for(128);

fn short(token: &str) -> String {
    let head: String = token.chars().take(16).collect();
    format!("{head}…({} chars)", token.len())
}

/// Two copies of one fresh key: one for this service, one for another service of the fleet
/// that shares the key material.
fn fresh_key_pair<C: Cipher>(id: &str) -> (Key<C>, Key<C>) {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("OS randomness");
    let key = |b| {
        Key::new(
            KeyId::new(id).expect("valid key id"),
            SecretKey::from_bytes(b),
        )
    };
    let pair = (key(bytes), key(bytes));
    bytes.fill(0);
    pair
}

fn run<C: Cipher>() -> Result<(), Box<dyn std::error::Error>> {
    outln!("\n=== {} ===", C::ALGORITHM.name());
    let clock = ManualClock::new(1_764_460_800_000); // 2025-11-30T00:00:00Z
    let (ours, theirs) = fresh_key_pair("2026-11");
    let ring: KeyRing<C, 2> = KeyRing::new(ours);
    let mrtr = Codec::builder(ring, &clock)
        .audience("booking.example")
        .build()?;
    // Another service with the same key and a tool of the same name.
    let billing = Codec::builder(KeyRing::<C, 2>::new(theirs), &clock)
        .audience("billing.example")
        .build()?;
    let mut rng = SysRng;

    let alice = Principal::User {
        issuer: "https://idp.example",
        subject: "alice",
    };
    let call = Binding::new("tools/call", "2026-07-28", "book_table", alice)?;
    let args = [0x42; 32]; // a real server: SHA-256 of the RFC 8785 canonical arguments

    // Invocation 1: the initial call pauses.
    let mut out = TokenBuf::<CAP>::new();
    let mut token = mrtr
        .pause(Round::FIRST, &call, &args, b"step=1", &mut rng, &mut out)?
        .as_str()
        .to_owned();
    outln!(
        "call     -> input_required, round 1, requestState {}",
        short(&token)
    );
    let first = token.clone();

    // Each resume opens the token, then pauses again with the next round, until the last
    // invocation the cap allows: pausing there would issue a token that can never resume, so
    // the pause is refused and the server answers with the max-rounds rejection instead.
    loop {
        let mut buf = TokenBuf::<CAP>::new();
        let resumed = mrtr.resume(&token, &call, &args, &mut buf)?;
        let step = String::from_utf8_lossy(resumed.continuation()).into_owned();
        let next = resumed.next_round();
        let cont = format!("step={}", next.get());
        let mut out = TokenBuf::<CAP>::new();
        match mrtr.pause(next, &call, &args, cont.as_bytes(), &mut rng, &mut out) {
            Ok(sealed) => {
                token = sealed.as_str().to_owned();
                outln!(
                    "resume {:>2} (carried {step:>7}) -> round {:>2}, requestState {}",
                    resumed.round(),
                    next.get(),
                    short(&token)
                );
            }
            Err(SealError::RoundsExhausted) => {
                let wire = mrtr.reject(Reason::RoundsExceeded).wire();
                outln!(
                    "resume {:>2} (carried {step:>7}) -> cannot pause again: {} {:?} (server log: {})",
                    resumed.round(),
                    wire.code,
                    wire.message,
                    Reason::RoundsExceeded
                );
                break;
            }
            Err(e) => return Err(e.into()),
        }
    }

    outln!("-- what the checks refuse (the client always sees the same error) --");
    let mut buf = TokenBuf::<CAP>::new();
    let mut tampered = first.clone().into_bytes();
    let mid = tampered.len() / 2;
    tampered[mid] = if tampered[mid] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered)?;
    let mallory = Principal::User {
        issuer: "https://idp.example",
        subject: "mallory",
    };
    let cases: [(&str, &str, Binding<'_>, [u8; 32]); 4] = [
        ("tampered token", &tampered, call, args),
        (
            "another caller",
            &first,
            Binding::new("tools/call", "2026-07-28", "book_table", mallory)?,
            args,
        ),
        (
            "another tool",
            &first,
            Binding::new("tools/call", "2026-07-28", "cancel_table", alice)?,
            args,
        ),
        ("other arguments", &first, call, [0x43; 32]),
    ];
    for (what, tok, binding, digest) in cases {
        let err = mrtr
            .resume(tok, &binding, &digest, &mut buf)
            .expect_err("must be refused");
        outln!(
            "{what:<16} -> {} (server log: {})",
            err.wire().reason,
            err.reason()
        );
    }
    let err = billing
        .resume(&first, &call, &args, &mut buf)
        .expect_err("another audience");
    outln!(
        "{:<16} -> {} (server log: {})",
        "another service",
        err.wire().reason,
        err.reason()
    );
    clock.advance(mrtr.ttl_ms());
    let err = mrtr
        .resume(&first, &call, &args, &mut buf)
        .expect_err("expired");
    outln!(
        "{:<16} -> {} (server log: {})",
        "after the TTL",
        err.wire().reason,
        err.reason()
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    outln!("mrtr demo: a booking tool that pauses on every round until the round cap");
    run::<Aes256Gcm>()?;
    run::<ChaCha20Poly1305>()?;
    run::<XChaCha20Poly1305>()?;
    run::<Aes256GcmSiv>()?;
    Ok(())
}
