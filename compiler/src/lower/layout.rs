//! Flattening of the front end's types and values to IR scalars.

use chronon_lang::design::{Type, Value};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::One;

use crate::ir::Ty;

/// The scalar fields of a type, in layout order: struct fields in order,
/// array elements in order, an option's valid bit before its value.
pub fn scalars(ty: &Type) -> Vec<Ty> {
    let mut out = Vec::new();
    leaves(ty, &mut |leaf| match leaf {
        // Limbs, all unsigned (`super::wide`).
        Type::Int { width, .. } if *width > 64 => {
            out.extend((0..super::wide::limbs(*width)).map(|i| super::wide::limb_ty(*width, i)))
        }
        Type::Int { signed, width } => out.push(Ty {
            width: *width as u8,
            signed: *signed,
        }),
        Type::Enum(e) => out.push(Ty::unsigned(e.width as u8)),
        _ => out.push(Ty::BOOL),
    });
    out
}

/// The values of a type as recordings show them, in layout order (as
/// [`scalars`], but an integer wider than 64 bits is one value of all its
/// limbs): `Some((width, signed))` for such an integer, `None` for a
/// scalar.
pub fn values(ty: &Type) -> Vec<Option<(u32, bool)>> {
    let mut out = Vec::new();
    leaves(ty, &mut |leaf| {
        out.push(match leaf {
            Type::Int { width, signed } if *width > 64 => Some((*width, *signed)),
            _ => None,
        })
    });
    out
}

/// Calls `f` on each leaf of `ty` (a `bool`, integer or enum) in layout
/// order; an option's valid bit is a `bool` leaf before its value.
fn leaves(ty: &Type, f: &mut dyn FnMut(&Type)) {
    match ty {
        Type::Array(t, n) => {
            for _ in 0..*n {
                leaves(t, f);
            }
        }
        Type::Struct(s) => {
            for (_, t) in &s.fields {
                leaves(t, f);
            }
        }
        Type::Option(t) => {
            f(&Type::Bool);
            leaves(t, f);
        }
        Type::Error => {}
        Type::Bool | Type::Int { .. } | Type::Enum(_) => f(ty),
    }
}

/// How a value of type `ty` names its scalars ([`crate::ir::Shape`]).
pub fn shape(ty: &Type) -> crate::ir::Shape {
    use crate::ir::Shape;
    match ty {
        Type::Array(t, n) => Shape::Array(Box::new(shape(t)), *n),
        Type::Struct(s) => Shape::Struct(
            s.fields
                .iter()
                .map(|(n, t)| (n.clone(), shape(t)))
                .collect(),
        ),
        Type::Option(t) => Shape::Option(Box::new(shape(t))),
        Type::Int { signed, width } if *width > 64 => Shape::Wide {
            width: *width,
            signed: *signed,
        },
        _ => Shape::Scalar,
    }
}

/// Number of scalar fields of a type.
pub fn size(ty: &Type) -> usize {
    match ty {
        Type::Int { width, .. } => super::wide::limbs(*width),
        Type::Bool | Type::Enum(_) => 1,
        Type::Array(t, n) => size(t) * *n as usize,
        Type::Struct(s) => s.fields.iter().map(|(_, t)| size(t)).sum(),
        Type::Option(t) => 1 + size(t),
        Type::Error => 0,
    }
}

/// Offset of struct field `index` in the struct's scalars.
pub fn field_offset(ty: &Type, index: usize) -> (usize, Type) {
    match ty {
        Type::Struct(s) => {
            let offset = s.fields[..index].iter().map(|(_, t)| size(t)).sum();
            (offset, s.fields[index].1.clone())
        }
        other => panic!("field of a non-struct type {other} survived type checking"),
    }
}

/// Element type and element count of an array type.
pub fn element(ty: &Type) -> (Type, u32) {
    match ty {
        Type::Array(t, n) => ((**t).clone(), *n),
        other => panic!("index of a non-array type {other} survived type checking"),
    }
}

/// Canonical scalars of a constant of type `ty`.
pub fn constant(ty: &Type, value: &Value) -> Vec<(Ty, u64)> {
    let mut out = Vec::new();
    push_constant(ty, value, &mut out);
    out
}

fn push_constant(ty: &Type, value: &Value, out: &mut Vec<(Ty, u64)>) {
    match (ty, value) {
        (Type::Array(t, _), Value::Array(vs)) => {
            for v in vs {
                push_constant(t, v, out);
            }
        }
        (Type::Struct(s), Value::Struct(vs)) => {
            for ((_, t), v) in s.fields.iter().zip(vs) {
                push_constant(t, v, out);
            }
        }
        (Type::Option(t), v) => {
            out.push((Ty::BOOL, 0));
            push_constant(t, v, out);
        }
        (Type::Int { width, .. }, v) if *width > 64 => {
            let bits = v.as_big().unwrap_or_default();
            let bits = bits.mod_floor(&(BigInt::one() << *width));
            let digits = bits.magnitude().to_u64_digits();
            for i in 0..super::wide::limbs(*width) {
                let ty = super::wide::limb_ty(*width, i);
                out.push((ty, digits.get(i).copied().unwrap_or(0) & ty.mask()));
            }
        }
        (t, v) => {
            let tys = scalars(t);
            let scalar = tys.first().copied().unwrap_or(Ty::BOOL);
            let raw = v.as_int().unwrap_or(0);
            out.push((scalar, (raw as u64) & scalar.mask()));
        }
    }
}
