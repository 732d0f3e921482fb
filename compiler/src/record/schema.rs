//! The recorders' [`Schema`] of a lowered program, and the maps from the
//! runtime's ids and the program's slots to the schema's indices.

use chronon_record::{
    CounterInfo, DomainInfo, EventInfo, FifoInfo, Schema, SignalInfo, Time, UnitInfo,
};

use crate::ir::{Picos, Program};

/// A register slot that can be dumped to VCD.
#[derive(Clone, Debug)]
pub struct RegisterSignal {
    /// The slot holding the current value.
    pub slot: u32,
    /// Owning unit.
    pub unit: u32,
}

/// A counter and the slot that holds it.
#[derive(Clone, Debug)]
pub struct CounterSlot {
    /// The slot.
    pub slot: u32,
    /// Owning unit.
    pub unit: u32,
}

/// What a recording of `program` declares, with the slots behind signals
/// and counters (in schema order).
pub struct ProgramSchema {
    /// The schema every writer gets.
    pub schema: Schema,
    /// Per schema signal: its register slot.
    pub signals: Vec<RegisterSignal>,
    /// Per schema counter: its slot.
    pub counters: Vec<CounterSlot>,
}

/// Builds the schema; runtime times are ticks of `ticks_per_ps` per ps, and
/// the schema's domain times share that denominator with the records.
pub fn program_schema(
    program: &Program,
    design: &str,
    ticks_per_ps: u64,
) -> Result<ProgramSchema, String> {
    let exact = |ps: &Picos, what: &str| -> Result<Time, String> {
        let ticks = ps * Picos::from_integer(i128::from(ticks_per_ps));
        u128::try_from(ticks.to_integer())
            .ok()
            .filter(|_| ticks.is_integer())
            .and_then(|t| Time::new(t, ticks_per_ps))
            .ok_or_else(|| format!("{what} is not a whole number of time-base ticks"))
    };
    let domains = program
        .domains
        .iter()
        .map(|d| {
            Ok(DomainInfo {
                name: d.name.clone(),
                period: exact(&d.period_ps, &format!("the period of `{}`", d.name))?,
                phase: exact(&d.phase_ps, &format!("the phase of `{}`", d.name))?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let units = program
        .units
        .iter()
        .map(|u| UnitInfo {
            path: u.path.clone(),
            domain: u.domain,
        })
        .collect();
    let events = program
        .traces
        .iter()
        .map(|t| {
            if t.print.is_some() {
                // Never recorded (the recording sink drops its records);
                // declared with no arguments so that ids stay trace ids.
                return EventInfo::plain(&t.name, &[]);
            }
            event_info(t)
        })
        .collect();
    let fifos = program
        .fifos
        .iter()
        .map(|f| {
            let (w, r) = (
                &program.ports[f.from as usize],
                &program.ports[f.to as usize],
            );
            let reader = &program.units[r.unit as usize];
            FifoInfo {
                path: format!("{}.{}", reader.path, r.name),
                writer_domain: program.units[w.unit as usize].domain,
                reader_domain: reader.domain,
                depth: f.depth,
            }
        })
        .collect();
    let mut counters = Vec::new();
    let mut counter_slots = Vec::new();
    for c in &program.counters {
        let unit = &program.units[c.unit as usize];
        counters.push(CounterInfo {
            name: format!("{}.{}", unit.path, c.name),
            domain: unit.domain,
        });
        counter_slots.push(CounterSlot {
            slot: c.slot,
            unit: c.unit,
        });
    }
    let mut signals = Vec::new();
    let mut signal_slots = Vec::new();
    // A value wider than 64 bits is one signal per limb, which a waveform
    // joins (`SignalInfo::limb`).
    // Signals are named by their slots (`mem.3`: a bracket in a VCD name
    // reads as a bit select), a wide register by its name, a wide element
    // or field by its first limb's slot.
    for leaf in crate::simulate::register_leaves(program) {
        let prefix = format!("{}.", program.units[leaf.unit as usize].path);
        let s = &program.slots[leaf.slot as usize];
        let flat = s.name.strip_prefix(&prefix).unwrap_or(&s.name);
        let lone_wide = leaf.wide.is_some() && !leaf.name.contains(['.', '[']);
        let name = if lone_wide { &leaf.name } else { flat };
        let (width, limbs) = match leaf.wide {
            Some((w, _)) => (w, w.div_ceil(64)),
            None => (u32::from(s.ty.width), 1),
        };
        for limb in 0..limbs {
            signals.push(SignalInfo {
                unit: leaf.unit,
                name: name.to_string(),
                width,
                limb,
            });
            signal_slots.push(RegisterSignal {
                slot: leaf.slot + limb,
                unit: leaf.unit,
            });
        }
    }
    let schema = Schema {
        design: design.to_string(),
        domains,
        units,
        events,
        fifos,
        counters,
        signals,
    };
    schema.validate().map_err(|e| e.to_string())?;
    Ok(ProgramSchema {
        schema,
        signals: signal_slots,
        counters: counter_slots,
    })
}

/// A trace point's event: one argument per scalar (aggregates are
/// flattened by then), signed by its own type (bools and enums are
/// unsigned types), but one per wide value, whose limbs are consecutive
/// scalars. All unsigned, or none wide, stays the empty default.
fn event_info(t: &crate::ir::TracePoint) -> EventInfo {
    let (mut args, mut signed, mut wide) = (Vec::new(), Vec::new(), Vec::new());
    let mut wides = t.wide.iter().peekable();
    let mut i = 0;
    while let Some((name, ty)) = t.args.get(i) {
        match wides.next_if(|w| w.first as usize == i) {
            Some(w) => {
                args.push(w.name.clone());
                signed.push(if w.signed { w.width } else { 0 });
                wide.push(w.width);
                i += w.width.div_ceil(64) as usize;
            }
            None => {
                args.push(name.clone());
                signed.push(if ty.signed { u32::from(ty.width) } else { 0 });
                wide.push(0);
                i += 1;
            }
        }
    }
    let or_empty = |v: Vec<u32>| {
        if v.iter().any(|&w| w != 0) {
            v
        } else {
            Vec::new()
        }
    };
    EventInfo {
        name: t.name.clone(),
        args,
        signed_widths: or_empty(signed),
        wide_widths: or_empty(wide),
    }
}
