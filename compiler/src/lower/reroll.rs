//! Which `for` loops with constant bounds stay loops in the IR instead of
//! being unrolled ([`crate::config::ExecConfig::reroll`]).
//!
//! Unrolling gives every iteration constant indices to fold and makes runs
//! of like statements that the JIT vectorizes, so short loops unroll. A
//! long one (thousands of iterations of a small body, e.g. a 4,000-step
//! LCG) costs milliseconds of compile time per unit and as much code, and
//! runs no faster: it is lowered as the run-time loop of `for ... max`
//! would be, with the same results (the variable takes each value in
//! turn, `random()` draws per iteration as unrolled, a `return` ends it).
//! The design's meaning does not change: the checks that need each
//! iteration's constants have run before lowering, and the unroll budget
//! ([`super::MAX_UNROLLED`]) still counts the loop's iterations, so the
//! same designs are accepted. A body that needs a constant per iteration
//! (a port array element chosen by the loop variable) or that touches a
//! stage register is always unrolled.

use chronon_lang::design::{Expr, ExprKind, PlaceElem, PortSel, Stmt, StmtKind};

/// Iterations times body size (design nodes) from which a loop stays a
/// loop: a 256-stage register pipeline (about 2,000) unrolls, a
/// 4,000-iteration LCG step (about 24,000) does not.
pub(super) const ROLL_NODES: u64 = 8192;

/// Whether a loop of `iterations` over `body` stays a loop.
pub(super) fn stays_a_loop(iterations: u64, body: &[Stmt]) -> bool {
    let mut size = 0u64;
    body.iter().all(|s| stmt(s, &mut size)) && iterations.saturating_mul(size) >= ROLL_NODES
}

/// Counts the nodes of `s` into `size`; false when it needs unrolling.
fn stmt(s: &Stmt, size: &mut u64) -> bool {
    *size += 1;
    let all = |b: &[Stmt], size: &mut u64| b.iter().all(|s| stmt(s, size));
    match &s.kind {
        StmtKind::AssignLocal { path, value, .. } | StmtKind::RegWrite { path, value, .. } => {
            path.iter().all(|p| place(p, size)) && expr(value, size)
        }
        StmtKind::CounterAdd { value, .. } => expr(value, size),
        StmtKind::Send { port, value } => plain(port) && expr(value, size),
        StmtKind::StageWrite { .. } | StmtKind::StageRetain { .. } => false,
        StmtKind::Expr(e) | StmtKind::Return(e) => expr(e, size),
        StmtKind::If {
            cond,
            then,
            otherwise,
        } => expr(cond, size) && all(then, size) && all(otherwise, size),
        StmtKind::IfSome {
            value,
            then,
            otherwise,
            ..
        } => expr(value, size) && all(then, size) && all(otherwise, size),
        StmtKind::Match {
            scrutinee,
            arms,
            default,
        } => expr(scrutinee, size) && arms.iter().all(|a| all(&a.body, size)) && all(default, size),
        StmtKind::For {
            start, end, body, ..
        } => {
            // An inner loop unrolled inside this one is its body that
            // many times over.
            let mut inner = 0;
            let ok = all(body, &mut inner);
            *size += inner * u64::from(end.saturating_sub(*start));
            ok
        }
        StmtKind::RangeLoop {
            start, end, body, ..
        } => expr(start, size) && expr(end, size) && all(body, size),
        StmtKind::While { cond, body, .. } => expr(cond, size) && all(body, size),
        StmtKind::Finish => true,
        StmtKind::Assert { cond, .. } => expr(cond, size),
        StmtKind::Trace { args, .. } => args.iter().all(|(_, e)| expr(e, size)),
        StmtKind::Print { args, .. } => args.iter().all(|e| expr(e, size)),
    }
}

fn place(p: &PlaceElem, size: &mut u64) -> bool {
    match p {
        PlaceElem::Field(_) => true,
        PlaceElem::Index(e) => expr(e, size),
        PlaceElem::Bits(b) => expr(&b.lo, size),
    }
}

/// A port that is the same in every iteration.
fn plain(port: &PortSel) -> bool {
    matches!(port, PortSel::One(_))
}

fn expr(e: &Expr, size: &mut u64) -> bool {
    *size += 1;
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Reg(_) | ExprKind::Random(_) => true,
        ExprKind::Unary(_, a)
        | ExprKind::Cast(a)
        | ExprKind::Field(a, _)
        | ExprKind::Replicate(a, _)
        | ExprKind::ArrayRepeat(a, _) => expr(a, size),
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => expr(a, size) && expr(b, size),
        ExprKind::Bits { base, lo, .. } => expr(base, size) && expr(lo, size),
        ExprKind::Concat(xs)
        | ExprKind::StructLit(xs)
        | ExprKind::ArrayLit(xs)
        | ExprKind::Call(_, xs) => xs.iter().all(|x| expr(x, size)),
        ExprKind::CanSend(p)
        | ExprKind::Recv(p)
        | ExprKind::Peek(p)
        | ExprKind::Request(p)
        | ExprKind::Valid(p)
        | ExprKind::Take(p) => plain(p),
        ExprKind::TrySend(p, v) => plain(p) && expr(v, size),
        ExprKind::StageValid(..) | ExprKind::StageRead(..) => false,
    }
}
