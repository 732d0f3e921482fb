//! The subset of Perfetto's trace protos that Chronon writes, with the field
//! numbers of `protos/perfetto/trace/`. Hot packets are encoded by hand in
//! [`super::encode`]; these structs encode the rare ones and decode for
//! recovery and tests.

/// `Trace`: the file is a sequence of field-1 packets.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    /// Packets.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `TracePacket`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// Timestamp on the packet's clock.
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// `trusted_packet_sequence_id`.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// A track event.
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    /// Interned names.
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    /// `SequenceFlags` bits.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// A clock snapshot.
    #[prost(message, optional, tag = "6")]
    pub clock_snapshot: Option<ClockSnapshot>,
    /// zlib-compressed serialised `Trace`.
    #[prost(bytes = "vec", optional, tag = "50")]
    pub compressed_packets: Option<Vec<u8>>,
    /// Sequence defaults.
    #[prost(message, optional, tag = "59")]
    pub trace_packet_defaults: Option<TracePacketDefaults>,
    /// A track descriptor.
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// `TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`.
pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
/// `TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE`.
pub const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;
/// `BuiltinClock.BUILTIN_CLOCK_BOOTTIME`.
pub const CLOCK_BOOTTIME: u32 = 6;

/// `TracePacketDefaults`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacketDefaults {
    /// Clock of packets without their own.
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: Option<u32>,
}

/// `ClockSnapshot`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClockSnapshot {
    /// Clocks read at one moment.
    #[prost(message, repeated, tag = "1")]
    pub clocks: Vec<Clock>,
    /// `primary_trace_clock` (a `BuiltinClock`).
    #[prost(uint32, optional, tag = "2")]
    pub primary_trace_clock: Option<u32>,
}

/// `ClockSnapshot.Clock`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Clock {
    /// Clock id; 64..=127 are sequence-scoped.
    #[prost(uint32, optional, tag = "1")]
    pub clock_id: Option<u32>,
    /// Its reading.
    #[prost(uint64, optional, tag = "2")]
    pub timestamp: Option<u64>,
    /// Whether packet timestamps on it are deltas.
    #[prost(bool, optional, tag = "3")]
    pub is_incremental: Option<bool>,
    /// Nanoseconds per unit.
    #[prost(uint64, optional, tag = "4")]
    pub unit_multiplier_ns: Option<u64>,
}

/// `TrackDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    /// Track id.
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// Name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Process association.
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    /// Parent track.
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// Makes this a counter track.
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
    /// `ChildTracksOrdering` of the children.
    #[prost(int32, optional, tag = "11")]
    pub child_ordering: Option<i32>,
    /// Rank among siblings under `EXPLICIT` ordering.
    #[prost(int32, optional, tag = "12")]
    pub sibling_order_rank: Option<i32>,
}

/// `TrackDescriptor.ChildTracksOrdering.EXPLICIT`.
pub const CHILD_ORDERING_EXPLICIT: i32 = 3;

/// `ProcessDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    /// Process id.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// Process name.
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// `CounterDescriptor` (its presence makes a counter track).
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    /// `is_incremental`.
    #[prost(bool, optional, tag = "5")]
    pub is_incremental: Option<bool>,
}

/// `TrackEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// Arguments.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// `TrackEvent.Type`.
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// Interned event name.
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    /// Track.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// Counter value.
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
    /// Counter value as a double (counts past `int64`).
    #[prost(double, optional, tag = "44")]
    pub double_counter_value: Option<f64>,
    /// Flows through this event; unpacked fixed64 as trace_processor expects.
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    /// Flows ending at this event; unpacked fixed64.
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

/// `TrackEvent.Type.TYPE_SLICE_BEGIN`.
pub const TYPE_SLICE_BEGIN: i32 = 1;
/// `TrackEvent.Type.TYPE_SLICE_END`.
pub const TYPE_SLICE_END: i32 = 2;
/// `TrackEvent.Type.TYPE_INSTANT`.
pub const TYPE_INSTANT: i32 = 3;
/// `TrackEvent.Type.TYPE_COUNTER`.
pub const TYPE_COUNTER: i32 = 4;

/// `DebugAnnotation` (only interned names, integer values and strings:
/// unsigned arguments as `uint_value`, signed ones as `int_value`, those
/// wider than 64 bits as a `string_value` of their decimal).
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    /// Interned argument name.
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    /// Value of an unsigned argument (raw bits).
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    /// Value of a signed argument, sign-extended from its width.
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    /// Value of an argument wider than 64 bits: its decimal.
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
}

/// `InternedData`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedData {
    /// Event names.
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<EventName>,
    /// Argument names.
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<DebugAnnotationName>,
}

/// `EventName`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EventName {
    /// Interning id (from 1).
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    /// Name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// `DebugAnnotationName`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotationName {
    /// Interning id (from 1).
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    /// Name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}
