//! Every vector of `tests/vectors/args-digest.json` (read with this crate itself): the
//! canonical text and SHA-256 of each accepted input, the reason of each refused one.

use mrtr_json::{Error, Limits, Value, Writer, args_digest, canonicalize, parse};

const FILE: &[u8] = include_bytes!("../../tests/vectors/args-digest.json");

fn text<'b>(v: Option<Value<'_>>, buf: &'b mut [u8]) -> &'b str {
    v.expect("member present")
        .unescape_into(buf)
        .expect("a string that fits")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What `mrtr-std` does with raw arguments: the I-JSON check of the whole text, then the
/// digest of the value (which refuses nesting past 64).
fn digest_of(raw: &[u8]) -> Result<([u8; 32], Vec<u8>), Error> {
    let limits = Limits {
        max_depth: 128,
        ..Limits::DEFAULT
    };
    let value = parse(raw, &limits)?;
    let digest = args_digest(Some(value))?;
    let mut buf = vec![0u8; raw.len() * 2 + 16];
    let mut w = Writer::new(&mut buf);
    let value = if value.kind() == mrtr_json::Kind::Null {
        parse(b"{}", &limits)?
    } else {
        value
    };
    canonicalize(value, &mut w, &Limits::DEFAULT)?;
    Ok((digest, w.finish()?.to_vec()))
}

#[test]
fn every_vector() {
    let doc = parse(FILE, &Limits::DEFAULT).expect("the vector file is I-JSON");
    let vectors = doc.get("vectors").expect("vectors");
    let mut seen = 0;
    let mut refused = 0;
    for v in vectors.items() {
        let (mut a, mut b, mut c, mut d) = ([0u8; 4096], [0u8; 4096], [0u8; 128], [0u8; 64]);
        let name = text(v.get("name"), &mut d).to_owned();
        let raw = text(v.get("arguments"), &mut a);
        let got = digest_of(raw.as_bytes());
        match v.get("refused") {
            Some(reason) => {
                refused += 1;
                let reason = text(Some(reason), &mut c);
                assert_eq!(
                    got.map(|_| ()).map_err(Error::as_str),
                    Err(reason),
                    "{name}"
                );
            }
            None => {
                let canonical = text(v.get("canonical"), &mut b);
                let sha = text(v.get("sha256_hex"), &mut c);
                let (digest, text) = got.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(std::str::from_utf8(&text).unwrap(), canonical, "{name}");
                assert_eq!(hex(&digest), sha, "{name}");
            }
        }
        seen += 1;
    }
    assert_eq!(seen, 18);
    assert_eq!(refused, 8);
}

#[test]
fn the_digest_of_no_arguments_is_that_of_an_empty_object() {
    assert_eq!(
        hex(&args_digest(None).unwrap()),
        "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    );
}
