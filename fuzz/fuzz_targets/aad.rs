//! The associated-data builder is injective across token formats v1 and v2: the bytes parse
//! back to exactly the tuple that built them, two different tuples never give equal bytes
//! (including tuples made by moving bytes across a field boundary), `Binding::new` accepts
//! exactly the documented limits, and `Aad::build` takes exactly the documented headers and
//! audiences (v1: none; v2: none, or 1 to 255 bytes).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mrtr_core::Aad;
use mrtr_core::limits::{
    MAX_AUDIENCE_LEN, MAX_METHOD_LEN, MAX_PRINCIPAL_FIELD_LEN, MAX_TARGET_LEN, MAX_VERSION_LEN,
};
use mrtr_core::{Binding, Principal};

#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
struct Tuple {
    version: u8,
    algorithm: u8,
    key_id: Vec<u8>,
    audience: Option<String>,
    principal: Option<(String, String)>,
    method: String,
    protocol_version: String,
    target: String,
}

#[derive(Arbitrary, Debug)]
struct Input {
    a: Tuple,
    b: Tuple,
    /// Which boundary of `a` to move bytes across, and how many.
    shift: (u8, u8),
}

impl Tuple {
    fn header(&self) -> Option<Vec<u8>> {
        if self.key_id.is_empty() || self.key_id.len() > 16 {
            return None;
        }
        let mut h = vec![self.version, self.algorithm, self.key_id.len() as u8];
        h.extend_from_slice(&self.key_id);
        Some(h)
    }

    fn principal(&self) -> Principal<'_> {
        match &self.principal {
            None => Principal::Anonymous,
            Some((issuer, subject)) => Principal::User { issuer, subject },
        }
    }

    fn within_limits(&self) -> bool {
        let m = self.method.as_bytes();
        let v = self.protocol_version.as_bytes();
        !m.is_empty()
            && m.len() <= MAX_METHOD_LEN
            && v.len() <= MAX_VERSION_LEN
            && !m.contains(&0)
            && !v.contains(&0)
            && self.target.len() <= MAX_TARGET_LEN
            && self.principal.as_ref().is_none_or(|(i, s)| {
                i.len() <= MAX_PRINCIPAL_FIELD_LEN && s.len() <= MAX_PRINCIPAL_FIELD_LEN
            })
    }

    /// Whether the format in the header carries this audience.
    fn audience_fits(&self) -> bool {
        match (self.version, &self.audience) {
            (1, None) | (2, None) => true,
            (2, Some(a)) => !a.is_empty() && a.len() <= MAX_AUDIENCE_LEN,
            _ => false,
        }
    }

    /// The AAD bytes, or `None` if the tuple is not a valid header, audience and binding.
    fn aad(&self) -> Option<Vec<u8>> {
        let header = self.header()?;
        let binding = Binding::new(
            &self.method,
            &self.protocol_version,
            &self.target,
            self.principal(),
        );
        assert_eq!(binding.is_ok(), self.within_limits(), "limits: {self:?}");
        let aad = Aad::build(&header, self.audience.as_deref(), &binding.ok()?);
        assert_eq!(aad.is_some(), self.audience_fits(), "audience: {self:?}");
        Some(aad?.as_bytes().to_vec())
    }

    /// Moves up to `n` bytes across boundary `which`, keeping every field valid UTF-8.
    fn shifted(&self, which: u8, n: u8) -> Tuple {
        fn move_tail(from: &mut String, to: &mut String, n: usize) {
            let mut cut = from.len().saturating_sub(n);
            while !from.is_char_boundary(cut) {
                cut += 1;
            }
            let tail = from.split_off(cut);
            to.insert_str(0, &tail);
        }
        let mut t = self.clone();
        let n = n as usize;
        match which % 5 {
            0 => move_tail(&mut t.method, &mut t.protocol_version, n),
            1 => move_tail(&mut t.protocol_version, &mut t.target, n),
            2 => {
                if let Some((issuer, subject)) = &mut t.principal {
                    move_tail(issuer, subject, n);
                }
            }
            3 => {
                if let (Some(audience), Some((issuer, _))) = (&mut t.audience, &mut t.principal) {
                    move_tail(audience, issuer, n);
                }
            }
            _ => {
                // Key id bytes into the principal position: drop the principal.
                t.principal = None;
                let keep = t.key_id.len().saturating_sub(n).max(1);
                t.key_id.truncate(keep);
            }
        }
        t
    }
}

/// Takes a `u16be` length-prefixed UTF-8 field off the front of `rest`.
fn field(rest: &mut &[u8]) -> String {
    let len = u16::from_be_bytes([rest[0], rest[1]]) as usize;
    let value = String::from_utf8(rest[2..2 + len].to_vec()).expect("utf-8");
    *rest = &rest[2 + len..];
    value
}

/// Reads the tuple back from AAD bytes, following the documented layout of its format.
fn parse(aad: &[u8]) -> Tuple {
    let k = aad[2] as usize;
    let (header, mut rest) = aad.split_at(3 + k);
    let audience = match header[0] {
        1 => None,
        2 => {
            let tag = rest[0];
            rest = &rest[1..];
            match tag {
                0 => None,
                1 => Some(field(&mut rest)),
                other => panic!("audience tag {other}"),
            }
        }
        other => panic!("format {other}"),
    };
    let tag = rest[0];
    rest = &rest[1..];
    let principal = match tag {
        0 => None,
        1 => {
            let issuer = field(&mut rest);
            let subject = field(&mut rest);
            Some((issuer, subject))
        }
        other => panic!("principal tag {other}"),
    };
    let mut parts = rest.splitn(3, |&b| b == 0);
    let mut next = || String::from_utf8(parts.next().expect("field").to_vec()).expect("utf-8");
    let method = next();
    let protocol_version = next();
    let target = next();
    Tuple {
        version: header[0],
        algorithm: header[1],
        key_id: header[3..].to_vec(),
        audience,
        principal,
        method,
        protocol_version,
        target,
    }
}

fuzz_target!(|input: Input| {
    let Some(a) = input.a.aad() else { return };
    assert_eq!(parse(&a), input.a, "AAD does not parse back to its tuple");
    assert_eq!(
        input.a.aad().as_deref(),
        Some(&a[..]),
        "AAD is not deterministic"
    );
    for other in [
        input.b.clone(),
        input.a.shifted(input.shift.0, input.shift.1),
    ] {
        if let Some(b) = other.aad() {
            assert_eq!(a == b, input.a == other, "{:?} vs {:?}", input.a, other);
        }
    }
});
