//! Standard output for the demo's binaries.

/// `println!`, except that a closed standard output (`… | head`) or another write error ends
/// the program with a one-line message on standard error and status 1 instead of a panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            eprintln!("{}: cannot write to standard output: {e}", env!("CARGO_BIN_NAME"));
            std::process::exit(1);
        }
    }};
}
