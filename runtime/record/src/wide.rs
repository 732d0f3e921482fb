//! Integers of up to 1024 bits as one decimal number, from their 64-bit
//! limbs: on the stack, with no allocation, so the text and Perfetto
//! writers can show a wide trace value whole per record (and `print`, in
//! the compiler, its wide values).

use crate::schema::MAX_SIGNAL_BITS;

/// The most limbs a wide value has.
const MAX_LIMBS: usize = MAX_SIGNAL_BITS as usize / 64;

/// The most bytes a wide value's decimal takes: 309 digits for 1024 bits,
/// and a sign.
pub const MAX_DECIMAL: usize = 310;

/// The most bytes the decimal of a `width`-bit value takes, with a sign:
/// `ceil(width * log10(2)) + 1` (0.30103 is just above `log10(2)`, and
/// `width * log10(2)` is never a whole number, so this is never short).
pub(crate) fn decimal_len(width: u32) -> usize {
    (width as usize * 30_103).div_ceil(100_000) + 1
}

/// 10^19, the largest power of ten in a `u64`: the value is cut into
/// groups of 19 digits, one division of the limbs per group.
const GROUP: u64 = 10_000_000_000_000_000_000;
const GROUP_DIGITS: usize = 19;

/// Writes the decimal of the `width`-bit value whose limbs (least
/// significant first) are `limbs` into `out` and returns its length; bits
/// at and above `width` are ignored. When `signed`, bit `width - 1` is the
/// sign and a negative value is written with a `-`.
pub fn put_decimal(out: &mut [u8; MAX_DECIMAL], limbs: &[u64], width: u32, signed: bool) -> usize {
    let width = width.clamp(1, MAX_SIGNAL_BITS);
    let n = width.div_ceil(64) as usize;
    let given = n.min(limbs.len());
    let mut v = [0u64; MAX_LIMBS];
    v[..given].copy_from_slice(&limbs[..given]);
    let top = width - 64 * (n as u32 - 1);
    let mask = |v: &mut [u64; MAX_LIMBS]| {
        if top < 64 {
            v[n - 1] &= (1u64 << top) - 1;
        }
    };
    mask(&mut v);
    let negative = signed && (v[n - 1] >> (top - 1)) & 1 == 1;
    if negative {
        // The magnitude: two's complement negation within the width.
        let mut carry = true;
        for x in &mut v[..n] {
            let (sum, c) = (!*x).overflowing_add(u64::from(carry));
            *x = sum;
            carry = c;
        }
        mask(&mut v);
    }
    // Groups of 19 digits, least significant first.
    let mut groups = [0u64; MAX_DECIMAL / GROUP_DIGITS + 1];
    let mut count = 0;
    let mut len = n;
    while len > 0 && v[len - 1] == 0 {
        len -= 1;
    }
    while len > 0 {
        let mut rem = 0u128;
        for x in v[..len].iter_mut().rev() {
            let cur = rem << 64 | u128::from(*x);
            *x = (cur / u128::from(GROUP)) as u64;
            rem = cur % u128::from(GROUP);
        }
        groups[count] = rem as u64;
        count += 1;
        while len > 0 && v[len - 1] == 0 {
            len -= 1;
        }
    }
    let mut pos = 0;
    if negative {
        out[0] = b'-';
        pos = 1;
    }
    if count == 0 {
        out[pos] = b'0';
        return pos + 1;
    }
    pos = put_group(out, pos, groups[count - 1], false);
    for &g in groups[..count - 1].iter().rev() {
        pos = put_group(out, pos, g, true);
    }
    pos
}

/// Writes `g` (below 10^19) at `out[pos..]`, padded to 19 digits when
/// `pad`; returns the position after it.
fn put_group(out: &mut [u8; MAX_DECIMAL], pos: usize, mut g: u64, pad: bool) -> usize {
    let mut digits = [b'0'; GROUP_DIGITS];
    let mut i = GROUP_DIGITS;
    loop {
        i -= 1;
        digits[i] = b'0' + (g % 10) as u8;
        g /= 10;
        if g == 0 {
            break;
        }
    }
    let from = if pad { 0 } else { i };
    let n = GROUP_DIGITS - from;
    out[pos..pos + n].copy_from_slice(&digits[from..]);
    pos + n
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use num_bigint::{BigInt, BigUint};
    use proptest::prelude::*;

    fn decimal(limbs: &[u64], width: u32, signed: bool) -> String {
        let mut out = [0; MAX_DECIMAL];
        let n = put_decimal(&mut out, limbs, width, signed);
        String::from_utf8(out[..n].to_vec()).expect("ASCII")
    }

    /// The model: the limbs as one big number, cut to the width, then
    /// read as two's complement when signed (the Perfetto encoder's tests
    /// use it too).
    pub(crate) fn model(limbs: &[u64], width: u32, signed: bool) -> String {
        let whole = limbs
            .iter()
            .rev()
            .fold(BigUint::default(), |acc, &l| (acc << 64u32) + l);
        let bits = BigInt::from(whole % (BigUint::from(1u8) << width));
        let half = BigInt::from(1u8) << (width - 1);
        if signed && bits >= half {
            (bits - (half << 1u32)).to_string()
        } else {
            bits.to_string()
        }
    }

    #[test]
    fn extremes_and_small_values() {
        assert_eq!(decimal(&[0, 0], 128, false), "0");
        assert_eq!(decimal(&[0, 0], 128, true), "0");
        assert_eq!(decimal(&[7, 0], 65, false), "7");
        assert_eq!(decimal(&[u64::MAX, 1], 65, false), "36893488147419103231");
        assert_eq!(decimal(&[u64::MAX, 1], 65, true), "-1");
        assert_eq!(decimal(&[0, 1 << 63], 128, true), i128::MIN.to_string());
        assert_eq!(
            decimal(&[u64::MAX, u64::MAX], 128, false),
            u128::MAX.to_string()
        );
        // Exactly one group, and one digit past it.
        assert_eq!(decimal(&[GROUP, 0], 128, false), "10000000000000000000");
        assert_eq!(decimal(&[GROUP - 1, 0], 128, false), "9999999999999999999");
        let max = [u64::MAX; 16];
        assert_eq!(decimal(&max, 1024, false).len(), 309);
        assert_eq!(decimal(&max, 1024, true), "-1");
        let mut min = [0u64; 16];
        min[15] = 1 << 63;
        let text = decimal(&min, 1024, true);
        assert_eq!(text.len(), 309, "{text}");
        assert_eq!(text, model(&min, 1024, true));
    }

    #[test]
    fn lengths_bound_every_width() {
        for width in 65..=MAX_SIGNAL_BITS {
            let limbs = [u64::MAX; 16];
            let n = width.div_ceil(64) as usize;
            let mut min = [0u64; 16];
            min[n - 1] = 1 << ((width - 1) % 64);
            let longest = decimal(&limbs[..n], width, false)
                .len()
                .max(decimal(&min[..n], width, true).len());
            assert!(longest <= decimal_len(width), "{width}");
            assert!(decimal_len(width) <= MAX_DECIMAL);
        }
    }

    proptest! {
        #[test]
        fn matches_a_bignum_model(
            limbs in proptest::collection::vec(any::<u64>(), 16),
            width in 65u32..=1024,
            signed in any::<bool>(),
            zeros in 0usize..16,
        ) {
            let n = width.div_ceil(64) as usize;
            let mut limbs = limbs[..n].to_vec();
            // Leading zero limbs, so short values are as likely as long.
            for l in limbs.iter_mut().rev().take(zeros.min(n - 1)) {
                *l = 0;
            }
            prop_assert_eq!(decimal(&limbs, width, signed), model(&limbs, width, signed));
        }
    }
}
