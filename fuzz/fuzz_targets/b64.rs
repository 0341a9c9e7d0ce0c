//! base64url: every byte string round-trips, every accepted text is canonical, and decoding
//! (in place and into another buffer) agrees exactly with the `base64` crate's strict unpadded
//! URL-safe scalar engine. Core is built here as mrtr-std builds it, with the `simd` feature, so
//! this is also a differential test of the SIMD engine against the scalar one.
#![no_main]

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use libfuzzer_sys::fuzz_target;
use mrtr_core::b64;

fuzz_target!(|data: &[u8]| {
    // Bytes -> text -> bytes.
    let mut buf = vec![0u8; b64::encoded_len(data.len()).max(data.len())];
    buf[..data.len()].copy_from_slice(data);
    let n = b64::encode_in_place(&mut buf, data.len()).expect("buffer is large enough");
    assert_eq!(n, b64::encoded_len(data.len()));
    assert_eq!(&buf[..n], URL_SAFE_NO_PAD.encode(data).as_bytes());
    let m = b64::decode_in_place(&mut buf, n).expect("own output decodes");
    assert_eq!(&buf[..m], data);

    // A buffer one byte short is refused and left untouched.
    if !data.is_empty() {
        let mut short = data.to_vec();
        short.resize(n - 1, 0);
        let before = short.clone();
        assert_eq!(b64::encode_in_place(&mut short, data.len()), None);
        assert_eq!(short, before);
    }

    // Text -> bytes: strict, canonical, and the same answer as the reference.
    let mut text = data.to_vec();
    let decoded = b64::decode_in_place(&mut text, data.len());
    let reference = URL_SAFE_NO_PAD.decode(data).ok();
    assert_eq!(decoded.map(|m| text[..m].to_vec()), reference);
    let mut out = vec![0u8; data.len()];
    let direct = b64::decode_into(data, &mut out);
    assert_eq!(direct, decoded);
    assert_eq!(direct.map(|m| out[..m].to_vec()), reference);
    if let Some(m) = decoded {
        assert_eq!(Some(m), b64::decoded_len(data.len()));
        let mut again = text.clone();
        let n = b64::encode_in_place(&mut again, m).expect("fits");
        assert_eq!(&again[..n], data, "accepted a non-canonical text");
    }
});
