//! Lower-case hex, for the golden vectors.

/// Lower-case hex of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes of a hex string (either case), or `None` if it is not hex.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip_and_rejects() {
        assert_eq!(super::encode(&[0, 0xab, 0x7f]), "00ab7f");
        assert_eq!(super::decode("00AB7f"), Some(vec![0, 0xab, 0x7f]));
        assert_eq!(super::decode("0"), None);
        assert_eq!(super::decode("zz"), None);
        assert_eq!(super::decode("+1"), None);
    }
}
