//! Writers allocate nothing per record once warm: a counting allocator
//! watches this thread while a long stream goes through each writer.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::PathBuf;

use chronon_record::csv::CsvWriter;
use chronon_record::perfetto::{PerfettoConfig, PerfettoWriter};
use chronon_record::text::TextWriter;
use chronon_record::vcd::{VcdConfig, VcdWriter};
use chronon_record::*;
use common::*;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// only addition is a thread-local counter that itself never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: the caller upholds `alloc`'s contract, passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: the caller upholds `realloc`'s contract, passed on as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Allocations made while `records` go through `writer`, after a warm-up
/// run of the first instants.
fn steady_state(writer: &mut dyn Recorder, warm: &[Rec], records: &[Rec]) -> u64 {
    feed(writer, warm).expect("warm-up");
    let before = allocations();
    feed(writer, records).expect("record");
    allocations() - before
}

#[test]
fn writers_do_not_allocate_per_record() {
    let w = workload(30_000, 6);
    // Split at an instant boundary well into the run.
    let split = w.records.len() / 10;
    let split = (split..w.records.len())
        .find(|&i| w.records[i].time() != w.records[split].time())
        .expect("later instant");
    let (warm, rest) = w.records.split_at(split);
    let sink = || -> Box<dyn RecordOutput> { Box::new(std::io::sink()) };
    let name = PathBuf::from("<sink>");
    let dir = scratch("no-alloc");

    let mut text =
        TextWriter::with_outputs(&dir, &w.schema, (0..4).map(|_| sink()).collect()).expect("text");
    assert_eq!(steady_state(&mut text, warm, rest), 0, "text writer");
    let config = PerfettoConfig {
        compress: false,
        tick_slices: true,
    };
    let mut perfetto =
        PerfettoWriter::with_output(sink(), name.clone(), &w.schema, config).expect("perfetto");
    assert_eq!(
        steady_state(&mut perfetto, warm, rest),
        0,
        "Perfetto writer"
    );
    let mut vcd = VcdWriter::with_output(sink(), name.clone(), &w.schema, &VcdConfig::default())
        .expect("vcd");
    assert_eq!(steady_state(&mut vcd, warm, rest), 0, "VCD writer");
    let mut csv = CsvWriter::with_output(sink(), name.clone(), &w.schema).expect("csv");
    assert_eq!(steady_state(&mut csv, warm, rest), 0, "CSV writer");

    // Compressed Perfetto allocates per 256 KiB batch, never per record.
    let config = PerfettoConfig {
        compress: true,
        tick_slices: true,
    };
    let mut zipped =
        PerfettoWriter::with_output(sink(), name, &w.schema, config).expect("perfetto");
    let count = steady_state(&mut zipped, warm, rest);
    assert!(
        count * 1000 < rest.len() as u64,
        "{count} allocations for {} records",
        rest.len()
    );
}

/// Events with arguments wider than 64 bits (decimals built on the stack)
/// allocate nothing per record either, in the text and Perfetto writers.
#[test]
fn wide_arguments_do_not_allocate() {
    let mut schema = workload(10, 6).schema;
    schema.events.push(EventInfo {
        signed_widths: vec![0, 1024, 0],
        wide_widths: vec![128, 1024, 0],
        ..EventInfo::plain("wide", &["a", "s", "n"])
    });
    let event = schema.events.len() as u32 - 1;
    let records: Vec<Rec> = (0..20_000u64)
        .map(|k| Rec::Trace {
            domain: 0,
            cycle: k,
            time: schema.edge_time(0, k).expect("in range"),
            unit: 0,
            event,
            args: (0..19)
                .map(|i| k.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i)
                .collect(),
        })
        .collect();
    let (warm, rest) = records.split_at(1_000);
    let sink = || -> Box<dyn RecordOutput> { Box::new(std::io::sink()) };
    let dir = scratch("no-alloc-wide");
    let mut text =
        TextWriter::with_outputs(&dir, &schema, (0..4).map(|_| sink()).collect()).expect("text");
    assert_eq!(steady_state(&mut text, warm, rest), 0, "text writer");
    let config = PerfettoConfig {
        compress: false,
        tick_slices: false,
    };
    let mut perfetto =
        PerfettoWriter::with_output(sink(), PathBuf::from("<sink>"), &schema, config)
            .expect("perfetto");
    assert_eq!(
        steady_state(&mut perfetto, warm, rest),
        0,
        "Perfetto writer"
    );
}
