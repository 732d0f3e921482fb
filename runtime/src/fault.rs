//! Runtime faults: design errors detected while running (contract §6).

use crate::design::AssertId;
use crate::trace::Timestamp;

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// `send()` on a channel port that could not send.
    SendRefused,
    /// `send()` on a CDC FIFO writer that could not send.
    FifoSendRefused,
    /// A stage register pipe written or retained twice in one tick.
    StageWrittenTwice {
        /// The pipe.
        pipe: u32,
    },
    /// An assertion failed.
    Assertion,
    /// An array register index out of range.
    IndexOutOfRange,
    /// A stage register pipe index out of range.
    StagePipeOutOfRange,
    /// A run-time loop (`for ... max M`, `while ... max M`) asked for more
    /// than its `M` iterations.
    LoopBound,
    /// A native tick function returned a non-zero status.
    TickStatus {
        /// The status it returned.
        status: u32,
    },
}

/// A runtime fault, with everything needed to find it in the design.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// What went wrong.
    pub kind: FaultKind,
    /// The unit instance path.
    pub unit: String,
    /// The construct: port, FIFO, stage register or assertion message.
    pub construct: String,
    /// The unit's domain.
    pub domain: String,
    /// The domain's local cycle.
    pub cycle: u64,
    /// The exact time of the instant.
    pub time: Timestamp,
    /// The declared fault site behind the fault, when one is known: the
    /// site [`crate::TickCtx::raise`] raised, or the one a refused `send`
    /// named ([`crate::TickCtx::locate_fault`]). The runtime knows no
    /// syntax; the front end that declared the site maps it to a source
    /// location.
    pub site: Option<AssertId>,
}

impl FaultKind {
    /// The kind's stable code (`runtime::...`), shown to users and in `--json`.
    pub fn code(&self) -> &'static str {
        match self {
            FaultKind::SendRefused => "runtime::send_refused",
            FaultKind::FifoSendRefused => "runtime::fifo_send_refused",
            FaultKind::StageWrittenTwice { .. } => "runtime::stage_written_twice",
            FaultKind::Assertion => "runtime::assertion_failed",
            FaultKind::IndexOutOfRange => "runtime::index_out_of_range",
            FaultKind::StagePipeOutOfRange => "runtime::stage_pipe_out_of_range",
            FaultKind::LoopBound => "runtime::loop_bound_exceeded",
            FaultKind::TickStatus { .. } => "runtime::tick_status",
        }
    }
}

impl Fault {
    /// A stable code for the fault kind.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

/// A construct `name at file:line:col` as the name and ` at
/// file:line:col` (empty without a location). Names have no spaces.
fn split_location(construct: &str) -> (&str, &str) {
    match construct.find(" at ") {
        Some(i) => construct.split_at(i),
        None => (construct, ""),
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match &self.kind {
            FaultKind::SendRefused => format!("send refused on port `{}`", self.construct),
            FaultKind::FifoSendRefused => format!("send refused on CDC FIFO `{}`", self.construct),
            // A stage construct is the register's name, then ` at
            // file:line:col` where the site is known: the name alone is
            // quoted.
            FaultKind::StageWrittenTwice { pipe } => {
                let (name, at) = split_location(&self.construct);
                format!("stage register `{name}` pipe {pipe} written or retained twice{at}")
            }
            FaultKind::Assertion => format!("assertion failed: {}", self.construct),
            FaultKind::IndexOutOfRange => format!("{} is out of range", self.construct),
            FaultKind::StagePipeOutOfRange => {
                let (name, at) = split_location(&self.construct);
                format!("stage register `{name}` pipe index out of range{at}")
            }
            FaultKind::LoopBound => format!("{} ran past its bound", self.construct),
            FaultKind::TickStatus { status } => format!("tick returned status {status}"),
        };
        write!(
            f,
            "[{}] {what} in unit `{}`, domain `{}`, cycle {}, time {}",
            self.code(),
            self.unit,
            self.domain,
            self.cycle,
            self.time
        )
    }
}
