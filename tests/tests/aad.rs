//! The canonical associated data is injective: distinct (header, principal, method, version,
//! target) tuples never give the same bytes. And `Binding::new` refuses what would break that.

use std::collections::HashMap;

use mrtr_core::binding::{
    Aad, AadLimits, MAX_AAD_LEN, MAX_METHOD_LEN, MAX_PRINCIPAL_FIELD_LEN, MAX_TARGET_LEN,
    MAX_VERSION_LEN,
};
use mrtr_core::token::MAX_HEADER_LEN;
use mrtr_core::{Binding, BindingError, Principal};
use proptest::prelude::*;

/// One input of the AAD, owned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Tuple {
    header: Vec<u8>,
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
        Aad::build(&self.header, &self.binding())
            .expect("valid header")
            .as_bytes()
            .to_vec()
    }
}

/// A valid token header: version, algorithm id, key id length, key id.
fn header(alg: u8, key_id: &str) -> Vec<u8> {
    let mut h = vec![1, alg, key_id.len() as u8];
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

/// Every tuple over small alphabets chosen to provoke ambiguity: empty fields, NUL in the
/// target and principal, prefixes of one another.
fn small_universe() -> Vec<Tuple> {
    let headers = [
        header(1, "a"),
        header(1, "ab"),
        header(2, "a"),
        header(1, "b"),
    ];
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
    for h in &headers {
        for p in &principals {
            for m in methods {
                for v in versions {
                    for t in fields {
                        out.push(Tuple {
                            header: h.clone(),
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
    assert!(universe.len() > 40_000, "{}", universe.len());
    assert_eq!(first_collision(&universe, Tuple::aad), None);
}

#[test]
fn the_collision_check_finds_collisions_of_a_naive_encoding() {
    // Without length prefixes "ab"+"" and "a"+"b" collide: the check above can fail.
    let naive = |t: &Tuple| {
        let mut out = t.header.clone();
        if let Some((i, s)) = &t.principal {
            out.extend_from_slice(format!("{i}{s}").as_bytes());
        }
        out.extend_from_slice(format!("{}\0{}\0{}", t.method, t.version, t.target).as_bytes());
        out
    };
    assert!(first_collision(&small_universe(), naive).is_some());
}

/// Parses AAD bytes back into a tuple, following the documented layout. A parser that
/// recovers every tuple proves the encoding injective.
fn parse(aad: &[u8]) -> Option<Tuple> {
    let header_len = 3 + usize::from(*aad.get(2)?);
    let header = aad.get(..header_len)?.to_vec();
    let mut rest = &aad[header_len..];
    let (tag, tail) = rest.split_first()?;
    rest = tail;
    let principal = match tag {
        0 => None,
        1 => {
            let mut take = || -> Option<String> {
                let (len, tail) = rest.split_first_chunk::<2>()?;
                let (field, tail) = tail.split_at_checked(usize::from(u16::from_be_bytes(*len)))?;
                rest = tail;
                String::from_utf8(field.to_vec()).ok()
            };
            Some((take()?, take()?))
        }
        _ => return None,
    };
    let text = std::str::from_utf8(rest).ok()?;
    let mut parts = text.splitn(3, '\0');
    Some(Tuple {
        header,
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
    let t = Tuple {
        header: header(1, "k1"),
        principal: Some(("iss".into(), "sub".into())),
        method: "tools/call".into(),
        version: "2026-07-28".into(),
        target: "t\0x".into(),
    };
    let mut want = vec![1, 1, 2, b'k', b'1', 1, 0, 3];
    want.extend_from_slice(b"iss\x00\x03sub");
    want.extend_from_slice(b"tools/call\x002026-07-28\x00t\x00x");
    assert_eq!(t.aad(), want);
    let anon = Tuple {
        principal: None,
        ..t
    };
    let mut want = vec![1, 1, 2, b'k', b'1', 0];
    want.extend_from_slice(b"tools/call\x002026-07-28\x00t\x00x");
    assert_eq!(anon.aad(), want);
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
        ("[A-Za-z0-9._-]{1,16}", 1..=3u8),
        prop::option::of((s("(?s).{0,20}", 255), s("(?s).{0,20}", 255))),
        s("[^\\x00]{1,12}", MAX_METHOD_LEN),
        s("[^\\x00]{0,12}", MAX_VERSION_LEN),
        s("(?s).{0,40}", MAX_TARGET_LEN),
    )
        .prop_map(|((kid, alg), principal, method, version, target)| Tuple {
            header: header(alg, &kid),
            principal,
            method,
            version,
            target,
        })
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

    /// `Binding::aad_len` is the AAD's length with the longest header, and an `Aad` takes a
    /// binding exactly when its capacity holds that length, whatever the header in use.
    #[test]
    fn aad_len_predicts_the_length(t in tuples()) {
        let b = t.binding();
        let aad = t.aad();
        prop_assert_eq!(b.aad_len(), aad.len() - t.header.len() + MAX_HEADER_LEN);
        let mut large = Aad::<512>::empty();
        prop_assert_eq!(large.fill(&t.header, &b).map(<[u8]>::to_vec), Some(aad.clone()));
        // 80 bytes: some tuples fit, others do not; a refusal leaves the buffer empty.
        let fits = b.aad_len() <= 80;
        let mut tight = Aad::<80>::empty();
        let got = tight.fill(&t.header, &b).map(<[u8]>::to_vec);
        prop_assert_eq!(got, fits.then(|| aad.clone()));
        prop_assert_eq!(tight.as_bytes().len(), if fits { aad.len() } else { 0 });
    }
}

#[test]
fn the_capacity_is_the_sum_of_the_field_limits() {
    assert_eq!(AadLimits::DEFAULT.capacity(), MAX_AAD_LEN);
    assert_eq!(MAX_AAD_LEN, 1624, "hosts keep the 1 KiB-target capacity");
    let gateway = AadLimits {
        target: 64,
        principal_field: 64,
        ..AadLimits::DEFAULT
    };
    // header 19, principal 1 + 2 x (2 + 64), method 32 + NUL, version 32 + NUL, target 64.
    assert_eq!(gateway.capacity(), 19 + 133 + 33 + 33 + 64);
    let anon_minimal = AadLimits {
        method: 1,
        protocol_version: 0,
        target: 0,
        principal_field: 0,
    };
    assert_eq!(anon_minimal.capacity(), 19 + 5 + 1 + 1 + 1);
}

#[test]
fn an_aad_too_small_for_the_binding_refuses_it_and_stays_empty() {
    let h = header(1, "k1");
    let b = Binding::new(
        "tools/call",
        "2026-07-28",
        "book_table",
        Principal::Anonymous,
    )
    .unwrap();
    let bytes = h.len() + 1 + "tools/call".len() + 1 + "2026-07-28".len() + 1 + "book_table".len();
    assert_eq!(bytes, 38);
    // The capacity is judged with the longest header (19 bytes), not this 5-byte one, so a
    // binding fits or not whatever the key id.
    let need = bytes - h.len() + MAX_HEADER_LEN;
    assert_eq!((need, b.aad_len()), (52, 52));
    let mut fits: Aad<52> = Aad::empty();
    assert_eq!(fits.fill(&h, &b).map(<[u8]>::len), Some(bytes));
    let mut small: Aad<51> = Aad::empty();
    assert_eq!(small.fill(&h, &b), None);
    assert!(small.as_bytes().is_empty());
    // A refusal after a success empties the buffer too.
    let mut reused: Aad<52> = Aad::empty();
    assert!(reused.fill(&h, &b).is_some());
    let longer = Binding::new(
        "tools/call",
        "2026-07-28",
        "book_table2",
        Principal::Anonymous,
    )
    .unwrap();
    assert_eq!(reused.fill(&h, &longer), None);
    assert!(reused.as_bytes().is_empty());
    assert_eq!(reused.capacity(), 52);
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
    let h = header(3, &long(16));
    assert_eq!(h.len(), MAX_HEADER_LEN);
    let aad = Aad::build(&h, &b).unwrap();
    assert_eq!(aad.as_bytes().len(), MAX_AAD_LEN);
    assert_eq!(
        parse(aad.as_bytes()).unwrap().target,
        t,
        "nothing was cut off"
    );
    let too_long = vec![1; MAX_HEADER_LEN + 1];
    assert!(Aad::build(&too_long, &b).is_none());
}
