//! The execution configuration: every choice of how a design is compiled
//! and run that leaves its results unchanged (each is an exact alternative
//! kept switchable for the differential tests and the benchmarks), in one
//! typed value. `chronc` builds it in `main` from its command line and
//! environment (`cli::exec`) and passes it down; no library crate reads
//! the environment. Each field is documented once, where it is declared.

use chronon_runtime::RuntimeConfig;

use crate::jit::JitConfig;

/// How a design is compiled and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExecConfig {
    /// Run the IR optimizer ([`crate::ir::opt`]) on the lowered program.
    pub ir_opt: bool,
    /// Keep long `for` loops with constant bounds as loops instead of
    /// unrolling them (`lower/reroll.rs`).
    pub reroll: bool,
    /// Let JIT code operate on the CDC FIFOs bound to its ports inline
    /// (`jit/fifo.rs`); off, every FIFO operation is a host call.
    pub inline_fifo: bool,
    /// Let JIT code operate on the channel ports with one connection
    /// inline (`jit/chan.rs`); off, every channel operation is a host call.
    pub inline_channel: bool,
    /// The code generator's choices.
    pub jit: JitConfig,
    /// The runtime's choices.
    pub runtime: RuntimeConfig,
    /// How many workers run the design, and how its components are placed
    /// on them ([`crate::parallel`]).
    pub parallel: ParallelConfig,
}

/// How many workers a run may use (`chronc run --threads`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Threads {
    /// Up to `cores` workers where the planner expects a gain, otherwise
    /// one; `chronc` passes the host's available parallelism.
    Auto {
        /// The cores to plan for.
        cores: usize,
    },
    /// This many workers at most (one per component where there are fewer
    /// components), whatever the planner expects; 1 is the serial run.
    Fixed(usize),
}

/// How components are assigned to workers. Every choice gives the same
/// results; the ones other than [`Placement::Planner`] are for the
/// differential tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Placement {
    /// Balanced by static cost (longest first onto the least loaded).
    Planner,
    /// Component `i` on worker `i mod workers`.
    RoundRobin,
    /// A pseudo-random worker per component, from this seed.
    Random(u64),
}

/// The parallel runtime's choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParallelConfig {
    /// How many workers.
    pub threads: Threads,
    /// How components are placed on them.
    pub placement: Placement,
    /// For the tests of the coordination protocol: seeded random slice
    /// lengths and pauses in every worker, so workers run at random
    /// relative speeds (results never change).
    pub chaos: Option<u64>,
}

impl Default for ParallelConfig {
    fn default() -> Self {
        ParallelConfig {
            threads: Threads::Fixed(1),
            placement: Placement::Planner,
            chaos: None,
        }
    }
}

impl Default for ExecConfig {
    fn default() -> Self {
        ExecConfig {
            ir_opt: true,
            reroll: true,
            inline_fifo: true,
            inline_channel: true,
            jit: JitConfig::default(),
            runtime: RuntimeConfig::default(),
            parallel: ParallelConfig::default(),
        }
    }
}

/// The name of each switch [`ExecConfig::set`] takes, for help texts and
/// for tests that enumerate the configurations.
pub const SWITCHES: &[&str] = &[
    "ir-opt",
    "reroll",
    "inline-fifo",
    "inline-channel",
    "simd",
    "packed",
    "jit-dump",
    "wire-channels",
    "unobserved-variants",
    "run-ahead",
    "replay-loop",
    "blind-calls",
    "fifo-stamps",
];

impl ExecConfig {
    /// Sets the switch `name` (one of [`SWITCHES`]) to `on`; `Err` names
    /// the switches there are.
    pub fn set(&mut self, name: &str, on: bool) -> Result<(), String> {
        let field = match name {
            "ir-opt" => &mut self.ir_opt,
            "reroll" => &mut self.reroll,
            "inline-fifo" => &mut self.inline_fifo,
            "inline-channel" => &mut self.inline_channel,
            "simd" => &mut self.jit.simd,
            "packed" => &mut self.jit.packed,
            "jit-dump" => &mut self.jit.dump,
            "wire-channels" => &mut self.jit.wires,
            "unobserved-variants" => &mut self.jit.unobserved_variants,
            "run-ahead" => &mut self.runtime.run_ahead,
            "replay-loop" => &mut self.runtime.replay_loop,
            "blind-calls" => &mut self.runtime.blind_calls,
            "fifo-stamps" => &mut self.runtime.fifo_stamps,
            _ => {
                return Err(format!(
                    "no execution switch `{name}`; there are {}",
                    SWITCHES.join(", ")
                ));
            }
        };
        *field = on;
        Ok(())
    }

    /// The value of the switch `name` (one of [`SWITCHES`]).
    pub fn get(&self, name: &str) -> Option<bool> {
        let mut probe = *self;
        probe.set(name, true).ok()?;
        Some(probe == *self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_switch_sets_its_own_field_and_only_it() {
        let base = ExecConfig::default();
        for name in SWITCHES {
            let mut flipped = base;
            let before = base.get(name).expect("a switch");
            flipped.set(name, !before).expect("a switch");
            assert_ne!(flipped, base, "{name} changes the configuration");
            for other in SWITCHES.iter().filter(|o| *o != name) {
                assert_eq!(flipped.get(other), base.get(other), "{name} leaves {other}");
            }
        }
        assert!(base.clone().set("no-such", true).is_err());
    }
}
