//! Scalar semantics of the IR operators on canonical values.
//!
//! This is the definition the interpreter uses and the JIT is tested
//! against: wrapping at the operand width, RISC-V division, saturating
//! shifts (docs/language.md, "Types").

use super::{BinOp, Ty, UnOp};

/// Reduces `v` to the low `ty.width` bits.
pub fn truncate(ty: Ty, v: u64) -> u64 {
    v & ty.mask()
}

/// Sign-extends (signed `ty`) or zero-extends (unsigned) a canonical value
/// to 64 bits.
pub fn extend(ty: Ty, v: u64) -> u64 {
    if ty.signed && ty.width < 64 {
        let shift = 64 - u32::from(ty.width);
        (((v << shift) as i64) >> shift) as u64
    } else {
        v
    }
}

/// Converts a canonical value of type `from` to type `to`.
pub fn cast(from: Ty, to: Ty, v: u64) -> u64 {
    truncate(to, extend(from, v))
}

/// Applies a unary operator.
pub fn unary(op: UnOp, ty: Ty, a: u64) -> u64 {
    match op {
        UnOp::Neg => truncate(ty, a.wrapping_neg()),
        UnOp::Not => truncate(ty, !a),
    }
}

/// Applies a binary operator to canonical operands of type `ty` (the shift
/// amount is any canonical unsigned value).
pub fn binary(op: BinOp, ty: Ty, a: u64, b: u64) -> u64 {
    let width = u64::from(ty.width);
    let sa = extend(ty, a) as i64;
    let sb = extend(ty, b) as i64;
    let raw = match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::MulHi => ((u128::from(a) * u128::from(b)) >> 64) as u64,
        BinOp::Div => {
            if b == 0 {
                u64::MAX
            } else if ty.signed {
                sa.wrapping_div(sb) as u64
            } else {
                a / b
            }
        }
        BinOp::Rem => {
            if b == 0 {
                a
            } else if ty.signed {
                sa.wrapping_rem(sb) as u64
            } else {
                a % b
            }
        }
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        BinOp::Shl => {
            if b >= width {
                0
            } else {
                a << b
            }
        }
        BinOp::Shr => {
            if ty.signed {
                (sa >> b.min(63)) as u64
            } else if b >= width {
                0
            } else {
                a >> b
            }
        }
        BinOp::Eq => u64::from(a == b),
        BinOp::Ne => u64::from(a != b),
        BinOp::Lt => u64::from(if ty.signed { sa < sb } else { a < b }),
        BinOp::Le => u64::from(if ty.signed { sa <= sb } else { a <= b }),
        BinOp::Gt => u64::from(if ty.signed { sa > sb } else { a > b }),
        BinOp::Ge => u64::from(if ty.signed { sa >= sb } else { a >= b }),
    };
    if op.is_comparison() {
        raw
    } else {
        truncate(ty, raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (op, type, a, b, expected), values written as the signed or unsigned
    /// number they denote and converted to canonical form.
    #[allow(clippy::type_complexity)]
    const CASES: &[(BinOp, Ty, i128, i128, i128)] = &[
        (BinOp::Add, Ty::unsigned(8), 255, 1, 0),
        (BinOp::Add, Ty::signed(8), 127, 1, -128),
        (BinOp::Sub, Ty::unsigned(4), 0, 1, 15),
        (BinOp::Mul, Ty::signed(16), -300, 300, -24464),
        (BinOp::Div, Ty::unsigned(32), 7, 0, 0xFFFF_FFFF),
        (BinOp::Div, Ty::signed(32), 7, 0, -1),
        (BinOp::Div, Ty::signed(8), -128, -1, -128),
        (
            BinOp::Div,
            Ty::signed(64),
            i64::MIN as i128,
            -1,
            i64::MIN as i128,
        ),
        (BinOp::Div, Ty::signed(8), -7, 2, -3),
        (BinOp::Rem, Ty::signed(8), -7, 2, -1),
        (BinOp::Rem, Ty::signed(8), -128, -1, 0),
        (BinOp::Rem, Ty::unsigned(8), 9, 0, 9),
        (BinOp::Rem, Ty::signed(8), -9, 0, -9),
        (BinOp::Shl, Ty::unsigned(8), 1, 7, 128),
        (BinOp::Shl, Ty::unsigned(8), 1, 8, 0),
        (BinOp::Shl, Ty::unsigned(64), 1, 64, 0),
        (BinOp::Shr, Ty::signed(8), -128, 3, -16),
        (BinOp::Shr, Ty::signed(8), -1, 200, -1),
        (BinOp::Shr, Ty::signed(8), 64, 200, 0),
        (BinOp::Shr, Ty::unsigned(8), 128, 8, 0),
        (BinOp::Lt, Ty::signed(8), -1, 0, 1),
        (BinOp::Lt, Ty::unsigned(8), 255, 0, 0),
        (BinOp::Ge, Ty::signed(3), -4, 3, 0),
    ];

    fn canon(ty: Ty, v: i128) -> u64 {
        truncate(ty, v as u64)
    }

    #[test]
    fn binary_operators_follow_the_language_rules() {
        for &(op, ty, a, b, want) in CASES {
            let result_ty = if op.is_comparison() { Ty::BOOL } else { ty };
            let amount_ty = if matches!(op, BinOp::Shl | BinOp::Shr) {
                Ty::unsigned(64)
            } else {
                ty
            };
            let got = binary(op, ty, canon(ty, a), canon(amount_ty, b));
            assert_eq!(got, canon(result_ty, want), "{op:?} {ty:?} {a} {b}");
        }
    }

    #[test]
    fn casts_extend_by_the_source_signedness() {
        assert_eq!(cast(Ty::signed(8), Ty::unsigned(16), 0x80), 0xFF80);
        assert_eq!(cast(Ty::unsigned(8), Ty::signed(16), 0x80), 0x0080);
        assert_eq!(cast(Ty::unsigned(16), Ty::unsigned(8), 0x1234), 0x34);
        assert_eq!(cast(Ty::signed(1), Ty::signed(64), 1), u64::MAX);
        assert_eq!(unary(UnOp::Neg, Ty::signed(8), 0x80), 0x80);
        assert_eq!(unary(UnOp::Not, Ty::BOOL, 1), 0);
    }
}
