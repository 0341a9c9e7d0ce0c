//! Fork detection of `rng_fast` with a real `fork(2)`, not a mock: the child inherits a copy of
//! the parent's generator state, draws from it, and sends what it drew back through a pipe.
//!
//! Its own harness (`harness = false`): the process stays single-threaded, so forking it is
//! safe, and the child may allocate and format freely before it exits.
//!
//! * Control: a plain ChaCha20 generator (no fork detection) gives parent and child the same
//!   bytes after the fork. This shows the method would catch a generator that reuses state.
//! * `ReseedingRng` and the thread handle `FastRng`: the child's bytes differ from the
//!   parent's, and the child (only the child) counted a reseed.

use std::io::{Read, Write};

use chacha20::ChaCha20Rng;
use mrtr_std::rng_fast::{FastRng, ReseedPolicy, ReseedingRng};
use rand_core::{SeedableRng, TryRng};

const DRAW: usize = 64;

/// Runs `child` in a forked child process and returns the bytes it produced.
fn in_child(child: impl FnOnce() -> Vec<u8>) -> Vec<u8> {
    let (mut reader, mut writer) = std::io::pipe().expect("pipe");
    // SAFETY: this test process is single-threaded (its own harness, no threads spawned), so
    // the child starts with a consistent heap and no lock held by another thread.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let out = child();
            writer.write_all(&out).is_ok()
        }));
        let code = if matches!(ok, Ok(true)) { 0 } else { 1 };
        // SAFETY: ends the child at once, without running the parent's exit handlers twice.
        unsafe { libc::_exit(code) };
    }
    drop(writer);
    let mut out = Vec::new();
    reader.read_to_end(&mut out).expect("read from child");
    let mut status = 0;
    // SAFETY: waits for the child just forked; `status` is a valid out pointer.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid, "waitpid");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: status {status}"
    );
    out
}

fn fill<R: TryRng>(rng: &mut R) -> Vec<u8>
where
    R::Error: std::fmt::Debug,
{
    let mut b = vec![0u8; DRAW];
    rng.try_fill_bytes(&mut b).expect("draw");
    b
}

fn plain_chacha_repeats_across_fork() {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).unwrap();
    let mut rng = ChaCha20Rng::from_seed(seed);
    fill(&mut rng);
    let child = in_child(|| fill(&mut rng));
    let parent = fill(&mut rng);
    assert_eq!(child.len(), DRAW);
    assert_eq!(
        child, parent,
        "control: without detection the child repeats the parent's stream"
    );
}

fn reseeding_rng_reseeds_in_the_child() {
    // A policy that would never reseed by itself within this test.
    let policy = ReseedPolicy {
        max_bytes: u64::MAX,
        max_age: std::time::Duration::from_secs(3600),
    };
    let mut rng = ReseedingRng::with_policy(policy).unwrap();
    fill(&mut rng);
    assert_eq!(rng.reseeds(), 0);
    let child = in_child(|| {
        let mut out = fill(&mut rng);
        out.extend_from_slice(&rng.reseeds().to_le_bytes());
        out
    });
    let parent = fill(&mut rng);
    let (child_bytes, child_reseeds) = child.split_at(DRAW);
    assert_ne!(child_bytes, parent, "the child repeated the parent's bytes");
    assert_eq!(
        u64::from_le_bytes(child_reseeds.try_into().unwrap()),
        1,
        "the child reseeded once, before its first draw"
    );
    assert_eq!(rng.reseeds(), 0, "the parent keeps its stream");
}

fn thread_handle_reseeds_in_the_child() {
    fill(&mut FastRng);
    let before = FastRng::reseeds();
    let child = in_child(|| {
        let mut out = fill(&mut FastRng);
        out.extend_from_slice(&FastRng::reseeds().to_le_bytes());
        out
    });
    let parent = fill(&mut FastRng);
    let (child_bytes, child_reseeds) = child.split_at(DRAW);
    assert_ne!(child_bytes, parent, "the child repeated the parent's bytes");
    assert_eq!(
        u64::from_le_bytes(child_reseeds.try_into().unwrap()),
        before + 1
    );
    assert_eq!(FastRng::reseeds(), before);
}

fn main() {
    let cases: [(&str, fn()); 3] = [
        (
            "plain_chacha_repeats_across_fork",
            plain_chacha_repeats_across_fork,
        ),
        (
            "reseeding_rng_reseeds_in_the_child",
            reseeding_rng_reseeds_in_the_child,
        ),
        (
            "thread_handle_reseeds_in_the_child",
            thread_handle_reseeds_in_the_child,
        ),
    ];
    let mut failed = 0;
    for (name, case) in cases {
        match std::panic::catch_unwind(case) {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed += 1;
            }
        }
    }
    println!("{} passed, {failed} failed", cases.len() - failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
