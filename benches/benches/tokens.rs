//! mrtr's seal, unseal, round trip and resume cycle per backend, and the peer token libraries
//! on the same continuations. Groups: `seal`, `unseal`, `roundtrip`, `cycle`; ids are
//! `<row>/<continuation bytes>`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mrtr_aes_gcm::Aes256Gcm;
use mrtr_benches::peers::{self, Peer};
use mrtr_benches::{ARGS, FastRng, binding, continuation, key_ring};
use mrtr_chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use mrtr_core::cipher::Cipher;
use mrtr_core::{Mrtr, Round, TokenBuf, token_len_for};
use mrtr_std::replay::MemoryReplayCache;
use mrtr_std::{OsRng, SystemClock};
use rand_core::TryCryptoRng;

/// Distinct tokens an unseal row cycles through. Opening one token over and over lets the
/// branch predictor learn its exact text, which hides the cost of a branchy decoder; real
/// servers open a different token every time.
const POOL: usize = 256;

/// In-process replay cache capacity for the cycle rows (2 s of ids at up to 1 M cycles/s).
const CYCLE_CACHE: usize = 2_000_000;

/// Seal, unseal and round trip of one backend at one continuation size, with the buffer sized
/// for exactly that size (`N = token_len_for(n)`).
fn mrtr_rows<C: Cipher, const N: usize>(c: &mut Criterion, id: &str, n: usize) {
    let mrtr = Mrtr::builder(key_ring::<C>(), SystemClock)
        .without_audience()
        .build()
        .expect("config");
    let call = binding();
    let cont = continuation(n);
    let mut out = TokenBuf::<N>::new();
    let mut buf = TokenBuf::<N>::new();
    let mut rng = OsRng;

    c.benchmark_group("seal")
        .bench_function(BenchmarkId::new(id, n), |b| {
            b.iter(|| {
                let s = mrtr
                    .pause(
                        Round::FIRST,
                        &call,
                        &ARGS,
                        black_box(&cont),
                        &mut rng,
                        &mut out,
                    )
                    .expect("seal");
                black_box(s.as_str().len())
            })
        });

    let tokens: Vec<String> = (0..POOL)
        .map(|_| {
            mrtr.pause(Round::FIRST, &call, &ARGS, &cont, &mut rng, &mut out)
                .expect("seal")
                .as_str()
                .to_owned()
        })
        .collect();
    let mut next = tokens.iter().cycle();
    c.benchmark_group("unseal")
        .bench_function(BenchmarkId::new(id, n), |b| {
            b.iter(|| {
                let token = next.next().expect("endless");
                let r = mrtr
                    .resume(black_box(token), &call, &ARGS, &mut buf)
                    .expect("unseal");
                black_box(r.continuation().len())
            })
        });

    roundtrip(c, id, n, &mrtr, &mut rng, &mut out, &mut buf);
    cycle::<C, _, N>(c, id, n, &mut rng, &mut out, &mut buf);
}

fn roundtrip<C: Cipher, G: TryCryptoRng, const N: usize>(
    c: &mut Criterion,
    id: &str,
    n: usize,
    mrtr: &Mrtr<C, SystemClock>,
    rng: &mut G,
    out: &mut TokenBuf<N>,
    buf: &mut TokenBuf<N>,
) {
    let call = binding();
    let cont = continuation(n);
    c.benchmark_group("roundtrip")
        .bench_function(BenchmarkId::new(id, n), |b| {
            b.iter(|| {
                let s = mrtr
                    .pause(Round::FIRST, &call, &ARGS, black_box(&cont), rng, out)
                    .expect("seal");
                let r = mrtr.resume(s.as_str(), &call, &ARGS, buf).expect("unseal");
                black_box(r.continuation().len())
            })
        });
}

/// One resume of a chain: unseal + checks + replay record (`mrtr-std`'s in-process cache) +
/// seal of the next round, the token text carried in a reused `String` like a server's
/// response buffer.
fn cycle<C: Cipher, G: TryCryptoRng, const N: usize>(
    c: &mut Criterion,
    id: &str,
    n: usize,
    rng: &mut G,
    out: &mut TokenBuf<N>,
    buf: &mut TokenBuf<N>,
) {
    let call = binding();
    let cont = continuation(n);
    // Chains here run for a million rounds: lift the cap and keep every other check. Ids
    // live 2 s, so the cache holds the last ~2 s of ids.
    let chain = Mrtr::builder(key_ring::<C>(), SystemClock)
        .without_audience()
        .ttl_ms(2_000)
        .max_rounds(u32::MAX)
        .replay_cache(MemoryReplayCache::new(CYCLE_CACHE))
        .build()
        .expect("config");
    let mut tok = String::with_capacity(N);
    tok.push_str(
        chain
            .pause(Round::FIRST, &call, &ARGS, &cont, rng, out)
            .expect("seal")
            .as_str(),
    );
    c.benchmark_group("cycle")
        .bench_function(BenchmarkId::new(id, n), |b| {
            b.iter(|| {
                let r = chain.resume(&tok, &call, &ARGS, buf).expect("resume");
                let s = chain
                    .pause(r.next_round(), &call, &ARGS, black_box(&cont), rng, out)
                    .expect("seal");
                tok.clear();
                tok.push_str(s.as_str());
            })
        });
}

/// mrtr's own work without the two `getrandom` system calls per seal: AES-256-GCM with a
/// userspace generator (diagnostic row, not a supported configuration).
fn mrtr_fast_rng<const N: usize>(c: &mut Criterion, n: usize) {
    let mrtr = Mrtr::builder(key_ring::<Aes256Gcm>(), SystemClock)
        .without_audience()
        .build()
        .expect("config");
    let mut out = TokenBuf::<N>::new();
    let mut buf = TokenBuf::<N>::new();
    roundtrip(
        c,
        "mrtr-aes256gcm-userspace-rng",
        n,
        &mrtr,
        &mut FastRng::default(),
        &mut out,
        &mut buf,
    );
}

/// Core's base64url decoder against the table-driven one in `mrtr_benches::b64_table`, on the
/// text of a real token for each continuation size (diagnostic: the proposed core change).
fn b64_rows<const N: usize>(c: &mut Criterion, n: usize) {
    let mrtr = Mrtr::builder(key_ring::<Aes256Gcm>(), SystemClock)
        .without_audience()
        .build()
        .expect("config");
    let mut out = TokenBuf::<N>::new();
    let texts: Vec<Vec<u8>> = (0..POOL)
        .map(|_| {
            mrtr.pause(
                Round::FIRST,
                &binding(),
                &ARGS,
                &continuation(n),
                &mut OsRng,
                &mut out,
            )
            .expect("seal")
            .as_str()
            .as_bytes()
            .to_vec()
        })
        .collect();
    let mut buf = texts[0].clone();
    let mut group = c.benchmark_group("b64-decode");
    let mut next = texts.iter().cycle();
    group.bench_function(BenchmarkId::new("core", n), |b| {
        b.iter(|| {
            let text = next.next().expect("endless");
            buf.copy_from_slice(text);
            black_box(mrtr_core::b64::decode_in_place(
                black_box(&mut buf),
                text.len(),
            ))
        })
    });
    group.bench_function(BenchmarkId::new("table", n), |b| {
        b.iter(|| {
            let text = next.next().expect("endless");
            buf.copy_from_slice(text);
            black_box(mrtr_benches::b64_table::decode_in_place(
                black_box(&mut buf),
                text.len(),
            ))
        })
    });
}

fn peer_rows(c: &mut Criterion, peer: &mut dyn Peer, n: usize) {
    let id = peer.id();
    let cont = continuation(n);
    c.benchmark_group("seal")
        .bench_function(BenchmarkId::new(id, n), |b| {
            b.iter(|| black_box(peer.seal(black_box(&cont))))
        });
    let tokens: Vec<String> = (0..POOL).map(|_| peer.seal(&cont)).collect();
    assert_eq!(peer.open(&tokens[0]), cont, "{id} round trip");
    let mut next = tokens.iter().cycle();
    c.benchmark_group("unseal")
        .bench_function(BenchmarkId::new(id, n), |b| {
            b.iter(|| black_box(peer.open(black_box(next.next().expect("endless")))))
        });
    c.benchmark_group("roundtrip")
        .bench_function(BenchmarkId::new(id, n), |b| {
            b.iter(|| {
                let t = peer.seal(black_box(&cont));
                black_box(peer.open(&t))
            })
        });
}

macro_rules! per_size {
    ($c:expr, $f:ident $(, $arg:expr)*) => {
        $f::<{ token_len_for(64) }>($c $(, $arg)*, 64);
        $f::<{ token_len_for(256) }>($c $(, $arg)*, 256);
        $f::<{ token_len_for(1024) }>($c $(, $arg)*, 1024);
        $f::<{ token_len_for(4096) }>($c $(, $arg)*, 4096);
    };
}

fn aes_gcm<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<Aes256Gcm, N>(c, "mrtr-aes256gcm", n);
}

fn chacha<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<ChaCha20Poly1305, N>(c, "mrtr-chacha20poly1305", n);
}

fn xchacha<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<XChaCha20Poly1305, N>(c, "mrtr-xchacha20poly1305", n);
}

fn awslc_aes_gcm<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<mrtr_aws_lc::Aes256Gcm, N>(c, "mrtr-awslc-aes256gcm", n);
}

fn awslc_chacha<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<mrtr_aws_lc::ChaCha20Poly1305, N>(c, "mrtr-awslc-chacha20poly1305", n);
}

fn mrtr(c: &mut Criterion) {
    per_size!(c, aes_gcm);
    per_size!(c, chacha);
    per_size!(c, xchacha);
    per_size!(c, awslc_aes_gcm);
    per_size!(c, awslc_chacha);
    per_size!(c, mrtr_fast_rng);
    per_size!(c, b64_rows);
}

fn peers(c: &mut Criterion) {
    for mut peer in peers::all() {
        for n in mrtr_benches::SIZES {
            peer_rows(c, peer.as_mut(), n);
        }
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = config();
    targets = mrtr, peers
}
criterion_main!(benches);
