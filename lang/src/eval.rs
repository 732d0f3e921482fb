//! Compile-time evaluation of typed expressions: constants, parameters,
//! array sizes, loop bounds. Implements the language's exact arithmetic
//! (wrapping at the operand width, RISC-V division), so it doubles as a
//! reference for the back ends.

use crate::ast::{BinOp, UnOp};
use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_traits::{One, Zero};

use crate::design::{Expr, ExprKind, LocalId, Type, Value};

/// Why an expression has no compile-time value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// It reads run-time state (a local, register, port) or calls a function.
    NotConstant,
    /// A constant array index is out of range.
    IndexOutOfRange,
}

/// Wraps an exact integer to a type: modulo `2^width`, then into the signed
/// range for `iN`. For types of at most 127 bits; [`wrap_big`] for any.
pub fn wrap(v: i128, ty: &Type) -> i128 {
    match ty {
        Type::Int { signed, width } if *width < 127 => {
            let m = 1i128 << width;
            let r = v.rem_euclid(m);
            if *signed && r >= m / 2 { r - m } else { r }
        }
        Type::Int { .. } => match i128::try_from(wrap_big(BigInt::from(v), ty)) {
            Ok(r) => r,
            Err(_) => v,
        },
        Type::Bool => v & 1,
        _ => v,
    }
}

/// [`wrap`] at any width.
pub fn wrap_big(v: BigInt, ty: &Type) -> BigInt {
    match ty {
        Type::Int { signed, width } => {
            let m = BigInt::one() << *width;
            let r = v.mod_floor(&m);
            if *signed && r >= (&m >> 1u32) {
                r - m
            } else {
                r
            }
        }
        Type::Bool => v & BigInt::one(),
        _ => v,
    }
}

/// A constant integer or `bool` as its two's-complement bits (not
/// negative, below `2^width`), with its width.
pub fn raw_bits(v: &Value, ty: &Type) -> Option<(BigInt, u32)> {
    let width = ty.scalar_bits()?;
    let x = v.as_big()?;
    Some((x.mod_floor(&(BigInt::one() << width)), width))
}

/// The `width` low bits set.
fn low_mask(width: u32) -> BigInt {
    (BigInt::one() << width) - 1
}

/// Whether `v` is representable in `ty` without wrapping.
pub fn fits(v: i128, ty: &Type) -> bool {
    fits_big(&BigInt::from(v), ty)
}

/// [`fits`] at any size.
pub fn fits_big(v: &BigInt, ty: &Type) -> bool {
    match ty {
        Type::Int {
            signed: false,
            width,
        } => v.sign() != Sign::Minus && v.bits() <= u64::from(*width),
        Type::Int {
            signed: true,
            width,
        } => {
            let half = BigInt::one() << (width - 1);
            *v >= -&half && *v < half
        }
        Type::Enum(e) => v.sign() != Sign::Minus && *v < BigInt::from(e.variants.len()),
        _ => false,
    }
}

fn int(v: BigInt, ty: &Type) -> Value {
    Value::int(wrap_big(v, ty))
}

/// Evaluates a typed expression that must be constant.
pub fn eval(e: &Expr) -> Result<Value, EvalError> {
    eval_with(e, &|_| None)
}

/// [`eval`] where some locals have values (the variables of unrolled
/// loops): `local` gives a local's value, or none when it has none.
pub fn eval_with<F: Fn(LocalId) -> Option<Value>>(e: &Expr, local: &F) -> Result<Value, EvalError> {
    let eval = |e: &Expr| eval_with(e, local);
    Ok(match &e.kind {
        ExprKind::Const(v) => v.clone(),
        ExprKind::Local(l) => local(*l).ok_or(EvalError::NotConstant)?,
        ExprKind::Unary(op, a) => {
            let v = eval(a)?;
            match (op, v) {
                (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
                (op, v) if op.is_reduction() => {
                    let (bits, width) = raw_bits(&v, &a.ty).ok_or(EvalError::NotConstant)?;
                    let one = match op {
                        UnOp::AndReduce => bits == low_mask(width),
                        UnOp::OrReduce => bits.sign() != Sign::NoSign,
                        _ => bits.magnitude().count_ones() % 2 == 1,
                    };
                    Value::Int(i128::from(one))
                }
                (UnOp::Neg, v) => int(-v.as_big().ok_or(EvalError::NotConstant)?, &e.ty),
                (UnOp::BitNot, v @ (Value::Int(_) | Value::Wide(_))) => {
                    int(!v.as_big().ok_or(EvalError::NotConstant)?, &e.ty)
                }
                _ => return Err(EvalError::NotConstant),
            }
        }
        ExprKind::Bits { base, lo, check } => {
            let (bits, _) = raw_bits(&eval(base)?, &base.ty).ok_or(EvalError::NotConstant)?;
            let lo = eval(lo)?.as_int().ok_or(EvalError::NotConstant)?;
            let base_width = base.ty.scalar_bits().unwrap_or(0);
            if lo < 0
                || check.is_some_and(|n| lo >= i128::from(n))
                || lo >= i128::from(base_width.max(1))
            {
                return Err(EvalError::IndexOutOfRange);
            }
            let width = e.ty.scalar_bits().ok_or(EvalError::NotConstant)?;
            int((bits >> (lo as u32)) & low_mask(width), &e.ty)
        }
        ExprKind::Replicate(part, times) => {
            let (bits, width) = raw_bits(&eval(part)?, &part.ty).ok_or(EvalError::NotConstant)?;
            let mut acc = BigInt::zero();
            for _ in 0..*times {
                acc = (acc << width) | &bits;
            }
            int(acc, &e.ty)
        }
        ExprKind::Concat(parts) => {
            let mut acc = BigInt::zero();
            for p in parts {
                let (bits, width) = raw_bits(&eval(p)?, &p.ty).ok_or(EvalError::NotConstant)?;
                acc = (acc << width) | bits;
            }
            int(acc, &e.ty)
        }
        ExprKind::Binary(op, a, b) => binary(*op, &a.ty, &eval(a)?, &eval(b)?)?,
        ExprKind::Cast(a) => {
            let v = eval(a)?.as_big().ok_or(EvalError::NotConstant)?;
            int(v, &e.ty)
        }
        ExprKind::Field(a, i) => match eval(a)? {
            Value::Struct(mut fs) if *i < fs.len() => fs.swap_remove(*i),
            _ => return Err(EvalError::NotConstant),
        },
        ExprKind::Index(a, i) => {
            let idx = eval(i)?.as_int().ok_or(EvalError::NotConstant)?;
            match eval(a)? {
                Value::Array(mut vs) => {
                    if idx < 0 || idx as u128 >= vs.len() as u128 {
                        return Err(EvalError::IndexOutOfRange);
                    }
                    vs.swap_remove(idx as usize)
                }
                _ => return Err(EvalError::NotConstant),
            }
        }
        ExprKind::StructLit(fs) => Value::Struct(fs.iter().map(&eval).collect::<Result<_, _>>()?),
        ExprKind::ArrayLit(vs) => Value::Array(vs.iter().map(&eval).collect::<Result<_, _>>()?),
        ExprKind::ArrayRepeat(v, n) => Value::Array(vec![eval(v)?; *n as usize]),
        _ => return Err(EvalError::NotConstant),
    })
}

/// One binary operation on constant operands of type `ty` (the left operand's).
pub fn binary(op: BinOp, ty: &Type, a: &Value, b: &Value) -> Result<Value, EvalError> {
    use BinOp::*;
    if let (Value::Bool(x), Value::Bool(y)) = (a, b) {
        return Ok(Value::Bool(match op {
            Or | BitOr => *x || *y,
            And | BitAnd => *x && *y,
            BitXor | Ne => x != y,
            Eq => x == y,
            Lt => !x & y,
            Le => x <= y,
            Gt => x & !y,
            Ge => x >= y,
            _ => return Err(EvalError::NotConstant),
        }));
    }
    let (Some(x), Some(y)) = (a.as_big(), b.as_big()) else {
        return match op {
            Eq => Ok(Value::Bool(a == b)),
            Ne => Ok(Value::Bool(a != b)),
            _ => Err(EvalError::NotConstant),
        };
    };
    let width = match ty {
        Type::Int { width, .. } => *width,
        Type::Enum(e) => e.width,
        _ => 64,
    };
    let signed = matches!(ty, Type::Int { signed: true, .. });
    Ok(match op {
        Eq => Value::Bool(x == y),
        Ne => Value::Bool(x != y),
        Lt => Value::Bool(x < y),
        Le => Value::Bool(x <= y),
        Gt => Value::Bool(x > y),
        Ge => Value::Bool(x >= y),
        Add => int(x + y, ty),
        Sub => int(x - y, ty),
        Mul => int(x * y, ty),
        // Both truncate toward zero, as RISC-V does; `MIN / -1` wraps.
        Div if y.is_zero() => int(BigInt::from(-1), ty),
        Div => int(x / y, ty),
        Rem if y.is_zero() => int(x, ty),
        Rem => int(x % y, ty),
        BitAnd => int(x & y, ty),
        BitOr => int(x | y, ty),
        BitXor => int(x ^ y, ty),
        Shl | Shr if y >= BigInt::from(width) => {
            if op == Shr && signed && x.sign() == Sign::Minus {
                Value::Int(-1)
            } else {
                Value::Int(0)
            }
        }
        Shl => int(x << u32::try_from(&y).unwrap_or(0), ty),
        // `>>` on a negative `BigInt` floors: the arithmetic shift.
        Shr => int(x >> u32::try_from(&y).unwrap_or(0), ty),
        Or | And => return Err(EvalError::NotConstant),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_wraps_and_divides_like_risc_v() {
        let u8t = Type::uint(8);
        let i8t = Type::Int {
            signed: true,
            width: 8,
        };
        let cases: Vec<(BinOp, &Type, i128, i128, i128)> = vec![
            (BinOp::Add, &u8t, 255, 1, 0),
            (BinOp::Add, &i8t, 127, 1, -128),
            (BinOp::Div, &u8t, 7, 0, 255),
            (BinOp::Div, &i8t, 7, 0, -1),
            (BinOp::Rem, &i8t, 7, 0, 7),
            (BinOp::Div, &i8t, -128, -1, -128),
            (BinOp::Rem, &i8t, -128, -1, 0),
            (BinOp::Shl, &u8t, 1, 8, 0),
            (BinOp::Shr, &i8t, -4, 9, -1),
            (BinOp::Shr, &i8t, -4, 1, -2),
            (BinOp::Mul, &u8t, 16, 16, 0),
        ];
        for (op, ty, a, b, want) in cases {
            assert_eq!(
                binary(op, ty, &Value::Int(a), &Value::Int(b)),
                Ok(Value::Int(want)),
                "{a} {op:?} {b} in {ty}"
            );
        }
    }
}
