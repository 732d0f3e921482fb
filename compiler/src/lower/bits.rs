//! Bit-level expressions and writes (docs/language.md, "Bits") lowered to
//! IR shifts and masks over `u64`: bit ranges (`x[i]`, slices), writes of
//! a bit range into a register's next value or a local, concatenation,
//! replication and the reductions. Both engines and the JIT then need
//! nothing of their own.

use chronon_lang::ast::UnOp as LUn;
use chronon_lang::design::{BitRange, Expr as LExpr, Type};
use chronon_lang::span::Span;

use super::{SiteKind, Target, UnitLower, bin, in_range, scalar};
use crate::ir::{BinOp, Expr, Stmt, Ty, UnOp};

/// A value of type `ty` as its two's-complement bits in a `u64` (a signed
/// value is not sign-extended).
pub(super) fn raw_u64(v: Expr, ty: Ty) -> Expr {
    let v = if ty.signed {
        let to = Ty::unsigned(ty.width);
        Expr::Cast {
            from: ty,
            to,
            arg: Box::new(v),
        }
    } else {
        v
    };
    widen(v, Ty::unsigned(ty.width))
}

/// An unsigned value of type `ty` as a `u64` (a constant stays one: the
/// wide lowering leaves out the operations on zero limbs it sees).
pub(super) fn widen(v: Expr, ty: Ty) -> Expr {
    match v {
        _ if ty == Ty::U64 => v,
        Expr::Const(_, k) if !ty.signed => Expr::Const(Ty::U64, k),
        v => Expr::Cast {
            from: ty,
            to: Ty::U64,
            arg: Box::new(v),
        },
    }
}

/// A `u64` truncated to `to` (a constant stays one).
pub(super) fn narrow(v: Expr, to: Ty) -> Expr {
    match v {
        _ if to == Ty::U64 => v,
        Expr::Const(_, k) => Expr::Const(to, k & to.mask()),
        v => Expr::Cast {
            from: Ty::U64,
            to,
            arg: Box::new(v),
        },
    }
}

/// `v` (a `u64`) shifted by a constant.
fn shift(op: BinOp, v: Expr, by: u32) -> Expr {
    bin(op, Ty::U64, v, Expr::Const(Ty::U64, u64::from(by)))
}

impl UnitLower<'_> {
    /// `&a`, `|a`, `^a` of a value of type `ty`: a `u1`.
    pub(super) fn reduction(&mut self, op: LUn, a: Expr, ty: Ty) -> Expr {
        let bits = raw_u64(a, ty);
        let cmp = |op, k| bin(op, Ty::U64, bits.clone(), k);
        match op {
            LUn::AndReduce => cmp(BinOp::Eq, Expr::Const(Ty::U64, ty.mask())),
            LUn::OrReduce => cmp(BinOp::Ne, Expr::Const(Ty::U64, 0)),
            _ => {
                // Parity: fold the halves together until one bit is left.
                let mut v = self.pure(bits);
                let mut half = 32;
                while half >= 1 {
                    if half < u32::from(ty.width) {
                        let shifted = shift(BinOp::Shr, v.clone(), half);
                        let x = bin(BinOp::Xor, Ty::U64, v, shifted);
                        v = self.temp(Ty::U64, x);
                    }
                    half /= 2;
                }
                narrow(v, Ty::BOOL)
            }
        }
    }

    /// Faults ("bit position out of range") unless `lo < n`; returns that
    /// condition.
    pub(super) fn check_bit_position(&mut self, lo: Expr, lty: Ty, n: u32, span: Span) -> Expr {
        let fault = self.fault(
            SiteKind::Index,
            "bit position".into(),
            "bit position out of range".into(),
            span,
        );
        let cond = in_range(lo, lty, n);
        self.out.push(Stmt::Assert {
            cond: cond.clone(),
            fault,
        });
        cond
    }

    /// `e`'s bits of `base` from `lo` up ([`EK::Bits`]); a `lo` known only
    /// at run time is checked against `check` first (a fault past it).
    pub(super) fn bits(&mut self, e: &LExpr, base: &LExpr, lo: &LExpr, check: Option<u32>) -> Expr {
        let bty = scalar(&base.ty);
        let lty = scalar(&lo.ty);
        let b = raw_u64(self.expr(base).remove(0), bty);
        let mut lo = self.expr(lo).remove(0);
        if let Some(n) = check {
            lo = self.pure(lo);
            self.check_bit_position(lo.clone(), lty, n, e.span);
        }
        let lo = widen(lo, lty);
        let shifted = bin(BinOp::Shr, Ty::U64, b, lo);
        narrow(shifted, scalar(&e.ty))
    }

    /// `{a, b, ...}` as a value of type `ty`: each part shifted in below
    /// the ones before it.
    pub(super) fn concat(&mut self, parts: &[LExpr], ty: Ty) -> Expr {
        let mut acc: Option<Expr> = None;
        for p in parts {
            let pty = scalar(&p.ty);
            let v = raw_u64(self.expr(p).remove(0), pty);
            acc = Some(match acc {
                None => v,
                Some(a) => {
                    let up = shift(BinOp::Shl, a, u32::from(pty.width));
                    bin(BinOp::Or, Ty::U64, up, v)
                }
            });
        }
        narrow(acc.unwrap_or(Expr::Const(Ty::U64, 0)), ty)
    }

    /// `{times{part}}` as a value of type `ty`: the part's value (below
    /// 2^w) times 1 + 2^w + 2^2w + ...; the copies never overlap, so one
    /// multiplication places them all.
    pub(super) fn replicate(&mut self, part: &LExpr, times: u32, ty: Ty) -> Expr {
        let pty = scalar(&part.ty);
        let v = raw_u64(self.expr(part).remove(0), pty);
        let w = u32::from(pty.width);
        let spread = (0..times).fold(0u64, |k, i| k | (1u64 << (i * w)));
        narrow(
            bin(BinOp::Mul, Ty::U64, v, Expr::Const(Ty::U64, spread)),
            ty,
        )
    }

    /// Writes `vals` (one value of `sel.width` bits) into bits `sel` of
    /// the integer `target` of type `ty`: the other bits keep what the
    /// target holds now (a register's next value), so writes in program
    /// order win bit by bit. A run-time position past the valid ones
    /// faults and writes nothing.
    pub(super) fn write_bits(
        &mut self,
        target: Target,
        ty: &Type,
        sel: &BitRange,
        vals: Vec<Expr>,
        span: Span,
    ) {
        if let Some(width) = super::wide::wide(ty) {
            return self.write_wide_bits(target, width, sel, vals, span);
        }
        let tty = scalar(ty);
        let lty = scalar(&sel.lo.ty);
        let mut lo = self.expr(&sel.lo).remove(0);
        let Some(v) = vals.into_iter().next() else {
            return;
        };
        let v = self.pure(v);
        let guard = sel.check.map(|n| {
            lo = self.pure(lo.clone());
            self.check_bit_position(lo.clone(), lty, n, span)
        });
        let old = match target {
            Target::Slots(s) => Expr::Load(s),
            Target::Locals(l) => Expr::Local(l),
        };
        let lo = self.pure(widen(lo, lty));
        let mask = Expr::Const(Ty::U64, Ty::unsigned(sel.width as u8).mask());
        let at = |e: Expr| bin(BinOp::Shl, Ty::U64, e, lo.clone());
        let keep = Expr::Unary(UnOp::Not, Ty::U64, Box::new(at(mask.clone())));
        let kept = bin(BinOp::And, Ty::U64, raw_u64(old, tty), keep);
        let part = bin(
            BinOp::And,
            Ty::U64,
            raw_u64(v, Ty::unsigned(sel.width as u8)),
            mask,
        );
        let merged = bin(BinOp::Or, Ty::U64, kept, at(part));
        let mut new = narrow(merged, Ty::unsigned(tty.width));
        if tty.signed {
            new = Expr::Cast {
                from: Ty::unsigned(tty.width),
                to: tty,
                arg: Box::new(new),
            };
        }
        let saved = std::mem::take(&mut self.out);
        self.assign(target, vec![new]);
        let write = std::mem::replace(&mut self.out, saved);
        self.guarded(guard, write);
    }

    /// [`Self::write_bits`] into an integer wider than 64 bits.
    fn write_wide_bits(
        &mut self,
        target: Target,
        width: u32,
        sel: &BitRange,
        vals: Vec<Expr>,
        span: Span,
    ) {
        let value_ty = Type::uint(sel.width);
        let v = self.bv(vals, &value_ty);
        let lo = self.position(&sel.lo);
        let guard = match (&lo, sel.check) {
            (Err(t), Some(n)) => Some(self.check_bit_position(t.clone(), Ty::U64, n, span)),
            _ => None,
        };
        let n = super::wide::limbs(width);
        let old: Vec<Expr> = (0..n as u32)
            .map(|i| match target {
                Target::Slots(s) => Expr::Load(s + i),
                Target::Locals(l) => Expr::Local(l + i),
            })
            .collect();
        let old = self.bv(old, &Type::uint(width));
        let saved = std::mem::take(&mut self.out);
        let new = self.insert(&old, &v, lo, sel.width);
        self.assign(target, new.limbs);
        let write = std::mem::replace(&mut self.out, saved);
        self.guarded(guard, write);
    }

    /// Emits `write`, under `guard` when there is one (a run-time
    /// position's range check).
    fn guarded(&mut self, guard: Option<Expr>, write: Vec<Stmt>) {
        match guard {
            Some(cond) => self.out.push(Stmt::If {
                cond,
                then: write,
                els: Vec::new(),
            }),
            None => self.out.extend(write),
        }
    }
}
