//! Random well-typed IR programs for differential testing.
//!
//! A program has a few units in a few clusters; each unit has scalar
//! registers of mixed widths and signedness, a register array reached by
//! dynamic (sometimes out-of-range) indices, a stage register, a counter,
//! ports of every kind, traces, asserts and rarely `finish`. Bodies mix
//! wrapping arithmetic, division, shifts by any amount, comparisons, casts,
//! selects and nested conditionals.

use crate::ir::{
    BinOp, Cluster, Commit, Counter, Domain, Expr, FaultSite, Indexed, Port, PortKind, Program,
    RecvKind, SiteKind, Slot, Stage, Stmt, TracePoint, Ty, UnOp, Unit,
};

use super::rng::Rng;

const TYPES: &[Ty] = &[
    Ty::BOOL,
    Ty::unsigned(3),
    Ty::unsigned(8),
    Ty::signed(8),
    Ty::signed(13),
    Ty::unsigned(16),
    Ty::unsigned(32),
    Ty::signed(32),
    Ty::unsigned(63),
    Ty::unsigned(64),
    Ty::signed(64),
];

/// Slots of one register (current and next) of a unit being built.
struct Reg {
    ty: Ty,
    cur: u32,
    next: u32,
    /// Elements, for arrays (`cur` and `next` are element 0).
    len: u32,
}

struct UnitGen<'a> {
    rng: &'a mut Rng,
    p: &'a mut Program,
    unit: u32,
    locals: Vec<Ty>,
    regs: Vec<Reg>,
    outs: Vec<u32>,
    ins: Vec<u32>,
    cdcs: Vec<u32>,
    stage: u32,
    counter: u32,
}

fn random_value(rng: &mut Rng, ty: Ty) -> u64 {
    match rng.below(4) {
        0 => 0,
        1 => ty.mask(),
        2 => rng.below(8) & ty.mask(),
        _ => rng.next() & ty.mask(),
    }
}

fn add_slot(p: &mut Program, name: String, ty: Ty, init: u64) -> u32 {
    p.slots.push(Slot { name, ty, init });
    (p.slots.len() - 1) as u32
}

fn add_fault(p: &mut Program, unit: u32, kind: SiteKind, construct: &str) -> u32 {
    p.faults.push(FaultSite {
        unit,
        kind,
        construct: construct.into(),
        message: format!("{construct} failed"),
        span: None,
        source: None,
    });
    (p.faults.len() - 1) as u32
}

impl UnitGen<'_> {
    fn ty(&mut self) -> Ty {
        *self.rng.pick(TYPES)
    }

    fn new_local(&mut self, ty: Ty) -> u32 {
        self.locals.push(ty);
        (self.locals.len() - 1) as u32
    }

    fn index_into(&mut self, len: u32, depth: u32) -> Expr {
        // Mostly in range, sometimes not, to exercise the bounds check.
        let ity = *self
            .rng
            .pick(&[Ty::unsigned(2), Ty::unsigned(3), Ty::unsigned(8)]);
        if self.rng.one_in(3) {
            let v = self.rng.below(u64::from(len) + 2) & ity.mask();
            Expr::Const(ity, v)
        } else {
            self.expr(ity, depth + 1)
        }
    }

    fn leaf(&mut self, ty: Ty) -> Expr {
        let locals: Vec<u32> = (0..self.locals.len() as u32)
            .filter(|l| self.locals[*l as usize] == ty)
            .collect();
        let regs: Vec<u32> = self
            .regs
            .iter()
            .filter(|r| r.ty == ty && r.len == 1)
            .map(|r| r.cur)
            .collect();
        match self.rng.below(3) {
            0 if !locals.is_empty() => Expr::Local(*self.rng.pick(&locals)),
            1 if !regs.is_empty() => Expr::Load(*self.rng.pick(&regs)),
            _ => Expr::Const(ty, random_value(self.rng, ty)),
        }
    }

    fn expr(&mut self, ty: Ty, depth: u32) -> Expr {
        if depth >= 4 || self.rng.one_in(4) {
            return self.leaf(ty);
        }
        let d = depth + 1;
        match self.rng.below(10) {
            0 => {
                let op = *self.rng.pick(&[UnOp::Neg, UnOp::Not]);
                Expr::Unary(op, ty, Box::new(self.expr(ty, d)))
            }
            1 => {
                let from = self.ty();
                Expr::Cast {
                    from,
                    to: ty,
                    arg: Box::new(self.expr(from, d)),
                }
            }
            2 if ty == Ty::BOOL => {
                let op = *self.rng.pick(&[
                    BinOp::Eq,
                    BinOp::Ne,
                    BinOp::Lt,
                    BinOp::Le,
                    BinOp::Gt,
                    BinOp::Ge,
                ]);
                let at = self.ty();
                Expr::Binary(
                    op,
                    at,
                    Box::new(self.expr(at, d)),
                    Box::new(self.expr(at, d)),
                )
            }
            3 => {
                let op = *self.rng.pick(&[BinOp::Shl, BinOp::Shr]);
                let amount_ty =
                    *self
                        .rng
                        .pick(&[Ty::unsigned(3), Ty::unsigned(7), Ty::unsigned(64)]);
                let amount = if self.rng.one_in(2) {
                    Expr::Const(amount_ty, self.rng.below(70) & amount_ty.mask())
                } else {
                    self.expr(amount_ty, d)
                };
                Expr::Binary(op, ty, Box::new(self.expr(ty, d)), Box::new(amount))
            }
            4 => Expr::Select {
                cond: Box::new(self.expr(Ty::BOOL, d)),
                then: Box::new(self.expr(ty, d)),
                els: Box::new(self.expr(ty, d)),
            },
            5 => {
                let arrays: Vec<(u32, u32)> = self
                    .regs
                    .iter()
                    .filter(|r| r.ty == ty && r.len > 1)
                    .map(|r| (r.cur, r.len))
                    .collect();
                if arrays.is_empty() {
                    return self.leaf(ty);
                }
                let (base, len) = *self.rng.pick(&arrays);
                let fault = add_fault(self.p, self.unit, SiteKind::Index, "array index");
                let index = Box::new(self.index_into(len, d));
                Expr::LoadIndexed(Indexed {
                    base,
                    stride: 1,
                    len,
                    index,
                    fault,
                })
            }
            6 if ty == Ty::BOOL || self.rng.one_in(3) => {
                // A stage register's valid bit or value, at a checked pipe.
                let st = &self.p.stages[self.stage as usize];
                let (pipes, valid, value, item) = (st.pipes, st.valid, st.value, st.item.clone());
                let field = self.rng.below(item.len() as u64) as u32;
                let fault = add_fault(self.p, self.unit, SiteKind::Index, "stage pipe index");
                let index = Box::new(self.index_into(pipes, d));
                if item[field as usize] == ty && !self.rng.one_in(3) {
                    let stride = item.len() as u32;
                    Expr::LoadIndexed(Indexed {
                        base: value + field,
                        stride,
                        len: pipes,
                        index,
                        fault,
                    })
                } else {
                    let v = Expr::LoadIndexed(Indexed {
                        base: valid,
                        stride: 1,
                        len: pipes,
                        index,
                        fault,
                    });
                    Expr::Cast {
                        from: Ty::BOOL,
                        to: ty,
                        arg: Box::new(v),
                    }
                }
            }
            _ => {
                let op = *self.rng.pick(&[
                    BinOp::Add,
                    BinOp::Sub,
                    BinOp::Mul,
                    BinOp::Div,
                    BinOp::Rem,
                    BinOp::And,
                    BinOp::Or,
                    BinOp::Xor,
                ]);
                Expr::Binary(
                    op,
                    ty,
                    Box::new(self.expr(ty, d)),
                    Box::new(self.expr(ty, d)),
                )
            }
        }
    }

    fn stmt(&mut self, depth: u32) -> Stmt {
        match self.rng.below(16) {
            0 | 1 => {
                let ty = self.ty();
                let l = if self.rng.one_in(2) {
                    self.new_local(ty)
                } else {
                    self.rng.below(self.locals.len() as u64) as u32
                };
                let ty = self.locals[l as usize];
                Stmt::Assign(l, self.expr(ty, 0))
            }
            2 | 3 => {
                let r = self.rng.below(self.regs.len() as u64) as usize;
                let (ty, next, len) = (self.regs[r].ty, self.regs[r].next, self.regs[r].len);
                let value = self.expr(ty, 0);
                if len > 1 {
                    let fault = add_fault(self.p, self.unit, SiteKind::Index, "array index");
                    let index = Box::new(self.index_into(len, 0));
                    Stmt::StoreIndexed(
                        Indexed {
                            base: next,
                            stride: 1,
                            len,
                            index,
                            fault,
                        },
                        value,
                    )
                } else {
                    Stmt::Store(next, value)
                }
            }
            4 if depth < 3 => {
                let cond = self.expr(Ty::BOOL, 0);
                let then = self.block(depth + 1, 3);
                let els = if self.rng.one_in(2) {
                    self.block(depth + 1, 3)
                } else {
                    Vec::new()
                };
                Stmt::If { cond, then, els }
            }
            5 => {
                let st = &self.p.stages[self.stage as usize];
                let (pipes, item) = (st.pipes, st.item.clone());
                let pipe = self.index_into(pipes, 0);
                // The statement's own sites: one per pipe, then the range.
                let sites = self.p.faults.len() as u32;
                for pipe in 0..pipes {
                    add_fault(
                        self.p,
                        self.unit,
                        SiteKind::StageTwice { pipe },
                        "stage twice",
                    );
                }
                add_fault(self.p, self.unit, SiteKind::StageRange, "stage pipe");
                if self.rng.one_in(3) {
                    Stmt::StageRetain {
                        stage: self.stage,
                        pipe,
                        sites,
                    }
                } else {
                    let value = item.iter().map(|ty| self.expr(*ty, 1)).collect();
                    Stmt::StageWrite {
                        stage: self.stage,
                        pipe,
                        value,
                        sites,
                    }
                }
            }
            6 if !self.outs.is_empty() => {
                let port = *self.rng.pick(&self.outs);
                let item = self.p.ports[port as usize].item.clone();
                let value = item.iter().map(|ty| self.expr(*ty, 1)).collect();
                match self.rng.below(3) {
                    0 => {
                        let dst = self.new_local(Ty::BOOL);
                        Stmt::CanSend { port, dst }
                    }
                    1 => Stmt::Send {
                        port,
                        value,
                        dst: None,
                        fault: Some(add_fault(self.p, self.unit, SiteKind::Send, "send")),
                    },
                    _ => Stmt::Send {
                        port,
                        value,
                        dst: Some(self.new_local(Ty::BOOL)),
                        fault: None,
                    },
                }
            }
            7 if !self.ins.is_empty() => {
                let port = *self.rng.pick(&self.ins);
                let item = self.p.ports[port as usize].item.clone();
                let dst = item.iter().map(|ty| self.new_local(*ty)).collect();
                let kind = if self.rng.one_in(3) {
                    RecvKind::Peek
                } else {
                    RecvKind::Recv
                };
                Stmt::Recv {
                    port,
                    kind,
                    ok: self.new_local(Ty::BOOL),
                    dst,
                }
            }
            8 if !self.cdcs.is_empty() => {
                let port = *self.rng.pick(&self.cdcs);
                let item = self.p.ports[port as usize].item.clone();
                match self.rng.below(3) {
                    0 => Stmt::Request {
                        port,
                        dst: self.new_local(Ty::BOOL),
                    },
                    1 => Stmt::Valid {
                        port,
                        dst: self.new_local(Ty::BOOL),
                    },
                    _ => {
                        let dst = item.iter().map(|ty| self.new_local(*ty)).collect();
                        Stmt::Recv {
                            port,
                            kind: RecvKind::Take,
                            ok: self.new_local(Ty::BOOL),
                            dst,
                        }
                    }
                }
            }
            9 => {
                let n = self.rng.below(3);
                let args: Vec<(String, Ty)> =
                    (0..n).map(|i| (format!("a{i}"), self.ty())).collect();
                let values = args.iter().map(|(_, ty)| self.expr(*ty, 1)).collect();
                self.p.traces.push(TracePoint {
                    unit: self.unit,
                    name: format!("t{}", self.p.traces.len()),
                    args,
                    print: None,
                    wide: Vec::new(),
                });
                Stmt::Trace {
                    trace: (self.p.traces.len() - 1) as u32,
                    args: values,
                }
            }
            10 => {
                let cond = self.expr(Ty::BOOL, 1);
                Stmt::Assert {
                    cond,
                    fault: add_fault(self.p, self.unit, SiteKind::Assert, "assert"),
                }
            }
            11 => {
                let amount = self.expr(Ty::U64, 1);
                let add = Expr::Binary(
                    BinOp::Add,
                    Ty::U64,
                    Box::new(Expr::Load(self.counter)),
                    Box::new(amount),
                );
                Stmt::Store(self.counter, add)
            }
            12 if self.rng.one_in(8) => Stmt::Finish,
            13 if depth < 2 => {
                // A bounded run-time loop as lowering makes them: a
                // counter no statement of the loop can name (it is made
                // after them), tested with a random condition.
                let head = if self.rng.one_in(2) {
                    self.block(depth + 1, 2)
                } else {
                    Vec::new()
                };
                let more = self.expr(Ty::BOOL, 1);
                let mut body = self.block(depth + 1, 3);
                let k = self.new_local(Ty::unsigned(32));
                let bound = self.rng.below(5);
                let below = Expr::Binary(
                    BinOp::Lt,
                    Ty::unsigned(32),
                    Box::new(Expr::Local(k)),
                    Box::new(Expr::Const(Ty::unsigned(32), bound)),
                );
                body.push(Stmt::Assign(
                    k,
                    Expr::Binary(
                        BinOp::Add,
                        Ty::unsigned(32),
                        Box::new(Expr::Local(k)),
                        Box::new(Expr::Const(Ty::unsigned(32), 1)),
                    ),
                ));
                let cond = if self.rng.one_in(3) {
                    below
                } else {
                    Expr::Binary(BinOp::And, Ty::BOOL, Box::new(below), Box::new(more))
                };
                Stmt::If {
                    cond: Expr::Const(Ty::BOOL, 1),
                    then: vec![
                        Stmt::Assign(k, Expr::Const(Ty::unsigned(32), 0)),
                        Stmt::While {
                            head,
                            cond: Box::new(cond),
                            body,
                        },
                    ],
                    els: Vec::new(),
                }
            }
            _ => {
                let ty = self.ty();
                let l = self.new_local(ty);
                Stmt::Assign(l, self.expr(ty, 0))
            }
        }
    }

    fn block(&mut self, depth: u32, max: u64) -> Vec<Stmt> {
        let n = 1 + self.rng.below(max);
        (0..n).map(|_| self.stmt(depth)).collect()
    }
}

fn add_port(p: &mut Program, rng: &mut Rng, unit: u32, kind: PortKind, name: String) -> u32 {
    let fields = 1 + rng.below(2) as usize;
    let item = (0..fields).map(|_| *rng.pick(TYPES)).collect();
    p.ports.push(Port {
        unit,
        name,
        kind,
        item,
        rate: 1,
    });
    (p.ports.len() - 1) as u32
}

fn add_unit(p: &mut Program, rng: &mut Rng, unit: u32, domain: u32) {
    let mut regs = Vec::new();
    let mut commits = Vec::new();
    for r in 0..1 + rng.below(4) {
        let ty = *rng.pick(TYPES);
        let init = random_value(rng, ty);
        let cur = add_slot(p, format!("u{unit}.r{r}"), ty, init);
        let next = add_slot(p, format!("u{unit}.r{r}'"), ty, init);
        commits.push(Commit::Copy {
            from: next,
            to: cur,
            count: 1,
        });
        regs.push(Reg {
            ty,
            cur,
            next,
            len: 1,
        });
    }
    let ty = *rng.pick(TYPES);
    let len = 2 + rng.below(4) as u32;
    let inits: Vec<u64> = (0..len).map(|_| random_value(rng, ty)).collect();
    let cur = p.slots.len() as u32;
    for (i, v) in inits.iter().enumerate() {
        add_slot(p, format!("u{unit}.arr[{i}]"), ty, *v);
    }
    let next = p.slots.len() as u32;
    for (i, v) in inits.iter().enumerate() {
        add_slot(p, format!("u{unit}.arr[{i}]'"), ty, *v);
    }
    commits.push(Commit::Copy {
        from: next,
        to: cur,
        count: len,
    });
    regs.push(Reg { ty, cur, next, len });

    let pipes = 1 + rng.below(3) as u32;
    let item: Vec<Ty> = (0..1 + rng.below(2)).map(|_| *rng.pick(TYPES)).collect();
    let k = item.len() as u32;
    let run = |p: &mut Program, what: &str, n: u32, tys: &[Ty]| {
        let base = p.slots.len() as u32;
        for i in 0..n {
            add_slot(
                p,
                format!("u{unit}.st.{what}[{i}]"),
                tys[(i as usize) % tys.len()],
                0,
            );
        }
        base
    };
    let valid = run(p, "valid", pipes, &[Ty::BOOL]);
    let value = run(p, "value", pipes * k, &item);
    let valid_next = run(p, "valid'", pipes, &[Ty::BOOL]);
    let value_next = run(p, "value'", pipes * k, &item);
    let touched = run(p, "touched", pipes, &[Ty::BOOL]);
    p.stages.push(Stage {
        unit,
        name: "st".into(),
        pipes,
        item,
        valid,
        value,
        valid_next,
        value_next,
        touched,
    });
    let stage = (p.stages.len() - 1) as u32;
    commits.push(Commit::Stage(stage));
    let counter = add_slot(p, format!("u{unit}.count"), Ty::U64, 0);
    p.counters.push(Counter {
        unit,
        name: "count".into(),
        slot: counter,
    });

    let outs = (0..rng.below(3))
        .map(|i| add_port(p, rng, unit, PortKind::Out, format!("o{i}")))
        .collect();
    let mut ins: Vec<u32> = (0..rng.below(2))
        .map(|i| add_port(p, rng, unit, PortKind::In, format!("i{i}")))
        .collect();
    if rng.one_in(2) {
        ins.push(add_port(p, rng, unit, PortKind::CdcFwftIn, "f".into()));
    }
    let cdcs = (0..rng.below(2))
        .map(|i| add_port(p, rng, unit, PortKind::CdcIn, format!("c{i}")))
        .collect();

    let mut g = UnitGen {
        rng,
        p,
        unit,
        locals: vec![Ty::BOOL],
        regs,
        outs,
        ins,
        cdcs,
        stage,
        counter,
    };
    let body = g.block(0, 12);
    let locals = g.locals;
    p.units.push(Unit {
        path: format!("top.u{unit}"),
        domain,
        locals,
        body,
        commits,
    });
}

/// Generates the program for `seed`; it always validates.
pub fn random_program(seed: u64) -> Program {
    let mut rng = Rng::new(seed);
    let mut p = Program::default();
    let domains = 1 + rng.below(2) as u32;
    for d in 0..domains {
        p.domains.push(Domain {
            name: format!("clk{d}"),
            period_ps: (1000 + i128::from(d) * 250).into(),
            phase_ps: 0.into(),
        });
    }
    let units = 1 + rng.below(3) as u32;
    for u in 0..units {
        let domain = rng.below(u64::from(domains)) as u32;
        add_unit(&mut p, &mut rng, u, domain);
        // Units of one domain share a cluster half of the time.
        let joined = p.clusters.iter_mut().rev().find(|c| c.domain == domain);
        match joined {
            Some(c) if rng.one_in(2) => c.units.push(u),
            _ => p.clusters.push(Cluster {
                domain,
                units: vec![u],
            }),
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_programs_validate() {
        for seed in 0..200 {
            let p = random_program(seed);
            if let Err(e) = crate::ir::validate::validate(&p) {
                panic!("seed {seed}: {e}\n{}", crate::ir::print::program(&p));
            }
        }
    }

    #[test]
    fn generated_programs_hold_loops_nested_and_not() {
        let (mut loops, mut nested) = (0, 0);
        for seed in 0..100 {
            let p = random_program(seed);
            for u in &p.units {
                crate::ir::walk::visit_stmts(&u.body, &mut |s| {
                    if let Stmt::While { body, .. } = s {
                        loops += 1;
                        crate::ir::walk::visit_stmts(body, &mut |s| {
                            nested += usize::from(matches!(s, Stmt::While { .. }))
                        });
                    }
                });
            }
        }
        assert!(loops >= 50 && nested >= 5, "{loops} loops, {nested} nested");
    }

    #[test]
    fn interpreter_and_jit_agree_on_random_programs() {
        for seed in 0..100 {
            let p = random_program(seed);
            if let Err(e) =
                crate::testing::differential::compare_engines_verbose(&p, 6, seed ^ 0x5eed)
            {
                panic!("seed {seed}: {e}");
            }
        }
    }
}
