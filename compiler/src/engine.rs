//! What every execution engine offers the scheduler: run one cluster's units
//! for one edge against the flat state.

use crate::host::Host;
use crate::ir::{Program, Stage};

/// An execution engine (the interpreter or the JIT).
pub trait Engine {
    /// Runs one unit's tick, including its end-of-tick commits.
    fn tick_unit(&mut self, state: &mut [u64], unit: u32, host: &mut dyn Host);
}

/// The state every run starts from: each slot's initial value.
pub fn initial_state(program: &Program) -> Vec<u64> {
    program.slots.iter().map(|s| s.init).collect()
}

/// Commits a stage register (shared meaning for both engines, written once
/// here for the interpreter and mirrored by the JIT's code generator).
pub(crate) fn commit_stage(stage: &Stage, state: &mut [u64]) {
    let k = stage.item.len();
    for pipe in 0..stage.pipes as usize {
        let touched = state[stage.touched as usize + pipe];
        let next_valid = state[stage.valid_next as usize + pipe];
        state[stage.valid as usize + pipe] = touched & next_valid;
        if touched != 0 {
            for f in 0..k {
                state[stage.value as usize + pipe * k + f] =
                    state[stage.value_next as usize + pipe * k + f];
            }
        }
        state[stage.touched as usize + pipe] = 0;
    }
}
