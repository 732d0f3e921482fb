//! The Perfetto recorder.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::ZlibEncoder;
use prost::Message;

use super::encode::{Event, Scratch, put_event_packet, whole_packets};
use super::proto::*;
use crate::error::RecordError;
use crate::output::{ChunkedOutput, RecordOutput};
use crate::record::{CounterRecord, FifoEventKind, FifoRecord, TickRecord, TraceRecord};
use crate::schema::Schema;
use crate::sink::{DropCounts, FifoInterest, Interest, Recorder};
use crate::time::Time;

/// The packet sequence all of Chronon's packets are on.
pub const SEQUENCE_ID: u32 = 1;
/// The sequence-scoped clock: incremental nanoseconds, anchored at
/// BOOTTIME 0.
pub const CLOCK_ID: u32 = 64;

/// Track uuids: the high bits say what the track is, the low bits which.
pub mod uuid {
    /// The design's process track.
    pub const PROCESS: u64 = 1;
    /// A domain's track.
    pub fn domain(d: u32) -> u64 {
        1 << 32 | u64::from(d)
    }
    /// A unit's track.
    pub fn unit(u: u32) -> u64 {
        2 << 32 | u64::from(u)
    }
    /// A FIFO's writer-side (`reader == false`) or reader-side track.
    pub fn fifo(f: u32, reader: bool) -> u64 {
        3 << 32 | u64::from(f) << 1 | u64::from(reader)
    }
    /// A counter's track.
    pub fn counter(c: u32) -> u64 {
        4 << 32 | u64::from(c)
    }
    /// A FIFO's occupancy (0), full (1) and empty (2) counter tracks.
    pub fn fifo_counter(f: u32, which: u64) -> u64 {
        5 << 32 | u64::from(f) << 2 | which
    }
}

/// The flow that follows item `txn` of FIFO `fifo` from write to consume.
pub fn flow_id(fifo: u32, txn: u64) -> u64 {
    (u64::from(fifo) + 1) << 40 | (txn & ((1 << 40) - 1))
}

/// Options of the Perfetto recorder.
#[derive(Clone, Copy, Debug, Default)]
pub struct PerfettoConfig {
    /// Write packets in zlib `compressed_packets` batches.
    pub compress: bool,
    /// Draw a slice per unit tick, from its edge to the domain's next edge.
    pub tick_slices: bool,
}

/// Uncompressed bytes per compressed batch.
const BATCH: usize = 256 << 10;

/// Adds `name` to an interning table (made by `entry` from its id and
/// name) and returns its id: the table's position plus one, as Perfetto
/// reserves 0.
fn intern<T>(table: &mut Vec<T>, name: &str, entry: fn(u64, String) -> T) -> u64 {
    let iid = table.len() as u64 + 1;
    table.push(entry(iid, name.to_owned()));
    iid
}

/// The Perfetto recorder; records must arrive in time order.
pub struct PerfettoWriter {
    out: ChunkedOutput,
    config: PerfettoConfig,
    schema: Schema,
    batch: Vec<u8>,
    last_time: Time,
    last_ns: u64,
    event_iids: Vec<u64>,
    arg_iids: Vec<Vec<u64>>,
    fifo_iids: [u64; 9],
    tick_iid: u64,
    summary_iid: u64,
    misc_iids: HashMap<&'static str, u64>,
    /// `misc_iids["txn"]` and `["occupancy"]`, the argument names of every
    /// FIFO event, looked up once (a SipHash per event was 4% of the
    /// writer thread's time end to end).
    fifo_arg_iids: [u64; 2],
    scratch: Box<Scratch>,
    open_slices: Vec<Option<Time>>,
    earliest_end: Option<Time>,
    unit_ranks: Vec<u32>,
    /// Where the run stopped ([`Recorder::stop_at`]), if told.
    stop: Option<Time>,
}

impl PerfettoWriter {
    /// Creates (truncating) `path`.
    pub fn create(
        path: &Path,
        schema: &Schema,
        config: PerfettoConfig,
    ) -> Result<PerfettoWriter, RecordError> {
        schema.validate()?;
        let out = ChunkedOutput::create(path, whole_packets)?;
        Self::start(out, schema, config)
    }

    /// Writes to `output`; `name` names it in errors.
    pub fn with_output(
        output: Box<dyn RecordOutput>,
        name: PathBuf,
        schema: &Schema,
        config: PerfettoConfig,
    ) -> Result<PerfettoWriter, RecordError> {
        schema.validate()?;
        Self::start(
            ChunkedOutput::new(output, name, whole_packets),
            schema,
            config,
        )
    }

    fn start(
        out: ChunkedOutput,
        schema: &Schema,
        config: PerfettoConfig,
    ) -> Result<PerfettoWriter, RecordError> {
        // Interning ids start at 1: events, FIFO kinds, then fixed names.
        // Event names are not merged (each event has its own id); argument
        // names are, so every event with a `pc` argument shares one id.
        let mut event_names = Vec::new();
        let mut intern_event = |name: &str| {
            intern(&mut event_names, name, |iid, name| EventName {
                iid: Some(iid),
                name: Some(name),
            })
        };
        let event_iids = schema
            .events
            .iter()
            .map(|e| intern_event(&e.name))
            .collect();
        let fifo_iids = FifoEventKind::ALL.map(|k| intern_event(k.name()));
        let tick_iid = intern_event("tick");
        let summary_iid = intern_event("recording summary");
        let mut arg_names = Vec::new();
        let mut by_name: HashMap<String, u64> = HashMap::new();
        let mut intern_arg = |name: &str| {
            *by_name.entry(name.to_owned()).or_insert_with(|| {
                intern(&mut arg_names, name, |iid, name| DebugAnnotationName {
                    iid: Some(iid),
                    name: Some(name),
                })
            })
        };
        let arg_iids = schema
            .events
            .iter()
            .map(|e| e.args.iter().map(|a| intern_arg(a)).collect())
            .collect();
        let misc: [&'static str; 7] = [
            "txn",
            "occupancy",
            "dropped_trace",
            "dropped_fifo",
            "dropped_counter",
            "dropped_tick",
            "dropped_signal",
        ];
        let misc_iids: HashMap<&'static str, u64> =
            misc.iter().map(|&n| (n, intern_arg(n))).collect();
        let fifo_arg_iids = [misc_iids["txn"], misc_iids["occupancy"]];

        let mut writer = PerfettoWriter {
            out,
            config,
            schema: schema.clone(),
            batch: Vec::with_capacity(if config.compress {
                BATCH + BATCH / 4
            } else {
                0
            }),
            last_time: Time::ZERO,
            last_ns: 0,
            event_iids,
            arg_iids,
            fifo_iids,
            tick_iid,
            summary_iid,
            misc_iids,
            fifo_arg_iids,
            scratch: Scratch::new(),
            open_slices: vec![None; schema.units.len()],
            earliest_end: None,
            unit_ranks: schema.unit_ranks(),
            stop: None,
        };
        // The first packet clears incremental state and carries the clock
        // snapshot, the defaults and every interned name.
        writer.put_message(&TracePacket {
            trusted_packet_sequence_id: Some(SEQUENCE_ID),
            sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
            clock_snapshot: Some(ClockSnapshot {
                clocks: vec![
                    Clock {
                        clock_id: Some(CLOCK_BOOTTIME),
                        timestamp: Some(0),
                        ..Clock::default()
                    },
                    Clock {
                        clock_id: Some(CLOCK_ID),
                        timestamp: Some(0),
                        is_incremental: Some(true),
                        unit_multiplier_ns: Some(1),
                    },
                ],
                primary_trace_clock: Some(CLOCK_BOOTTIME),
            }),
            trace_packet_defaults: Some(TracePacketDefaults {
                timestamp_clock_id: Some(CLOCK_ID),
            }),
            interned_data: Some(InternedData {
                event_names,
                debug_annotation_names: arg_names,
            }),
            ..TracePacket::default()
        })?;
        for track in track_descriptors(schema, &writer.unit_ranks) {
            writer.put_message(&TracePacket {
                trusted_packet_sequence_id: Some(SEQUENCE_ID),
                track_descriptor: Some(track),
                ..TracePacket::default()
            })?;
        }
        Ok(writer)
    }

    fn put_message(&mut self, packet: &TracePacket) -> Result<(), RecordError> {
        let buf = self.packet_buf();
        buf.push(0x0a);
        packet
            .encode_length_delimited(buf)
            .expect("a Vec grows as needed");
        self.end_packet()
    }

    #[inline]
    fn packet_buf(&mut self) -> &mut Vec<u8> {
        if self.config.compress {
            &mut self.batch
        } else {
            self.out.buf()
        }
    }

    #[inline]
    fn end_packet(&mut self) -> Result<(), RecordError> {
        if self.config.compress {
            if self.batch.len() >= BATCH {
                self.seal_batch()?;
            }
            Ok(())
        } else {
            self.out.end_record()
        }
    }

    /// Compresses the batch into one `compressed_packets` packet.
    fn seal_batch(&mut self) -> Result<(), RecordError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let mut z = ZlibEncoder::new(
            Vec::with_capacity(self.batch.len() / 4),
            Compression::fast(),
        );
        z.write_all(&self.batch)
            .expect("writing to a Vec cannot fail");
        let compressed = z.finish().expect("writing to a Vec cannot fail");
        self.batch.clear();
        let buf = self.out.buf();
        buf.push(0x0a);
        TracePacket {
            compressed_packets: Some(compressed),
            ..TracePacket::default()
        }
        .encode_length_delimited(buf)
        .expect("a Vec grows as needed");
        self.out.end_record()
    }

    /// Checks time order and returns the timestamp delta for a packet at `t`,
    /// first closing every tick slice that ends at or before `t`.
    #[inline]
    fn advance(&mut self, t: Time) -> Result<u64, RecordError> {
        self.out.check()?;
        if self.earliest_end.is_some_and(|end| end <= t) {
            self.close_slices(Some(t))?;
        }
        self.step_to(t)
    }

    /// Always inlined: called for every packet, and the call's prologue
    /// and epilogue cost more than the common same-time case itself.
    #[inline(always)]
    fn step_to(&mut self, t: Time) -> Result<u64, RecordError> {
        // Most records share their instant's time, written with the same
        // parts: no comparison or division for them.
        if t.num() == self.last_time.num() && t.den() == self.last_time.den() {
            return Ok(0);
        }
        if t < self.last_time {
            return Err(out_of_order(t, self.last_time));
        }
        let Ok(ns) = u64::try_from(t.floor_ns()) else {
            return Err(time_overflow(t));
        };
        self.last_time = t;
        let delta = ns - self.last_ns;
        self.last_ns = ns;
        Ok(delta)
    }

    /// Ends open tick slices whose end is at or before `until` (all when
    /// `None`), in time order, then canonical order.
    fn close_slices(&mut self, until: Option<Time>) -> Result<(), RecordError> {
        loop {
            let next = self
                .open_slices
                .iter()
                .enumerate()
                .filter_map(|(u, end)| end.map(|e| (e, u)))
                .filter(|(e, _)| until.is_none_or(|t| *e <= t))
                .min_by(|(ea, ua), (eb, ub)| {
                    let key = |u: usize| (self.schema.units[u].domain, self.unit_ranks[u]);
                    ea.cmp(eb).then(key(*ua).cmp(&key(*ub)))
                });
            let Some((end, u)) = next else { break };
            self.open_slices[u] = None;
            let delta = self.step_to(end)?;
            let event = Event {
                kind: TYPE_SLICE_END,
                name_iid: 0,
                track: uuid::unit(u as u32),
                arg_iids: &[],
                arg_values: &[],
                arg_widths: &[],
                counter: None,
                flow: None,
                terminating_flow: None,
            };
            self.put_event(delta, &event)?;
        }
        self.earliest_end = self.open_slices.iter().flatten().min().copied();
        Ok(())
    }

    fn put_event(&mut self, delta: u64, event: &Event<'_>) -> Result<(), RecordError> {
        let buf = if self.config.compress {
            &mut self.batch
        } else {
            self.out.buf()
        };
        put_event_packet(
            buf,
            &mut self.scratch,
            delta,
            SEQUENCE_ID,
            SEQ_NEEDS_INCREMENTAL_STATE,
            event,
        );
        self.end_packet()
    }

    fn counter_event(track: u64, value: i64) -> Event<'static> {
        Event {
            kind: TYPE_COUNTER,
            name_iid: 0,
            track,
            arg_iids: &[],
            arg_values: &[],
            arg_widths: &[],
            counter: Some(value),
            flow: None,
            terminating_flow: None,
        }
    }
}

/// The error for a record before the last one, built off the hot path.
#[cold]
fn out_of_order(t: Time, last: Time) -> RecordError {
    RecordError::OutOfOrder {
        time: t.to_string(),
        last: last.to_string(),
    }
}

/// The error for a time beyond `u64` nanoseconds, built off the hot path.
#[cold]
fn time_overflow(t: Time) -> RecordError {
    RecordError::TimeOverflow(t.to_string())
}

fn track_descriptors(schema: &Schema, unit_ranks: &[u32]) -> Vec<TrackDescriptor> {
    let named = |uuid: u64, parent: u64, name: String, rank: usize| TrackDescriptor {
        uuid: Some(uuid),
        parent_uuid: Some(parent),
        name: Some(name),
        sibling_order_rank: Some(i32::try_from(rank).unwrap_or(i32::MAX)),
        ..TrackDescriptor::default()
    };
    let mut tracks = vec![TrackDescriptor {
        uuid: Some(uuid::PROCESS),
        process: Some(ProcessDescriptor {
            pid: Some(1),
            process_name: Some(schema.design.clone()),
        }),
        child_ordering: Some(CHILD_ORDERING_EXPLICIT),
        ..TrackDescriptor::default()
    }];
    for (d, dom) in schema.domains.iter().enumerate() {
        tracks.push(TrackDescriptor {
            child_ordering: Some(CHILD_ORDERING_EXPLICIT),
            ..named(
                uuid::domain(d as u32),
                uuid::PROCESS,
                format!("domain {}", dom.name),
                d,
            )
        });
    }
    for (u, unit) in schema.units.iter().enumerate() {
        tracks.push(named(
            uuid::unit(u as u32),
            uuid::domain(unit.domain),
            unit.path.clone(),
            unit_ranks[u] as usize,
        ));
    }
    let base = schema.units.len();
    let counter = |t: TrackDescriptor| TrackDescriptor {
        counter: Some(CounterDescriptor::default()),
        ..t
    };
    for (f, fifo) in schema.fifos.iter().enumerate() {
        let f32 = f as u32;
        let rank = base + 4 * f;
        let w = uuid::domain(fifo.writer_domain);
        let r = uuid::domain(fifo.reader_domain);
        tracks.push(named(
            uuid::fifo(f32, false),
            w,
            format!("{} write", fifo.path),
            rank,
        ));
        tracks.push(named(
            uuid::fifo(f32, true),
            r,
            format!("{} read", fifo.path),
            rank + 1,
        ));
        tracks.push(counter(named(
            uuid::fifo_counter(f32, 0),
            w,
            format!("{} occupancy", fifo.path),
            rank + 2,
        )));
        tracks.push(counter(named(
            uuid::fifo_counter(f32, 1),
            w,
            format!("{} full", fifo.path),
            rank + 3,
        )));
        tracks.push(counter(named(
            uuid::fifo_counter(f32, 2),
            r,
            format!("{} empty", fifo.path),
            rank + 3,
        )));
    }
    let base = base + 4 * schema.fifos.len();
    for (c, info) in schema.counters.iter().enumerate() {
        tracks.push(counter(named(
            uuid::counter(c as u32),
            uuid::domain(info.domain),
            info.name.clone(),
            base + c,
        )));
    }
    tracks
}

impl Recorder for PerfettoWriter {
    fn interest(&self) -> Interest {
        Interest {
            trace: true,
            fifo: FifoInterest::All,
            counter: true,
            tick: self.config.tick_slices,
            signal: false,
        }
    }

    fn trace(&mut self, r: &TraceRecord<'_>) -> Result<(), RecordError> {
        let e = r.event as usize;
        let (Some(&name_iid), Some(arg_iids)) = (self.event_iids.get(e), self.arg_iids.get(e))
        else {
            return Err(RecordError::UnknownIndex {
                what: "event",
                index: r.event,
            });
        };
        if arg_iids.len() != r.args.len() {
            return Err(RecordError::ArgCount {
                event: self.schema.events[e].name.clone(),
                declared: arg_iids.len(),
                got: r.args.len(),
            });
        }
        if r.unit as usize >= self.schema.units.len() {
            return Err(RecordError::UnknownIndex {
                what: "unit",
                index: r.unit,
            });
        }
        let delta = self.advance(r.time)?;
        // Split borrows: the interned ids stay borrowed while encoding.
        let buf = if self.config.compress {
            &mut self.batch
        } else {
            self.out.buf()
        };
        let event = Event {
            kind: TYPE_INSTANT,
            name_iid,
            track: uuid::unit(r.unit),
            arg_iids: &self.arg_iids[e],
            arg_values: r.args,
            arg_widths: &self.schema.events[e].signed_widths,
            counter: None,
            flow: None,
            terminating_flow: None,
        };
        put_event_packet(
            buf,
            &mut self.scratch,
            delta,
            SEQUENCE_ID,
            SEQ_NEEDS_INCREMENTAL_STATE,
            &event,
        );
        self.end_packet()
    }

    fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
        if r.fifo as usize >= self.schema.fifos.len() {
            return Err(RecordError::UnknownIndex {
                what: "fifo",
                index: r.fifo,
            });
        }
        let delta = self.advance(r.time)?;
        // `ALL` lists the kinds in declaration order.
        let kind_index = r.kind as usize;
        let id = flow_id(r.fifo, r.txn);
        let (flow, terminating_flow) = match r.kind {
            FifoEventKind::Write
            | FifoEventKind::Visible
            | FifoEventKind::Read
            | FifoEventKind::Output => (Some(id), None),
            FifoEventKind::Consume => (None, Some(id)),
            _ => (None, None),
        };
        let names = self.fifo_arg_iids;
        let values = [r.txn, u64::from(r.occupancy)];
        let event = Event {
            kind: TYPE_INSTANT,
            name_iid: self.fifo_iids[kind_index],
            track: uuid::fifo(r.fifo, !r.kind.writer_side()),
            arg_iids: &names,
            arg_values: &values,
            arg_widths: &[],
            counter: None,
            flow,
            terminating_flow,
        };
        self.put_event(delta, &event)?;
        let flag = match r.kind {
            FifoEventKind::Full => Some((1, 1)),
            FifoEventKind::NotFull => Some((1, 0)),
            FifoEventKind::Empty => Some((2, 1)),
            FifoEventKind::NotEmpty => Some((2, 0)),
            _ => None,
        };
        if let Some((which, value)) = flag {
            self.put_event(
                0,
                &Self::counter_event(uuid::fifo_counter(r.fifo, which), value),
            )?;
        }
        if matches!(r.kind, FifoEventKind::Write | FifoEventKind::Read) {
            let occupancy =
                Self::counter_event(uuid::fifo_counter(r.fifo, 0), i64::from(r.occupancy));
            self.put_event(0, &occupancy)?;
        }
        Ok(())
    }

    fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
        if r.counter as usize >= self.schema.counters.len() {
            return Err(RecordError::UnknownIndex {
                what: "counter",
                index: r.counter,
            });
        }
        let delta = self.advance(r.time)?;
        self.put_event(
            delta,
            &Self::counter_event(uuid::counter(r.counter), r.value),
        )
    }

    fn tick(&mut self, r: &TickRecord) -> Result<(), RecordError> {
        if !self.config.tick_slices {
            return Ok(());
        }
        let u = r.unit as usize;
        let Some(unit) = self.schema.units.get(u) else {
            return Err(RecordError::UnknownIndex {
                what: "unit",
                index: r.unit,
            });
        };
        let end = self
            .schema
            .edge_time(unit.domain, r.cycle.saturating_add(1))
            .ok_or_else(|| RecordError::TimeOverflow(r.time.to_string()))?;
        let delta = self.advance(r.time)?;
        if self.open_slices[u].is_some() {
            // A tick before the previous one's slice ended: close it here.
            self.open_slices[u] = None;
            let close = Event {
                kind: TYPE_SLICE_END,
                name_iid: 0,
                track: uuid::unit(r.unit),
                arg_iids: &[],
                arg_values: &[],
                arg_widths: &[],
                counter: None,
                flow: None,
                terminating_flow: None,
            };
            self.put_event(delta, &close)?;
            return self.begin_slice(u, 0, end);
        }
        self.begin_slice(u, delta, end)
    }

    fn stop_at(&mut self, at: Time) -> Result<(), RecordError> {
        self.stop = Some(at);
        Ok(())
    }

    /// Ends every open tick slice, and writes the summary, at the stop
    /// time when told it: a slice's natural end is the domain's next edge,
    /// which the run never reached. Never before the last record written
    /// (a slice must hold what it contains, and times never go back).
    fn finish(&mut self, dropped: &DropCounts) -> Result<(), RecordError> {
        self.out.check()?;
        let stop = self.stop.map(|t| t.max(self.last_time));
        if let Some(stop) = stop {
            for end in self.open_slices.iter_mut().flatten() {
                *end = (*end).min(stop);
            }
        }
        self.close_slices(None)?;
        let delta = match stop {
            Some(stop) => self.step_to(stop)?,
            None => 0,
        };
        let names = [
            self.misc_iids["dropped_trace"],
            self.misc_iids["dropped_fifo"],
            self.misc_iids["dropped_counter"],
            self.misc_iids["dropped_tick"],
            self.misc_iids["dropped_signal"],
        ];
        let values = [
            dropped.trace,
            dropped.fifo,
            dropped.counter,
            dropped.tick,
            dropped.signal,
        ];
        let summary = Event {
            kind: TYPE_INSTANT,
            name_iid: self.summary_iid,
            track: uuid::PROCESS,
            arg_iids: &names,
            arg_values: &values,
            arg_widths: &[],
            counter: None,
            flow: None,
            terminating_flow: None,
        };
        self.put_event(delta, &summary)?;
        if self.config.compress {
            self.seal_batch()?;
        }
        self.out.flush()
    }
}

impl PerfettoWriter {
    fn begin_slice(&mut self, u: usize, delta: u64, end: Time) -> Result<(), RecordError> {
        let begin = Event {
            kind: TYPE_SLICE_BEGIN,
            name_iid: self.tick_iid,
            track: uuid::unit(u as u32),
            arg_iids: &[],
            arg_values: &[],
            arg_widths: &[],
            counter: None,
            flow: None,
            terminating_flow: None,
        };
        self.put_event(delta, &begin)?;
        self.open_slices[u] = Some(end);
        self.earliest_end = Some(self.earliest_end.map_or(end, |e| e.min(end)));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::{BufferConfig, BufferedRecorder};
    use crate::schema::{DomainInfo, UnitInfo};

    /// One 1 GHz domain with one unit.
    fn schema() -> Schema {
        Schema {
            design: "stop".to_owned(),
            domains: vec![DomainInfo {
                name: "d".to_owned(),
                period: Time::from_ps(1000),
                phase: Time::ZERO,
            }],
            units: vec![UnitInfo {
                path: "top.u".to_owned(),
                domain: 0,
            }],
            ..Schema::default()
        }
    }

    /// The track events of `bytes`: (absolute ns, type), the incremental
    /// clock's deltas summed.
    fn events(bytes: &[u8]) -> Vec<(u64, i32)> {
        let trace = Trace::decode(bytes).expect("the trace decodes");
        let mut now = 0;
        let mut out = Vec::new();
        for packet in trace.packet {
            if let Some(event) = packet.track_event {
                now += packet.timestamp.unwrap_or(0);
                out.push((now, event.r#type.unwrap_or(0)));
            }
        }
        out
    }

    /// Ticks at edges 0 and 1 (0 and 1 ns) through a buffered writer; the
    /// run is said to stop at `stop` when given. Returns the events.
    fn run(name: &str, stop: Option<Time>) -> Vec<(u64, i32)> {
        let path = std::env::temp_dir().join(format!(
            "chronon-stop-{}-{name}.pftrace",
            std::process::id()
        ));
        let config = PerfettoConfig {
            compress: false,
            tick_slices: true,
        };
        let writer = PerfettoWriter::create(&path, &schema(), config).expect("create");
        let mut rec = BufferedRecorder::spawn(Box::new(writer), BufferConfig::default());
        for cycle in 0..2 {
            let tick = TickRecord {
                unit: 0,
                cycle,
                time: Time::from_ps(1000 * u128::from(cycle)),
            };
            rec.tick(&tick).expect("tick");
        }
        if let Some(at) = stop {
            rec.stop_at(at).expect("stop");
        }
        rec.finish(&DropCounts::default()).expect("finish");
        let bytes = std::fs::read(&path).expect("the trace");
        let _ = std::fs::remove_file(&path);
        events(&bytes)
    }

    /// A run that stops at 1.5 ns (a `--until`, or a filter that dropped
    /// the later records) ends the open slice, and puts the summary, at
    /// 1 ns (1.5 rounded down), not at the next edge (2 ns); one told a
    /// stop before its last record ends there (1 ns); one never told keeps
    /// the natural end (2 ns). The first slice ends at 1 ns before the
    /// second begins.
    #[test]
    fn open_slices_end_at_the_stop_time() {
        let (begin, end, instant) = (TYPE_SLICE_BEGIN, TYPE_SLICE_END, TYPE_INSTANT);
        let cases = [
            ("until", Some(Time::from_ps(1500)), 1),
            ("early", Some(Time::from_ps(500)), 1),
            ("untold", None, 2),
        ];
        for (name, stop, last) in cases {
            assert_eq!(
                run(name, stop),
                [
                    (0, begin),
                    (1, end),
                    (1, begin),
                    (last, end),
                    (last, instant)
                ],
                "{name}"
            );
        }
    }
}
