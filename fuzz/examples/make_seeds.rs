//! Writes the committed seed corpus under `fuzz/seeds/`: real tokens from `Codec::pause` for
//! the fixture (text for `unseal_text`, decoded bytes for `unseal_bytes`, selector + opened
//! plaintext for `sealed_state`), and small hand-made inputs for the other targets.
//!
//! Deterministic: run `cargo run --example make_seeds` in `fuzz/` after a format change, and
//! `cargo test` there checks every committed seed still means what its name says.

use std::fs;
use std::path::Path;

use mrtr_fuzz::seeds;

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    for (target, name, bytes) in seeds::all() {
        let dir = root.join(target);
        fs::create_dir_all(&dir)?;
        fs::write(dir.join(name), bytes)?;
    }
    println!("seeds written under {}", root.display());
    Ok(())
}
