//! Heap allocations per operation for the rows of the report's allocation table (mrtr, the
//! RustCrypto raw AEADs, the peers), under a counting global allocator. Prints tab-separated lines: `group  row  bytes  allocs_per_op  alloc_bytes_per_op`.
//!
//! Usage: `allocs [ITERATIONS [ROW-FILTER]]` (default 2000 iterations, every row).

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_aes_gcm_siv::Aes256GcmSiv;
use mrtr_benches::alloc_count::{Counting, per_op, per_op_after};
use mrtr_benches::floor::{self, RawAead};
use mrtr_benches::peers;
use mrtr_benches::{ARGS, SIZES, binding, continuation, key_ring};
use mrtr_chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use mrtr_core::cipher::Cipher;
use mrtr_core::{Codec, Round, TokenBuf, token_len_for};
use mrtr_replay::MemoryReplayCache;
use mrtr_std::clock::ManualClock;
use mrtr_std::clock::SystemClock;
use mrtr_std::rng::OsRng;
use mrtr_std::rng_fast::FastRng;
use rand_core::TryCryptoRng;

#[global_allocator]
static ALLOC: Counting = Counting;

/// Whether a row passes the optional filter (second argument, a substring of the row id).
fn wanted(id: &str) -> bool {
    std::env::args().nth(2).is_none_or(|f| id.contains(&f))
}

fn line(group: &str, row: &str, n: usize, (allocs, bytes): (f64, f64)) {
    mrtr_benches::outln!("{group}\t{row}\t{n}\t{allocs:.2}\t{bytes:.0}");
}

fn mrtr_rows<C: Cipher, G: TryCryptoRng, const N: usize>(
    iters: u64,
    id: &str,
    n: usize,
    rng: &mut G,
) {
    if !wanted(id) {
        return;
    }
    let mrtr = Codec::builder(key_ring::<C>(), SystemClock)
        .without_audience()
        .build()
        .expect("config");
    let call = binding();
    let cont = continuation(n);
    // Buffers live on the heap here only because 4 KiB-continuation buffers are large; the
    // allocation happens once, outside the counted loop.
    let mut out = Box::new(TokenBuf::<N>::new());
    let mut buf = Box::new(TokenBuf::<N>::new());

    line(
        "seal",
        id,
        n,
        per_op(iters, || {
            mrtr.pause(Round::FIRST, &call, &ARGS, &cont, rng, &mut out)
                .expect("seal");
        }),
    );

    let token = mrtr
        .pause(Round::FIRST, &call, &ARGS, &cont, rng, &mut out)
        .expect("seal")
        .as_str()
        .to_owned();
    line(
        "unseal",
        id,
        n,
        per_op(iters, || {
            mrtr.resume(&token, &call, &ARGS, &mut buf).expect("unseal");
        }),
    );

    line(
        "roundtrip",
        id,
        n,
        per_op(iters, || {
            let s = mrtr
                .pause(Round::FIRST, &call, &ARGS, &cont, rng, &mut out)
                .expect("seal");
            mrtr.resume(s.as_str(), &call, &ARGS, &mut buf)
                .expect("unseal");
        }),
    );

    // The cycle with the in-process replay cache in its steady state: ids live 1000 ms on a
    // clock that moves 1 ms per cycle, so after the warm-up each record evicts about one
    // expired id and the cache's tables have stopped growing (while they grow, doubling
    // allocates, amortised).
    let clock = ManualClock::new(1_000_000);
    let chain = Codec::builder(key_ring::<C>(), &clock)
        .without_audience()
        .ttl_ms(1_000)
        .max_rounds(u32::MAX)
        .replay_cache(MemoryReplayCache::new(100_000))
        .build()
        .expect("config");
    let mut tok = String::with_capacity(N);
    tok.push_str(
        chain
            .pause(Round::FIRST, &call, &ARGS, &cont, rng, &mut out)
            .expect("seal")
            .as_str(),
    );
    line(
        "cycle",
        id,
        n,
        per_op_after(20_000, iters, || {
            clock.advance(1);
            let r = chain.resume(&tok, &call, &ARGS, &mut buf).expect("resume");
            let s = chain
                .pause(r.next_round(), &call, &ARGS, &cont, rng, &mut out)
                .expect("seal");
            tok.clear();
            tok.push_str(s.as_str());
        }),
    );
}

macro_rules! per_size {
    ($iters:expr, $cipher:ty, $id:expr) => {
        per_size!($iters, $cipher, $id, OsRng)
    };
    ($iters:expr, $cipher:ty, $id:expr, $rng:expr) => {
        mrtr_rows::<$cipher, _, { token_len_for(64) }>($iters, $id, 64, &mut $rng);
        mrtr_rows::<$cipher, _, { token_len_for(256) }>($iters, $id, 256, &mut $rng);
        mrtr_rows::<$cipher, _, { token_len_for(1024) }>($iters, $id, 1024, &mut $rng);
        mrtr_rows::<$cipher, _, { token_len_for(4096) }>($iters, $id, 4096, &mut $rng);
    };
}

fn floor_rows(iters: u64, aead: &dyn RawAead) {
    if !wanted(aead.id()) {
        return;
    }
    for n in SIZES {
        let mut buf = continuation(n);
        line(
            "aead-roundtrip",
            aead.id(),
            n,
            per_op(iters, || {
                let tag = aead.seal(&mut buf);
                aead.open(&mut buf, &tag);
            }),
        );
    }
}

fn main() {
    let iters = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);

    per_size!(iters, Aes256Gcm, "mrtr-aes256gcm");
    per_size!(iters, ChaCha20Poly1305, "mrtr-chacha20poly1305");
    per_size!(iters, XChaCha20Poly1305, "mrtr-xchacha20poly1305");
    per_size!(iters, mrtr_aws_lc::Aes256Gcm, "mrtr-awslc-aes256gcm");
    per_size!(
        iters,
        mrtr_aws_lc::ChaCha20Poly1305,
        "mrtr-awslc-chacha20poly1305"
    );
    per_size!(iters, Aes256GcmSiv, "mrtr-aes256gcmsiv");
    per_size!(iters, Aes256GcmSiv, "mrtr-aes256gcmsiv-fastrng", FastRng);

    // The raw AEADs of mrtr's own backends (the report's allocation table shows those).
    let floors: [&dyn RawAead; 4] = [
        &floor::rustcrypto_aes_gcm(),
        &floor::rustcrypto_chacha(),
        &floor::rustcrypto_xchacha(),
        &floor::rustcrypto_aes_gcm_siv(),
    ];
    for aead in floors {
        floor_rows(iters, aead);
    }

    for mut peer in peers::all().into_iter().filter(|p| wanted(p.id())) {
        for n in SIZES {
            let cont = continuation(n);
            let id = peer.id();
            line(
                "seal",
                id,
                n,
                per_op(iters, || {
                    std::hint::black_box(peer.seal(&cont));
                }),
            );
            let token = peer.seal(&cont);
            line(
                "unseal",
                id,
                n,
                per_op(iters, || {
                    std::hint::black_box(peer.open(&token));
                }),
            );
            line(
                "roundtrip",
                id,
                n,
                per_op(iters, || {
                    let t = peer.seal(&cont);
                    std::hint::black_box(peer.open(&t));
                }),
            );
        }
    }
}
