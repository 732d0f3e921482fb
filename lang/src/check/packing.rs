//! Casts between a struct and an integer of its total width (`p as u16`,
//! `w as Pair`): the struct's bits are its fields' side by side, the
//! first field the most significant, as in a concatenation of the fields
//! (`{p.a, p.b}`) and a Verilog packed struct; an array field's elements
//! likewise, element 0 the most significant; a `bool` is one bit. Both
//! directions become the bit-level forms of `check/bits.rs` (a
//! concatenation, bit slices), so the back ends see nothing new.

use super::*;

/// The bits of a packable type: integers, `bool`, and structs and arrays
/// of them; `None` for the rest (enums, options).
pub(super) fn packed_width(ty: &Type) -> Option<u32> {
    match ty {
        Type::Bool => Some(1),
        Type::Int { width, .. } => Some(*width),
        Type::Array(t, n) => packed_width(t)?.checked_mul(*n),
        Type::Struct(s) => s
            .fields
            .iter()
            .try_fold(0u32, |acc, (_, t)| acc.checked_add(packed_width(t)?)),
        Type::Enum(_) | Type::Option(_) | Type::Error => None,
    }
}

/// `e`'s scalars, most significant first (see the module documentation).
fn scalars(e: Expr, out: &mut Vec<Expr>) {
    let span = e.span;
    match e.ty.clone() {
        Type::Struct(s) => {
            for (i, (_, t)) in s.fields.iter().enumerate() {
                let field = Expr {
                    kind: ExprKind::Field(Box::new(e.clone()), i),
                    ty: t.clone(),
                    span,
                };
                scalars(field, out);
            }
        }
        Type::Array(t, n) => {
            for k in 0..n {
                let element = Expr {
                    kind: ExprKind::Index(Box::new(e.clone()), Box::new(bits::const_u32(k, span))),
                    ty: (*t).clone(),
                    span,
                };
                scalars(element, out);
            }
        }
        _ => out.push(e),
    }
}

/// `e` (a packable struct) as an integer of type `to`, whose width is the
/// struct's.
pub(super) fn struct_to_int(e: Expr, to: Type, span: Span) -> Expr {
    let width = packed_width(&e.ty).unwrap_or(0);
    let mut parts = Vec::new();
    scalars(e, &mut parts);
    let joined = Expr {
        kind: ExprKind::Concat(parts),
        ty: Type::uint(width),
        span,
    };
    match to {
        Type::Int { signed: true, .. } => Expr {
            kind: ExprKind::Cast(Box::new(joined)),
            ty: to,
            span,
        },
        _ => joined,
    }
}

/// The value of type `ty` (packable) whose bits are those of `x` (an
/// integer) from bit `lo` up.
fn unpack(x: &Expr, ty: &Type, lo: u32, span: Span) -> Expr {
    let slice = |width: u32| Expr {
        kind: ExprKind::Bits {
            base: Box::new(x.clone()),
            lo: Box::new(bits::const_u32(lo, span)),
            check: None,
        },
        ty: Type::uint(width),
        span,
    };
    match ty {
        Type::Bool => Expr {
            kind: ExprKind::Binary(
                BinOp::Ne,
                Box::new(slice(1)),
                Box::new(Expr {
                    kind: ExprKind::Const(Value::Int(0)),
                    ty: Type::uint(1),
                    span,
                }),
            ),
            ty: Type::Bool,
            span,
        },
        Type::Int { signed, width } => {
            let bits = slice(*width);
            match signed {
                false => bits,
                true => Expr {
                    kind: ExprKind::Cast(Box::new(bits)),
                    ty: ty.clone(),
                    span,
                },
            }
        }
        Type::Struct(s) => {
            // The first field is the most significant: lay out from the top.
            let mut top = lo + packed_width(ty).unwrap_or(0);
            let fields = s
                .fields
                .iter()
                .map(|(_, t)| {
                    top -= packed_width(t).unwrap_or(0);
                    unpack(x, t, top, span)
                })
                .collect();
            Expr {
                kind: ExprKind::StructLit(fields),
                ty: ty.clone(),
                span,
            }
        }
        Type::Array(t, n) => {
            let w = packed_width(t).unwrap_or(0);
            let elements = (0..*n)
                .map(|k| unpack(x, t, lo + (n - 1 - k) * w, span))
                .collect();
            Expr {
                kind: ExprKind::ArrayLit(elements),
                ty: ty.clone(),
                span,
            }
        }
        Type::Enum(_) | Type::Option(_) | Type::Error => x.clone(),
    }
}

/// `x` (an unsigned or signed integer as wide as `to`) as the packable
/// struct `to`.
pub(super) fn int_to_struct(x: Expr, to: Type, span: Span) -> Expr {
    let x = match x.ty {
        Type::Int {
            signed: true,
            width,
        } => Expr {
            ty: Type::uint(width),
            kind: ExprKind::Cast(Box::new(x)),
            span,
        },
        _ => x,
    };
    unpack(&x, &to, 0, span)
}
