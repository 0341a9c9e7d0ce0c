//! mrtr's seal, unseal, round trip and resume cycle per backend and nonce source, the fair
//! floors, the parts of a round trip, and the peer token libraries on the same continuations.
//!
//! Groups: `seal`, `unseal`, `roundtrip`, `cycle` (mrtr and peers), `fairfloor` (round trips
//! of `mrtr_benches::fair_floor`), `b64-encode`, `b64-decode`, `parts` (one random draw, one
//! clock read, one associated-data build). Ids are `<row>/<continuation bytes>`.

use std::hint::black_box;
use std::time::Duration;

use base64::Engine as _;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mrtr_aes_gcm::Aes256Gcm;
use mrtr_aes_gcm_siv::Aes256GcmSiv;
use mrtr_benches::fair_floor::{FairFloor, fastest_b64};
#[cfg(feature = "comparisons")]
use mrtr_benches::peers::{self, Peer};
use mrtr_benches::{ARGS, KEY_ID, binding, continuation, key_ring};
use mrtr_chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use mrtr_core::cipher::Cipher;
use mrtr_core::{Clock, Codec, ErrorDetail, Round, TokenBuf, token_len_for};
use mrtr_replay::MemoryReplayCache;
use mrtr_std::clock::SystemClock;
use mrtr_std::rng::OsRng;
use mrtr_std::rng_fast::FastRng;
use rand_core::{SeedableRng, TryCryptoRng, TryRng};

/// Distinct tokens an unseal row cycles through. Opening one token over and over lets the
/// branch predictor learn its exact text, which hides the cost of a branchy decoder; real
/// servers open a different token every time.
const POOL: usize = 256;

/// In-process replay cache capacity for the cycle rows (1 s of ids at up to 4 M cycles/s).
const CYCLE_CACHE: usize = 4_000_000;

/// Seal, unseal, round trip and cycle of one backend with one nonce source at one
/// continuation size, with the buffer sized for exactly that size (`N = token_len_for(n)`).
fn mrtr_rows<C: Cipher, G: TryCryptoRng, const N: usize>(
    c: &mut Criterion,
    id: &str,
    n: usize,
    rng: &mut G,
) {
    let mrtr = Codec::builder(key_ring::<C>(), SystemClock)
        .without_audience()
        .build()
        .expect("config");
    let call = binding();
    let cont = continuation(n);
    let mut out = TokenBuf::<N>::new();
    let mut buf = TokenBuf::<N>::new();

    c.benchmark_group("seal")
        .bench_function(BenchmarkId::new(id, n), |b| {
            b.iter(|| {
                let s = mrtr
                    .pause(Round::FIRST, &call, &ARGS, black_box(&cont), rng, &mut out)
                    .expect("seal");
                black_box(s.as_str().len())
            })
        });

    let tokens: Vec<String> = (0..POOL)
        .map(|_| {
            mrtr.pause(Round::FIRST, &call, &ARGS, &cont, rng, &mut out)
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

    roundtrip(c, id, n, &mrtr, rng, &mut out, &mut buf);
    cycle::<C, _, N>(c, id, n, rng, &mut out, &mut buf);
}

fn roundtrip<C: Cipher, G: TryCryptoRng, const N: usize>(
    c: &mut Criterion,
    id: &str,
    n: usize,
    mrtr: &Codec<C, SystemClock>,
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
    // Chains here run for millions of rounds: lift the cap and keep every other check. Ids
    // live 1 s, so the cache holds the last ~1 s of ids (about a million on the fastest
    // backend, well within its capacity).
    let chain = Codec::builder(key_ring::<C>(), SystemClock)
        .without_audience()
        .ttl_ms(1_000)
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

/// AES-256-GCM with the fast userspace generator: a diagnostic of what the system call costs
/// this backend, NOT a supported configuration (see SECURITY.md).
fn aes_gcm_fast_rng<const N: usize>(c: &mut Criterion, n: usize) {
    let mrtr = Codec::builder(key_ring::<Aes256Gcm>(), SystemClock)
        .without_audience()
        .build()
        .expect("config");
    let mut out = TokenBuf::<N>::new();
    let mut buf = TokenBuf::<N>::new();
    roundtrip(
        c,
        "mrtr-aes256gcm-fastrng",
        n,
        &mrtr,
        &mut FastRng,
        &mut out,
        &mut buf,
    );
}

fn fair_floor<C: Cipher>(c: &mut Criterion, id: &str, n: usize) {
    let mut floor = FairFloor::<C>::new(n);
    c.benchmark_group("fairfloor")
        .bench_function(BenchmarkId::new(id, n), |b| {
            b.iter(|| black_box(floor.roundtrip()))
        });
}

/// The base64url parts: core's codec (as mrtr-std builds it), `base64`'s scalar engine and
/// its SIMD engine, on the bytes and text of real tokens of each size (a pool, so the text
/// changes every call).
fn b64_rows<const N: usize>(c: &mut Criterion, n: usize) {
    let mrtr = Codec::builder(key_ring::<Aes256Gcm>(), SystemClock)
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
    let scalar = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let simd = fastest_b64();
    let raws: Vec<Vec<u8>> = texts
        .iter()
        .map(|t| scalar.decode(t).expect("token text"))
        .collect();
    let mut buf = vec![0u8; N];
    let mut next = 0usize;

    let mut g = c.benchmark_group("b64-decode");
    g.bench_function(BenchmarkId::new("core", n), |b| {
        b.iter(|| {
            next = (next + 1) % POOL;
            black_box(mrtr_core::b64::decode_into(
                black_box(&texts[next]),
                &mut buf,
            ))
        })
    });
    g.bench_function(BenchmarkId::new("base64-scalar", n), |b| {
        b.iter(|| {
            next = (next + 1) % POOL;
            black_box(scalar.decode_slice(black_box(&texts[next]), &mut buf))
        })
    });
    g.bench_function(BenchmarkId::new("base64-simd", n), |b| {
        b.iter(|| {
            next = (next + 1) % POOL;
            black_box(simd.decode_slice(black_box(&texts[next]), &mut buf))
        })
    });
    drop(g);

    let mut g = c.benchmark_group("b64-encode");
    g.bench_function(BenchmarkId::new("core-in-place", n), |b| {
        b.iter(|| {
            next = (next + 1) % POOL;
            let raw = &raws[next];
            buf[..raw.len()].copy_from_slice(raw);
            black_box(mrtr_core::b64::encode_in_place(
                black_box(&mut buf),
                raw.len(),
            ))
        })
    });
    g.bench_function(BenchmarkId::new("base64-scalar", n), |b| {
        b.iter(|| {
            next = (next + 1) % POOL;
            black_box(scalar.encode_slice(black_box(&raws[next]), &mut buf))
        })
    });
    g.bench_function(BenchmarkId::new("base64-simd", n), |b| {
        b.iter(|| {
            next = (next + 1) % POOL;
            black_box(simd.encode_slice(black_box(&raws[next]), &mut buf))
        })
    });
}

/// Size-independent parts of a seal: one 28-byte draw (token id + 96-bit nonce) from each
/// generator, one wall-clock read, one associated-data build. Id `<part>/28` or `<part>/0`.
fn parts(c: &mut Criterion) {
    let mut g = c.benchmark_group("parts");
    let mut draw = [0u8; 28];
    g.bench_function(BenchmarkId::new("rng-os", 28), |b| {
        b.iter(|| OsRng.try_fill_bytes(black_box(&mut draw)).expect("os"))
    });
    g.bench_function(BenchmarkId::new("rng-fast", 28), |b| {
        b.iter(|| FastRng.try_fill_bytes(black_box(&mut draw)).expect("fast"))
    });
    let mut chacha = chacha20::ChaCha20Rng::from_seed([7; 32]);
    g.bench_function(BenchmarkId::new("rng-chacha20", 28), |b| {
        b.iter(|| {
            let Ok(()) = chacha.try_fill_bytes(black_box(&mut draw));
        })
    });
    g.bench_function(BenchmarkId::new("clock", 0), |b| {
        b.iter(|| black_box(SystemClock.now_ms()))
    });
    let mut header = vec![2, 1, KEY_ID.len() as u8];
    header.extend_from_slice(KEY_ID.as_bytes());
    let call = binding();
    // Filled in place into one buffer, as the engine does on every pause and resume.
    let mut aad = mrtr_core::Aad::new();
    g.bench_function(BenchmarkId::new("aad-build", 0), |b| {
        b.iter(|| {
            let bytes = aad.fill(black_box(&header), None, &call).expect("fits");
            black_box(bytes.len())
        })
    });
    // The hosted server's precheck of a request body (I-JSON and the envelope, no tree), and
    // a serde_json parse of the same body into a Value for scale. The body is the end-to-end
    // benchmark's resume request (ci/bench-e2e.lua), with a token of the hosted default's size.
    let body = resume_body();
    g.bench_function(BenchmarkId::new("precheck", body.len()), |b| {
        b.iter(|| {
            let checked = mrtr_std::jsonrpc::precheck_bytes(black_box(&body), ErrorDetail::Uniform);
            black_box(matches!(checked.outcome, mrtr_std::jsonrpc::Precheck::Pass))
        })
    });
    g.bench_function(BenchmarkId::new("value-parse", body.len()), |b| {
        b.iter(|| black_box(serde_json::from_slice::<serde_json::Value>(black_box(&body)).is_ok()))
    });
}

/// The end-to-end benchmark's resume request body, with a 195-character token.
fn resume_body() -> Vec<u8> {
    let token: String = (0..195)
        .map(|i| {
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[i * 7 % 64] as char
        })
        .collect();
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"book_table\",\
         \"arguments\":{{\"party_size\":4}},\"_meta\":{{\"io.modelcontextprotocol/protocolVersion\":\
         \"2026-07-28\",\"io.modelcontextprotocol/clientInfo\":{{\"name\":\"bench-e2e\",\"version\":\"1\"}},\
         \"io.modelcontextprotocol/clientCapabilities\":{{\"elicitation\":{{}}}}}},\"requestState\":\"{token}\",\
         \"inputResponses\":{{\"date\":{{\"action\":\"accept\",\"content\":{{\"date\":\"2026-12-24\"}}}}}}}}}}"
    )
    .into_bytes()
}

#[cfg(feature = "comparisons")]
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
    mrtr_rows::<Aes256Gcm, _, N>(c, "mrtr-aes256gcm", n, &mut OsRng);
}

fn chacha<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<ChaCha20Poly1305, _, N>(c, "mrtr-chacha20poly1305", n, &mut OsRng);
}

fn xchacha<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<XChaCha20Poly1305, _, N>(c, "mrtr-xchacha20poly1305", n, &mut OsRng);
}

#[cfg(feature = "comparisons")]
fn awslc_aes_gcm<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<mrtr_aws_lc::Aes256Gcm, _, N>(c, "mrtr-awslc-aes256gcm", n, &mut OsRng);
}

#[cfg(feature = "comparisons")]
fn awslc_chacha<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<mrtr_aws_lc::ChaCha20Poly1305, _, N>(
        c,
        "mrtr-awslc-chacha20poly1305",
        n,
        &mut OsRng,
    );
}

#[cfg(feature = "comparisons")]
fn awslc_gcm_siv_fast<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<mrtr_aws_lc::Aes256GcmSiv, _, N>(
        c,
        "mrtr-awslc-aes256gcmsiv-fastrng",
        n,
        &mut FastRng,
    );
}

fn gcm_siv<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<Aes256GcmSiv, _, N>(c, "mrtr-aes256gcmsiv", n, &mut OsRng);
}

fn gcm_siv_fast<const N: usize>(c: &mut Criterion, n: usize) {
    mrtr_rows::<Aes256GcmSiv, _, N>(c, "mrtr-aes256gcmsiv-fastrng", n, &mut FastRng);
}

fn mrtr(c: &mut Criterion) {
    per_size!(c, aes_gcm);
    per_size!(c, chacha);
    per_size!(c, xchacha);
    #[cfg(feature = "comparisons")]
    {
        per_size!(c, awslc_aes_gcm);
        per_size!(c, awslc_chacha);
        per_size!(c, awslc_gcm_siv_fast);
    }
    per_size!(c, gcm_siv);
    per_size!(c, gcm_siv_fast);
    per_size!(c, aes_gcm_fast_rng);
}

fn floors(c: &mut Criterion) {
    for n in mrtr_benches::SIZES {
        fair_floor::<Aes256Gcm>(c, "floor-aes256gcm", n);
        fair_floor::<ChaCha20Poly1305>(c, "floor-chacha20poly1305", n);
        fair_floor::<XChaCha20Poly1305>(c, "floor-xchacha20poly1305", n);
        #[cfg(feature = "comparisons")]
        {
            fair_floor::<mrtr_aws_lc::Aes256Gcm>(c, "floor-awslc-aes256gcm", n);
            fair_floor::<mrtr_aws_lc::ChaCha20Poly1305>(c, "floor-awslc-chacha20poly1305", n);
            fair_floor::<mrtr_aws_lc::Aes256GcmSiv>(c, "floor-awslc-aes256gcmsiv", n);
        }
        fair_floor::<Aes256GcmSiv>(c, "floor-aes256gcmsiv", n);
    }
}

fn diagnostics(c: &mut Criterion) {
    per_size!(c, b64_rows);
    parts(c);
}

fn peers(c: &mut Criterion) {
    #[cfg(feature = "comparisons")]
    for mut peer in peers::all() {
        for n in mrtr_benches::SIZES {
            peer_rows(c, peer.as_mut(), n);
        }
    }
    #[cfg(not(feature = "comparisons"))]
    let _ = c;
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
    targets = mrtr, floors, diagnostics, peers
}
criterion_main!(benches);
