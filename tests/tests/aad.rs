//! The canonical associated data is injective: distinct (header, audience, principal, method,
//! version, target) tuples never give the same bytes, across token formats v1 and v2. And
//! `Binding::new` and `Aad::fill` refuse what would break that.

use std::collections::HashMap;

use mrtr_core::Aad;
use mrtr_core::limits::MAX_HEADER_LEN;
use mrtr_core::limits::{
    AadLimits, MAX_AAD_LEN, MAX_AUDIENCE_LEN, MAX_METHOD_LEN, MAX_PRINCIPAL_FIELD_LEN,
    MAX_TARGET_LEN, MAX_VERSION_LEN,
};
use mrtr_core::{Binding, BindingError, Principal};
use proptest::prelude::*;

/// One input of the AAD, owned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Tuple {
    header: Vec<u8>,
    /// Only in format v2 (header byte 0 = 2); always `None` in v1.
    audience: Option<String>,
    principal: Option<(String, String)>,
    method: String,
    version: String,
    target: String,
}

impl Tuple {
    fn binding(&self) -> Binding<'_> {
        let who = match &self.principal {
            None => Principal::Anonymous,
            Some((issuer, subject)) => Principal::User { issuer, subject },
        };
        Binding::new(&self.method, &self.version, &self.target, who).expect("valid binding")
    }

    fn aad(&self) -> Vec<u8> {
        Aad::build(&self.header, self.audience.as_deref(), &self.binding())
            .expect("valid header and audience")
            .as_bytes()
            .to_vec()
    }
}

/// A valid token header: format version, algorithm id, key id length, key id.
fn header(version: u8, alg: u8, key_id: &str) -> Vec<u8> {
    let mut h = vec![version, alg, key_id.len() as u8];
    h.extend_from_slice(key_id.as_bytes());
    h
}

/// The first two tuples that `encode` maps to the same bytes, if any.
fn first_collision(tuples: &[Tuple], encode: impl Fn(&Tuple) -> Vec<u8>) -> Option<(Tuple, Tuple)> {
    let mut seen: HashMap<Vec<u8>, &Tuple> = HashMap::new();
    for t in tuples {
        if let Some(prev) = seen.insert(encode(t), t) {
            return Some((prev.clone(), t.clone()));
        }
    }
    None
}

/// Every tuple over small alphabets chosen to provoke ambiguity: both formats, empty fields,
/// NUL in the audience, target and principal, prefixes of one another.
fn small_universe() -> Vec<Tuple> {
    let audiences = [None, Some("a"), Some("ab"), Some("\0")];
    let mut framings: Vec<(Vec<u8>, Option<String>)> =
        vec![(header(1, 1, "a"), None), (header(1, 1, "ab"), None)];
    for h in [header(2, 1, "a"), header(2, 2, "a")] {
        for a in audiences {
            framings.push((h.clone(), a.map(str::to_owned)));
        }
    }
    let fields = ["", "a", "b", "\0", "ab", "a\0", "\0a", "aa"];
    let mut principals = vec![None];
    for i in fields {
        for s in fields {
            principals.push(Some((i.to_owned(), s.to_owned())));
        }
    }
    let methods = ["a", "b", "ab", "aa", "a\u{1}"];
    let versions = ["", "a", "b", "ab"];
    let mut out = Vec::new();
    for (h, a) in &framings {
        for p in &principals {
            for m in methods {
                for v in versions {
                    for t in fields {
                        out.push(Tuple {
                            header: h.clone(),
                            audience: a.clone(),
                            principal: p.clone(),
                            method: m.into(),
                            version: v.into(),
                            target: t.into(),
                        });
                    }
                }
            }
        }
    }
    out
}

#[test]
fn distinct_tuples_give_distinct_bytes_exhaustively() {
    let universe = small_universe();
    assert!(universe.len() > 100_000, "{}", universe.len());
    assert_eq!(first_collision(&universe, Tuple::aad), None);
}

#[test]
fn the_collision_check_finds_collisions_of_a_naive_encoding() {
    // Without length prefixes "ab"+"" and "a"+"b" collide: the check above can fail.
    let naive = |t: &Tuple| {
        let mut out = t.header.clone();
        out.extend_from_slice(t.audience.as_deref().unwrap_or("").as_bytes());
        if let Some((i, s)) = &t.principal {
            out.extend_from_slice(format!("{i}{s}").as_bytes());
        }
        out.extend_from_slice(format!("{}\0{}\0{}", t.method, t.version, t.target).as_bytes());
        out
    };
    assert!(first_collision(&small_universe(), naive).is_some());
}

/// Takes a `u16be` length-prefixed UTF-8 field off the front of `rest`.
fn take_prefixed(rest: &mut &[u8]) -> Option<String> {
    let (len, tail) = rest.split_first_chunk::<2>()?;
    let (field, tail) = tail.split_at_checked(usize::from(u16::from_be_bytes(*len)))?;
    *rest = tail;
    String::from_utf8(field.to_vec()).ok()
}

/// Parses AAD bytes back into a tuple, following the documented layout of each format. A
/// parser that recovers every tuple proves the encoding injective.
fn parse(aad: &[u8]) -> Option<Tuple> {
    let header_len = 3 + usize::from(*aad.get(2)?);
    let header = aad.get(..header_len)?.to_vec();
    let mut rest = &aad[header_len..];
    let audience = match header[0] {
        1 => None,
        2 => {
            let (tag, tail) = rest.split_first()?;
            rest = tail;
            match tag {
                0 => None,
                1 => Some(take_prefixed(&mut rest)?),
                _ => return None,
            }
        }
        _ => return None,
    };
    let (tag, tail) = rest.split_first()?;
    rest = tail;
    let principal = match tag {
        0 => None,
        1 => Some((take_prefixed(&mut rest)?, take_prefixed(&mut rest)?)),
        _ => return None,
    };
    let text = std::str::from_utf8(rest).ok()?;
    let mut parts = text.splitn(3, '\0');
    Some(Tuple {
        header,
        audience,
        principal,
        method: parts.next()?.into(),
        version: parts.next()?.into(),
        target: parts.next()?.into(),
    })
}

#[test]
fn the_documented_layout_parses_back_exhaustively() {
    for t in small_universe() {
        assert_eq!(parse(&t.aad()).as_ref(), Some(&t));
    }
}

#[test]
fn the_bytes_follow_the_documented_layout() {
    let v1 = Tuple {
        header: header(1, 1, "k1"),
        audience: None,
        principal: Some(("iss".into(), "sub".into())),
        method: "tools/call".into(),
        version: "2026-07-28".into(),
        target: "t\0x".into(),
    };
    let mut want = vec![1, 1, 2, b'k', b'1', 1, 0, 3];
    want.extend_from_slice(b"iss\x00\x03sub");
    want.extend_from_slice(b"tools/call\x002026-07-28\x00t\x00x");
    assert_eq!(v1.aad(), want);
    let anon = Tuple {
        principal: None,
        ..v1.clone()
    };
    let mut want = vec![1, 1, 2, b'k', b'1', 0];
    want.extend_from_slice(b"tools/call\x002026-07-28\x00t\x00x");
    assert_eq!(anon.aad(), want);

    // v2: the audience follows the header, `0x01 u16be(len) audience` or `0x00`.
    let v2 = Tuple {
        header: header(2, 1, "k1"),
        audience: Some("svc".into()),
        ..anon.clone()
    };
    let mut want = vec![2, 1, 2, b'k', b'1', 1, 0, 3];
    want.extend_from_slice(b"svc\x00tools/call\x002026-07-28\x00t\x00x");
    assert_eq!(v2.aad(), want);
    let none = Tuple {
        audience: None,
        ..v2
    };
    let mut want = vec![2, 1, 2, b'k', b'1', 0, 0];
    want.extend_from_slice(b"tools/call\x002026-07-28\x00t\x00x");
    assert_eq!(none.aad(), want);
}

#[test]
fn audiences_the_format_cannot_carry_are_refused() {
    let b = Binding::new("m", "v", "t", Principal::Anonymous).unwrap();
    let v1 = header(1, 1, "k1");
    let v2 = header(2, 1, "k1");
    let mut aad = Aad::new();
    assert!(aad.fill(&v1, None, &b).is_some());
    assert_eq!(
        aad.fill(&v1, Some("svc"), &b),
        None,
        "v1 has no audience field"
    );
    assert!(
        aad.as_bytes().is_empty(),
        "a refusal leaves the buffer empty"
    );
    assert_eq!(
        aad.fill(&v2, Some(""), &b),
        None,
        "empty is not an audience"
    );
    let longest = "a".repeat(MAX_AUDIENCE_LEN);
    assert!(aad.fill(&v2, Some(&longest), &b).is_some());
    let over = "a".repeat(MAX_AUDIENCE_LEN + 1);
    assert_eq!(aad.fill(&v2, Some(&over), &b), None);
    for unknown in [0u8, 3, 0xff] {
        assert_eq!(aad.fill(&header(unknown, 1, "k1"), None, &b), None);
    }
    assert_eq!(aad.fill(&[2, 1, 0], None, &b), None, "no key id");
}

fn tuples() -> impl Strategy<Value = Tuple> {
    let s = |re: &'static str, max: usize| {
        re.prop_map(move |mut s: String| {
            while s.len() > max {
                s.pop();
            }
            s
        })
    };
    (
        ("[A-Za-z0-9._-]{1,16}", 1..=4u8, 1..=2u8),
        prop::option::of(s("(?s).{1,20}", MAX_AUDIENCE_LEN)),
        prop::option::of((s("(?s).{0,20}", 255), s("(?s).{0,20}", 255))),
        s("[^\\x00]{1,12}", MAX_METHOD_LEN),
        s("[^\\x00]{0,12}", MAX_VERSION_LEN),
        s("(?s).{0,40}", MAX_TARGET_LEN),
    )
        .prop_map(
            |((kid, alg, version_byte), audience, principal, method, version, target)| Tuple {
                header: header(version_byte, alg, &kid),
                // v1 has no audience field.
                audience: audience.filter(|_| version_byte == 2),
                principal,
                method,
                version,
                target,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_tuples_parse_back(t in tuples()) {
        prop_assert_eq!(parse(&t.aad()), Some(t));
    }

    #[test]
    fn arbitrary_distinct_tuples_differ(a in tuples(), b in tuples()) {
        prop_assert_eq!(a == b, a.aad() == b.aad());
    }

    /// `Binding::aad_len` is the AAD's length with the longest header in format v2 (one byte
    /// more than v1 when there is no audience), and an `Aad` takes a binding exactly when its
    /// capacity holds that length, whatever the header in use.
    #[test]
    fn aad_len_predicts_the_length(t in tuples()) {
        let b = t.binding();
        let aad = t.aad();
        let v1_extra = usize::from(t.header[0] == 1);
        let a = t.audience.as_deref();
        prop_assert_eq!(b.aad_len(a), aad.len() - t.header.len() + MAX_HEADER_LEN + v1_extra);
        let mut large = Aad::<512>::empty();
        prop_assert_eq!(large.fill(&t.header, a, &b).map(<[u8]>::to_vec), Some(aad.clone()));
        // 80 bytes: some tuples fit, others do not; a refusal leaves the buffer empty.
        let fits = b.aad_len(a) <= 80;
        let mut tight = Aad::<80>::empty();
        let got = tight.fill(&t.header, a, &b).map(<[u8]>::to_vec);
        prop_assert_eq!(got, fits.then(|| aad.clone()));
        prop_assert_eq!(tight.as_bytes().len(), if fits { aad.len() } else { 0 });
    }
}

#[test]
fn the_capacity_is_the_sum_of_the_field_limits() {
    assert_eq!(AadLimits::DEFAULT.capacity(), MAX_AAD_LEN);
    // header 19, audience 1 + 2 + 255, principal 1 + 2 x (2 + 255), method 32 + NUL,
    // version 32 + NUL, target 1,024.
    assert_eq!(MAX_AAD_LEN, 19 + 258 + 515 + 33 + 33 + 1024);
    assert_eq!(MAX_AAD_LEN, 1882, "hosts keep the 1 KiB-target capacity");
    let gateway = AadLimits {
        target: 64,
        principal_field: 64,
        audience: 16,
        ..AadLimits::DEFAULT
    };
    // header 19, audience 1 + 2 + 16, principal 1 + 2 x (2 + 64), method 32 + NUL,
    // version 32 + NUL, target 64.
    assert_eq!(gateway.capacity(), 19 + 19 + 133 + 33 + 33 + 64);
    let anon_minimal = AadLimits {
        method: 1,
        protocol_version: 0,
        target: 0,
        principal_field: 0,
        audience: 0,
    };
    // No audience is one byte (0x00).
    assert_eq!(anon_minimal.capacity(), 19 + 1 + 5 + 1 + 1 + 1);
}

#[test]
fn an_aad_too_small_for_the_binding_refuses_it_and_stays_empty() {
    let h = header(2, 1, "k1");
    let b = Binding::new(
        "tools/call",
        "2026-07-28",
        "book_table",
        Principal::Anonymous,
    )
    .unwrap();
    // header, no audience, anonymous, method NUL version NUL target.
    let bytes =
        h.len() + 1 + 1 + "tools/call".len() + 1 + "2026-07-28".len() + 1 + "book_table".len();
    assert_eq!(bytes, 39);
    // The capacity is judged with the longest header (19 bytes), not this 5-byte one, so a
    // binding fits or not whatever the key id.
    let need = bytes - h.len() + MAX_HEADER_LEN;
    assert_eq!((need, b.aad_len(None)), (53, 53));
    let mut fits: Aad<53> = Aad::empty();
    assert_eq!(fits.fill(&h, None, &b).map(<[u8]>::len), Some(bytes));
    let mut small: Aad<52> = Aad::empty();
    assert_eq!(small.fill(&h, None, &b), None);
    assert!(small.as_bytes().is_empty());
    // An audience takes room too: 3 + its length.
    assert_eq!(b.aad_len(Some("svc")), need + 5);
    assert_eq!(fits.fill(&h, Some("svc"), &b), None);
    // A refusal after a success empties the buffer too.
    let mut reused: Aad<53> = Aad::empty();
    assert!(reused.fill(&h, None, &b).is_some());
    let longer = Binding::new(
        "tools/call",
        "2026-07-28",
        "book_table2",
        Principal::Anonymous,
    )
    .unwrap();
    assert_eq!(reused.fill(&h, None, &longer), None);
    assert!(reused.as_bytes().is_empty());
    assert_eq!(reused.capacity(), 53);
}

#[test]
fn binding_rejects_nul_in_method_and_version() {
    for (m, v) in [
        ("tools/call\0", "v"),
        ("\0", "v"),
        ("a\0b", "v"),
        ("m", "2026\0"),
        ("m", "\0"),
    ] {
        let err = Binding::new(m, v, "", Principal::Anonymous).unwrap_err();
        assert_eq!(err, BindingError::NulByte, "{m:?} {v:?}");
    }
    assert!(
        Binding::new("m", "v", "a\0b", Principal::Anonymous).is_ok(),
        "NUL in target is fine"
    );
}

#[test]
fn binding_rejects_empty_and_over_long_fields() {
    let anon = Principal::Anonymous;
    let at = |n: usize| "x".repeat(n);
    assert_eq!(
        Binding::new("", "v", "", anon),
        Err(BindingError::EmptyMethod)
    );
    assert!(Binding::new(&at(MAX_METHOD_LEN), "v", "", anon).is_ok());
    assert_eq!(
        Binding::new(&at(MAX_METHOD_LEN + 1), "v", "", anon),
        Err(BindingError::MethodTooLong)
    );
    assert!(Binding::new("m", &at(MAX_VERSION_LEN), "", anon).is_ok());
    assert_eq!(
        Binding::new("m", &at(MAX_VERSION_LEN + 1), "", anon),
        Err(BindingError::VersionTooLong)
    );
    assert!(Binding::new("m", "v", &at(MAX_TARGET_LEN), anon).is_ok());
    assert_eq!(
        Binding::new("m", "v", &at(MAX_TARGET_LEN + 1), anon),
        Err(BindingError::TargetTooLong)
    );
    let max = at(MAX_PRINCIPAL_FIELD_LEN);
    let over = at(MAX_PRINCIPAL_FIELD_LEN + 1);
    let user = |issuer, subject| Principal::User { issuer, subject };
    assert!(Binding::new("m", "v", "", user(&max, &max)).is_ok());
    assert_eq!(
        Binding::new("m", "v", "", user(&over, "")),
        Err(BindingError::PrincipalTooLong)
    );
    assert_eq!(
        Binding::new("m", "v", "", user("", &over)),
        Err(BindingError::PrincipalTooLong)
    );
    // Lengths are bytes, not characters.
    let wide = "é".repeat(MAX_METHOD_LEN / 2 + 1);
    assert_eq!(
        Binding::new(&wide, "v", "", anon),
        Err(BindingError::MethodTooLong)
    );
    for e in [
        BindingError::EmptyMethod,
        BindingError::NulByte,
        BindingError::TargetTooLong,
    ] {
        assert!(!e.to_string().is_empty());
    }
}

#[test]
fn the_largest_binding_fills_the_aad_buffer_exactly() {
    let long = |n: usize| "x".repeat(n);
    let (m, v, t, f) = (
        long(MAX_METHOD_LEN),
        long(MAX_VERSION_LEN),
        long(MAX_TARGET_LEN),
        long(MAX_PRINCIPAL_FIELD_LEN),
    );
    let b = Binding::new(
        &m,
        &v,
        &t,
        Principal::User {
            issuer: &f,
            subject: &f,
        },
    )
    .unwrap();
    let audience = long(MAX_AUDIENCE_LEN);
    let h = header(2, 3, &long(16));
    assert_eq!(h.len(), MAX_HEADER_LEN);
    let aad = Aad::build(&h, Some(&audience), &b).unwrap();
    assert_eq!(aad.as_bytes().len(), MAX_AAD_LEN);
    let parsed = parse(aad.as_bytes()).unwrap();
    assert_eq!(
        (parsed.audience.as_deref(), parsed.target.as_str()),
        (Some(audience.as_str()), t.as_str()),
        "nothing was cut off"
    );
    let too_long = vec![2; MAX_HEADER_LEN + 1];
    assert!(Aad::build(&too_long, None, &b).is_none());
}
