//! The records a run produces. All are `Copy` and fixed-size so that a hot
//! loop can hand them over without allocating.

use crate::time::Time;

/// A design `trace` event on its unit's track.
#[derive(Clone, Copy, Debug)]
pub struct TraceRecord<'a> {
    /// Domain index.
    pub domain: u32,
    /// Local cycle of the domain.
    pub cycle: u64,
    /// Exact time of the edge.
    pub time: Time,
    /// Unit index.
    pub unit: u32,
    /// Event index into the schema's events.
    pub event: u32,
    /// Argument values, as many as the event declares.
    pub args: &'a [u64],
}

/// What happened to a FIFO item or flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FifoEventKind {
    /// A write was accepted (writer domain, in the writer's tick).
    Write,
    /// `empty` deasserted for the item: it became visible to the reader.
    Visible,
    /// A `request()` was accepted (reader domain, in the reader's tick).
    Read,
    /// The item entered the output register (reader commit).
    Output,
    /// `take()` consumed the item (reader domain, in the reader's tick).
    Consume,
    /// `full` asserted (writer commit).
    Full,
    /// `full` deasserted (writer commit).
    NotFull,
    /// `empty` asserted (reader commit).
    Empty,
    /// `empty` deasserted (reader commit).
    NotEmpty,
}

impl FifoEventKind {
    /// Every kind, in the order of their interned ids.
    pub const ALL: [FifoEventKind; 9] = [
        FifoEventKind::Write,
        FifoEventKind::Visible,
        FifoEventKind::Read,
        FifoEventKind::Output,
        FifoEventKind::Consume,
        FifoEventKind::Full,
        FifoEventKind::NotFull,
        FifoEventKind::Empty,
        FifoEventKind::NotEmpty,
    ];

    /// The name used in every output format.
    pub fn name(self) -> &'static str {
        match self {
            FifoEventKind::Write => "write",
            FifoEventKind::Visible => "visible",
            FifoEventKind::Read => "read",
            FifoEventKind::Output => "output",
            FifoEventKind::Consume => "consume",
            FifoEventKind::Full => "full",
            FifoEventKind::NotFull => "not_full",
            FifoEventKind::Empty => "empty",
            FifoEventKind::NotEmpty => "not_empty",
        }
    }

    /// Parses [`FifoEventKind::name`].
    pub fn from_name(name: &str) -> Option<FifoEventKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the event happens in a unit's tick (evaluate) rather than in
    /// the FIFO's commit; it decides the canonical order inside an instant.
    pub fn in_tick(self) -> bool {
        matches!(
            self,
            FifoEventKind::Write | FifoEventKind::Read | FifoEventKind::Consume
        )
    }

    /// Whether the event is on the writer's side of the FIFO.
    pub fn writer_side(self) -> bool {
        matches!(
            self,
            FifoEventKind::Write | FifoEventKind::Full | FifoEventKind::NotFull
        )
    }
}

/// A CDC FIFO event, tied to a transaction so an item can be followed from
/// writer to reader. Flag changes carry the transaction that caused them.
#[derive(Clone, Copy, Debug)]
pub struct FifoRecord {
    /// FIFO index.
    pub fifo: u32,
    /// What happened.
    pub kind: FifoEventKind,
    /// Local cycle of the side's domain (writer side or reader side).
    pub cycle: u64,
    /// Exact time of the edge.
    pub time: Time,
    /// The unit whose tick did it (tick events); ignored for commit events.
    pub unit: u32,
    /// Transaction id: the item's sequence number in the FIFO.
    pub txn: u64,
    /// Items in storage after the event.
    pub occupancy: u32,
}

/// A counter sample.
#[derive(Clone, Copy, Debug)]
pub struct CounterRecord {
    /// Counter index.
    pub counter: u32,
    /// Local cycle of the counter's domain.
    pub cycle: u64,
    /// Exact time of the edge.
    pub time: Time,
    /// Sampled value (counters are `u64`).
    pub value: u64,
}

/// A unit ticked at an edge; recorders that draw activity slices draw one
/// from this edge to the domain's next edge.
#[derive(Clone, Copy, Debug)]
pub struct TickRecord {
    /// Unit index.
    pub unit: u32,
    /// Local cycle of the unit's domain.
    pub cycle: u64,
    /// Exact time of the edge.
    pub time: Time,
}

/// A register or port took a new value at a commit.
#[derive(Clone, Copy, Debug)]
pub struct SignalRecord {
    /// Signal index.
    pub signal: u32,
    /// Exact time of the commit.
    pub time: Time,
    /// New value (the low `width` bits count).
    pub value: u64,
}
