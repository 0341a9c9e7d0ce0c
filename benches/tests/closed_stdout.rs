//! A measurement binary whose standard output is closed ends with status 1 and a one-line
//! message (its results could not be delivered), not a panic.
#![cfg(feature = "comparisons")]

use std::process::{Command, Stdio};

#[test]
fn allocs_fails_cleanly_on_a_closed_stdout() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader); // every write to the pipe now fails with EPIPE
    let child = Command::new(env!("CARGO_BIN_EXE_allocs"))
        .args(["2", "mrtr-aes256gcm"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("allocs starts");
    let out = child.wait_with_output().expect("allocs ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    assert!(
        stderr.contains("cannot write to standard output"),
        "stderr: {stderr}"
    );
}
