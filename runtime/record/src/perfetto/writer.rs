//! The Perfetto recorder.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::ZlibEncoder;
use prost::Message;

use super::encode::{
    Event, Template, Track, WINDOW, put_packet, put_wide_packet, track, whole_packets,
};
use super::proto::*;
use crate::error::{RecordError, SchemaError};
use crate::output::{CHUNK, ChunkedOutput, RecordOutput};
use crate::record::{CounterRecord, FifoEventKind, FifoRecord, TickRecord, TraceRecord};
use crate::recorder::{DropCounts, FifoInterest, Interest, Recorder};
use crate::schema::Schema;
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

/// The constant parts of every hot packet and the track fields, built once
/// from the schema (see [`Template`]).
struct Templates {
    /// Per schema event: an instant with its name and arguments.
    events: Vec<Template>,
    /// Per FIFO event kind, in [`FifoEventKind::ALL`]'s order: an instant
    /// with `txn` and `occupancy` and the kind's flow.
    fifo: [Template; 9],
    /// A counter value.
    counter: Template,
    /// A counter value past `int64`, as a double.
    counter_wide: Template,
    /// A tick slice's begin and end.
    slice_begin: Template,
    slice_end: Template,
    units: Vec<Track>,
    /// Per FIFO: its writer-side and reader-side tracks.
    fifos: Vec<[Track; 2]>,
    /// Per FIFO: its occupancy, full and empty counter tracks.
    fifo_counters: Vec<[Track; 3]>,
    counters: Vec<Track>,
}

/// Where packets go: encoded straight into `chunk` (no scratch copy, no
/// `Vec` push), at `pos`; at `limit` bytes (an output chunk, or a
/// compressed batch) the chunk goes to the output whole. The chunk always
/// has [`WINDOW`] bytes of room after `limit`.
struct Packets {
    out: ChunkedOutput,
    compress: bool,
    chunk: Vec<u8>,
    pos: usize,
    limit: usize,
}

/// The Perfetto recorder; records must arrive in time order.
pub struct PerfettoWriter {
    packets: Packets,
    config: PerfettoConfig,
    schema: Schema,
    last_time: Time,
    last_ns: u64,
    templates: Templates,
    summary_iid: u64,
    misc_iids: HashMap<&'static str, u64>,
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
        let event_iids: Vec<u64> = schema
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
        let arg_iids: Vec<Vec<u64>> = schema
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
        let templates = Templates::new(
            schema,
            &event_iids,
            &arg_iids,
            &fifo_iids,
            fifo_arg_iids,
            tick_iid,
        )?;
        let limit = if config.compress { BATCH } else { CHUNK };

        let mut writer = PerfettoWriter {
            packets: Packets {
                out,
                compress: config.compress,
                chunk: vec![0; limit + WINDOW],
                pos: 0,
                limit,
            },
            config,
            schema: schema.clone(),
            last_time: Time::ZERO,
            last_ns: 0,
            templates,
            summary_iid,
            misc_iids,
            open_slices: vec![None; schema.units.len()],
            earliest_end: None,
            unit_ranks: schema.unit_ranks(),
            stop: None,
        };
        // The first packet clears incremental state and carries the clock
        // snapshot, the defaults and every interned name.
        writer.packets.put_message(&TracePacket {
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
            writer.packets.put_message(&TracePacket {
                trusted_packet_sequence_id: Some(SEQUENCE_ID),
                track_descriptor: Some(track),
                ..TracePacket::default()
            })?;
        }
        Ok(writer)
    }

    /// Checks time order and returns the timestamp delta for a packet at `t`,
    /// first closing every tick slice that ends at or before `t`. Inlined
    /// for the common case (the last packet's time, written with the same
    /// parts, no open slice, the output working: a few compares); the rest
    /// in [`PerfettoWriter::advance_slow`].
    #[inline(always)]
    fn advance(&mut self, t: Time) -> Result<u64, RecordError> {
        if t.num() == self.last_time.num()
            && t.den() == self.last_time.den()
            && self.earliest_end.is_none()
            && self.packets.out.check().is_ok()
        {
            return Ok(0);
        }
        self.advance_slow(t)
    }

    #[inline(never)]
    fn advance_slow(&mut self, t: Time) -> Result<u64, RecordError> {
        self.packets.out.check()?;
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
            self.put_slice_end(delta, u)?;
        }
        self.earliest_end = self.open_slices.iter().flatten().min().copied();
        Ok(())
    }

    /// Ends unit `u`'s open tick slice.
    fn put_slice_end(&mut self, delta: u64, u: usize) -> Result<(), RecordError> {
        let t = &self.templates;
        let Some(track) = t.units.get(u) else {
            return Err(unknown("unit", u as u32));
        };
        self.packets.put(delta, &t.slice_end, track, &[], 0, 0)
    }
}

impl Packets {
    /// Appends a packet prost encodes (the set-up packets: the hot ones
    /// go through [`PerfettoWriter::put`]).
    fn put_message(&mut self, packet: &TracePacket) -> Result<(), RecordError> {
        let mut bytes = vec![0x0a];
        packet
            .encode_length_delimited(&mut bytes)
            .expect("a Vec grows as needed");
        let end = self.pos + bytes.len();
        if self.chunk.len() < end + WINDOW {
            self.chunk.resize(end + WINDOW, 0);
        }
        self.chunk[self.pos..end].copy_from_slice(&bytes);
        self.pos = end;
        self.end_packet()
    }

    /// Encodes one packet of `template`'s kind at the end of the chunk (see
    /// [`put_packet`]).
    #[inline(always)]
    fn put(
        &mut self,
        delta: u64,
        template: &Template,
        track: &Track,
        args: &[u64],
        counter: i64,
        flow: u64,
    ) -> Result<(), RecordError> {
        let w = self.window()?;
        let len = put_packet(w, delta, template, track, args, counter, [flow; 2]);
        self.pos += len;
        self.end_packet()
    }

    /// The window at the end of the chunk that the next packet is encoded
    /// into.
    #[inline(always)]
    fn window(&mut self) -> Result<&mut [u8; WINDOW], RecordError> {
        // `end_packet` keeps `pos` below `limit`, and the chunk is
        // `WINDOW` longer: the window is always there.
        self.chunk
            .get_mut(self.pos..)
            .and_then(<[u8]>::first_chunk_mut::<WINDOW>)
            .ok_or(RecordError::WriterThread)
    }

    /// Encodes one packet of a template with a wide argument at the end of
    /// the chunk (see [`put_wide_packet`]).
    fn put_wide(
        &mut self,
        delta: u64,
        template: &Template,
        track: &Track,
        args: &[u64],
    ) -> Result<(), RecordError> {
        let len = put_wide_packet(self.window()?, delta, template, track, args);
        self.pos += len;
        self.end_packet()
    }

    /// Hands the chunk over once it holds `limit` bytes.
    #[inline(always)]
    fn end_packet(&mut self) -> Result<(), RecordError> {
        if self.pos >= self.limit {
            self.seal()?;
        }
        Ok(())
    }

    /// Hands the chunk to the output: as it is, or compressed into one
    /// `compressed_packets` packet.
    #[cold]
    fn seal(&mut self) -> Result<(), RecordError> {
        let len = std::mem::take(&mut self.pos);
        if !self.compress {
            return self.out.write_whole(&self.chunk[..len]);
        }
        if len == 0 {
            return Ok(());
        }
        let mut z = ZlibEncoder::new(Vec::with_capacity(len / 4), Compression::fast());
        z.write_all(&self.chunk[..len])
            .expect("writing to a Vec cannot fail");
        let compressed = z.finish().expect("writing to a Vec cannot fail");
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

    /// Writes everything out.
    fn finish(&mut self) -> Result<(), RecordError> {
        self.seal()?;
        self.out.flush()
    }
}

/// The error for a trace record of event `e` with `got` values where its
/// template takes `declared`, built off the hot path.
#[cold]
fn arg_count(schema: &Schema, e: usize, declared: usize, got: usize) -> RecordError {
    RecordError::ArgCount {
        event: schema
            .events
            .get(e)
            .map_or_else(String::new, |i| i.name.clone()),
        declared,
        got,
    }
}

/// The error for a record naming a unit, event, FIFO or counter that the
/// schema does not have, built off the hot path.
#[cold]
fn unknown(what: &'static str, index: u32) -> RecordError {
    RecordError::UnknownIndex { what, index }
}

impl Templates {
    /// The templates and tracks of `schema`'s packets, with the interned
    /// ids of its events' names and arguments, of the FIFO event kinds and
    /// their two arguments, and of the tick slices' name.
    fn new(
        schema: &Schema,
        event_iids: &[u64],
        arg_iids: &[Vec<u64>],
        fifo_iids: &[u64; 9],
        fifo_arg_iids: [u64; 2],
        tick_iid: u64,
    ) -> Result<Templates, RecordError> {
        let template =
            |event: &Event<'_>| Template::new(event, SEQUENCE_ID, SEQ_NEEDS_INCREMENTAL_STATE);
        let mut events = Vec::with_capacity(schema.events.len());
        for ((info, &name_iid), arg_iids) in schema.events.iter().zip(event_iids).zip(arg_iids) {
            let event = Event {
                kind: TYPE_INSTANT,
                name_iid,
                arg_iids,
                arg_widths: &info.signed_widths,
                arg_wide: &info.wide_widths,
                ..Event::NONE
            };
            // A validated schema has at most `MAX_ARGS` arguments per event.
            events.push(template(&event).ok_or_else(|| SchemaError::TooManyArgs {
                event: info.name.clone(),
                count: info.values(),
            })?);
        }
        let fifo = FifoEventKind::ALL.map(|kind| {
            let event = Event {
                kind: TYPE_INSTANT,
                name_iid: fifo_iids[kind as usize],
                arg_iids: &fifo_arg_iids,
                ..Event::NONE
            };
            // Any id: only whether a flow is there, and which, matters.
            let flows = match kind {
                FifoEventKind::Write
                | FifoEventKind::Visible
                | FifoEventKind::Read
                | FifoEventKind::Output => Event {
                    flow: Some(0),
                    ..event
                },
                FifoEventKind::Consume => Event {
                    terminating_flow: Some(0),
                    ..event
                },
                _ => event,
            };
            template(&flows)
        });
        let [
            Some(f0),
            Some(f1),
            Some(f2),
            Some(f3),
            Some(f4),
            Some(f5),
            Some(f6),
            Some(f7),
            Some(f8),
        ] = fifo
        else {
            return Err(RecordError::WriterThread);
        };
        let counter = Event {
            kind: TYPE_COUNTER,
            counter: Some(0),
            ..Event::NONE
        };
        let begin = Event {
            kind: TYPE_SLICE_BEGIN,
            name_iid: tick_iid,
            ..Event::NONE
        };
        let end = Event {
            kind: TYPE_SLICE_END,
            ..Event::NONE
        };
        let (Some(counter), Some(slice_begin), Some(slice_end)) =
            (template(&counter), template(&begin), template(&end))
        else {
            return Err(RecordError::WriterThread);
        };
        let fifos = 0..schema.fifos.len() as u32;
        Ok(Templates {
            events,
            fifo: [f0, f1, f2, f3, f4, f5, f6, f7, f8],
            counter_wide: counter.clone().with_double_counter(),
            counter,
            slice_begin,
            slice_end,
            units: (0..schema.units.len() as u32)
                .map(|u| track(uuid::unit(u)))
                .collect(),
            fifos: fifos
                .clone()
                .map(|f| [false, true].map(|reader| track(uuid::fifo(f, reader))))
                .collect(),
            fifo_counters: fifos
                .map(|f| [0, 1, 2].map(|which| track(uuid::fifo_counter(f, which))))
                .collect(),
            counters: (0..schema.counters.len() as u32)
                .map(|c| track(uuid::counter(c)))
                .collect(),
        })
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
        let Some(template) = self.templates.events.get(e) else {
            return Err(unknown("event", r.event));
        };
        if template.values() != r.args.len() {
            return Err(arg_count(&self.schema, e, template.values(), r.args.len()));
        }
        if r.unit as usize >= self.schema.units.len() {
            return Err(unknown("unit", r.unit));
        }
        let delta = self.advance(r.time)?;
        let t = &self.templates;
        let (Some(template), Some(track)) = (t.events.get(e), t.units.get(r.unit as usize)) else {
            return Err(unknown("event", r.event));
        };
        if template.is_wide() {
            return self.packets.put_wide(delta, template, track, r.args);
        }
        self.packets.put(delta, template, track, r.args, 0, 0)
    }

    fn fifo(&mut self, r: &FifoRecord) -> Result<(), RecordError> {
        let f = r.fifo as usize;
        if f >= self.templates.fifos.len() {
            return Err(unknown("fifo", r.fifo));
        }
        let delta = self.advance(r.time)?;
        let t = &self.templates;
        let (Some(tracks), Some(counters)) = (t.fifos.get(f), t.fifo_counters.get(f)) else {
            return Err(unknown("fifo", r.fifo));
        };
        // `ALL` lists the kinds in declaration order; the template has the
        // kind's flow (if any), whose id is the same for all of them.
        let template = &t.fifo[r.kind as usize];
        let track = &tracks[usize::from(!r.kind.writer_side())];
        let values = [r.txn, u64::from(r.occupancy)];
        let id = flow_id(r.fifo, r.txn);
        self.packets.put(delta, template, track, &values, 0, id)?;
        let (which, value) = match r.kind {
            FifoEventKind::Write | FifoEventKind::Read => (0, i64::from(r.occupancy)),
            FifoEventKind::Full => (1, 1),
            FifoEventKind::NotFull => (1, 0),
            FifoEventKind::Empty => (2, 1),
            FifoEventKind::NotEmpty => (2, 0),
            _ => return Ok(()),
        };
        self.packets
            .put(0, &t.counter, &counters[which], &[], value, 0)
    }

    fn counter(&mut self, r: &CounterRecord) -> Result<(), RecordError> {
        let c = r.counter as usize;
        if c >= self.templates.counters.len() {
            return Err(unknown("counter", r.counter));
        }
        let delta = self.advance(r.time)?;
        let t = &self.templates;
        let Some(track) = t.counters.get(c) else {
            return Err(unknown("counter", r.counter));
        };
        // Perfetto's `counter_value` is an int64: a count past its range
        // goes as `double_counter_value`, the nearest double (the text log
        // and the CSV keep it exact).
        match i64::try_from(r.value) {
            Ok(value) => self.packets.put(delta, &t.counter, track, &[], value, 0),
            Err(_) => {
                let bits = (r.value as f64).to_bits() as i64;
                self.packets
                    .put(delta, &t.counter_wide, track, &[], bits, 0)
            }
        }
    }

    fn tick(&mut self, r: &TickRecord) -> Result<(), RecordError> {
        if !self.config.tick_slices {
            return Ok(());
        }
        let u = r.unit as usize;
        let Some(unit) = self.schema.units.get(u) else {
            return Err(unknown("unit", r.unit));
        };
        let end = self
            .schema
            .edge_time(unit.domain, r.cycle.saturating_add(1))
            .ok_or_else(|| RecordError::TimeOverflow(r.time.to_string()))?;
        let delta = self.advance(r.time)?;
        if self.open_slices[u].is_some() {
            // A tick before the previous one's slice ended: close it here.
            self.open_slices[u] = None;
            self.put_slice_end(delta, u)?;
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
        self.packets.out.check()?;
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
        let summary = Template::new(
            &Event {
                kind: TYPE_INSTANT,
                name_iid: self.summary_iid,
                arg_iids: &names,
                ..Event::NONE
            },
            SEQUENCE_ID,
            SEQ_NEEDS_INCREMENTAL_STATE,
        )
        .ok_or(RecordError::WriterThread)?;
        self.packets
            .put(delta, &summary, &track(uuid::PROCESS), &values, 0, 0)?;
        self.packets.finish()
    }
}

impl PerfettoWriter {
    fn begin_slice(&mut self, u: usize, delta: u64, end: Time) -> Result<(), RecordError> {
        let t = &self.templates;
        let Some(track) = t.units.get(u) else {
            return Err(unknown("unit", u as u32));
        };
        self.packets.put(delta, &t.slice_begin, track, &[], 0, 0)?;
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
