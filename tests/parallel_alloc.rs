//! A parallel run's workers allocate nothing per instant in their steady
//! state: a counting global allocator (every thread) watches the same
//! design run with two workers for 100 us and for 1 ms of simulated time;
//! the longer run, with ten times the instants, allocates no more than the
//! shorter one plus a small constant (building, threads, the report).

use std::path::Path;
use std::sync::atomic::Ordering;

use chronon_compiler::config::{ExecConfig, ParallelConfig, Placement, Threads};
use chronon_compiler::record::RecordOptions;
use chronon_compiler::run::{PrintBuffer, PrintTo, RunOptions, RunReport, run_recorded};
use chronon_compiler::simulate::EngineKind;
use chronon_lang::span::SourceMap;
use chronon_suite::designs::parse_run_args;

#[path = "../runtime/tests/support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{ALLOCATIONS, WATCHING_ALL};

/// `examples/independent_models.chr` run to `until` on two workers: the
/// report and the allocations the whole run made.
fn counted_run(until: &str) -> (RunReport, u64) {
    counted_run_of("examples/independent_models.chr", until, PrintTo::Quiet)
}

/// `path` run to `until` on two workers, its lines to `print`: the report
/// and the allocations the whole run made.
fn counted_run_of(path: &str, until: &str, print: PrintTo) -> (RunReport, u64) {
    counted_recorded_run(path, until, print, &RecordOptions::default())
}

/// [`counted_run_of`], recording what `record` asks.
fn counted_recorded_run(
    path: &str,
    until: &str,
    print: PrintTo,
    record: &RecordOptions,
) -> (RunReport, u64) {
    // The counter counts every thread: one counted run at a time.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let text = std::fs::read_to_string(path).expect("readable");
    let args = parse_run_args(Path::new(path), &format!("--until {until}"));
    let mut sources = SourceMap::new();
    sources.add(path.to_string(), text);
    let options = RunOptions {
        params: args.params,
        exec: ExecConfig {
            parallel: ParallelConfig {
                threads: Threads::Fixed(2),
                placement: Placement::Planner,
                chaos: None,
            },
            ..ExecConfig::default()
        },
        print,
        ..RunOptions::new(EngineKind::Jit, args.stop)
    };
    ALLOCATIONS.store(0, Ordering::SeqCst);
    WATCHING_ALL.store(true, Ordering::SeqCst);
    let report = run_recorded(&mut sources, &options, record, &mut |_, _| {});
    WATCHING_ALL.store(false, Ordering::SeqCst);
    let report = report.expect("runs");
    (report, ALLOCATIONS.load(Ordering::SeqCst))
}

#[test]
fn parallel_workers_do_not_allocate_per_instant() {
    let (short, short_allocs) = counted_run("100us");
    let (long, long_allocs) = counted_run("1ms");
    assert_eq!(short.parallel.workers, 2);
    assert_eq!(long.parallel.workers, 2);
    assert!(
        long.instants >= 9 * short.instants,
        "{} {}",
        long.instants,
        short.instants
    );
    // Building the workers' simulators allocates: the counter counts.
    assert!(short_allocs > 1_000, "{short_allocs} allocations counted");
    // Per-instant allocation would add about 9 x 205,000 here.
    let extra = long_allocs.saturating_sub(short_allocs);
    assert!(
        extra < 2_000,
        "{extra} more allocations for {} more instants ({short_allocs} -> {long_allocs})",
        long.instants - short.instants
    );
}

/// The same for a run that prints on every edge of three clocks: a worker
/// formats each line into a reused buffer and batch (the merge hands
/// written batches back emptied), so seven times the lines cost no more
/// allocations than the output buffer's own growth and a few per slice.
#[test]
fn printing_workers_do_not_allocate_per_line() {
    let path = "compiler/tests/print/many_parallel.chr";
    let (short, short_lines) = {
        let out = PrintBuffer::default();
        let run = counted_run_of(path, "20us", PrintTo::Buffer(out.clone()));
        (run, out.contents().len())
    };
    let (long, long_lines) = {
        let out = PrintBuffer::default();
        let run = counted_run_of(path, "150us", PrintTo::Buffer(out.clone()));
        (run, out.contents().len())
    };
    assert_eq!(long.0.parallel.workers, 2);
    assert!(
        long_lines > 6 * short_lines,
        "{short_lines} -> {long_lines} bytes printed"
    );
    let extra = long.1.saturating_sub(short.1);
    // A line's allocation would add about 240,000 here.
    assert!(
        extra < 2_000,
        "{extra} more allocations for {} more instants ({} -> {})",
        long.0.instants - short.0.instants,
        short.1,
        long.1
    );
}

/// The same for a run that records every FIFO event, tick slice, counter
/// sample and register change into all four writers: each worker's keyed
/// streams are handed over per slice and come back emptied, the merge
/// copies records into the writers' recycled batches, so ten times the
/// records cost no more allocations than a few per slice.
#[test]
fn recording_workers_do_not_allocate_per_record() {
    let dir = std::env::temp_dir().join(format!("chronon-alloc-{}", std::process::id()));
    let record = |name: &str| RecordOptions {
        trace_dir: Some(dir.join(name).join("trace")),
        perfetto: Some(dir.join(name).join("run.pftrace")),
        vcd: Some(dir.join(name).join("run.vcd")),
        counters: Some(dir.join(name).join("counters.csv")),
        ticks: true,
        ..RecordOptions::default()
    };
    let path = "examples/independent_models.chr";
    let (short, short_allocs) = counted_recorded_run(path, "20us", PrintTo::Quiet, &record("s"));
    let (long, long_allocs) = counted_recorded_run(path, "200us", PrintTo::Quiet, &record("l"));
    let size =
        |name: &str| std::fs::metadata(dir.join(name).join("run.pftrace")).map_or(0, |m| m.len());
    let (short_bytes, long_bytes) = (size("s"), size("l"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(long.parallel.workers, 2);
    assert!(long.recording.as_ref().is_some_and(|r| r.error.is_none()));
    assert!(
        long_bytes > 8 * short_bytes,
        "{short_bytes} -> {long_bytes} Perfetto bytes"
    );
    let extra = long_allocs.saturating_sub(short_allocs);
    assert!(
        extra < 3_000,
        "{extra} more allocations for {} more instants ({short_allocs} -> {long_allocs})",
        long.instants - short.instants
    );
}
