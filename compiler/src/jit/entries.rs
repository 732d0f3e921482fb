//! A function's view of one of its context's per-port tables (FIFO states,
//! channel states): the entry of each port its units use, loaded at the
//! function's entry when they are few, else where each operation runs.
//!
//! Why both. Loaded once at entry, an entry stays in a register (or one
//! spill slot) across the function, which a run-ahead loop then never
//! reloads. But every preloaded entry is live across the whole function,
//! and a group of hundreds of units compiled inline (issue 16) would then
//! hold hundreds of values live at every point: register allocation time
//! and memory grew with their product (a 900-stage channel pipeline
//! without wires: 2.9 s and 261 MB to compile). Past [`PRELOADED_PORTS`]
//! only the table's address is loaded at entry and each operation loads its
//! entry, one load from a table the function just used.

use cranelift_codegen::ir::{InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;
use std::collections::HashMap;

use super::flags;

/// Ports whose entries a function loads at its entry; a function that
/// uses more loads each entry where it is used.
const PRELOADED_PORTS: usize = 32;

/// The entries of one table for one function (see the module doc).
#[derive(Default)]
pub(super) struct Entries {
    /// The table's address, loaded at entry; `None` when no port is used.
    table: Option<Value>,
    /// Per used port: its entry when preloaded.
    ports: HashMap<u32, Option<Value>>,
}

impl Entries {
    /// At the function's entry: the table at byte `offset` of the context
    /// `ctx`, for `ports`.
    pub(super) fn prepare(
        b: &mut FunctionBuilder,
        ptr: Type,
        ctx: Value,
        offset: i32,
        ports: Vec<u32>,
    ) -> Entries {
        if ports.is_empty() {
            return Entries::default();
        }
        let table = b.ins().load(ptr, flags(), ctx, offset);
        let preload = ports.len() <= PRELOADED_PORTS;
        let ports = ports
            .into_iter()
            .map(|port| {
                let entry = preload.then(|| Self::load(b, ptr, table, port));
                (port, entry)
            })
            .collect();
        Entries {
            table: Some(table),
            ports,
        }
    }

    /// The entry of `port`, emitting its load here when it was not
    /// preloaded; `None` when the function does not use `port`.
    pub(super) fn get(&self, b: &mut FunctionBuilder, ptr: Type, port: u32) -> Option<Value> {
        match (self.ports.get(&port)?, self.table) {
            (Some(entry), _) => Some(*entry),
            (None, Some(table)) => Some(Self::load(b, ptr, table, port)),
            (None, None) => None,
        }
    }

    fn load(b: &mut FunctionBuilder, ptr: Type, table: Value, port: u32) -> Value {
        b.ins().load(ptr, flags(), table, port as i32 * 8)
    }
}
