//! The floor: raw AEADs sealing and opening a continuation in place (no framing, no
//! randomness, no associated data). RustCrypto is the floor of mrtr's backends; `ring` and
//! `aws-lc-rs` decide the third-backend rule. Group `aead-roundtrip` (seal then open, what the
//! report reads); ids are `<implementation>/<bytes>`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mrtr_benches::floor::{self, RawAead};
use mrtr_benches::{SIZES, continuation};

fn rows(c: &mut Criterion, aead: &dyn RawAead) {
    for n in SIZES {
        let mut buf = continuation(n);
        c.benchmark_group("aead-roundtrip")
            .bench_function(BenchmarkId::new(aead.id(), n), |b| {
                b.iter(|| {
                    let tag = aead.seal(black_box(&mut buf));
                    aead.open(&mut buf, &tag);
                })
            });
    }
}

fn all(c: &mut Criterion) {
    #[cfg_attr(not(feature = "comparisons"), allow(unused_mut))]
    let mut impls: Vec<Box<dyn RawAead>> = vec![
        Box::new(floor::rustcrypto_aes_gcm()),
        Box::new(floor::rustcrypto_chacha()),
        Box::new(floor::rustcrypto_xchacha()),
        Box::new(floor::rustcrypto_aes_gcm_siv()),
    ];
    #[cfg(feature = "comparisons")]
    impls.extend([
        Box::new(floor::aws_lc_aes_gcm_siv()) as Box<dyn RawAead>,
        Box::new(floor::ring_aes_gcm()),
        Box::new(floor::ring_chacha()),
        Box::new(floor::aws_lc_aes_gcm()),
        Box::new(floor::aws_lc_chacha()),
    ]);
    for aead in &impls {
        rows(c, aead.as_ref());
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
    targets = all
}
criterion_main!(benches);
