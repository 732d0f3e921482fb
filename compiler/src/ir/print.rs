//! The IR as readable text, for snapshots and `chronc` debugging.

use std::fmt::{self, Write};

use super::{BinOp, Commit, Expr, Indexed, PortKind, Program, RecvKind, Stmt, Ty, UnOp};

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", if self.signed { 'i' } else { 'u' }, self.width)
    }
}

/// Renders a whole program.
pub fn program(p: &Program) -> String {
    let mut out = String::new();
    write_program(&mut out, p).expect("writing to a String cannot fail");
    out
}

fn write_program(out: &mut String, p: &Program) -> fmt::Result {
    for (i, d) in p.domains.iter().enumerate() {
        writeln!(
            out,
            "domain d{i} {} period {} ps phase {} ps",
            d.name, d.period_ps, d.phase_ps
        )?;
    }
    for (i, s) in p.slots.iter().enumerate() {
        writeln!(out, "slot s{i}: {} = {} // {}", s.ty, s.init, s.name)?;
    }
    for (i, port) in p.ports.iter().enumerate() {
        let kind = match port.kind {
            PortKind::Out => "out",
            PortKind::In => "in",
            PortKind::CdcIn => "in cdc",
            PortKind::CdcFwftIn => "in cdc fwft",
        };
        let item: Vec<String> = port.item.iter().map(Ty::to_string).collect();
        writeln!(
            out,
            "port p{i}: {kind} u{}.{} ({}) rate {}",
            port.unit,
            port.name,
            item.join(", "),
            port.rate
        )?;
    }
    for c in &p.channels {
        writeln!(
            out,
            "channel p{} -> p{} latency {} capacity {}",
            c.from, c.to, c.latency, c.capacity
        )?;
    }
    for c in &p.fifos {
        writeln!(
            out,
            "fifo p{} -> p{} depth {} sync {}",
            c.from, c.to, c.depth, c.sync
        )?;
    }
    for (i, s) in p.stages.iter().enumerate() {
        writeln!(
            out,
            "stage st{i}: u{}.{} pipes {} valid s{} value s{} next s{}/s{} touched s{}",
            s.unit, s.name, s.pipes, s.valid, s.value, s.valid_next, s.value_next, s.touched
        )?;
    }
    for (i, t) in p.traces.iter().enumerate() {
        let args: Vec<String> = t.args.iter().map(|(n, ty)| format!("{n}: {ty}")).collect();
        writeln!(
            out,
            "trace t{i}: u{} {:?} ({})",
            t.unit,
            t.name,
            args.join(", ")
        )?;
    }
    for (i, f) in p.faults.iter().enumerate() {
        writeln!(
            out,
            "fault f{i}: u{} {} {:?}",
            f.unit, f.construct, f.message
        )?;
    }
    for c in &p.counters {
        writeln!(out, "counter u{}.{} s{}", c.unit, c.name, c.slot)?;
    }
    for (i, c) in p.clusters.iter().enumerate() {
        let units: Vec<String> = c.units.iter().map(|u| format!("u{u}")).collect();
        writeln!(out, "cluster c{i} on d{}: {}", c.domain, units.join(" "))?;
    }
    for (i, u) in p.units.iter().enumerate() {
        let locals: Vec<String> = u
            .locals
            .iter()
            .enumerate()
            .map(|(l, ty)| format!("l{l}: {ty}"))
            .collect();
        writeln!(
            out,
            "unit u{i} {} on d{} [{}] {{",
            u.path,
            u.domain,
            locals.join(", ")
        )?;
        write_block(out, &u.body, 1)?;
        for c in &u.commits {
            match c {
                Commit::Copy { from, to, count } => {
                    writeln!(out, "  commit s{to}..+{count} <- s{from}")?
                }
                Commit::Stage(s) => writeln!(out, "  commit st{s}")?,
                Commit::Sparse(c) => {
                    let (from, to, count) = (c.from, c.to, c.count);
                    write!(out, "  commit s{to}..+{count} <- s{from} sparse:")?;
                    for s in &c.slots {
                        write!(out, " s{s}")?;
                    }
                    for x in &c.indexed {
                        write!(out, " s{}[l{} * {} < {}]", x.base, x.local, x.stride, x.len)?;
                    }
                    writeln!(out)?;
                }
            }
        }
        writeln!(out, "}}")?;
    }
    Ok(())
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_block(out: &mut String, block: &[Stmt], depth: usize) -> fmt::Result {
    for s in block {
        indent(out, depth);
        match s {
            Stmt::Assign(l, e) => writeln!(out, "l{l} = {}", expr(e))?,
            Stmt::Store(slot, e) => writeln!(out, "s{slot} := {}", expr(e))?,
            Stmt::StoreIndexed(ix, e) => writeln!(out, "{} := {}", indexed(ix), expr(e))?,
            Stmt::If { cond, then, els } => {
                writeln!(out, "if {} {{", expr(cond))?;
                write_block(out, then, depth + 1)?;
                if !els.is_empty() {
                    indent(out, depth);
                    writeln!(out, "}} else {{")?;
                    write_block(out, els, depth + 1)?;
                }
                indent(out, depth);
                writeln!(out, "}}")?;
            }
            Stmt::While { head, cond, body } => {
                writeln!(out, "loop {{")?;
                write_block(out, head, depth + 1)?;
                indent(out, depth + 1);
                writeln!(out, "while {}", expr(cond))?;
                write_block(out, body, depth + 1)?;
                indent(out, depth);
                writeln!(out, "}}")?;
            }
            Stmt::StageWrite {
                stage, pipe, value, ..
            } => writeln!(out, "st{stage}.write({}, {})", expr(pipe), list(value))?,
            Stmt::StageRetain { stage, pipe, .. } => {
                writeln!(out, "st{stage}.retain({})", expr(pipe))?
            }
            Stmt::CanSend { port, dst } => writeln!(out, "l{dst} = p{port}.can_send()")?,
            Stmt::Send {
                port, value, dst, ..
            } => match dst {
                Some(d) => writeln!(out, "l{d} = p{port}.try_send({})", list(value))?,
                None => writeln!(out, "p{port}.send({})", list(value))?,
            },
            Stmt::Recv {
                port,
                kind,
                ok,
                dst,
            } => {
                let k = match kind {
                    RecvKind::Recv => "recv",
                    RecvKind::Peek => "peek",
                    RecvKind::Take => "take",
                };
                let d: Vec<String> = dst.iter().map(|l| format!("l{l}")).collect();
                writeln!(out, "l{ok}, ({}) = p{port}.{k}()", d.join(", "))?
            }
            Stmt::Request { port, dst } => writeln!(out, "l{dst} = p{port}.request()")?,
            Stmt::Valid { port, dst } => writeln!(out, "l{dst} = p{port}.valid()")?,
            Stmt::Trace { trace, args } => writeln!(out, "trace t{trace}({})", list(args))?,
            Stmt::Assert { cond, fault } => writeln!(out, "assert {} else f{fault}", expr(cond))?,
            Stmt::Finish => writeln!(out, "finish")?,
        }
    }
    Ok(())
}

fn list(es: &[Expr]) -> String {
    es.iter().map(expr).collect::<Vec<_>>().join(", ")
}

fn indexed(ix: &Indexed) -> String {
    format!(
        "s{}[{} * {} < {} else f{}]",
        ix.base,
        expr(&ix.index),
        ix.stride,
        ix.len,
        ix.fault
    )
}

/// Renders one expression.
pub fn expr(e: &Expr) -> String {
    match e {
        Expr::Const(ty, v) => format!("{v}{ty}"),
        Expr::Local(l) => format!("l{l}"),
        Expr::Load(s) => format!("s{s}"),
        Expr::LoadIndexed(ix) => indexed(ix),
        Expr::Unary(op, ty, a) => {
            let o = match op {
                UnOp::Neg => "neg",
                UnOp::Not => "not",
            };
            format!("{o}.{ty}({})", expr(a))
        }
        Expr::Binary(op, ty, a, b) => format!("{}.{ty}({}, {})", binop(*op), expr(a), expr(b)),
        Expr::Cast { from, to, arg } => format!("cast.{from}.{to}({})", expr(arg)),
        Expr::Select { cond, then, els } => {
            format!("select({}, {}, {})", expr(cond), expr(then), expr(els))
        }
    }
}

fn binop(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "add",
        BinOp::Sub => "sub",
        BinOp::Mul => "mul",
        BinOp::MulHi => "mulhi",
        BinOp::Div => "div",
        BinOp::Rem => "rem",
        BinOp::And => "and",
        BinOp::Or => "or",
        BinOp::Xor => "xor",
        BinOp::Shl => "shl",
        BinOp::Shr => "shr",
        BinOp::Eq => "eq",
        BinOp::Ne => "ne",
        BinOp::Lt => "lt",
        BinOp::Le => "le",
        BinOp::Gt => "gt",
        BinOp::Ge => "ge",
    }
}
