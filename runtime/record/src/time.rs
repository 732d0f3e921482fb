//! Exact physical time as the recorders see it.

use std::cmp::Ordering;
use std::fmt;

/// An exact, non-negative physical time of `num / den` picoseconds.
///
/// The denominator is not reduced: a domain's edges share one denominator, so
/// producers can build times without a gcd per record. Equality and ordering
/// are exact on the value, so `1/2` equals `2/4`.
#[derive(Clone, Copy, Debug)]
pub struct Time {
    num: u128,
    den: u64,
}

impl Time {
    /// Time zero.
    pub const ZERO: Time = Time { num: 0, den: 1 };

    /// `num / den` picoseconds; `None` when `den` is zero.
    pub fn new(num: u128, den: u64) -> Option<Time> {
        (den != 0).then_some(Time { num, den })
    }

    /// `num / den` picoseconds from the parts of a valid time (`den` not
    /// zero), as a buffer stores them.
    pub(crate) const fn from_parts(num: u128, den: u64) -> Time {
        Time { num, den }
    }

    /// A whole number of picoseconds.
    pub fn from_ps(ps: u128) -> Time {
        Time { num: ps, den: 1 }
    }

    /// The numerator, in units of `1/den` picoseconds.
    pub fn num(self) -> u128 {
        self.num
    }

    /// The denominator (never zero).
    pub fn den(self) -> u64 {
        self.den
    }

    /// Whole picoseconds and the exact remainder in units of `1/den` ps.
    ///
    /// Hot: every recorder formats or rounds every record's time, and a
    /// 128-bit division costs tens of nanoseconds, so numerators that fit 64
    /// bits (about 213 days of simulated time at a 1-ps denominator) take a
    /// 64-bit path.
    #[inline]
    pub fn split(self) -> (u128, u64) {
        match u64::try_from(self.num) {
            Ok(n) => (u128::from(n / self.den), n % self.den),
            // The remainder of a division by a u64 fits a u64.
            Err(_) => (
                self.num / u128::from(self.den),
                (self.num % u128::from(self.den)) as u64,
            ),
        }
    }

    /// Whole picoseconds, rounded down.
    #[inline]
    pub fn whole_ps(self) -> u128 {
        self.split().0
    }

    /// The exact remainder below one picosecond, in units of `1/den` ps.
    #[inline]
    pub fn rem(self) -> u64 {
        self.split().1
    }

    /// Whole nanoseconds, rounded down (contract §8).
    #[inline]
    pub fn floor_ns(self) -> u128 {
        // floor(floor(n / d) / 1000) == floor(n / (1000 d)): one division.
        match (u64::try_from(self.num), self.den.checked_mul(1000)) {
            (Ok(n), Some(d)) => u128::from(n / d),
            _ => self.whole_ps() / 1000,
        }
    }

    /// Whole femtoseconds, rounded down; `None` when it does not fit a u128.
    #[inline]
    pub fn floor_fs(self) -> Option<u128> {
        let (whole, rem) = self.split();
        let frac = match rem.checked_mul(1000) {
            Some(r) => u128::from(r / self.den),
            // rem < den, so rem * 1000 fits a u128.
            None => u128::from(rem) * 1000 / u128::from(self.den),
        };
        whole.checked_mul(1000)?.checked_add(frac)
    }

    /// The time `self + n * step`, exact; `None` on overflow.
    ///
    /// Both times must share a denominator or one of them must be whole
    /// picoseconds; otherwise the sum is formed over the product of the
    /// denominators when that fits.
    pub fn add_mul(self, step: Time, n: u64) -> Option<Time> {
        let den = if self.den == step.den {
            self.den
        } else {
            self.den.checked_mul(step.den)?
        };
        let a = self.num.checked_mul(u128::from(den / self.den))?;
        let b = step
            .num
            .checked_mul(u128::from(den / step.den))?
            .checked_mul(u128::from(n))?;
        Some(Time {
            num: a.checked_add(b)?,
            den,
        })
    }

    /// Parses the text-log form written by [`fmt::Display`]: `W` or `W+R/D`.
    pub fn parse(s: &str) -> Option<Time> {
        match s.split_once('+') {
            None => Some(Time::from_ps(s.parse().ok()?)),
            Some((whole, frac)) => {
                let (rem, den) = frac.split_once('/')?;
                let whole: u128 = whole.parse().ok()?;
                let rem: u64 = rem.parse().ok()?;
                let den: u64 = den.parse().ok()?;
                if den == 0 || rem >= den {
                    return None;
                }
                let num = whole
                    .checked_mul(u128::from(den))?
                    .checked_add(u128::from(rem))?;
                Some(Time { num, den })
            }
        }
    }
}

impl PartialEq for Time {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Time {}

impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Time {
    fn cmp(&self, other: &Self) -> Ordering {
        if self.den == other.den {
            return self.num.cmp(&other.num);
        }
        if let (Ok(a), Ok(b)) = (u64::try_from(self.num), u64::try_from(other.num)) {
            // 64-bit factors: the cross products fit a u128.
            return (u128::from(a) * u128::from(other.den))
                .cmp(&(u128::from(b) * u128::from(self.den)));
        }
        // Whole parts first; the remainders are each below 2^64, so their
        // cross products fit a u128.
        let ((wa, ra), (wb, rb)) = (self.split(), other.split());
        wa.cmp(&wb).then_with(|| {
            (u128::from(ra) * u128::from(other.den)).cmp(&(u128::from(rb) * u128::from(self.den)))
        })
    }
}

/// `rem / den` in lowest terms, for `0 < rem < den`: both divided by their
/// greatest common divisor. Times are kept over the design's common
/// denominator (unreduced, so no gcd per record), and printing them reduced
/// makes a time's text independent of the other clocks in the design
/// (contract §8: an exact rational). Euclid's gcd, and no further division
/// when the fraction is already in lowest terms; the text writer caches
/// the results per domain, so it runs this once per distinct remainder.
#[inline]
pub(crate) fn lowest_terms(rem: u64, den: u64) -> (u64, u64) {
    debug_assert!(0 < rem && rem < den, "a proper fraction");
    let (mut a, mut b) = (den, rem);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    if a == 1 {
        (rem, den)
    } else {
        (rem / a, den / a)
    }
}

/// Exact picoseconds: `W` when whole, else `W+R/D` with `0 < R < D` in
/// lowest terms ([`lowest_terms`]), whatever denominator the time is kept
/// over.
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, rem) = self.split();
        if rem == 0 {
            write!(f, "{whole}")
        } else {
            let (rem, den) = lowest_terms(rem, self.den);
            write!(f, "{whole}+{rem}/{den}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordering_is_exact_across_denominators() {
        let cases = [
            ((1, 2), (2, 4), Ordering::Equal),
            ((1, 3), (333_333, 1_000_000), Ordering::Greater),
            ((500_000, 457), (1094, 1), Ordering::Greater),
            ((500_000, 457), (1095, 1), Ordering::Less),
            ((7, 7), (1, 1), Ordering::Equal),
            ((u128::MAX, 3), (u128::MAX / 3, 1), Ordering::Equal),
            ((u128::MAX - 1, 3), (u128::MAX / 3, 1), Ordering::Less),
            ((1 << 70, 2), (1 << 69, 1), Ordering::Equal),
            ((1 << 70, 3), (1 << 64, 1), Ordering::Greater),
        ];
        for ((an, ad), (bn, bd), want) in cases {
            let a = Time::new(an, ad).expect("nonzero den");
            let b = Time::new(bn, bd).expect("nonzero den");
            assert_eq!(a.cmp(&b), want, "{a} vs {b}");
        }
    }

    #[test]
    fn display_and_parse_round_trip() {
        for (num, den, text) in [
            (0, 1, "0"),
            (500_000, 457, "1094+42/457"),
            (2_000, 2, "1000"),
            (3, 4, "0+3/4"),
            // Over a denominator shared with other clocks: printed reduced.
            (999_000 * 3003 + 3000, 3003, "999000+1000/1001"),
            (6, 8, "0+3/4"),
        ] {
            let t = Time::new(num, den).expect("nonzero den");
            assert_eq!(t.to_string(), text);
            assert_eq!(Time::parse(text), Some(t));
        }
        for bad in ["", "x", "1+2", "1+3/3", "1+1/0", "-1"] {
            assert_eq!(Time::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn lowest_terms_divides_by_the_gcd() {
        fn gcd(a: u64, b: u64) -> u64 {
            if b == 0 { a } else { gcd(b, a % b) }
        }
        let mut seed = 7u64;
        let mut pairs = vec![
            (1, 2),
            (2, 4),
            (3000, 3003),
            (1 << 40, 1 << 41),
            (u64::MAX - 1, u64::MAX),
        ];
        for _ in 0..100_000 {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let den = (seed >> (seed % 60)).max(2);
            let rem = (seed.rotate_left(17) % (den - 1)) + 1;
            pairs.push((rem, den));
        }
        for (rem, den) in pairs {
            let g = gcd(rem, den);
            assert_eq!(lowest_terms(rem, den), (rem / g, den / g), "{rem}/{den}");
        }
    }

    #[test]
    fn floors_round_down() {
        let t = Time::new(750, 1).expect("nonzero den");
        assert_eq!(t.floor_ns(), 0);
        let t = Time::new(500_000 * 3, 457).expect("nonzero den");
        // 3 * 1094.0919... ps = 3282.27... ps
        assert_eq!(t.floor_ns(), 3);
        assert_eq!(t.floor_fs(), Some(3_282_275));
        // The 64-bit fast paths and the 128-bit paths agree.
        for (num, den) in [
            (1u128 << 80, 457u64),
            ((1 << 64) - 1, u64::MAX),
            (999_999, 1_000),
            (1 << 63, 3),
        ] {
            let t = Time::new(num, den).expect("nonzero den");
            assert_eq!(t.floor_ns(), num / u128::from(den) / 1000, "{num}/{den}");
            assert_eq!(t.whole_ps(), num / u128::from(den));
            assert_eq!(u128::from(t.rem()), num % u128::from(den));
            if let Some(fs) = t.floor_fs() {
                assert_eq!(
                    fs,
                    num / u128::from(den) * 1000 + num % u128::from(den) * 1000 / u128::from(den)
                );
            }
        }
    }

    #[test]
    fn add_mul_is_exact() {
        let phase = Time::from_ps(137);
        let period = Time::new(500_000, 457).expect("nonzero den");
        let t = phase.add_mul(period, 457).expect("fits");
        assert_eq!(t, Time::from_ps(137 + 500_000));
    }
}
