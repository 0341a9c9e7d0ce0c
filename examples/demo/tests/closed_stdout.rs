//! The demo's binaries, run with standard output already closed (as `… | head` leaves it):
//! they end with status 1 and a one-line message, not a panic.

use std::process::{Command, Stdio};

fn run_with_closed_stdout(exe: &str) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader); // every write to the pipe now fails with EPIPE
    let child = Command::new(exe)
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let out = child.wait_with_output().expect("the binary ends");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn token_example_fails_cleanly_on_a_closed_stdout() {
    let (code, stderr) = run_with_closed_stdout(env!("CARGO_BIN_EXE_token-example"));
    assert_eq!(code, Some(1), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    assert!(
        stderr.starts_with("token-example: cannot write to standard output"),
        "stderr: {stderr}"
    );
}

#[test]
fn demo_fails_cleanly_on_a_closed_stdout() {
    let (code, stderr) = run_with_closed_stdout(env!("CARGO_BIN_EXE_mrtr-demo"));
    assert_eq!(code, Some(1), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    assert!(
        stderr.starts_with("mrtr-demo: cannot write to standard output"),
        "stderr: {stderr}"
    );
}
