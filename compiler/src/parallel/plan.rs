//! Planning a parallel run: the design's components (units joined by any
//! channel or CDC FIFO), their static cost, their placement on workers, and
//! whether the run should stay serial (and why).

use crate::config::{ParallelConfig, Placement, Threads};
use crate::ir::{BinOp, Expr, Program, Stmt, walk};

/// Units that exchange data, directly or through others: the smallest
/// share of a design that one worker can run on its own.
#[derive(Clone, Debug)]
pub struct Component {
    /// Its units (IR unit ids, increasing).
    pub units: Vec<u32>,
    /// Static cost: IR nodes per tick times ticks per nanosecond, summed
    /// over its units; what a nanosecond of simulated time costs it. Zero
    /// until [`plan`] needs it (it walks every node of the IR).
    pub cost: f64,
    /// Whether a unit of it can execute `finish`.
    pub finishes: bool,
}

/// The design's components, ordered by their first unit, their costs not
/// yet counted.
pub fn components(program: &Program) -> Vec<Component> {
    let n = program.units.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn root(parent: &mut [u32], mut u: u32) -> u32 {
        while parent[u as usize] != u {
            let up = parent[parent[u as usize] as usize];
            parent[u as usize] = up;
            u = up;
        }
        u
    }
    let unit_of = |p: u32| program.ports[p as usize].unit;
    let links = program
        .channels
        .iter()
        .map(|c| (c.from, c.to))
        .chain(program.fifos.iter().map(|f| (f.from, f.to)));
    for (from, to) in links {
        let (a, b) = (
            root(&mut parent, unit_of(from)),
            root(&mut parent, unit_of(to)),
        );
        // The smaller id stays the root, so components come out ordered.
        parent[a.max(b) as usize] = a.min(b);
    }
    let mut index = vec![u32::MAX; n];
    let mut out: Vec<Component> = Vec::new();
    for u in 0..n as u32 {
        let r = root(&mut parent, u) as usize;
        if index[r] == u32::MAX {
            index[r] = out.len() as u32;
            out.push(Component {
                units: Vec::new(),
                cost: 0.0,
                finishes: false,
            });
        }
        let c = &mut out[index[r] as usize];
        c.finishes |= finishes(&program.units[u as usize].body);
        c.units.push(u);
    }
    out
}

/// Counts each component's [`Component::cost`].
fn count_costs(program: &Program, components: &mut [Component]) {
    for c in components {
        c.cost = c
            .units
            .iter()
            .map(|&u| {
                let unit = &program.units[u as usize];
                let period = &program.domains[unit.domain as usize].period_ps;
                let per_ns = 1000.0 * *period.denom() as f64 / *period.numer() as f64;
                // A tick costs its call and commit even when its body is
                // empty.
                (TICK_NODES + body_size(&unit.body)) * per_ns
            })
            .sum();
    }
}

/// What a tick costs beyond its body, in IR nodes.
const TICK_NODES: f64 = 4.0;

/// IR nodes of a body: statements and expression nodes; host-side work
/// (queues, flags) counts a few nodes per operation; a loop's head and
/// body count once per iteration it is expected to run ([`trips`]).
fn body_size(body: &[Stmt]) -> f64 {
    let mut n = 0.0;
    for (i, s) in body.iter().enumerate() {
        n += match s {
            Stmt::Assign(..)
            | Stmt::Store(..)
            | Stmt::StoreIndexed(..)
            | Stmt::If { .. }
            | Stmt::Send { .. }
            | Stmt::Trace { .. } => 1.0,
            _ => 5.0,
        };
        s.own_exprs(&mut |e| e.visit(&mut |_| n += 1.0));
        let [a, b] = s.blocks();
        let inner = body_size(a) + body_size(b);
        n += match s {
            Stmt::While { cond, .. } => inner * trips(&body[..i], cond),
            _ => inner,
        };
    }
    n
}

/// Iterations expected of a loop with condition `cond` after `before`:
/// the distance between a counter's constant start and a constant bound
/// (`k < end` counting up: a `for` with constant bounds kept as a loop,
/// `lower/reroll.rs`; `0 < k` counting down: a wide division's steps),
/// else [`RUN_TIME_TRIPS`].
fn trips(before: &[Stmt], cond: &Expr) -> f64 {
    // Perhaps `&& !done` (a loop a `return` can end).
    let test = match cond {
        Expr::Binary(BinOp::And, _, a, _) => a.as_ref(),
        other => other,
    };
    let Expr::Binary(BinOp::Lt, _, a, b) = test else {
        return RUN_TIME_TRIPS;
    };
    let (k, bound, up) = match (a.as_ref(), b.as_ref()) {
        (Expr::Local(k), Expr::Const(_, end)) => (k, *end, true),
        (Expr::Const(_, low), Expr::Local(k)) => (k, *low, false),
        _ => return RUN_TIME_TRIPS,
    };
    let start = before.iter().rev().find_map(|s| match s {
        Stmt::Assign(l, Expr::Const(_, v)) if l == k => Some(*v),
        _ => None,
    });
    match (start, up) {
        (Some(start), true) => bound.saturating_sub(start).max(1) as f64,
        (Some(start), false) => start.saturating_sub(bound).max(1) as f64,
        (None, _) => RUN_TIME_TRIPS,
    }
}

/// Iterations assumed of a loop whose count is known only at run time.
const RUN_TIME_TRIPS: f64 = 16.0;

fn finishes(body: &[Stmt]) -> bool {
    let mut any = false;
    walk::visit_stmts(body, &mut |s| any |= matches!(s, Stmt::Finish));
    any
}

/// What the planner decided.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// One worker, and why.
    Serial(String),
    /// Several workers.
    Parallel(Parallel),
}

/// A parallel plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Parallel {
    /// Per worker, the components it runs (indices into [`components`]).
    pub workers: Vec<Vec<usize>>,
    /// How a `finish` is kept exact.
    pub finish: FinishRule,
}

/// How a parallel run stops exactly at a `finish` (faults always use
/// [`FinishRule::Rerun`]'s way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FinishRule {
    /// No component can `finish`.
    None,
    /// The components that can `finish` share worker 0, the leader, and
    /// no other worker passes the leader's progress: a `finish` never
    /// leaves a worker past it.
    Leader,
    /// Components that can `finish` are anywhere; a worker that ran past
    /// the earliest stop runs again to exactly there (about twice its
    /// work at worst, so this pays from three workers on).
    Rerun,
}

/// What else decides whether a run can be parallel: things only the
/// caller knows.
#[derive(Clone, Copy, Debug)]
pub struct RunShape {
    /// The JIT runs it (the interpreter, the reference, stays serial).
    pub jit: bool,
    /// The recording's writers (each on its own thread); 0 when nothing
    /// is recorded.
    pub writers: usize,
    /// Simulated nanoseconds the run lasts, when a limit says so.
    pub duration_ns: Option<f64>,
}

/// The planner's smallest expected gain: below it, `auto` stays serial.
pub const MIN_GAIN: f64 = 1.1;

/// What a domain edge costs every worker, whether or not it has work in
/// the domain (the calendar, the commit), in the IR nodes of
/// [`Component::cost`]; an estimate that keeps the cheap rows of the
/// scaling workload parallel (they gain, docs/performance.md) and
/// one-unit-per-domain designs serial.
const EDGE_NODES: f64 = 24.0;

/// Simulated work (IR nodes, about 0.4 ns each in a serial run) below
/// which `auto` stays serial: starting workers (threads, one compile and
/// one instant loop each) costs a few milliseconds.
/// `examples/independent_models.chr` with 2 workers is slower at `--until
/// 100us` (2.2e7 nodes) and 1.37x faster at 500 us (1.1e8;
/// docs/performance.md).
const MIN_WORK_NODES: f64 = 1e8;

/// Decides how `program` runs, given its components; counts their costs
/// (only where more than one worker is possible, so a serial run never
/// walks its IR for it).
pub fn plan(
    program: &Program,
    components: &mut [Component],
    config: &ParallelConfig,
    shape: RunShape,
) -> Plan {
    let (max_workers, auto) = match config.threads {
        Threads::Fixed(n) => (n.max(1), false),
        Threads::Auto { cores } => (cores.max(1), true),
    };
    let serial = |why: &str| Plan::Serial(why.to_string());
    if max_workers == 1 {
        return serial(match auto {
            true => "one core",
            false => "one worker asked",
        });
    }
    if !shape.jit {
        return serial("the interpreter runs serially (it is the reference)");
    }
    // A recorded run's writers, and in a parallel run the main thread that
    // merges the workers' records, keep a core busy each when records
    // dominate: a serial run already spends them, so `auto` gives workers
    // only the cores left (on 2 cores, a recording-bound run was 0.5x on
    // 2 workers; docs/performance.md).
    let max_workers = match (auto, shape.writers) {
        (true, w) if w > 0 => {
            let left = max_workers.saturating_sub(w + 1);
            if left < 2 {
                return Plan::Serial(format!(
                    "the recording's {w} writer thread{} and the merge of the workers' records                      need {} of the {max_workers} cores (ask `--threads N`)",
                    if w == 1 { "" } else { "s" },
                    w + 1,
                ));
            }
            left
        }
        _ => max_workers,
    };
    if components.len() < 2 {
        return serial("one component: every unit exchanges data with the others");
    }
    count_costs(program, components);
    let components = &*components;
    let edges_per_ns: f64 = program
        .domains
        .iter()
        .map(|d| 1000.0 * *d.period_ps.denom() as f64 / *d.period_ps.numer() as f64)
        .sum();
    let overhead = edges_per_ns * EDGE_NODES;
    let total: f64 = components.iter().map(|c| c.cost).sum();
    let load = |w: &Vec<usize>| w.iter().map(|&c| components[c].cost).sum::<f64>();
    // The expected gain of a placement: the serial cost over the slowest
    // worker's (twice that where a `finish` may make it run again).
    let gain = |workers: &[Vec<usize>], rerun: bool| {
        let slowest = workers.iter().map(load).fold(0.0, f64::max);
        let factor = if rerun { 2.0 } else { 1.0 };
        (total + overhead) / (factor * (slowest + overhead))
    };
    let any_finish = components.iter().any(|c| c.finishes);
    let candidates: Vec<Parallel> = match (any_finish, config.placement) {
        (false, p) => vec![Parallel {
            workers: place(components, max_workers, p, false),
            finish: FinishRule::None,
        }],
        // The planner weighs both ways of keeping a `finish` exact; the
        // test placements put every component anywhere.
        (true, Placement::Planner) => vec![
            Parallel {
                workers: place(components, max_workers, Placement::Planner, true),
                finish: FinishRule::Leader,
            },
            Parallel {
                workers: place(components, max_workers, Placement::Planner, false),
                finish: FinishRule::Rerun,
            },
        ],
        (true, p) => vec![Parallel {
            workers: place(components, max_workers, p, false),
            finish: FinishRule::Rerun,
        }],
    };
    let best = candidates
        .into_iter()
        .filter(|c| c.workers.len() >= 2)
        .map(|c| (gain(&c.workers, c.finish == FinishRule::Rerun), c))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let Some((expected, best)) = best else {
        return serial("every component can `finish`, and they are one worker's");
    };
    if auto {
        if expected < MIN_GAIN {
            return Plan::Serial(match best.finish {
                FinishRule::Rerun => format!(
                    "expected gain {expected:.2}x is under {MIN_GAIN}x (components that can \
                     `finish` on several workers make workers past it run again)"
                ),
                _ => format!(
                    "expected gain {expected:.2}x is under {MIN_GAIN}x (ticks too cheap for the \
                     per-edge cost every worker pays, or one component dominates)"
                ),
            });
        }
        match shape.duration_ns {
            // A run until `finish` may be a few instants long: starting
            // workers could cost more than the whole serial run.
            None => {
                return serial(
                    "no `--until` or `--cycles`: the run lasts until `finish` or a fault, so \
                     `auto` cannot tell that starting workers pays (ask `--threads N`)",
                );
            }
            Some(ns) if (total + overhead) * ns < MIN_WORK_NODES => {
                return serial("the run is too short to repay starting workers");
            }
            Some(_) => {}
        }
    }
    Plan::Parallel(best)
}

/// Components per worker: at most `max_workers` workers, none empty. With
/// `lead`, the components that can `finish` share worker 0
/// ([`FinishRule::Leader`]).
pub fn place(
    components: &[Component],
    max_workers: usize,
    placement: Placement,
    lead: bool,
) -> Vec<Vec<usize>> {
    // Units of placement: with `lead`, the finishing components together;
    // every other component on its own.
    let finishing: Vec<usize> = (0..components.len())
        .filter(|&c| lead && components[c].finishes)
        .collect();
    let mut items: Vec<Vec<usize>> = Vec::new();
    if !finishing.is_empty() {
        items.push(finishing);
    }
    items.extend(
        (0..components.len())
            .filter(|&c| !(lead && components[c].finishes))
            .map(|c| vec![c]),
    );
    let n = max_workers.min(items.len()).max(1);
    let cost = |item: &Vec<usize>| item.iter().map(|&c| components[c].cost).sum::<f64>();
    let mut workers: Vec<Vec<usize>> = vec![Vec::new(); n];
    match placement {
        Placement::Planner => {
            // Longest first onto the least loaded (ties: the lower index),
            // the leader's item first of all so it lands on worker 0.
            let mut order: Vec<usize> = (0..items.len()).collect();
            let leads = usize::from(lead && components.iter().any(|c| c.finishes));
            order[leads..]
                .sort_by(|&a, &b| cost(&items[b]).total_cmp(&cost(&items[a])).then(a.cmp(&b)));
            let mut load = vec![0.0f64; n];
            for (k, &i) in order.iter().enumerate() {
                let w = match k < n {
                    // Every worker gets one item first.
                    true => k,
                    false => (0..n)
                        .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
                        .unwrap_or(0),
                };
                load[w] += cost(&items[i]);
                workers[w].extend(&items[i]);
            }
        }
        Placement::RoundRobin => {
            for (i, item) in items.iter().enumerate() {
                workers[i % n].extend(item);
            }
        }
        Placement::Random(seed) => {
            let mut x = seed | 1;
            for (i, item) in items.iter().enumerate() {
                // The first `n` items fill every worker; the rest land at
                // random (xorshift64*).
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let w = match i < n {
                    true => i,
                    false => (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n,
                };
                workers[w].extend(item);
            }
        }
    }
    for w in &mut workers {
        w.sort_unstable();
    }
    // The leader stays worker 0 (the first item is always placed there).
    workers
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comp(cost: f64, finishes: bool) -> Component {
        Component {
            units: vec![],
            cost,
            finishes,
        }
    }

    #[test]
    fn placement_balances_and_keeps_finishers_on_worker_zero() {
        let cs = [
            comp(1.0, false),
            comp(8.0, false),
            comp(2.0, true),
            comp(3.0, false),
            comp(4.0, true),
        ];
        let w = place(&cs, 2, Placement::Planner, true);
        assert_eq!(w.len(), 2);
        assert!(w[0].contains(&2) && w[0].contains(&4), "{w:?}");
        let load = |w: &Vec<usize>| w.iter().map(|&c| cs[c].cost).sum::<f64>();
        assert_eq!(load(&w[0]) + load(&w[1]), 18.0);
        assert!((load(&w[0]) - load(&w[1])).abs() <= 2.0, "{w:?}");
        for p in [Placement::RoundRobin, Placement::Random(7)] {
            for lead in [true, false] {
                let w = place(&cs, 3, p, lead);
                assert_eq!(w.len(), 3);
                assert!(w.iter().all(|w| !w.is_empty()));
                if lead {
                    assert!(w[0].contains(&2) && w[0].contains(&4), "{p:?}: {w:?}");
                }
                let mut all: Vec<usize> = w.concat();
                all.sort_unstable();
                assert_eq!(all, vec![0, 1, 2, 3, 4]);
            }
        }
        // Never more workers than items.
        assert_eq!(place(&cs, 16, Placement::Planner, true).len(), 4);
        assert_eq!(place(&cs, 16, Placement::Planner, false).len(), 5);
        // Without a leader the planner balances every component.
        let w = place(&cs, 2, Placement::Planner, false);
        assert_eq!(w, vec![vec![0, 1], vec![2, 3, 4]]);
    }
}
