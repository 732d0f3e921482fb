//! Errors of the recorders.

use std::io;
use std::path::PathBuf;

/// A schema that some output format could not represent.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SchemaError {
    /// A name is empty or has characters the text formats reserve.
    #[error(
        "{what} name {name:?} must be non-empty printable ASCII without spaces, '=', ',', '\"' or '\\'"
    )]
    BadName {
        /// What the name names.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A cross reference is out of range.
    #[error("{what} {name:?} refers to index {index}, which does not exist")]
    BadIndex {
        /// What refers.
        what: &'static str,
        /// Its name.
        name: String,
        /// The bad index.
        index: u32,
    },
    /// An event declares more values than records carry inline.
    #[error("event {event:?} has {count} values (a wide argument counts one per 64-bit limb); at most {max} are supported", max = crate::schema::MAX_ARGS)]
    TooManyArgs {
        /// The event.
        event: String,
        /// How many it declares.
        count: usize,
    },
    /// A signal is wider than 64 bits or zero bits wide.
    #[error(
        "signal {signal:?} is {width} bits wide or its limbs are out of order; widths 1 to 1024 are supported, a value over 64 bits as consecutive limbs"
    )]
    SignalWidth {
        /// The signal.
        signal: String,
        /// Its width.
        width: u32,
    },
    /// An event's signed widths are not one per argument, each 0 to 64.
    #[error(
        "event {event:?} has signed widths {widths:?} for {args} arguments; give none or one per argument, each 0 (unsigned) to 64"
    )]
    SignedWidths {
        /// The event.
        event: String,
        /// Its signed widths.
        widths: Vec<u32>,
        /// How many arguments it declares.
        args: usize,
    },
    /// An event's wide widths are not one per argument, each 0 or 65 to
    /// 1024.
    #[error(
        "event {event:?} has wide widths {widths:?} for {args} arguments; give none or one per argument, each 0 (at most 64 bits) or 65 to 1024"
    )]
    WideWidths {
        /// The event.
        event: String,
        /// Its wide widths.
        widths: Vec<u32>,
        /// How many arguments it declares.
        args: usize,
    },
    /// A domain has a zero period.
    #[error("domain {0:?} has a zero period")]
    ZeroPeriod(String),
}

/// Why a recorder stopped.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The output failed; what was written before is a valid prefix.
    #[error("writing {}: {source} ({kind:?})", path.display(), kind = source.kind())]
    Io {
        /// The file (or stream) that failed.
        path: PathBuf,
        /// The writer's own error.
        #[source]
        source: io::Error,
    },
    /// An input could not be read (`chronc trace recover`'s damaged trace).
    #[error("reading {}: {source} ({kind:?})", path.display(), kind = source.kind())]
    Read {
        /// The file that could not be read.
        path: PathBuf,
        /// The reader's own error.
        #[source]
        source: io::Error,
    },
    /// The output failed earlier; the recorder has stopped.
    #[error("writing {} failed earlier: {message} ({kind:?})", path.display())]
    Stopped {
        /// The file (or stream) that failed.
        path: PathBuf,
        /// The first error's kind.
        kind: io::ErrorKind,
        /// The first error's message.
        message: String,
    },
    /// The schema cannot be recorded.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// A record names an index the schema does not have.
    #[error("record refers to {what} {index}, which the schema does not declare")]
    UnknownIndex {
        /// What kind of index.
        what: &'static str,
        /// The index.
        index: u32,
    },
    /// A trace event carries a different number of arguments than declared.
    #[error("event {event:?} declares {declared} arguments but the record has {got}")]
    ArgCount {
        /// The event.
        event: String,
        /// Declared count.
        declared: usize,
        /// Count in the record.
        got: usize,
    },
    /// A record is earlier than one already written to a time-ordered output.
    #[error(
        "record at {time} ps comes after one at {last} ps; this output needs records in time order"
    )]
    OutOfOrder {
        /// The late record's exact time.
        time: String,
        /// The time already written.
        last: String,
    },
    /// A time does not fit the output's integer timestamps.
    #[error("time {0} ps does not fit this output's timestamps")]
    TimeOverflow(String),
    /// The background writer thread died.
    #[error("the recording thread stopped unexpectedly")]
    WriterThread,
}
