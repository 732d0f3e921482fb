//! Recording options that would silently record nothing: a
//! `--trace-filter` term naming no unit or event of the design, a
//! `--vcd-signals` glob that matches no signal, `--trace-ticks` without a
//! Perfetto trace. Each is a warning in the run's report, not an error: the
//! run itself is still what was asked.

use chronon_record::vcd::glob_match;
use chronon_record::{FifoEventKind, Schema};

use super::RecordOptions;

/// The warnings `options` deserve for a design with this `schema`.
pub fn warnings(schema: &Schema, options: &RecordOptions) -> Vec<String> {
    let mut out = Vec::new();
    let filter = &options.filter;
    for glob in &filter.units {
        if !schema.units.iter().any(|u| glob_match(glob, &u.path)) {
            out.push(format!(
                "--trace-filter unit={glob} matches no unit instance, so it keeps nothing"
            ));
        }
    }
    for name in &filter.events {
        let known = schema.events.iter().any(|e| e.name == *name)
            || FifoEventKind::from_name(name).is_some_and(|_| !schema.fifos.is_empty());
        if !known {
            let names: Vec<&str> = schema.events.iter().map(|e| e.name.as_str()).collect();
            out.push(format!(
                "--trace-filter event={name}: the design has no trace or FIFO event of that \
                 name, so it keeps nothing (its trace events: {})",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ));
        }
    }
    if options.vcd.is_some() {
        let mut names = schema.signals.iter().map(|s| {
            let unit = schema
                .units
                .get(s.unit as usize)
                .map_or("", |u| u.path.as_str());
            format!("{unit}.{}", s.name)
        });
        let all: Vec<String> = names
            .by_ref()
            .chain(schema.fifos.iter().map(|f| format!("{}.occupancy", f.path)))
            .collect();
        for glob in &options.vcd_signals {
            if !all.iter().any(|n| glob_match(glob, n)) {
                out.push(format!(
                    "--vcd-signals {glob} matches no register or FIFO occupancy"
                ));
            }
        }
    }
    if options.ticks && options.perfetto.is_none() {
        out.push("--trace-ticks records tick slices only in a Perfetto trace (--perfetto)".into());
    }
    out
}
