//! Text logs and their merge, checked against an order computed here
//! independently from the records.

mod common;

use std::cmp::Ordering;
use std::fs;

use chronon_record::merge::{MergeError, merge};
use chronon_record::text::{MANIFEST, Manifest, TextWriter};
use chronon_record::*;
use common::*;

/// Exact time text, formatted independently of the crate.
/// `W` or `W+R/D` with `R/D` in lowest terms (Euclid's gcd here, the
/// writers' own is binary).
fn time_text(t: Time) -> String {
    fn gcd(a: u128, b: u128) -> u128 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    let (num, den) = (t.num(), u128::from(t.den()));
    let rem = num % den;
    if rem == 0 {
        format!("{}", num / den)
    } else {
        let g = gcd(rem, den);
        format!("{}+{}/{}", num / den, rem / g, den / g)
    }
}

fn cmp_time(a: Time, b: Time) -> Ordering {
    (a.num() * u128::from(b.den())).cmp(&(b.num() * u128::from(a.den())))
}

/// The merged lines, in the order contract §7 and the merge doc define.
fn expected_merge(w: &Workload) -> Vec<String> {
    let s = &w.schema;
    // Canonical unit order: paths compared segment by segment, done here by
    // sorting with '.' mapped below every other character.
    let mut by_path: Vec<(Vec<u8>, usize)> = s
        .units
        .iter()
        .enumerate()
        .map(|(i, u)| {
            (
                u.path
                    .bytes()
                    .map(|b| if b == b'.' { 0 } else { b })
                    .collect(),
                i,
            )
        })
        .collect();
    by_path.sort();
    let mut rank = vec![0; s.units.len()];
    for (r, (_, u)) in by_path.iter().enumerate() {
        rank[*u] = r;
    }
    let mut keyed = Vec::new();
    for (seq, r) in w.records.iter().enumerate() {
        let (time, domain, phase, slot, line) = match r {
            Rec::Trace {
                domain,
                cycle,
                time,
                unit,
                event,
                args,
            } => {
                let e = &s.events[*event as usize];
                let mut line = format!("{cycle} T {} {}", s.units[*unit as usize].path, e.name);
                for (name, value) in e.args.iter().zip(args) {
                    line += &format!(" {name}={value}");
                }
                (*time, *domain, 0, rank[*unit as usize], line)
            }
            Rec::Fifo(f) => {
                let info = &s.fifos[f.fifo as usize];
                let writer = matches!(
                    f.kind,
                    FifoEventKind::Write | FifoEventKind::Full | FifoEventKind::NotFull
                );
                let tick = matches!(
                    f.kind,
                    FifoEventKind::Write | FifoEventKind::Read | FifoEventKind::Consume
                );
                let domain = if writer {
                    info.writer_domain
                } else {
                    info.reader_domain
                };
                let mut line = format!(
                    "{} F {} {} txn={} occ={}",
                    f.cycle,
                    info.path,
                    f.kind.name(),
                    f.txn,
                    f.occupancy
                );
                if tick {
                    line += &format!(" unit={}", s.units[f.unit as usize].path);
                }
                let (phase, slot) = if tick {
                    (0, rank[f.unit as usize])
                } else {
                    (1, f.fifo as usize)
                };
                (f.time, domain, phase, slot, line)
            }
            Rec::Counter(c) => {
                let info = &s.counters[c.counter as usize];
                (
                    c.time,
                    info.domain,
                    2,
                    c.counter as usize,
                    format!("{} C {} {}", c.cycle, info.name, c.value),
                )
            }
            Rec::Tick(_) | Rec::Signal(_) => continue,
        };
        keyed.push((time, domain, phase, slot, seq, line));
    }
    keyed.sort_by(|a, b| cmp_time(a.0, b.0).then((a.1, a.2, a.3, a.4).cmp(&(b.1, b.2, b.3, b.4))));
    keyed
        .into_iter()
        .map(|(time, domain, _, _, _, line)| {
            let (cycle, rest) = line.split_once(' ').expect("cycle first");
            format!(
                "{}ps {} {cycle} {rest}",
                time_text(time),
                s.domains[domain as usize].name
            )
        })
        .collect()
}

#[test]
fn merge_reproduces_the_canonical_global_order() {
    for (instants, seed) in [(1, 1), (50, 7), (3_000, 42)] {
        let w = workload(instants, seed);
        let dir = scratch(&format!("text-merge-{instants}-{seed}"));
        let mut writer = TextWriter::create(&dir, &w.schema).expect("create");
        feed(&mut writer, &w.records).expect("record");
        writer.finish(&DropCounts::default()).expect("finish");

        let mut merged = Vec::new();
        let stats = merge(&dir, &mut merged).expect("merge");
        let merged = String::from_utf8(merged).expect("utf8");
        let got: Vec<&str> = merged.lines().collect();
        let want = expected_merge(&w);
        assert_eq!(got.len(), want.len(), "record count, {instants} instants");
        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, e, "merged line {i}, {instants} instants seed {seed}");
        }
        assert!(stats.complete);
        assert_eq!(stats.records as usize, want.len());
        assert_eq!(stats.torn_lines, 0);

        let manifest: Manifest =
            serde_json::from_slice(&fs::read(dir.join(MANIFEST)).expect("manifest")).expect("json");
        assert_eq!(manifest.schema, w.schema);
        assert_eq!(manifest.records.iter().sum::<u64>() as usize, want.len());
    }
}

#[test]
fn logs_hold_exact_times_per_domain() {
    let w = workload(200, 3);
    let dir = scratch("text-exact");
    let mut writer = TextWriter::create(&dir, &w.schema).expect("create");
    feed(&mut writer, &w.records).expect("record");
    writer.finish(&DropCounts::default()).expect("finish");
    let slow = fs::read_to_string(dir.join("02-slow.log")).expect("slow log");
    let mut lines = slow.lines();
    assert_eq!(
        lines.next(),
        Some("# chronon text log v1: domain slow period 1094+42/457ps phase 137ps")
    );
    for line in lines {
        let mut f = line.split(' ');
        let cycle: u64 = f.next().expect("cycle").parse().expect("number");
        let time = f.next().expect("time");
        assert_eq!(time, format!("{}ps", time_text(edge(2, cycle))), "{line}");
    }
}

#[test]
fn merge_rejects_bad_logs_and_skips_a_torn_line() {
    let w = workload(20, 5);
    let dir = scratch("text-bad");
    let mut writer = TextWriter::create(&dir, &w.schema).expect("create");
    feed(&mut writer, &w.records).expect("record");
    writer.finish(&DropCounts::default()).expect("finish");
    let log = dir.join("03-quad.log");
    let good = fs::read_to_string(&log).expect("log");

    fs::write(&log, format!("{good}99 0ps C fast.ops 1\n")).expect("write");
    match merge(&dir, &mut Vec::new()) {
        Err(MergeError::Line { line, message, .. }) => {
            assert_eq!(line as usize, good.lines().count() + 1);
            assert!(message.contains("backwards"), "{message}");
        }
        other => panic!("expected a line error, got {other:?}"),
    }

    fs::write(&log, format!("{good}99 100000000ps C fast.o")).expect("write");
    let stats = merge(&dir, &mut Vec::new()).expect("merge");
    assert_eq!(stats.torn_lines, 1);

    fs::write(&log, format!("{good}1 250ps X what\n")).expect("write");
    assert!(matches!(
        merge(&dir, &mut Vec::new()),
        Err(MergeError::Line { .. })
    ));
}

/// A recording its run never closed (the manifest says incomplete, one
/// log stops early and ends in a torn line) is merged only up to the time
/// every domain's log reached, and the merge says how much it left out.
#[test]
fn an_incomplete_recording_merges_up_to_the_time_every_domain_reached() {
    let w = workload(400, 7);
    let dir = scratch("text-incomplete");
    let mut writer = TextWriter::create(&dir, &w.schema).expect("create");
    feed(&mut writer, &w.records).expect("record");
    writer.finish(&DropCounts::default()).expect("finish");
    let mut whole = Vec::new();
    let full = merge(&dir, &mut whole).expect("merge");
    assert!(full.complete && full.horizon.is_none() && full.beyond_horizon == 0);

    let manifest = dir.join("manifest.json");
    let text = fs::read_to_string(&manifest).expect("manifest");
    fs::write(
        &manifest,
        text.replace("\"complete\": true", "\"complete\": false"),
    )
    .expect("write");
    let log = dir.join("00-fast.log");
    let lines = fs::read_to_string(&log).expect("log");
    // Cut at an instant's end: the domain's later instants are lost.
    let all: Vec<&str> = lines.lines().collect();
    let time = |l: &str| l.split(' ').nth(1).map(str::to_string);
    let mut n = all.len() / 3;
    while n < all.len() && time(all[n]) == time(all[n - 1]) {
        n += 1;
    }
    let keep = &all[..n];
    let last_time = keep
        .iter()
        .rev()
        .find(|l| !l.starts_with('#'))
        .and_then(|l| l.split(' ').nth(1))
        .expect("a record")
        .to_string();
    fs::write(&log, format!("{}\n17 999999", keep.join("\n"))).expect("write");

    let mut cut = Vec::new();
    let stats = merge(&dir, &mut cut).expect("merge");
    let horizon = stats.horizon.expect("a horizon");
    assert_eq!(format!("{horizon}ps"), last_time);
    assert_eq!(stats.torn_lines, 1);
    assert!(stats.beyond_horizon > 0);
    let cut = String::from_utf8(cut).expect("text");
    let whole = String::from_utf8(whole).expect("text");
    // What is kept is the complete merge's prefix up to the horizon, with
    // the shortened domain's own later records gone.
    let expected: Vec<&str> = whole
        .lines()
        .filter(|l| {
            let t = Time::parse(
                l.split(' ')
                    .next()
                    .and_then(|t| t.strip_suffix("ps"))
                    .expect("time"),
            );
            t.is_some_and(|t| t <= horizon)
        })
        .collect();
    assert_eq!(cut.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn a_failing_log_stops_with_its_error_and_keeps_whole_lines() {
    let w = workload(40_000, 11);
    for limit in [0, 1_000, 1_500_000] {
        let dir = scratch(&format!("text-fail-{limit}"));
        let failing = FailAfter::new(limit);
        let outputs: Vec<Box<dyn RecordOutput>> = (0..4)
            .map(|d| -> Box<dyn RecordOutput> {
                if d == 0 {
                    Box::new(failing.clone())
                } else {
                    Box::new(FailAfter::new(usize::MAX))
                }
            })
            .collect();
        let mut writer = TextWriter::with_outputs(&dir, &w.schema, outputs).expect("create");
        let err = feed(&mut writer, &w.records)
            .and_then(|()| writer.finish(&DropCounts::default()))
            .expect_err("the log fails");
        match &err {
            RecordError::Io { path, source } => {
                assert!(path.ends_with("00-fast.log"), "{}", path.display());
                assert_eq!(source.kind(), std::io::ErrorKind::StorageFull);
            }
            other => panic!("expected an I/O error, got {other}"),
        }
        assert!(
            err.to_string().contains("00-fast.log") && err.to_string().contains("device full"),
            "{err}"
        );
        let again = writer
            .finish(&DropCounts::default())
            .expect_err("stays stopped");
        assert!(
            matches!(
                again,
                RecordError::Stopped {
                    kind: std::io::ErrorKind::StorageFull,
                    ..
                }
            ),
            "{again}"
        );

        let bytes = failing.contents();
        assert!(bytes.len() <= limit);
        assert!(
            bytes.is_empty() || bytes.ends_with(b"\n"),
            "limit {limit}: torn tail"
        );
        let text = String::from_utf8(bytes).expect("utf8");
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split(' ').collect();
            assert!(
                fields.len() >= 4 && fields[1].ends_with("ps"),
                "bad line {line:?}"
            );
        }
        let manifest: Manifest =
            serde_json::from_slice(&fs::read(dir.join(MANIFEST)).expect("manifest")).expect("json");
        assert!(!manifest.complete);
    }
}
