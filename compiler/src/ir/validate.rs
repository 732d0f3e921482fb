//! Checks the guarantees listed in the IR's module doc; a failure is a
//! compiler bug (in lowering or in a generator), never a user error.

use super::{Commit, Expr, Indexed, PortKind, Program, RecvKind, Stmt, Ty, Unit};

/// Returns the type of `e` in `unit`, or a description of the first problem.
pub fn type_of(p: &Program, locals: &[Ty], e: &Expr) -> Result<Ty, String> {
    match e {
        Expr::Const(ty, v) => {
            check_ty(*ty)?;
            if *v & !ty.mask() != 0 {
                return Err(format!("constant {v} is not canonical for {ty}"));
            }
            Ok(*ty)
        }
        Expr::Local(l) => locals
            .get(*l as usize)
            .copied()
            .ok_or_else(|| format!("no local l{l}")),
        Expr::Load(s) => p
            .slots
            .get(*s as usize)
            .map(|s| s.ty)
            .ok_or_else(|| format!("no slot s{s}")),
        Expr::LoadIndexed(ix) => indexed(p, locals, ix),
        Expr::Unary(_, ty, a) => {
            expect(p, locals, a, *ty)?;
            Ok(*ty)
        }
        Expr::Binary(op, ty, a, b) => {
            if *op == super::BinOp::MulHi && *ty != Ty::U64 {
                return Err(format!("mulhi at {ty}"));
            }
            expect(p, locals, a, *ty)?;
            if matches!(op, super::BinOp::Shl | super::BinOp::Shr) {
                let amount = type_of(p, locals, b)?;
                if amount.signed {
                    return Err(format!("signed shift amount {amount}"));
                }
            } else {
                expect(p, locals, b, *ty)?;
            }
            Ok(if op.is_comparison() { Ty::BOOL } else { *ty })
        }
        Expr::Cast { from, to, arg } => {
            check_ty(*to)?;
            expect(p, locals, arg, *from)?;
            Ok(*to)
        }
        Expr::Select { cond, then, els } => {
            expect(p, locals, cond, Ty::BOOL)?;
            let ty = type_of(p, locals, then)?;
            expect(p, locals, els, ty)?;
            Ok(ty)
        }
    }
}

fn check_ty(ty: Ty) -> Result<(), String> {
    if (1..=64).contains(&ty.width) {
        Ok(())
    } else {
        Err(format!("bad width {}", ty.width))
    }
}

fn expect(p: &Program, locals: &[Ty], e: &Expr, want: Ty) -> Result<(), String> {
    let got = type_of(p, locals, e)?;
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "expected {want}, found {got} in {}",
            super::print::expr(e)
        ))
    }
}

fn indexed(p: &Program, locals: &[Ty], ix: &Indexed) -> Result<Ty, String> {
    let index = type_of(p, locals, &ix.index)?;
    if index.signed {
        return Err("signed index".into());
    }
    if ix.fault as usize >= p.faults.len() {
        return Err(format!("no fault f{}", ix.fault));
    }
    let last = u64::from(ix.base) + u64::from(ix.stride) * u64::from(ix.len.max(1) - 1);
    if ix.len == 0 || ix.stride == 0 || last >= p.slots.len() as u64 {
        return Err(format!("indexed access s{} out of the state", ix.base));
    }
    Ok(p.slots[ix.base as usize].ty)
}

fn local(unit: &Unit, l: u32, want: Option<Ty>) -> Result<Ty, String> {
    let ty = unit
        .locals
        .get(l as usize)
        .copied()
        .ok_or_else(|| format!("no local l{l}"))?;
    match want {
        Some(w) if w != ty => Err(format!("local l{l} is {ty}, expected {w}")),
        _ => Ok(ty),
    }
}

fn port_of(p: &Program, unit_id: usize, port: u32, kinds: &[PortKind]) -> Result<Vec<Ty>, String> {
    let info = p
        .ports
        .get(port as usize)
        .ok_or_else(|| format!("no port p{port}"))?;
    if info.unit as usize != unit_id {
        return Err(format!("port p{port} belongs to another unit"));
    }
    if !kinds.contains(&info.kind) {
        return Err(format!("port p{port} is {:?}", info.kind));
    }
    Ok(info.item.clone())
}

fn block(p: &Program, unit_id: usize, unit: &Unit, stmts: &[Stmt]) -> Result<(), String> {
    let locals = &unit.locals;
    for s in stmts {
        match s {
            Stmt::Assign(l, e) => {
                let ty = local(unit, *l, None)?;
                expect(p, locals, e, ty)?;
            }
            Stmt::Store(slot, e) => {
                let ty = p
                    .slots
                    .get(*slot as usize)
                    .ok_or_else(|| format!("no slot s{slot}"))?
                    .ty;
                expect(p, locals, e, ty)?;
            }
            Stmt::StoreIndexed(ix, e) => {
                let ty = indexed(p, locals, ix)?;
                expect(p, locals, e, ty)?;
            }
            Stmt::If { cond, then, els } => {
                expect(p, locals, cond, Ty::BOOL)?;
                block(p, unit_id, unit, then)?;
                block(p, unit_id, unit, els)?;
            }
            Stmt::While { head, cond, body } => {
                block(p, unit_id, unit, head)?;
                expect(p, locals, cond, Ty::BOOL)?;
                block(p, unit_id, unit, body)?;
            }
            Stmt::StageWrite {
                stage,
                pipe,
                value,
                sites,
            } => {
                let st = p
                    .stages
                    .get(*stage as usize)
                    .ok_or_else(|| format!("no stage st{stage}"))?;
                stage_sites(p, st, *sites)?;
                if type_of(p, locals, pipe)?.signed {
                    return Err("signed pipe index".into());
                }
                if value.len() != st.item.len() {
                    return Err(format!("stage st{stage} takes {} fields", st.item.len()));
                }
                for (v, ty) in value.iter().zip(&st.item) {
                    expect(p, locals, v, *ty)?;
                }
            }
            Stmt::StageRetain { stage, pipe, sites } => {
                let st = p
                    .stages
                    .get(*stage as usize)
                    .ok_or_else(|| format!("no stage st{stage}"))?;
                stage_sites(p, st, *sites)?;
                if type_of(p, locals, pipe)?.signed {
                    return Err("signed pipe index".into());
                }
            }
            Stmt::CanSend { port, dst } => {
                port_of(p, unit_id, *port, &[PortKind::Out])?;
                local(unit, *dst, Some(Ty::BOOL))?;
            }
            Stmt::Send {
                port,
                value,
                dst,
                fault,
            } => {
                let item = port_of(p, unit_id, *port, &[PortKind::Out])?;
                if dst.is_some() == fault.is_some() {
                    return Err(format!(
                        "p{port}: a `send` names a fault site, a `try_send` none"
                    ));
                }
                if let Some(f) = fault
                    && *f as usize >= p.faults.len()
                {
                    return Err(format!("no fault f{f}"));
                }
                if item.len() != value.len() {
                    return Err(format!("port p{port} takes {} fields", item.len()));
                }
                for (v, ty) in value.iter().zip(&item) {
                    expect(p, locals, v, *ty)?;
                }
                if let Some(d) = dst {
                    local(unit, *d, Some(Ty::BOOL))?;
                }
            }
            Stmt::Recv {
                port,
                kind,
                ok,
                dst,
            } => {
                let kinds: &[PortKind] = match kind {
                    RecvKind::Recv | RecvKind::Peek => &[PortKind::In, PortKind::CdcFwftIn],
                    RecvKind::Take => &[PortKind::CdcIn],
                };
                let item = port_of(p, unit_id, *port, kinds)?;
                local(unit, *ok, Some(Ty::BOOL))?;
                if item.len() != dst.len() {
                    return Err(format!("port p{port} gives {} fields", item.len()));
                }
                for (l, ty) in dst.iter().zip(&item) {
                    local(unit, *l, Some(*ty))?;
                }
            }
            Stmt::Request { port, dst } | Stmt::Valid { port, dst } => {
                port_of(p, unit_id, *port, &[PortKind::CdcIn])?;
                local(unit, *dst, Some(Ty::BOOL))?;
            }
            Stmt::Trace { trace, args } => {
                let t = p
                    .traces
                    .get(*trace as usize)
                    .ok_or_else(|| format!("no trace t{trace}"))?;
                if t.args.len() != args.len() {
                    return Err(format!("trace t{trace} takes {} arguments", t.args.len()));
                }
                for (a, (_, ty)) in args.iter().zip(&t.args) {
                    expect(p, locals, a, *ty)?;
                }
            }
            Stmt::Assert { cond, fault } => {
                expect(p, locals, cond, Ty::BOOL)?;
                if *fault as usize >= p.faults.len() {
                    return Err(format!("no fault f{fault}"));
                }
            }
            Stmt::Finish => {}
        }
    }
    Ok(())
}

/// Checks a whole program.
pub fn validate(p: &Program) -> Result<(), String> {
    for (i, s) in p.slots.iter().enumerate() {
        check_ty(s.ty)?;
        if s.init & !s.ty.mask() != 0 {
            return Err(format!("slot s{i} has a non-canonical initial value"));
        }
    }
    for (i, st) in p.stages.iter().enumerate() {
        let n = st.pipes as usize;
        let k = st.item.len();
        let runs = [
            (st.valid, n),
            (st.valid_next, n),
            (st.touched, n),
            (st.value, n * k),
            (st.value_next, n * k),
        ];
        if st.pipes == 0
            || runs
                .iter()
                .any(|&(base, len)| base as usize + len > p.slots.len())
        {
            return Err(format!("stage st{i} lies outside the state"));
        }
    }
    let mut seen = vec![false; p.units.len()];
    for c in &p.clusters {
        for &u in &c.units {
            let unit = p
                .units
                .get(u as usize)
                .ok_or_else(|| format!("no unit u{u}"))?;
            if unit.domain != c.domain || std::mem::replace(&mut seen[u as usize], true) {
                return Err(format!("unit u{u} is misplaced in the clusters"));
            }
        }
    }
    if seen.iter().any(|s| !s) {
        return Err("a unit is in no cluster".into());
    }
    for (i, u) in p.units.iter().enumerate() {
        for ty in &u.locals {
            check_ty(*ty)?;
        }
        block(p, i, u, &u.body).map_err(|e| format!("unit u{i} ({}): {e}", u.path))?;
        for c in &u.commits {
            match c {
                Commit::Copy { from, to, count } => {
                    let end = (*from).max(*to) as usize + *count as usize;
                    if end > p.slots.len() {
                        return Err(format!("unit u{i}: commit outside the state"));
                    }
                }
                Commit::Stage(s) => {
                    if *s as usize >= p.stages.len() {
                        return Err(format!("unit u{i}: no stage st{s}"));
                    }
                }
                Commit::Sparse(c) => sparse(p, u, c).map_err(|e| format!("unit u{i}: {e}"))?,
            }
        }
    }
    Ok(())
}

/// A stage statement's `pipes + 1` fault sites exist.
fn stage_sites(p: &Program, st: &crate::ir::Stage, sites: u32) -> Result<(), String> {
    if sites as usize + st.pipes as usize >= p.faults.len() {
        return Err(format!(
            "stage sites f{sites}.. lie outside the fault sites"
        ));
    }
    Ok(())
}

/// A sparse commit copies within its register, from slots the tick
/// writes, with indices held in the unit's locals.
fn sparse(p: &Program, u: &Unit, c: &crate::ir::SparseCommit) -> Result<(), String> {
    let end = u64::from(c.from.max(c.to)) + u64::from(c.count);
    if end > p.slots.len() as u64 {
        return Err("sparse commit outside the state".into());
    }
    let inside = |s: u64| s >= u64::from(c.from) && s < u64::from(c.from) + u64::from(c.count);
    if let Some(s) = c.slots.iter().find(|s| !inside(u64::from(**s))) {
        return Err(format!("sparse commit copies s{s}, outside its register"));
    }
    for x in &c.indexed {
        let last = u64::from(x.base) + u64::from(x.len.saturating_sub(1)) * u64::from(x.stride);
        if !inside(u64::from(x.base)) || !inside(last) {
            return Err(format!(
                "sparse commit index from s{} leaves its register",
                x.base
            ));
        }
        if x.local as usize >= u.locals.len() {
            return Err(format!("sparse commit reads no local l{}", x.local));
        }
    }
    Ok(())
}
