//! Integers wider than 64 bits (docs/language.md, "Wide integers")
//! lowered to IR operations on 64-bit limbs.
//!
//! A `uN` or `iN` with `N > 64` is `ceil(N / 64)` scalars, least
//! significant first: every limb a `u64` but the last, which holds the
//! remaining bits (`u1`..`u64`). Every limb is unsigned and canonical, so
//! slots, channel items and FIFO words hold wide values unchanged; only
//! the operations here know a value's signedness. Each operation becomes
//! ordinary scalar IR (carry chains, funnel shifts, limb-wise compares and
//! selects, [`BinOp::MulHi`] for products), so both engines compute it
//! with code that is already tested against each other and the JIT runs
//! it natively, without a host call per operation.
//!
//! A [`Bv`]'s limbs are pure (constants, locals, loads), so an operation
//! may read each many times without duplicating work.

use chronon_lang::ast::{BinOp as LBin, UnOp as LUn};
use chronon_lang::design::{Expr as LExpr, ExprKind as EK, Type};

use super::bits::{narrow, widen};
use super::{UnitLower, bin, not};
use crate::ir::{BinOp, Expr, Ty, UnOp};

/// The number of 64-bit limbs of a `width`-bit value.
pub(super) fn limbs(width: u32) -> usize {
    width.div_ceil(64).max(1) as usize
}

/// The IR type of limb `i` of a `width`-bit value: `u64` but for the
/// last, which holds the remaining bits.
pub(super) fn limb_ty(width: u32, i: usize) -> Ty {
    let n = limbs(width);
    if i + 1 < n {
        Ty::U64
    } else {
        Ty::unsigned((width - 64 * (n as u32 - 1)) as u8)
    }
}

/// The width of `ty` when it is an integer wider than 64 bits.
pub(super) fn wide(ty: &Type) -> Option<u32> {
    match ty {
        Type::Int { width, .. } if *width > 64 => Some(*width),
        _ => None,
    }
}

/// The bits of an integer, `bool` or enum type.
fn bits_of(ty: &Type) -> u32 {
    match ty {
        Type::Enum(e) => e.width,
        other => other.scalar_bits().unwrap_or(1),
    }
}

fn c64(v: u64) -> Expr {
    Expr::Const(Ty::U64, v)
}

fn is_zero(e: &Expr) -> bool {
    matches!(e, Expr::Const(_, 0))
}

fn or64(a: Expr, b: Expr) -> Expr {
    match (is_zero(&a), is_zero(&b)) {
        (true, _) => b,
        (_, true) => a,
        _ => bin(BinOp::Or, Ty::U64, a, b),
    }
}

fn shift64(op: BinOp, v: Expr, by: Expr) -> Expr {
    if is_zero(&v) {
        return c64(0);
    }
    bin(op, Ty::U64, v, by)
}

fn bool_and(a: Expr, b: Expr) -> Expr {
    bin(BinOp::And, Ty::BOOL, a, b)
}

fn bool_or(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Or, Ty::BOOL, a, b)
}

fn select(cond: Expr, then: Expr, els: Expr) -> Expr {
    Expr::Select {
        cond: Box::new(cond),
        then: Box::new(then),
        els: Box::new(els),
    }
}

/// A value as limbs, least significant first ([`limb_ty`] gives each
/// limb's type), each one pure.
#[derive(Clone, Debug)]
pub(super) struct Bv {
    /// The limbs.
    pub limbs: Vec<Expr>,
    /// The value's width in bits.
    pub width: u32,
}

impl Bv {
    /// Limb `i` as a `u64`; 0 past the top.
    fn at(&self, i: usize) -> Expr {
        match self.limbs.get(i) {
            Some(l) => widen(l.clone(), limb_ty(self.width, i)),
            None => c64(0),
        }
    }

    fn n(&self) -> usize {
        self.limbs.len()
    }

    /// The constant `v` (its low `width` bits).
    fn constant(width: u32, v: &[u64]) -> Bv {
        let limbs = (0..limbs(width))
            .map(|i| {
                let ty = limb_ty(width, i);
                Expr::Const(ty, v.get(i).copied().unwrap_or(0) & ty.mask())
            })
            .collect();
        Bv { limbs, width }
    }

    /// All ones in the low `ones` bits of a `width`-bit value.
    fn low_ones(width: u32, ones: u32) -> Bv {
        let v: Vec<u64> = (0..limbs(width))
            .map(|i| {
                let from = 64 * i as u32;
                match ones.saturating_sub(from) {
                    0 => 0,
                    k if k >= 64 => u64::MAX,
                    k => (1u64 << k) - 1,
                }
            })
            .collect();
        Bv::constant(width, &v)
    }
}

impl UnitLower<'_> {
    /// A lowered value of the integer, `bool` or enum type `ty` as limbs.
    pub(super) fn bv(&mut self, vals: Vec<Expr>, ty: &Type) -> Bv {
        let width = bits_of(ty);
        let limbs = if width > 64 {
            vals.into_iter().map(|v| self.pure(v)).collect()
        } else {
            let v = vals.into_iter().next().unwrap_or(Expr::Const(Ty::BOOL, 0));
            let scalar = super::scalar(ty);
            let raw = if scalar.signed {
                Expr::Cast {
                    from: scalar,
                    to: Ty::unsigned(scalar.width),
                    arg: Box::new(v),
                }
            } else {
                v
            };
            vec![self.pure(raw)]
        };
        Bv { limbs, width }
    }

    /// Limbs back to the lowered value of type `ty` (of the same width).
    pub(super) fn unbv(&mut self, v: Bv, ty: &Type) -> Vec<Expr> {
        if wide(ty).is_some() {
            return v.limbs;
        }
        let scalar = super::scalar(ty);
        let raw = v.limbs.into_iter().next().unwrap_or(Expr::Const(scalar, 0));
        vec![if scalar.signed {
            Expr::Cast {
                from: Ty::unsigned(scalar.width),
                to: scalar,
                arg: Box::new(raw),
            }
        } else {
            raw
        }]
    }

    /// Limbs from `u64` expressions, each truncated to its limb type and
    /// made pure.
    fn limbs_of(&mut self, width: u32, vals: Vec<Expr>) -> Bv {
        let limbs = vals
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let v = narrow(v, limb_ty(width, i));
                self.pure(v)
            })
            .collect();
        Bv { limbs, width }
    }

    /// `u64` 0 or all ones: the sign of `a` taken as signed.
    fn sign_fill(&mut self, a: &Bv) -> Expr {
        let top = a.n() - 1;
        let r = u32::from(limb_ty(a.width, top).width);
        let bit = narrow(
            shift64(BinOp::Shr, a.at(top), c64(u64::from(r - 1))),
            Ty::BOOL,
        );
        let fill = select(bit, c64(u64::MAX), c64(0));
        self.pure(fill)
    }

    /// `a` as a `width`-bit value: truncated, or extended with zeros
    /// (unsigned) or copies of its sign (signed).
    pub(super) fn resize(&mut self, a: &Bv, width: u32, signed: bool) -> Bv {
        let fill = if signed && width > a.width {
            Some(self.sign_fill(a))
        } else {
            None
        };
        let top = a.n() - 1;
        let vals = (0..limbs(width))
            .map(|i| {
                let Some(fill) = &fill else {
                    return a.at(i);
                };
                match i.cmp(&top) {
                    std::cmp::Ordering::Less => a.at(i),
                    std::cmp::Ordering::Greater => fill.clone(),
                    std::cmp::Ordering::Equal => {
                        // The top limb's bits above its width take the sign.
                        let r = u32::from(limb_ty(a.width, top).width);
                        if r == 64 {
                            a.at(i)
                        } else {
                            let high = shift64(BinOp::Shl, fill.clone(), c64(u64::from(r)));
                            or64(a.at(i), high)
                        }
                    }
                }
            })
            .collect();
        self.limbs_of(width, vals)
    }

    /// A limb-wise bitwise operation.
    pub(super) fn bitwise(&mut self, op: BinOp, a: &Bv, b: &Bv) -> Bv {
        let vals = (0..a.n())
            .map(|i| bin(op, Ty::U64, a.at(i), b.at(i)))
            .collect();
        self.limbs_of(a.width, vals)
    }

    /// `!a` at its width.
    pub(super) fn not(&mut self, a: &Bv) -> Bv {
        let vals = (0..a.n())
            .map(|i| Expr::Unary(UnOp::Not, Ty::U64, Box::new(a.at(i))))
            .collect();
        self.limbs_of(a.width, vals)
    }

    /// `a + b + carry` (`carry` a `u64` 0 or 1), wrapping at the width.
    fn add_carry(&mut self, a: &Bv, b: &Bv, carry: Expr) -> Bv {
        let n = a.n();
        let mut carry = carry;
        let mut vals = Vec::with_capacity(n);
        for i in 0..n {
            let t = bin(BinOp::Add, Ty::U64, a.at(i), b.at(i));
            if i + 1 == n {
                // The last limb's carry out is dropped: no compare needed.
                vals.push(bin(BinOp::Add, Ty::U64, t, carry.clone()));
                break;
            }
            let t = self.temp(Ty::U64, t);
            let c1 = bin(BinOp::Lt, Ty::U64, t.clone(), a.at(i));
            let s = self.temp(Ty::U64, bin(BinOp::Add, Ty::U64, t.clone(), carry));
            let c2 = bin(BinOp::Lt, Ty::U64, s.clone(), t);
            let c = widen(bool_or(c1, c2), Ty::BOOL);
            carry = self.temp(Ty::U64, c);
            vals.push(s);
        }
        self.limbs_of(a.width, vals)
    }

    /// `a + b`, wrapping.
    pub(super) fn add(&mut self, a: &Bv, b: &Bv) -> Bv {
        self.add_carry(a, b, c64(0))
    }

    /// `a - b`, wrapping: `a + !b + 1`.
    pub(super) fn sub(&mut self, a: &Bv, b: &Bv) -> Bv {
        let nb = self.not(b);
        self.add_carry(a, &nb, c64(1))
    }

    /// `-a`, wrapping.
    pub(super) fn neg(&mut self, a: &Bv) -> Bv {
        let na = self.not(a);
        let zero = Bv::constant(a.width, &[]);
        self.add_carry(&na, &zero, c64(1))
    }

    /// `a * b`, wrapping: schoolbook over limbs, the partial products'
    /// high halves from [`BinOp::MulHi`].
    pub(super) fn mul(&mut self, a: &Bv, b: &Bv) -> Bv {
        let n = a.n();
        let mut acc = Bv::constant(a.width, &[]);
        for i in 0..n {
            if is_zero(&a.at(i)) {
                continue;
            }
            let mut lo = vec![c64(0); n];
            let mut hi = vec![c64(0); n];
            for j in 0..n - i {
                let (x, y) = (a.at(i), b.at(j));
                if is_zero(&y) {
                    continue;
                }
                lo[i + j] = bin(BinOp::Mul, Ty::U64, x.clone(), y.clone());
                if i + j + 1 < n {
                    hi[i + j + 1] = bin(BinOp::MulHi, Ty::U64, x, y);
                }
            }
            let lo = self.limbs_of(a.width, lo);
            acc = self.add(&acc, &lo);
            if hi.iter().any(|h| !is_zero(h)) {
                let hi = self.limbs_of(a.width, hi);
                acc = self.add(&acc, &hi);
            }
        }
        acc
    }

    /// Whether `a == b` (a `u1`).
    pub(super) fn eq(&mut self, a: &Bv, b: &Bv) -> Expr {
        (0..a.n())
            .map(|i| bin(BinOp::Eq, Ty::U64, a.at(i), b.at(i)))
            .reduce(bool_and)
            .unwrap_or(Expr::Const(Ty::BOOL, 1))
    }

    /// Whether `a < b` (a `u1`), signed or not: limb by limb from the
    /// bottom, each higher limb deciding unless it is equal.
    pub(super) fn lt(&mut self, a: &Bv, b: &Bv, signed: bool) -> Expr {
        let n = a.n();
        let mut lt = Expr::Const(Ty::BOOL, 0);
        for i in 0..n {
            let (x, y, ty) = if signed && i + 1 == n {
                let r = limb_ty(a.width, i);
                let s = Ty::signed(r.width);
                let cast = |v: Expr| Expr::Cast {
                    from: r,
                    to: s,
                    arg: Box::new(v),
                };
                (cast(a.limbs[i].clone()), cast(b.limbs[i].clone()), s)
            } else {
                (a.at(i), b.at(i), Ty::U64)
            };
            let here = bin(BinOp::Lt, ty, x.clone(), y.clone());
            let v = if i == 0 {
                here
            } else {
                bool_or(here, bool_and(bin(BinOp::Eq, ty, x, y), lt))
            };
            lt = self.temp(Ty::BOOL, v);
        }
        lt
    }

    /// `a << k` for a constant `k`.
    pub(super) fn shl_const(&mut self, a: &Bv, k: u32) -> Bv {
        let (q, s) = ((k / 64) as usize, k % 64);
        let vals = (0..a.n())
            .map(|i| {
                let from = |j: Option<usize>| j.map_or(c64(0), |j| a.at(j));
                let here = from(i.checked_sub(q));
                if s == 0 {
                    return here;
                }
                let low = from(i.checked_sub(q + 1));
                or64(
                    shift64(BinOp::Shl, here, c64(u64::from(s))),
                    shift64(BinOp::Shr, low, c64(u64::from(64 - s))),
                )
            })
            .collect();
        self.limbs_of(a.width, vals)
    }

    /// `a >> k` for a constant `k`, arithmetic when `signed`.
    pub(super) fn shr_const(&mut self, a: &Bv, k: u32, signed: bool) -> Bv {
        let x = if signed {
            self.resize(a, 64 * a.n() as u32, true)
        } else {
            a.clone()
        };
        let fill = if signed { self.sign_fill(a) } else { c64(0) };
        let (q, s) = ((k / 64) as usize, k % 64);
        let n = a.n();
        let from = |j: usize| if j < n { x.at(j) } else { fill.clone() };
        let vals = (0..n)
            .map(|i| {
                let here = from(i + q);
                if s == 0 {
                    return here;
                }
                let high = from(i + q + 1);
                or64(
                    shift64(BinOp::Shr, here, c64(u64::from(s))),
                    shift64(BinOp::Shl, high, c64(u64::from(64 - s))),
                )
            })
            .collect();
        self.limbs_of(a.width, vals)
    }

    /// `a << t` or `a >> t` (arithmetic when `signed`) for a `u64` amount
    /// known at run time: limbs move by `t / 64` through one select per
    /// bit of it, then a funnel shift by `t % 64`; `t >= width` gives 0
    /// (or the sign).
    pub(super) fn shift_var(&mut self, a: &Bv, t: Expr, left: bool, signed: bool) -> Bv {
        let n = a.n();
        let t = self.pure(t);
        let fill = if signed && !left {
            self.sign_fill(a)
        } else {
            c64(0)
        };
        let x = if signed && !left {
            self.resize(a, 64 * n as u32, true)
        } else {
            a.clone()
        };
        let mut cur: Vec<Expr> = (0..n).map(|i| x.at(i)).collect();
        let q = self.pure(shift64(BinOp::Shr, t.clone(), c64(6)));
        let mut step = 1usize;
        let mut bit = 0u64;
        while step < n {
            let on = narrow(shift64(BinOp::Shr, q.clone(), c64(bit)), Ty::BOOL);
            let on = self.pure(on);
            let moved: Vec<Expr> = (0..n)
                .map(|i| {
                    let src = if left {
                        i.checked_sub(step)
                    } else {
                        Some(i + step).filter(|j| *j < n)
                    };
                    src.map_or(fill.clone(), |j| cur[j].clone())
                })
                .collect();
            cur = moved
                .into_iter()
                .zip(&cur)
                .map(|(m, c)| {
                    let e = select(on.clone(), m, c.clone());
                    self.pure(e)
                })
                .collect();
            step *= 2;
            bit += 1;
        }
        let s = self.pure(bin(BinOp::And, Ty::U64, t.clone(), c64(63)));
        // `x >> 64` and `x << 64` are 0 in the IR, so `s = 0` needs no
        // special case.
        let back = self.pure(bin(BinOp::Sub, Ty::U64, c64(64), s.clone()));
        let vals: Vec<Expr> = (0..n)
            .map(|i| {
                if left {
                    let low = i.checked_sub(1).map_or(c64(0), |j| cur[j].clone());
                    or64(
                        shift64(BinOp::Shl, cur[i].clone(), s.clone()),
                        shift64(BinOp::Shr, low, back.clone()),
                    )
                } else {
                    let high = cur.get(i + 1).cloned().unwrap_or_else(|| fill.clone());
                    or64(
                        shift64(BinOp::Shr, cur[i].clone(), s.clone()),
                        shift64(BinOp::Shl, high, back.clone()),
                    )
                }
            })
            .collect();
        let too_far = bin(BinOp::Ge, Ty::U64, t, c64(u64::from(a.width)));
        let too_far = self.pure(too_far);
        let vals = vals
            .into_iter()
            .map(|v| select(too_far.clone(), fill.clone(), v))
            .collect();
        self.limbs_of(a.width, vals)
    }

    /// `width` bits of `a` from bit `lo` up (a constant or a `u64` known at
    /// run time).
    pub(super) fn extract(&mut self, a: &Bv, lo: Result<u32, Expr>, width: u32) -> Bv {
        let shifted = match lo {
            Ok(0) => a.clone(),
            Ok(k) => self.shr_const(a, k, false),
            Err(t) => self.shift_var(a, t, false, false),
        };
        self.resize(&shifted, width, false)
    }

    /// `{parts[0], parts[1], ...}`: the first part in the highest bits.
    pub(super) fn concat_bv(&mut self, parts: &[Bv]) -> Bv {
        let total: u32 = parts.iter().map(|p| p.width).sum();
        let mut at = total;
        let mut acc: Vec<Expr> = vec![c64(0); limbs(total)];
        for p in parts {
            at -= p.width;
            let placed = self.resize(p, total, false);
            let placed = self.shl_const(&placed, at);
            for (i, slot) in acc.iter_mut().enumerate() {
                *slot = or64(std::mem::replace(slot, c64(0)), placed.at(i));
            }
        }
        self.limbs_of(total, acc)
    }

    /// `&a`, `|a` or `^a` (by `op`): a `u1`.
    pub(super) fn reduce(&mut self, op: LUn, a: &Bv) -> Expr {
        match op {
            LUn::AndReduce => {
                let ones = Bv::low_ones(a.width, a.width);
                self.eq(a, &ones)
            }
            LUn::OrReduce => (0..a.n())
                .map(|i| bin(BinOp::Ne, Ty::U64, a.at(i), c64(0)))
                .reduce(bool_or)
                .unwrap_or(Expr::Const(Ty::BOOL, 0)),
            _ => {
                let folded = (0..a.n())
                    .map(|i| a.at(i))
                    .reduce(|x, y| bin(BinOp::Xor, Ty::U64, x, y))
                    .unwrap_or(c64(0));
                self.reduction(op, folded, Ty::U64)
            }
        }
    }

    /// `old` with bits `lo..lo + width` replaced by the low bits of `v`
    /// (`lo` a constant or a `u64` known at run time).
    pub(super) fn insert(&mut self, old: &Bv, v: &Bv, lo: Result<u32, Expr>, width: u32) -> Bv {
        let total = old.width;
        let mask = Bv::low_ones(total, width);
        let part = self.resize(v, total, false);
        let part = self.bitwise(BinOp::And, &part, &mask);
        let (mask, part) = match lo {
            Ok(k) => (self.shl_const(&mask, k), self.shl_const(&part, k)),
            Err(t) => {
                let t = self.pure(t);
                (
                    self.shift_var(&mask, t.clone(), true, false),
                    self.shift_var(&part, t, true, false),
                )
            }
        };
        let keep = self.not(&mask);
        let kept = self.bitwise(BinOp::And, old, &keep);
        self.bitwise(BinOp::Or, &kept, &part)
    }

    /// `a / b` and `a % b` with the language's rules (RISC-V: a quotient of
    /// all ones and the dividend as remainder for a zero divisor; `MIN /
    /// -1` wraps), by restoring division one bit at a time on the
    /// magnitudes, in one bit more than the width so that the shifted
    /// remainder cannot overflow.
    pub(super) fn divrem(&mut self, a: &Bv, b: &Bv, signed: bool) -> (Bv, Bv) {
        let w = a.width;
        let (ua, ub, signs) = if signed {
            let na = self.sign_fill(a);
            let nb = self.sign_fill(b);
            let na = self.pure(narrow(na, Ty::BOOL));
            let nb = self.pure(narrow(nb, Ty::BOOL));
            let abs_a = self.neg(a);
            let abs_a = self.choose(&na, &abs_a, a);
            let abs_b = self.neg(b);
            let abs_b = self.choose(&nb, &abs_b, b);
            (abs_a, abs_b, Some((na, nb)))
        } else {
            (a.clone(), b.clone(), None)
        };
        let ww = w + 1;
        let ub = self.resize(&ub, ww, false);
        let (q, r) = match self.reroll {
            true => self.udivrem_loop(&ua, &ub, w),
            false => self.udivrem_unrolled(&ua, &ub, w),
        };
        let mut q = self.limbs_of(w, q);
        let mut r = self.resize(&r, w, false);
        if let Some((na, nb)) = signs {
            let q_neg = self.pure(bin(BinOp::Xor, Ty::BOOL, na.clone(), nb));
            let nq = self.neg(&q);
            q = self.choose(&q_neg, &nq, &q);
            let nr = self.neg(&r);
            r = self.choose(&na, &nr, &r);
        }
        // A zero divisor: every step fits, so the quotient is all ones and
        // the remainder the dividend's magnitude; RISC-V wants the
        // dividend itself.
        let zero = Bv::constant(w, &[]);
        let by_zero = self.eq(b, &zero);
        let by_zero = self.pure(by_zero);
        let ones = Bv::low_ones(w, w);
        q = self.choose(&by_zero, &ones, &q);
        r = self.choose(&by_zero, a, &r);
        (q, r)
    }

    /// The restoring division of `ua` by `ub` (`w + 1` bits wide) as a
    /// loop of `w` steps, bit `w - 1` first: the quotient's limbs (`u64`)
    /// and the remainder (`w + 1` bits). A few dozen IR statements where
    /// the unrolled form ([`UnitLower::udivrem_unrolled`]) is thousands,
    /// for the same values; `--exec reroll=off` chooses that one.
    fn udivrem_loop(&mut self, ua: &Bv, ub: &Bv, w: u32) -> (Vec<Expr>, Bv) {
        let ww = w + 1;
        let local = |this: &mut Self, ty: Ty| {
            let l = this.locals.len() as u32;
            this.locals.push(ty);
            this.out
                .push(crate::ir::Stmt::Assign(l, Expr::Const(ty, 0)));
            l
        };
        let r_locals: Vec<u32> = (0..limbs(ww))
            .map(|j| local(self, limb_ty(ww, j)))
            .collect();
        let q_locals: Vec<u32> = (0..limbs(w)).map(|_| local(self, Ty::U64)).collect();
        let i = local(self, Ty::U64);
        self.out.push(crate::ir::Stmt::Assign(i, c64(u64::from(w))));
        let saved = std::mem::take(&mut self.out);
        // Step `i - 1`: its limb and bit position.
        let step = self.pure(bin(BinOp::Sub, Ty::U64, Expr::Local(i), c64(1)));
        self.out.push(crate::ir::Stmt::Assign(i, step.clone()));
        let limb = self.pure(shift64(BinOp::Shr, step.clone(), c64(6)));
        let at = self.pure(bin(BinOp::And, Ty::U64, step, c64(63)));
        let is = |j: usize| bin(BinOp::Eq, Ty::U64, limb.clone(), c64(j as u64));
        // r = (r << 1) | bit `i - 1` of the dividend.
        let word = (1..ua.n()).fold(ua.at(0), |acc, j| select(is(j), ua.at(j), acc));
        let bit = bin(
            BinOp::And,
            Ty::U64,
            shift64(BinOp::Shr, word, at.clone()),
            c64(1),
        );
        let r = Bv {
            limbs: r_locals.iter().map(|&l| Expr::Local(l)).collect(),
            width: ww,
        };
        let shifted = self.shl_const(&r, 1);
        let mut low = shifted.limbs;
        low[0] = self.pure(or64(low[0].clone(), bit));
        let r = Bv {
            limbs: low,
            width: ww,
        };
        let fits = not(self.lt(&r, ub, false));
        let fits = self.pure(fits);
        let diff = self.sub(&r, ub);
        let r = self.choose(&fits, &diff, &r);
        let set = shift64(BinOp::Shl, widen(fits, Ty::BOOL), at);
        for (j, &q) in q_locals.iter().enumerate() {
            let limb = or64(Expr::Local(q), select(is(j), set.clone(), c64(0)));
            self.out.push(crate::ir::Stmt::Assign(q, limb));
        }
        for (&l, v) in r_locals.iter().zip(r.limbs) {
            self.out.push(crate::ir::Stmt::Assign(l, v));
        }
        let body = std::mem::replace(&mut self.out, saved);
        self.out.push(crate::ir::Stmt::While {
            head: Vec::new(),
            cond: Box::new(bin(BinOp::Lt, Ty::U64, c64(0), Expr::Local(i))),
            body,
        });
        let q = q_locals.iter().map(|&l| Expr::Local(l)).collect();
        let r = Bv {
            limbs: r_locals.iter().map(|&l| Expr::Local(l)).collect(),
            width: ww,
        };
        (q, r)
    }

    /// The restoring division of `ua` by `ub` unrolled, one step per
    /// quotient bit: the quotient's limbs (`u64`) and the remainder.
    fn udivrem_unrolled(&mut self, ua: &Bv, ub: &Bv, w: u32) -> (Vec<Expr>, Bv) {
        let ww = w + 1;
        let mut q: Vec<Expr> = vec![c64(0); limbs(w)];
        let mut r = Bv::constant(ww, &[]);
        for i in (0..w).rev() {
            // r = (r << 1) | bit i of the dividend.
            let bit = bin(
                BinOp::And,
                Ty::U64,
                shift64(BinOp::Shr, ua.at((i / 64) as usize), c64(u64::from(i % 64))),
                c64(1),
            );
            let shifted = self.shl_const(&r, 1);
            // Limb 0 of a value over 64 bits is a whole `u64`.
            let mut low = shifted.limbs;
            low[0] = self.pure(or64(low[0].clone(), bit));
            r = Bv {
                limbs: low,
                width: ww,
            };
            let fits = not(self.lt(&r, ub, false));
            let fits = self.pure(fits);
            let diff = self.sub(&r, ub);
            r = self.choose(&fits, &diff, &r);
            let k = (i / 64) as usize;
            let set = shift64(BinOp::Shl, widen(fits, Ty::BOOL), c64(u64::from(i % 64)));
            let limb = or64(std::mem::replace(&mut q[k], c64(0)), set);
            q[k] = self.pure(limb);
        }
        (q, r)
    }

    /// `cond ? a : b` limb by limb.
    fn choose(&mut self, cond: &Expr, a: &Bv, b: &Bv) -> Bv {
        let vals = (0..a.n())
            .map(|i| select(cond.clone(), a.at(i), b.at(i)))
            .collect();
        self.limbs_of(a.width, vals)
    }

    /// `random()` of a wide type: limb 0 is the value a narrow draw at
    /// this site would give, limb `i > 0` a draw under the key mixed
    /// with `i`.
    pub(super) fn wide_random(&mut self, stream: Expr, key: Expr, width: u32) -> Vec<Expr> {
        (0..limbs(width))
            .map(|i| {
                let k = match &key {
                    _ if i == 0 => key.clone(),
                    Expr::Const(_, k) => Expr::Const(Ty::U64, super::random::mix(k ^ i as u64)),
                    // A key computed in a run-time loop.
                    _ => {
                        let x = Expr::Binary(
                            crate::ir::BinOp::Xor,
                            Ty::U64,
                            Box::new(key.clone()),
                            Box::new(Expr::Const(Ty::U64, i as u64)),
                        );
                        let k = super::random::mix_ir(x, &mut |e| self.temp(Ty::U64, e));
                        self.pure(k)
                    }
                };
                let ty = limb_ty(width, i);
                let v = super::random::draw(stream.clone(), k, ty, |e| self.temp(Ty::U64, e));
                self.pure(v)
            })
            .collect()
    }
}

impl UnitLower<'_> {
    /// Whether `e` is an operation that [`UnitLower::wide_expr`] lowers:
    /// one whose value or operands are wider than 64 bits.
    pub(super) fn is_wide(&self, e: &LExpr) -> bool {
        let w = |x: &LExpr| wide(&x.ty).is_some();
        w(e) || match &e.kind {
            EK::Unary(_, a) | EK::Cast(a) => w(a),
            EK::Bits { base, .. } => w(base),
            EK::Binary(_, a, b) => w(a) || w(b),
            _ => false,
        }
    }

    /// The operand `x` as limbs.
    fn operand(&mut self, x: &LExpr) -> Bv {
        let vals = self.expr(x);
        self.bv(vals, &x.ty)
    }

    /// A bit position or shift amount (an unsigned integer of at most 64
    /// bits, the checker's rule): a constant, or a pure `u64` known at run
    /// time.
    pub(super) fn position(&mut self, x: &LExpr) -> Result<u32, Expr> {
        if let EK::Const(v) = &x.kind {
            return Ok(v
                .as_int()
                .and_then(|k| u32::try_from(k).ok())
                .unwrap_or(u32::MAX));
        }
        let ty = super::scalar(&x.ty);
        let v = self.expr(x).remove(0);
        let v = widen(v, ty);
        Err(self.pure(v))
    }

    /// An operation on or to values wider than 64 bits ([`Self::is_wide`]).
    pub(super) fn wide_expr(&mut self, e: &LExpr) -> Vec<Expr> {
        let width = bits_of(&e.ty);
        let v = match &e.kind {
            EK::Unary(op, a) => {
                let x = self.operand(a);
                match op {
                    LUn::Neg => self.neg(&x),
                    LUn::Not | LUn::BitNot => self.not(&x),
                    reduce => return vec![self.reduce(*reduce, &x)],
                }
            }
            EK::Cast(a) => {
                let x = self.operand(a);
                let signed = matches!(a.ty, Type::Int { signed: true, .. });
                self.resize(&x, width, signed)
            }
            EK::Bits { base, lo, check } => {
                let x = self.operand(base);
                let lo = self.position(lo);
                if let (Err(t), Some(n)) = (&lo, check) {
                    self.check_bit_position(t.clone(), Ty::U64, *n, e.span);
                }
                self.extract(&x, lo, width)
            }
            EK::Concat(parts) => {
                let parts: Vec<Bv> = parts.iter().map(|p| self.operand(p)).collect();
                self.concat_bv(&parts)
            }
            EK::Replicate(part, times) => {
                let x = self.operand(part);
                let copies = vec![x; *times as usize];
                self.concat_bv(&copies)
            }
            EK::Binary(op, a, b) => return self.wide_binary(e, *op, a, b),
            _ => unreachable!("is_wide admits only these"),
        };
        self.unbv(v, &e.ty)
    }

    fn wide_binary(&mut self, e: &LExpr, op: LBin, a: &LExpr, b: &LExpr) -> Vec<Expr> {
        let signed = matches!(a.ty, Type::Int { signed: true, .. });
        if matches!(op, LBin::Shl | LBin::Shr) {
            // The amount is at most 64 bits (the checker's rule), so the
            // value shifted is the wide operand.
            let left = op == LBin::Shl;
            let x = self.operand(a);
            let v = match self.position(b) {
                Ok(k) if k >= x.width => {
                    let zero = Bv::constant(x.width, &[]);
                    if left || !signed {
                        zero
                    } else {
                        let fill = self.sign_fill(&x);
                        let limbs = vec![fill; x.n()];
                        self.limbs_of(x.width, limbs)
                    }
                }
                Ok(k) if left => self.shl_const(&x, k),
                Ok(k) => self.shr_const(&x, k, signed),
                Err(t) => self.shift_var(&x, t, left, signed),
            };
            return self.unbv(v, &e.ty);
        }
        let x = self.operand(a);
        let y = self.operand(b);
        let bool_result = |v: Expr| vec![v];
        let v = match op {
            LBin::Add => self.add(&x, &y),
            LBin::Sub => self.sub(&x, &y),
            LBin::Mul => self.mul(&x, &y),
            LBin::Div => self.divrem(&x, &y, signed).0,
            LBin::Rem => self.divrem(&x, &y, signed).1,
            LBin::BitAnd => self.bitwise(BinOp::And, &x, &y),
            LBin::BitOr => self.bitwise(BinOp::Or, &x, &y),
            LBin::BitXor => self.bitwise(BinOp::Xor, &x, &y),
            LBin::Eq => return bool_result(self.eq(&x, &y)),
            LBin::Ne => return bool_result(not(self.eq(&x, &y))),
            LBin::Lt => return bool_result(self.lt(&x, &y, signed)),
            LBin::Gt => return bool_result(self.lt(&y, &x, signed)),
            LBin::Le => return bool_result(not(self.lt(&y, &x, signed))),
            LBin::Ge => return bool_result(not(self.lt(&x, &y, signed))),
            LBin::And | LBin::Or | LBin::Shl | LBin::Shr => {
                unreachable!("logical operators take bools; shifts are above")
            }
        };
        self.unbv(v, &e.ty)
    }
}
