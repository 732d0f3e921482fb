//! The `extern "C"` functions that JIT code calls for host services.
//!
//! Each takes the [`HostCtx`] pointer that the engine passes to the unit
//! function, returns a plain status or flag, and never unwinds (a panic in an
//! `extern "C"` function aborts).
//!
//! Two hosts: a `dyn Host` ([`crate::engine::Engine::tick_unit`], used by
//! the differential tests), or the runtime itself through a
//! [`RuntimeBinding`] (group functions bound by `simulate`), where each call
//! goes straight to the runtime's `TickCtx` with no dynamic dispatch.

use std::slice;

use crate::host::Host;
use crate::simulate::RuntimeBinding;

/// What JIT code's context pointer points to: the host and the running
/// instance's relocation (ids in shared code are relative to it).
pub struct HostCtx<'a> {
    /// The host of the current call; `None` for the runtime binding.
    pub host: Option<&'a mut dyn Host>,
    /// With no `host`: the runtime binding of the running group function.
    pub binding: *const RuntimeBinding,
    /// With no `host`: the unit's index in its group (`TickCtx::enter`).
    pub member: u32,
    /// Added to port ids.
    pub port_base: u32,
    /// Added to trace ids.
    pub trace_base: u32,
    /// Relative fault index to fault id (the instance's relocation table,
    /// owned by the [`super::Jit`] that outlives every call).
    pub faults: *const [u32],
    /// Per IR port (from `port_base`: indexed by the function's relative
    /// port ids), the runtime's state of the CDC FIFO whose operations on
    /// that port run inline, or null (host call); see the
    /// `jit::codegen::fifo` module. Null entries for a `dyn Host`.
    pub fifos: *const *mut chronon_runtime::ffi::FifoState,
    /// Per IR port (from `port_base`), the runtime's channel state that
    /// operations on that port run inline on (a `SendState` for an
    /// output, a `ChanState` for an input), or null (host call); see the
    /// `jit::codegen::chan` module. Null entries for a `dyn Host`.
    pub chans: *const *mut std::ffi::c_void,
}

/// Runs `$body` with `$h` bound to this call's host: the `dyn Host`, or
/// (statically dispatched, so it inlines) the runtime binding's host for
/// the calling unit. `$c` is the `&mut HostCtx`.
macro_rules! on_host {
    ($c:ident, |$h:ident| $body:expr) => {
        match $c.host.as_deref_mut() {
            Some($h) => $body,
            None => {
                // SAFETY: with no `dyn Host`, the context was built by
                // `Jit::group` for a binding whose group tick is running.
                let mut host = unsafe { (*$c.binding).host($c.member) };
                let $h = &mut host;
                $body
            }
        }
    };
}

/// One imported host function: its symbol, its address and its signature
/// as (number of 32-bit parameters after the context, item buffer, returns).
pub(crate) struct Import {
    pub name: &'static str,
    pub addr: *const u8,
    pub sig: Sig,
}

/// Parameter shapes of the host functions (after the context pointer).
#[derive(Clone, Copy)]
pub(crate) enum Sig {
    /// `(id: i32) -> i32`
    Id,
    /// `(id: i32)`
    IdVoid,
    /// `()`
    Void,
    /// `(id: i32, buf: ptr, len: i32) -> i32`
    IdBuf,
    /// `(id: i32, buf: ptr, len: i32)`
    IdBufVoid,
    /// `(id: i32, flag: i32, buf: ptr, len: i32) -> i32`
    IdFlagBuf,
    /// `() -> i32`
    Ret,
}

/// Index of each import in [`imports`].
pub(crate) mod idx {
    pub const CAN_SEND: usize = 0;
    pub const SEND: usize = 1;
    pub const RECV: usize = 2;
    pub const REQUEST: usize = 3;
    pub const VALID: usize = 4;
    pub const TAKE: usize = 5;
    pub const TRACE: usize = 6;
    pub const FAULT: usize = 7;
    pub const FINISH: usize = 8;
    pub const NEXT_EDGE: usize = 9;
}

/// Every host function, in [`idx`] order.
pub(crate) fn imports() -> Vec<Import> {
    vec![
        Import {
            name: "chronon_can_send",
            addr: can_send as *const u8,
            sig: Sig::Id,
        },
        Import {
            name: "chronon_send",
            addr: send as *const u8,
            sig: Sig::IdFlagBuf,
        },
        Import {
            name: "chronon_recv",
            addr: recv as *const u8,
            sig: Sig::IdFlagBuf,
        },
        Import {
            name: "chronon_request",
            addr: request as *const u8,
            sig: Sig::Id,
        },
        Import {
            name: "chronon_valid",
            addr: valid as *const u8,
            sig: Sig::Id,
        },
        Import {
            name: "chronon_take",
            addr: take as *const u8,
            sig: Sig::IdBuf,
        },
        Import {
            name: "chronon_trace",
            addr: trace as *const u8,
            sig: Sig::IdBufVoid,
        },
        Import {
            name: "chronon_fault",
            addr: fault as *const u8,
            sig: Sig::IdVoid,
        },
        Import {
            name: "chronon_finish",
            addr: finish as *const u8,
            sig: Sig::Void,
        },
        Import {
            name: "chronon_next_edge",
            addr: next_edge as *const u8,
            sig: Sig::Ret,
        },
    ]
}

/// Reborrows the context behind a context pointer.
///
/// # Safety
/// `ctx` must be the live, exclusive `HostCtx` the engine passed to the
/// function that is now calling back.
unsafe fn host<'a>(ctx: *mut HostCtx<'a>) -> &'a mut HostCtx<'a> {
    // SAFETY: guaranteed by the caller; the engine holds no other reference
    // to the context while JIT code runs.
    unsafe { &mut *ctx }
}

/// Views a JIT stack buffer as a slice.
///
/// # Safety
/// `buf` must point to `len` initialised or writable u64 words that live for
/// the call (the JIT passes its item stack slot, sized for the largest item).
unsafe fn words<'a>(buf: *mut u64, len: u32) -> &'a mut [u64] {
    // SAFETY: guaranteed by the caller.
    unsafe { slice::from_raw_parts_mut(buf, len as usize) }
}

// SAFETY (every function below): called only by JIT code with the context
// its engine or group binding passed, which is live and, for the runtime
// binding, inside the group's tick; and with the JIT's item buffer.

extern "C" fn can_send(ctx: *mut HostCtx<'_>, port: u32) -> u32 {
    // SAFETY: as above.
    let c = unsafe { host(ctx) };
    u32::from(on_host!(c, |h| h.can_send(port + c.port_base)))
}

/// The `required` argument of the `send` host call: 0 for `try_send`, the
/// relative fault site plus one for `send` (see [`send`]).
pub(super) fn send_site(fault: Option<u32>) -> u32 {
    fault.map_or(0, |f| f + 1)
}

extern "C" fn send(
    ctx: *mut HostCtx<'_>,
    port: u32,
    required: u32,
    buf: *mut u64,
    len: u32,
) -> u32 {
    // SAFETY: as above.
    let (c, item) = unsafe { (host(ctx), words(buf, len)) };
    // A `send`'s relative fault site, as `fault` maps it.
    // SAFETY: the relocation table outlives the call (it is the JIT's).
    let site = required
        .checked_sub(1)
        .map(|f| unsafe { (&*c.faults)[f as usize] });
    u32::from(on_host!(c, |h| h.send(port + c.port_base, item, site)))
}

extern "C" fn recv(ctx: *mut HostCtx<'_>, port: u32, remove: u32, buf: *mut u64, len: u32) -> u32 {
    // SAFETY: as above.
    let (c, item) = unsafe { (host(ctx), words(buf, len)) };
    u32::from(on_host!(c, |h| h.recv(
        port + c.port_base,
        remove != 0,
        item
    )))
}

extern "C" fn request(ctx: *mut HostCtx<'_>, port: u32) -> u32 {
    // SAFETY: as above.
    let c = unsafe { host(ctx) };
    u32::from(on_host!(c, |h| h.request(port + c.port_base)))
}

extern "C" fn valid(ctx: *mut HostCtx<'_>, port: u32) -> u32 {
    // SAFETY: as above.
    let c = unsafe { host(ctx) };
    u32::from(on_host!(c, |h| h.valid(port + c.port_base)))
}

extern "C" fn take(ctx: *mut HostCtx<'_>, port: u32, buf: *mut u64, len: u32) -> u32 {
    // SAFETY: as above.
    let (c, item) = unsafe { (host(ctx), words(buf, len)) };
    u32::from(on_host!(c, |h| h.take(port + c.port_base, item)))
}

extern "C" fn trace(ctx: *mut HostCtx<'_>, trace: u32, buf: *mut u64, len: u32) {
    // SAFETY: as above.
    let (c, args) = unsafe { (host(ctx), words(buf, len)) };
    on_host!(c, |h| h.trace(trace + c.trace_base, args));
}

extern "C" fn fault(ctx: *mut HostCtx<'_>, fault: u32) {
    // SAFETY: as above.
    let c = unsafe { host(ctx) };
    // The relocation table outlives the call (it is the JIT's).
    // SAFETY: as above.
    let id = unsafe { (&*c.faults)[fault as usize] };
    on_host!(c, |h| h.fault(id));
}

extern "C" fn finish(ctx: *mut HostCtx<'_>) {
    // SAFETY: as above.
    let c = unsafe { host(ctx) };
    on_host!(c, |h| h.finish());
}

/// After an edge of a run-ahead loop (`jit::edges`): the runtime's
/// `TickCtx::next_edge` (commit, next cycle and time); 1 to run the next
/// edge, 0 to stop. Only bound group functions run ahead; with a `dyn
/// Host` it says stop.
extern "C" fn next_edge(ctx: *mut HostCtx<'_>) -> u32 {
    // SAFETY: as above.
    let c = unsafe { host(ctx) };
    if c.host.is_some() || c.binding.is_null() {
        return 0;
    }
    // SAFETY: with no `dyn Host`, the binding's group tick is running.
    u32::from(unsafe { (*c.binding).next_edge() })
}
