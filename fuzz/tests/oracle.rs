//! The `ijson` target's number oracle (`mrtr_fuzz::decimal::exact`) against the code under
//! test on many generated literals, so that a fuzz run stops only on a disagreement the
//! oracle is right about. Literals near the limits of a double and with 15 to 17 significant
//! digits (where ties between two shortest forms happen) are drawn often.

use mrtr_fuzz::decimal::{exact, split};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }

    fn digits(&mut self, out: &mut String, count: u64, first_nonzero: bool) {
        for i in 0..count {
            let d = if i == 0 && first_nonzero {
                1 + self.below(9)
            } else {
                self.below(10)
            };
            out.push(char::from(b'0' + d as u8));
        }
    }
}

/// A grammatical JSON number.
fn literal(rng: &mut Rng) -> String {
    let mut s = String::new();
    if rng.below(3) == 0 {
        s.push('-');
    }
    if rng.below(5) == 0 {
        s.push('0');
    } else {
        let n = 1 + rng.below(20);
        rng.digits(&mut s, n, true);
    }
    if rng.below(2) == 0 {
        s.push('.');
        let n = 1 + rng.below(20);
        rng.digits(&mut s, n, false);
    }
    if rng.below(3) == 0 {
        s.push(['e', 'E'][rng.below(2) as usize]);
        s.push_str(["", "+", "-"][rng.below(3) as usize]);
        let e = match rng.below(6) {
            0 => 280 + rng.below(50),
            1 => 300 + rng.below(30),
            _ => rng.below(30),
        };
        s.push_str(&e.to_string());
    }
    s
}

/// The shortest form of a random double, its neighbours in the last digit, and the same
/// digits with one more digit: ties and near-ties.
fn near_shortest(rng: &mut Rng) -> Vec<String> {
    let x = f64::from_bits(rng.below(0x7FF0_0000_0000_0000));
    let printed = format!("{x:e}");
    let (mantissa, exp) = printed.split_once('e').expect("{:e} has an exponent");
    let mut out = vec![printed.clone()];
    for last in ['0', '2', '5', '8'] {
        if mantissa.contains('.') {
            let mut m = mantissa.to_owned();
            m.pop();
            m.push(last);
            out.push(format!("{m}e{exp}"));
            out.push(format!("{mantissa}{last}e{exp}"));
        }
    }
    out
}

#[test]
fn the_number_oracle_agrees_with_mrtr_json() {
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    let mut checked = 0;
    let mut exact_count = 0;
    // Exact literals whose digits are not those the standard library prints for their double
    // (a tie between two shortest forms, broken another way): the case a naive oracle gets
    // wrong.
    let mut ties = 0;
    for _ in 0..30_000 {
        let mut lits = vec![literal(&mut rng)];
        lits.extend(near_shortest(&mut rng));
        for lit in lits {
            let want = mrtr_json::number_is_exact(lit.as_bytes());
            assert_eq!(exact(&lit), want, "{lit}");
            assert_eq!(mrtr_std::ijson::number_is_exact(&lit), want, "{lit}");
            checked += 1;
            exact_count += usize::from(want);
            if want && let Ok(x) = lit.parse::<f64>() {
                let ours = split(&lit).map(|d| (d.1, d.2));
                let std = split(&format!("{:e}", x.abs())).map(|d| (d.1, d.2));
                ties += usize::from(ours != std);
            }
        }
    }
    // Both answers are common.
    assert!(exact_count > checked / 10 && exact_count < checked * 9 / 10);
    assert!(ties > 0, "no tie was generated");
    println!("{checked} literals, {exact_count} exact, {ties} ties");
}
