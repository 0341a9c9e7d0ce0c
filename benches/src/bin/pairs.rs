//! The goals' ratios, measured in pairs (see `mrtr_benches::paired`): each mrtr configuration
//! the goals name against its fair floor at 256 B, and against every peer at each size, a
//! batch of one then a batch of the other, round after round. `ci/bench.sh` runs it and the
//! report judges the fair-floor and peer goals on these paired medians (criterion's medians
//! stay the absolute times).
//!
//! ```text
//! pairs [ROUNDS] [BATCH_MS] > pairs.tsv
//! ```
//!
//! Lines: `pair`, a, b, bytes, rounds, median a ÷ b, min, max, median ns per call of a, of b.

use std::hint::black_box;
use std::time::Duration;

use mrtr_aes_gcm::Aes256Gcm;
use mrtr_aes_gcm_siv::Aes256GcmSiv;
use mrtr_benches::fair_floor::FairFloor;
use mrtr_benches::paired::{Summary, pair};
use mrtr_benches::peers::{self, Peer};
use mrtr_benches::{ARGS, SIZES, binding, continuation, key_ring};
use mrtr_core::cipher::Cipher;
use mrtr_core::{Binding, Codec, Round, TokenBuf, token_len_for};
use mrtr_std::clock::SystemClock;
use mrtr_std::rng::OsRng;
use mrtr_std::rng_fast::FastRng;
use rand_core::TryCryptoRng;

/// How the pairs are measured.
#[derive(Clone, Copy)]
struct Settings {
    rounds: usize,
    batch: Duration,
}

/// One mrtr seal+unseal round trip (what criterion's `roundtrip` rows time).
struct Trip<C: Cipher, G, const N: usize> {
    mrtr: Codec<C, SystemClock>,
    call: Binding<'static>,
    rng: G,
    cont: Vec<u8>,
    out: TokenBuf<N>,
    buf: TokenBuf<N>,
}

impl<C: Cipher, G: TryCryptoRng, const N: usize> Trip<C, G, N> {
    fn new(rng: G, n: usize) -> Self {
        let mrtr = Codec::builder(key_ring::<C>(), SystemClock)
            .without_audience()
            .build()
            .expect("config");
        Self {
            mrtr,
            call: binding(),
            rng,
            cont: continuation(n),
            out: TokenBuf::new(),
            buf: TokenBuf::new(),
        }
    }

    fn run(&mut self) {
        let call = &self.call;
        let s = self
            .mrtr
            .pause(
                Round::FIRST,
                call,
                &ARGS,
                black_box(&self.cont),
                &mut self.rng,
                &mut self.out,
            )
            .expect("seal");
        let r = self
            .mrtr
            .resume(s.as_str(), call, &ARGS, &mut self.buf)
            .expect("unseal");
        black_box(r.continuation().len());
    }
}

/// Prints the pair `a` ÷ `b` at `n` bytes.
fn emit(a: &str, b: &str, n: usize, rounds: &[mrtr_benches::paired::Round]) {
    match Summary::of(rounds) {
        Some(s) => mrtr_benches::outln!("{}", s.line(a, b, n)),
        None => eprintln!("pairs: {a} ÷ {b} at {n} B gave no usable round"),
    }
}

/// mrtr configuration `id` against its fair floor `floor` at 256 B.
fn against_floor<C: Cipher, G: TryCryptoRng>(id: &str, floor: &str, rng: G, s: Settings) {
    const N: usize = token_len_for(256);
    let mut trip = Trip::<C, G, N>::new(rng, 256);
    let mut fair = FairFloor::<C>::new(256);
    let rounds = pair(
        || trip.run(),
        || {
            black_box(fair.roundtrip());
        },
        s.rounds,
        s.batch,
    );
    emit(id, floor, 256, &rounds);
}

/// mrtr configuration `id` against every peer at `n` bytes.
fn against_peers<C: Cipher, G: TryCryptoRng, const N: usize>(
    id: &str,
    rng: G,
    peer_list: &mut [Box<dyn Peer>],
    n: usize,
    s: Settings,
) {
    let mut trip = Trip::<C, G, N>::new(rng, n);
    let cont = continuation(n);
    for peer in peer_list.iter_mut() {
        let peer_id = peer.id();
        let rounds = pair(
            || trip.run(),
            || {
                let t = peer.seal(black_box(&cont));
                black_box(peer.open(&t));
            },
            s.rounds,
            s.batch,
        );
        emit(id, peer_id, n, &rounds);
    }
}

/// The three configurations the peer goals name, against every peer at `n` bytes.
fn peer_goals<const N: usize>(peer_list: &mut [Box<dyn Peer>], n: usize, s: Settings) {
    against_peers::<mrtr_aws_lc::Aes256GcmSiv, _, N>(
        "mrtr-awslc-aes256gcmsiv-fastrng",
        FastRng,
        peer_list,
        n,
        s,
    );
    against_peers::<Aes256GcmSiv, _, N>("mrtr-aes256gcmsiv-fastrng", FastRng, peer_list, n, s);
    against_peers::<Aes256Gcm, _, N>("mrtr-aes256gcm", OsRng, peer_list, n, s);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = args.first().and_then(|a| a.parse().ok()).unwrap_or(31);
    let batch_ms: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(4);
    let s = Settings {
        rounds,
        batch: Duration::from_millis(batch_ms.max(1)),
    };
    mrtr_benches::outln!(
        "#pairs\t{rounds} rounds of one batch (about {batch_ms} ms) per side, order swapped \
         every round"
    );
    against_floor::<mrtr_aws_lc::Aes256GcmSiv, _>(
        "mrtr-awslc-aes256gcmsiv-fastrng",
        "floor-awslc-aes256gcmsiv",
        FastRng,
        s,
    );
    against_floor::<mrtr_aws_lc::Aes256Gcm, _>(
        "mrtr-awslc-aes256gcm",
        "floor-awslc-aes256gcm",
        OsRng,
        s,
    );
    against_floor::<mrtr_aws_lc::ChaCha20Poly1305, _>(
        "mrtr-awslc-chacha20poly1305",
        "floor-awslc-chacha20poly1305",
        OsRng,
        s,
    );
    against_floor::<Aes256GcmSiv, _>(
        "mrtr-aes256gcmsiv-fastrng",
        "floor-aes256gcmsiv",
        FastRng,
        s,
    );
    against_floor::<Aes256Gcm, _>("mrtr-aes256gcm", "floor-aes256gcm", OsRng, s);

    let mut peer_list = peers::all();
    for n in SIZES {
        match n {
            64 => peer_goals::<{ token_len_for(64) }>(&mut peer_list, n, s),
            256 => peer_goals::<{ token_len_for(256) }>(&mut peer_list, n, s),
            1024 => peer_goals::<{ token_len_for(1024) }>(&mut peer_list, n, s),
            4096 => peer_goals::<{ token_len_for(4096) }>(&mut peer_list, n, s),
            _ => eprintln!("pairs: no token buffer for {n} B"),
        }
    }
}
