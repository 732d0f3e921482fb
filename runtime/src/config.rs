//! The runtime's execution choices. Every field selects between exact
//! alternatives (a run's results are the same either way); they stay
//! switchable so the differential tests compare them and the benchmarks
//! measure what each one buys (docs/performance.md). `chronc` builds the
//! whole execution configuration in `main` and hands this part to
//! [`crate::DesignBuilder::build_with`]; the runtime reads no environment.

/// How a [`crate::Simulation`] executes its design.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuntimeConfig {
    /// Let domains run many edges per call where that is exact (contract
    /// §7, [`crate::Tick::tick_edges`]); off, every instant runs through
    /// the instant loop.
    pub run_ahead: bool,
    /// Run pattern-mode instants through the replay loop (a precomputed
    /// per-position program, `sim/replay.rs`); off, each instant is a
    /// checked step.
    pub replay_loop: bool,
    /// Let the replay loop call a JIT group's variant for unobserved runs
    /// that never reaches the context without storing the context or
    /// setting its edge and unit fields (they are set only if it faults);
    /// off, every call sets them up.
    pub blind_calls: bool,
    /// Derive an observed FIFO's `Write`, `Read` and `Consume` events at
    /// its commit from sequence numbers its operations take during the
    /// tick (so JIT code keeps its inline FIFO operations while
    /// recording); off, the operations record them as they run.
    pub fifo_stamps: bool,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            run_ahead: true,
            replay_loop: true,
            blind_calls: true,
            fifo_stamps: true,
        }
    }
}
