//! Compile-time evaluation of typed expressions: constants, parameters,
//! array sizes, loop bounds. Implements the language's exact arithmetic
//! (wrapping at the operand width, RISC-V division), so it doubles as a
//! reference for the back ends.

use crate::ast::{BinOp, UnOp};
use crate::design::{Expr, ExprKind, Type, Value};

/// Why an expression has no compile-time value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// It reads run-time state (a local, register, port) or calls a function.
    NotConstant,
    /// A constant array index is out of range.
    IndexOutOfRange,
}

/// Wraps an exact integer to a type: modulo `2^width`, then into the signed
/// range for `iN`.
pub fn wrap(v: i128, ty: &Type) -> i128 {
    match ty {
        Type::Int { signed, width } => {
            let m = 1i128 << width;
            let r = v.rem_euclid(m);
            if *signed && r >= m / 2 { r - m } else { r }
        }
        Type::Bool => v & 1,
        _ => v,
    }
}

/// A constant integer or `bool` as its two's-complement bits, with its
/// width.
pub fn raw_bits(v: &Value, ty: &Type) -> Option<(u128, u32)> {
    let width = ty.scalar_bits()?;
    let x = match v {
        Value::Int(x) => *x,
        Value::Bool(b) => i128::from(*b),
        _ => return None,
    };
    Some(((x as u128) & low_mask(width), width))
}

/// The `width` low bits set.
fn low_mask(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// Whether `v` is representable in `ty` without wrapping.
pub fn fits(v: i128, ty: &Type) -> bool {
    match ty {
        Type::Int {
            signed: false,
            width,
        } => v >= 0 && v < (1i128 << width),
        Type::Int {
            signed: true,
            width,
        } => v >= -(1i128 << (width - 1)) && v < (1i128 << (width - 1)),
        Type::Enum(e) => v >= 0 && (v as u128) < e.variants.len() as u128,
        _ => false,
    }
}

/// Evaluates a typed expression that must be constant.
pub fn eval(e: &Expr) -> Result<Value, EvalError> {
    Ok(match &e.kind {
        ExprKind::Const(v) => v.clone(),
        ExprKind::Unary(op, a) => {
            let v = eval(a)?;
            match (op, v) {
                (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
                (UnOp::Neg, Value::Int(x)) => Value::Int(wrap(-x, &e.ty)),
                (UnOp::BitNot, Value::Int(x)) => Value::Int(wrap(!x, &e.ty)),
                (op, v) if op.is_reduction() => {
                    let (bits, width) = raw_bits(&v, &a.ty).ok_or(EvalError::NotConstant)?;
                    let one = match op {
                        UnOp::AndReduce => bits == low_mask(width),
                        UnOp::OrReduce => bits != 0,
                        _ => bits.count_ones() % 2 == 1,
                    };
                    Value::Int(i128::from(one))
                }
                _ => return Err(EvalError::NotConstant),
            }
        }
        ExprKind::Bits { base, lo, check } => {
            let (bits, _) = raw_bits(&eval(base)?, &base.ty).ok_or(EvalError::NotConstant)?;
            let lo = eval(lo)?.as_int().ok_or(EvalError::NotConstant)?;
            if lo < 0 || check.is_some_and(|n| lo >= i128::from(n)) || lo >= 128 {
                return Err(EvalError::IndexOutOfRange);
            }
            let width = e.ty.scalar_bits().ok_or(EvalError::NotConstant)?;
            Value::Int(wrap(((bits >> lo) & low_mask(width)) as i128, &e.ty))
        }
        ExprKind::Replicate(part, times) => {
            let (bits, width) = raw_bits(&eval(part)?, &part.ty).ok_or(EvalError::NotConstant)?;
            let mut acc: u128 = 0;
            for _ in 0..*times {
                acc = (acc << width) | bits;
            }
            Value::Int(wrap(acc as i128, &e.ty))
        }
        ExprKind::Concat(parts) => {
            let mut acc: u128 = 0;
            for p in parts {
                let (bits, width) = raw_bits(&eval(p)?, &p.ty).ok_or(EvalError::NotConstant)?;
                acc = (acc << width) | bits;
            }
            Value::Int(wrap(acc as i128, &e.ty))
        }
        ExprKind::Binary(op, a, b) => binary(*op, &a.ty, &eval(a)?, &eval(b)?)?,
        ExprKind::Cast(a) => {
            let v = eval(a)?.as_int().ok_or(EvalError::NotConstant)?;
            Value::Int(wrap(v, &e.ty))
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
        ExprKind::StructLit(fs) => Value::Struct(fs.iter().map(eval).collect::<Result<_, _>>()?),
        ExprKind::ArrayLit(vs) => Value::Array(vs.iter().map(eval).collect::<Result<_, _>>()?),
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
    let (Some(x), Some(y)) = (a.as_int(), b.as_int()) else {
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
        Add => Value::Int(wrap(x + y, ty)),
        Sub => Value::Int(wrap(x - y, ty)),
        Mul => Value::Int(wrap(x.wrapping_mul(y), ty)),
        Div => Value::Int(if y == 0 {
            wrap(-1, ty)
        } else {
            wrap(x / y, ty)
        }),
        Rem => Value::Int(if y == 0 { x } else { wrap(x % y, ty) }),
        BitAnd => Value::Int(wrap(x & y, ty)),
        BitOr => Value::Int(wrap(x | y, ty)),
        BitXor => Value::Int(wrap(x ^ y, ty)),
        Shl => Value::Int(if y >= i128::from(width) {
            0
        } else {
            wrap(x << y, ty)
        }),
        Shr => Value::Int(if y >= i128::from(width) {
            if signed && x < 0 { -1 } else { 0 }
        } else {
            x >> y
        }),
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
