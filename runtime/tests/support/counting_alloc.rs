//! A global allocator that counts the allocations made while this thread
//! watches (or, with [`WATCHING_ALL`], any thread), for the tests that prove
//! a running simulation allocates nothing (`no_alloc.rs`,
//! `no_alloc_run_ahead.rs`, and the parallel runs' `tests/parallel_alloc.rs`).
//! Included with `#[path]`: each test binary gets its own counter and
//! allocator.

// Each test binary uses only some of these.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Forwards to the system allocator; counts while [`WATCHING`] is set.
pub struct Counting;

/// Allocations and reallocations made while this thread watched.
pub static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Set: every thread's allocations count (a parallel run's workers).
pub static WATCHING_ALL: AtomicBool = AtomicBool::new(false);

fn watched() -> bool {
    WATCHING_ALL.load(Ordering::Relaxed) || WATCHING.with(Cell::get)
}

thread_local! {
    /// Whether this thread's allocations count.
    pub static WATCHING: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: forwards every call to the system allocator unchanged; it only
// counts the calls made while this thread watches.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if watched() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's layout contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if watched() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as for `dealloc`, with the caller's new size.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;
