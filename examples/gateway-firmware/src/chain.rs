//! A full resume chain: the call pauses, each resume pauses again, until the round cap
//! refuses the next resume (default 10 invocations: the call and 9 resumes).

use mrtr_core::cipher::Cipher;
use mrtr_core::{DEFAULT_MAX_ROUNDS, Mrtr, Reason, Round};
use rand_core::TryCryptoRng;

use crate::clock::CLOCK;
use crate::report::Report;
use crate::{AAD, ARGS, OWNER, TOOL, Token, call, check, keys};

/// The continuation a handler seals after invocation `n`: which step it waits in.
fn step(n: u32) -> [u8; 9] {
    let mut c = *b"step=0000";
    for (i, d) in n.to_be_bytes().iter().enumerate() {
        c[5 + i] = b'a' + (d & 0x0f);
    }
    c
}

/// Runs the chain and checks where it stops.
pub fn run<C: Cipher>(report: &mut Report, rng: &mut impl TryCryptoRng) {
    defmt::println!("-- resume chain up to the round cap");
    let mrtr = match Mrtr::builder(keys::ring::<C>(), &CLOCK)
        .aad_capacity::<AAD>()
        .build()
    {
        Ok(m) => m,
        Err(e) => {
            check!(report, false, "default configuration builds: {}", e);
            return;
        }
    };
    let binding = call(TOOL, OWNER);
    let (mut sealed_buf, mut open_buf) = (Token::new(), Token::new());
    let mut round = Round::FIRST;
    let mut resumes_ok = 0u32;
    let refusal = loop {
        // Invocation `round` of the handler pauses and seals its step.
        let token = match mrtr.pause(
            round,
            &binding,
            &ARGS,
            &step(round.get()),
            rng,
            &mut sealed_buf,
        ) {
            Ok(s) => s.as_str(),
            Err(e) => {
                check!(report, false, "pause in round {=u32}: {}", round.get(), e);
                return;
            }
        };
        match mrtr.resume(token, &binding, &ARGS, &mut open_buf) {
            Ok(r) => {
                let same = r.round() == round.get() && r.continuation() == step(round.get());
                if !same {
                    check!(
                        report,
                        false,
                        "resume {=u32} returns its own state",
                        resumes_ok + 1
                    );
                }
                resumes_ok += 1;
                round = r.next_round();
            }
            Err(rej) => break Some(rej.reason()),
        }
        if resumes_ok > DEFAULT_MAX_ROUNDS {
            break None;
        }
    };
    defmt::println!(
        "   {=u32} resumes opened, each with its own round and step",
        resumes_ok
    );
    check!(
        report,
        resumes_ok == DEFAULT_MAX_ROUNDS - 1,
        "call + {=u32} resumes accepted (cap {=u32} invocations)",
        resumes_ok,
        DEFAULT_MAX_ROUNDS
    );
    check!(
        report,
        refusal == Some(Reason::RoundsExceeded),
        "resume {=u32} refused: {}",
        resumes_ok + 1,
        refusal
    );
}
