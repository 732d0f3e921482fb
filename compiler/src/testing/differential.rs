//! Runs one program on the interpreter and on the JIT side by side and
//! reports the first difference in state or in host calls.

use crate::engine::{Engine, initial_state};
use crate::interp::Interpreter;
use crate::ir::{Program, print};
use crate::jit::{Jit, JitConfig};

use super::script_host::ScriptHost;

/// Ticks every cluster of `program` `instants` times on both engines, each
/// with a [`ScriptHost`] seeded by `host_seed`, comparing the whole state
/// and the call logs after every cluster tick.
pub fn compare_engines(program: &Program, instants: u32, host_seed: u64) -> Result<(), String> {
    let config = JitConfig {
        verify: true,
        ..JitConfig::default()
    };
    let mut jit = Jit::compile(program, config).map_err(|e| e.to_string())?;
    let mut interp = Interpreter::new(std::sync::Arc::new(program.clone()));
    let mut state_i = initial_state(program);
    let mut state_j = state_i.clone();
    let mut host_i = ScriptHost::new(program, host_seed);
    let mut host_j = ScriptHost::new(program, host_seed);
    for instant in 0..instants {
        for cluster in 0..program.clusters.len() as u32 {
            for &unit in &program.clusters[cluster as usize].units {
                interp.tick_unit(&mut state_i, unit, &mut host_i);
                jit.tick_unit(&mut state_j, unit, &mut host_j);
            }
            if host_i.log != host_j.log {
                let at = host_i
                    .log
                    .iter()
                    .zip(&host_j.log)
                    .take_while(|(a, b)| a == b)
                    .count();
                return Err(format!(
                    "instant {instant}, cluster {cluster}: host call {at} differs: interp {:?}, jit {:?}",
                    host_i.log.get(at),
                    host_j.log.get(at)
                ));
            }
            if let Some(slot) = (0..state_i.len()).find(|s| state_i[*s] != state_j[*s]) {
                return Err(format!(
                    "instant {instant}, cluster {cluster}: slot s{slot} ({}) is {:#x} in interp, {:#x} in jit",
                    program.slots[slot].name, state_i[slot], state_j[slot]
                ));
            }
        }
    }
    Ok(())
}

/// [`compare_engines`] with the program text appended to any failure.
pub fn compare_engines_verbose(
    program: &Program,
    instants: u32,
    host_seed: u64,
) -> Result<(), String> {
    compare_engines(program, instants, host_seed)
        .map_err(|e| format!("{e}\n{}", print::program(program)))
}
