//! The scheduler's reference workloads in `.chr` (benches/workloads/) stay
//! the hand-written ticks' twins: on both engines, a short run ends with the
//! same edges and the same register values as the hand-written design (whose
//! group-tick and per-unit versions agree too).

use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_runtime::{DomainId, Stop, UnitId};
use chronon_suite::workloads::WORKLOADS;

/// Enough edges for the FIFO workload to fill, stall and wrap its pointers.
const EDGES: u64 = 2_000;

#[test]
fn chr_workloads_match_the_hand_written_ticks_on_both_engines() {
    for workload in &WORKLOADS {
        let (mut hand, limit) = (workload.hand_written)(EDGES);
        assert_eq!(hand.run(limit), Stop::LimitReached, "{}", workload.name);
        let domains = workload.units_per_domain.len() as u32;
        let edges: Vec<u64> = (0..domains).map(|d| hand.edges_done(DomainId(d))).collect();
        let units: u32 = workload.units_per_domain.iter().sum::<u64>() as u32;
        // Each hand-written unit has one register, and so has its `.chr`
        // twin (slot `<unit path>.<reg>`).
        let mut expected: Vec<(String, u64)> = (0..units)
            .map(|u| {
                let path = hand.unit_path(UnitId(u)).to_string();
                (path, hand.regs(UnitId(u))[0])
            })
            .collect();
        expected.sort();
        // The per-unit version of the hand-written design agrees with the
        // group-tick one.
        let (mut per_unit, limit) = (workload.per_unit)(EDGES);
        assert_eq!(per_unit.run(limit), Stop::LimitReached, "{}", workload.name);
        for u in 0..units {
            assert_eq!(
                per_unit.regs(UnitId(u)),
                hand.regs(UnitId(u)),
                "{}",
                workload.name
            );
        }
        for d in 0..domains {
            assert_eq!(per_unit.edges_done(DomainId(d)), edges[d as usize]);
        }
        let program = workload.program();
        for engine in [EngineKind::Interp, EngineKind::Jit] {
            let mut sim = Simulator::new(program.clone(), engine).expect("workload builds");
            let stop = sim.sim.run(workload.chr_limit(&program, EDGES));
            assert_eq!(stop, Stop::LimitReached, "{} on {engine:?}", workload.name);
            let got_edges: Vec<u64> = (0..domains)
                .map(|d| sim.sim.edges_done(DomainId(d)))
                .collect();
            assert_eq!(got_edges, edges, "{} on {engine:?}: edges", workload.name);
            let state = sim.state();
            let mut got: Vec<(String, u64)> = program
                .units
                .iter()
                .map(|u| {
                    let prefix = format!("{}.", u.path);
                    let values: Vec<u64> = program
                        .slots
                        .iter()
                        .enumerate()
                        // `top.a.n'` is the register's next value, not a register.
                        .filter(|(_, s)| s.name.starts_with(&prefix) && !s.name.ends_with('\''))
                        .map(|(i, _)| state[i])
                        .collect();
                    assert_eq!(values.len(), 1, "{}: slots of {}", workload.name, u.path);
                    (u.path.clone(), values[0])
                })
                .collect();
            got.sort();
            assert_eq!(got, expected, "{} on {engine:?}: registers", workload.name);
        }
    }
}
