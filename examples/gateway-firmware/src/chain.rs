//! A full resume chain: the call pauses, each resume pauses again, until the round cap
//! refuses the next resume (default 10 invocations: the call and 9 resumes).

use mrtr_core::cipher::Cipher;
use mrtr_core::{DEFAULT_MAX_ROUNDS, Mrtr, Reason, Round};
use rand_core::TryCryptoRng;

use crate::clock::SysTickClock;
use crate::report::Report;
use crate::{ARGS, OWNER, TOOL, Token, call, keys};

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
    report.section("resume chain up to the round cap");
    let mrtr = match Mrtr::builder(keys::ring::<C>(), SysTickClock)
        .without_audience()
        .build()
    {
        Ok(m) => m,
        Err(e) => {
            report.check(false, format_args!("default configuration builds: {e}"));
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
                report.check(false, format_args!("pause in round {}: {e}", round.get()));
                return;
            }
        };
        match mrtr.resume(token, &binding, &ARGS, &mut open_buf) {
            Ok(r) => {
                let same = r.round() == round.get() && r.continuation() == step(round.get());
                if !same {
                    report.check(
                        false,
                        format_args!("resume {} returns its own state", resumes_ok + 1),
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
    report.note(format_args!(
        "{resumes_ok} resumes opened, each with its own round and step"
    ));
    report.check(
        resumes_ok == DEFAULT_MAX_ROUNDS - 1,
        format_args!("call + {resumes_ok} resumes accepted (cap {DEFAULT_MAX_ROUNDS} invocations)"),
    );
    report.check(
        refusal == Some(Reason::RoundsExceeded),
        format_args!("resume {} refused: {:?}", resumes_ok + 1, refusal),
    );
}
