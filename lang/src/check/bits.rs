//! Bit-level expressions: bit selects `x[i]`, slices `x[hi:lo]`,
//! `x[base +: w]` and `x[base -: w]`, concatenation `{a, b}`, replication
//! `{n{a}}` and the reductions `&x`, `|x`, `^x`.
//!
//! Each becomes a [`ExprKind::Bits`] (a run of bits from a low position,
//! as wide as its type), a [`ExprKind::Concat`] or a [`ExprKind::Replicate`], which the back ends
//! compute with shifts and masks. Positions count from 0, the least
//! significant bit, as Verilog's do; a signed value is taken as its two's-
//! complement bits, and every result is unsigned. Values are at most
//! [`MAX_INT_BITS`] bits wide (E0332 past that).

use super::*;

pub(super) use crate::design::BitRange;

/// The widest value a concatenation may build.
const MAX_BITS: u64 = MAX_INT_BITS as u64;

impl BodyCx<'_> {
    /// The integer (or `bool`) operand of a bit-level operator, checked;
    /// `None` (after reporting E0305) for anything else.
    fn bits_operand(&mut self, a: &ast::Expr, op: &str) -> Option<(Expr, u32)> {
        let a = self.check(a, None);
        if a.ty == Type::Error {
            return None;
        }
        match a.ty.scalar_bits() {
            Some(width) => Some((a, width)),
            None => {
                self.err(TypeError::BadOperand {
                    span: a.span,
                    op: op.into(),
                    ty: a.ty.to_string(),
                });
                None
            }
        }
    }

    /// A position or width that must be a compile-time constant.
    fn bit_constant(&mut self, e: &ast::Expr, what: &'static str) -> Option<i128> {
        let c = self.index(e);
        if c.ty == Type::Error {
            return None;
        }
        match eval(&c).ok().and_then(|v| v.as_int()) {
            Some(k) => Some(k),
            None => {
                self.err(TypeError::NotConstant { span: e.span, what });
                None
            }
        }
    }

    /// `x[i]` on an integer: bit `i`, a `u1`.
    pub(super) fn bit_select(
        &mut self,
        base: Expr,
        width: u32,
        i: &ast::Expr,
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        let ty = base.ty.to_string();
        match self.bit_position(&ty, width, i) {
            Some(sel) => {
                let e = bits(base, sel, span);
                self.expect(e, want)
            }
            None => err_expr(span),
        }
    }

    /// The bit `x[i]` selects of a `ty` of `width` bits.
    pub(super) fn bit_position(&mut self, ty: &str, width: u32, i: &ast::Expr) -> Option<BitRange> {
        let idx = self.index(i);
        if idx.ty == Type::Error {
            return None;
        }
        let check = match idx.kind {
            ExprKind::Const(Value::Int(k)) if k >= i128::from(width) => {
                self.err(TypeError::BitOutOfRange {
                    span: i.span,
                    what: format!("bit {k} is"),
                    ty: ty.to_string(),
                    width,
                });
                return None;
            }
            ExprKind::Const(_) => None,
            _ => Some(width),
        };
        Some(BitRange {
            lo: idx,
            width: 1,
            check,
        })
    }

    /// `x[hi:lo]`, `x[base +: w]`, `x[base -: w]`.
    pub(super) fn slice(
        &mut self,
        (a, kind): (&ast::Expr, ast::SliceKind),
        bounds: (&ast::Expr, &ast::Expr),
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        let Some((base, n)) = self.bits_operand(a, slice_op(kind)) else {
            return err_expr(span);
        };
        let ty = base.ty.to_string();
        match self.slice_range(&ty, n, kind, bounds, span) {
            Some(sel) => {
                let e = bits(base, sel, span);
                self.expect(e, want)
            }
            None => err_expr(span),
        }
    }

    /// The bits a slice of `kind` selects of a `ty` of `n` bits.
    pub(super) fn slice_range(
        &mut self,
        ty: &str,
        n: u32,
        kind: ast::SliceKind,
        bounds: (&ast::Expr, &ast::Expr),
        span: Span,
    ) -> Option<BitRange> {
        match kind {
            ast::SliceKind::Range => self.range_slice(ty, n, bounds, span),
            _ => self.indexed_slice(ty, n, kind, bounds),
        }
    }

    /// `x[hi:lo]`: both bounds constant, `lo <= hi < n`.
    fn range_slice(
        &mut self,
        ty: &str,
        n: u32,
        (hi_e, lo_e): (&ast::Expr, &ast::Expr),
        span: Span,
    ) -> Option<BitRange> {
        let hi = self.bit_constant(hi_e, "the bounds of a slice `x[hi:lo]`");
        let lo = self.bit_constant(lo_e, "the bounds of a slice `x[hi:lo]`");
        let (hi, lo) = (hi?, lo?);
        if hi >= i128::from(n) {
            self.err(TypeError::BitOutOfRange {
                span: hi_e.span,
                what: format!("bits {hi}:{lo} are"),
                ty: ty.to_string(),
                width: n,
            });
            return None;
        }
        if hi < lo {
            self.err(TypeError::BadSlice {
                span,
                message: format!("`[{hi}:{lo}]` selects no bits: the high bound comes first"),
            });
            return None;
        }
        Some(BitRange {
            lo: const_u32(lo as u32, lo_e.span),
            width: (hi - lo + 1) as u32,
            check: None,
        })
    }

    /// `x[base +: w]` and `x[base -: w]`: `w` constant, `base` at run time
    /// or constant.
    fn indexed_slice(
        &mut self,
        ty: &str,
        n: u32,
        kind: ast::SliceKind,
        (pos_e, w_e): (&ast::Expr, &ast::Expr),
    ) -> Option<BitRange> {
        let pos = self.index(pos_e);
        let w = self.bit_constant(w_e, "the width of a slice `x[base +: w]`")?;
        if pos.ty == Type::Error {
            return None;
        }
        if w < 1 || w > i128::from(n) {
            self.err(TypeError::BadSlice {
                span: w_e.span,
                message: format!("a slice of {w} bits of a `{ty}` ({n} bits)"),
            });
            return None;
        }
        let w = w as u32;
        // The lowest bit taken; valid positions are 0 ..= n - w.
        let valid = n - w + 1;
        if let ExprKind::Const(Value::Int(p)) = pos.kind {
            let lo = if kind == ast::SliceKind::Up {
                p
            } else {
                p - i128::from(w - 1)
            };
            if lo < 0 || lo >= i128::from(valid) {
                let (from, to) = (lo, lo + i128::from(w) - 1);
                self.err(TypeError::BitOutOfRange {
                    span: pos_e.span,
                    what: format!("bits {to}:{from} are"),
                    ty: ty.to_string(),
                    width: n,
                });
                return None;
            }
            return Some(BitRange {
                lo: const_u32(lo as u32, pos_e.span),
                width: w,
                check: None,
            });
        }
        let lo = if kind == ast::SliceKind::Up {
            pos
        } else {
            // `base - (w - 1)` in 64 bits: a base below `w - 1` wraps far
            // past the valid positions and faults.
            let wide = Expr {
                kind: ExprKind::Cast(Box::new(pos)),
                ty: Type::uint(64),
                span: pos_e.span,
            };
            let back = Expr {
                kind: ExprKind::Const(Value::Int(i128::from(w - 1))),
                ty: Type::uint(64),
                span: w_e.span,
            };
            Expr {
                kind: ExprKind::Binary(BinOp::Sub, Box::new(wide), Box::new(back)),
                ty: Type::uint(64),
                span: pos_e.span,
            }
        };
        Some(BitRange {
            lo,
            width: w,
            check: Some(valid),
        })
    }

    /// `&x`, `|x`, `^x`: a `u1`.
    pub(super) fn reduction(
        &mut self,
        op: UnOp,
        a: &ast::Expr,
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        let Some((a, _)) = self.bits_operand(a, &format!("unary {}", op.symbol())) else {
            return err_expr(span);
        };
        let e = Expr {
            kind: ExprKind::Unary(op, Box::new(a)),
            ty: Type::uint(1),
            span,
        };
        self.expect(e, want)
    }

    /// `{a, b, c}`, or with `count`, `{count{a, b, c}}`.
    pub(super) fn concat(
        &mut self,
        count: Option<&ast::Expr>,
        parts: &[ast::Expr],
        want: Option<&Type>,
        span: Span,
    ) -> Expr {
        let times = match count {
            Some(c) => match self.bit_constant(c, "a replication count") {
                Some(k) if k >= 1 => Some(k),
                Some(k) => {
                    self.err(TypeError::BadSlice {
                        span: c.span,
                        message: format!(
                            "a replication `{{{k}{{...}}}}` must repeat at least once"
                        ),
                    });
                    None
                }
                None => None,
            },
            None => Some(1),
        };
        let mut checked = Vec::with_capacity(parts.len());
        let mut width: u64 = 0;
        let mut ok = times.is_some();
        for p in parts {
            if self.is_untyped(p) {
                self.err(TypeError::UnsizedPart { span: p.span });
                ok = false;
                continue;
            }
            match self.bits_operand(p, "{}") {
                Some((e, w)) => {
                    width += u64::from(w);
                    checked.push(e);
                }
                None => ok = false,
            }
        }
        let Some(times) = times.filter(|_| ok) else {
            return err_expr(span);
        };
        let total = width.saturating_mul(times.min(i128::from(u64::MAX)) as u64);
        if total > MAX_BITS {
            let what = if count.is_some() {
                "replication"
            } else {
                "concatenation"
            };
            self.err(TypeError::TooWide {
                span,
                what,
                width: total,
            });
            return err_expr(span);
        }
        let once = if checked.len() == 1 && count.is_some() {
            checked.remove(0)
        } else {
            Expr {
                kind: ExprKind::Concat(checked),
                ty: Type::uint(width as u32),
                span,
            }
        };
        let e = match count {
            None => once,
            Some(_) => Expr {
                kind: ExprKind::Replicate(Box::new(once), times as u32),
                ty: Type::uint(total as u32),
                span,
            },
        };
        self.expect(e, want)
    }
}

/// A `u32` constant.
pub(super) fn const_u32(v: u32, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Const(Value::Int(i128::from(v))),
        ty: Type::uint(32),
        span,
    }
}

/// The operator's name in E0305.
pub(super) fn slice_op(kind: ast::SliceKind) -> &'static str {
    match kind {
        ast::SliceKind::Range => "[:]",
        ast::SliceKind::Up => "[+:]",
        ast::SliceKind::Down => "[-:]",
    }
}

/// The bits of `base` `sel` selects, a `u<width>`.
fn bits(base: Expr, sel: BitRange, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Bits {
            base: Box::new(base),
            lo: Box::new(sel.lo),
            check: sel.check,
        },
        ty: Type::uint(sel.width),
        span,
    }
}
