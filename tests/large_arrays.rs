//! Large register arrays (memories): the commit of a large register that
//! few statements write copies only what the tick wrote (`ir::sparse`).
//! Each design runs three ways in lockstep, one instant at a time: the
//! unoptimized program on the interpreter (every register copied whole,
//! the reference), and the optimized program on the interpreter and on
//! the JIT; stop reasons, counters and every current-value slot must
//! agree after every instant. Dynamic-index reads and writes (two to one
//! element in a tick, writes under conditions, reads of elements written
//! in the same tick), arrays of structs written whole and by field,
//! initializers, out-of-range writes and reads (a runtime fault, the
//! instant completes), arrays in stage registers and FIFO items, and a
//! 2^20-element array.

use std::sync::Arc;

use chronon_compiler::ir::{Commit, Program};
use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_runtime::{RunLimit, Stop};
use chronon_suite::designs::{lower_text, lower_text_unoptimized, step_instant};

/// How many registers of `p` commit sparsely.
fn sparse_commits(p: &Program) -> usize {
    p.units
        .iter()
        .flat_map(|u| &u.commits)
        .filter(|c| matches!(c, Commit::Sparse(_)))
        .count()
}

/// Runs `text` as the module documentation says for at most `instants`
/// instants; returns the optimized program and the last stop reason.
fn agree(label: &str, text: &str, instants: u64) -> (Arc<Program>, Stop) {
    let reference = Arc::new(lower_text_unoptimized(label, text));
    let optimized = Arc::new(lower_text(label, text));
    let mut sims = [
        Simulator::new(reference.clone(), EngineKind::Interp).expect("builds"),
        Simulator::new(optimized.clone(), EngineKind::Interp).expect("builds"),
        Simulator::new(optimized.clone(), EngineKind::Jit).expect("builds"),
    ];
    // Current-value slots: next slots of registers written in place keep
    // their initial value in the optimized program (`ir::opt`).
    let compared: Vec<usize> = (0..reference.slots.len())
        .filter(|s| !reference.slots[*s].name.contains('\''))
        .collect();
    let mut stop = Stop::LimitReached;
    for instant in 0..instants {
        let Some(stops) = step_instant(&mut sims) else {
            break;
        };
        for (k, name) in [(1, "optimized interpreter"), (2, "JIT")] {
            assert_eq!(stops[0], stops[k], "{label}: {name}: instant {instant}");
            assert_eq!(
                sims[0].counters(),
                sims[k].counters(),
                "{label}: {name}: instant {instant}"
            );
            let (a, b) = (sims[0].state(), sims[k].state());
            if let Some(s) = compared.iter().find(|s| a[**s] != b[**s]) {
                panic!(
                    "{label}: {name}: instant {instant}: slot s{s} ({}) is {:#x}, reference {:#x}",
                    reference.slots[*s].name, b[*s], a[*s]
                );
            }
        }
        stop = stops[0].clone();
        if stop != Stop::LimitReached {
            break;
        }
    }
    (optimized, stop)
}

/// A 2^16 x 64-bit memory with an initializer, read and written at
/// run-time indices every tick: two writes that may alias, one under a
/// condition; a constant-index write; two writes to one element (the last
/// wins); reads of elements written in the same tick (old values).
const MEMORY: &str = "
clock clk = 1 GHz;
const N: u32 = 65536;

unit Mem {
    reg m: [u64; N] = [7; N];
    reg i: u32 = 0;
    reg lfsr: u32 = 1;
    reg acc: u64 = 0;
    counter hits;
    tick {
        let a: u32 = lfsr % N;
        let b: u32 = (lfsr >> 7) & 255;
        let c: u32 = i & 7;
        m[a] <= m[b] + (i as u64);
        if (i & 3) == 0 { m[b] <= m[a] ^ 0xff; }
        m[5] <= m[5] + 1;
        m[c] <= 1;
        m[c] <= m[c] + 2;
        acc <= acc + m[a] + m[(a + 1) % N] + m[c];
        if m[a] == m[b] { hits += 1; }
        let bit: u32 = lfsr & 1;
        lfsr <= (lfsr >> 1) ^ ((0 - bit) & 0xB4BCD35C);
        i <= i + 1;
    }
}

system Top { inst u: Mem on clk; }
";

#[test]
fn a_memory_commits_what_it_wrote() {
    let (program, stop) = agree("memory", MEMORY, 3000);
    assert_eq!(stop, Stop::LimitReached);
    assert_eq!(sparse_commits(&program), 1, "the memory commits sparsely");
}

/// Arrays of structs written whole and by field at run-time indices, in
/// two instances; an array in a stage register and in FIFO items between
/// two clocks, indexed at run time on the reader's side.
const STRUCTS: &str = "
clock clk = 1 GHz;
clock rclk = 700 MHz phase 37 ps;

struct P { a: u8, b: i16, c: bool }

unit S {
    reg m: [P; 512];
    reg i: u16 = 0;
    out tx: [u8; 4];
    stage st: [u8; 4] pipes 2;
    tick {
        let k: u16 = (i * 37) % 512;
        m[k] <= P { a: i as u8, b: 0 - (i as i16), c: (i & 1) == 1 };
        m[(k + 3) % 512].b <= m[k].b + 1;
        if m[(k + 9) % 512].c { m[(k + 9) % 512].a <= 0xee; }
        let arr: [u8; 4] = [m[k].a, m[(k + 1) % 512].a, i as u8, 3];
        st.write(0, arr);
        if st.valid(0) { st.write(1, st.read(0)); }
        if tx.can_send() { tx.send(arr); }
        i <= i + 1;
    }
}

unit R {
    in rx: [u8; 4] cdc;
    reg got: [[u8; 4]; 64];
    reg n: u32 = 0;
    reg sum: u32 = 0;
    tick {
        if let Some(v) = rx.take() {
            got[n & 63] <= v;
            got[(n + 1) & 63][n & 3] <= v[n & 3];
            sum <= sum + (v[sum & 3] as u32) + (got[(n + 5) & 63][2] as u32);
            n <= n + 1;
        }
        let _ok: bool = rx.request();
    }
}

system Top {
    inst s0: S on clk;
    inst s1: S on clk;
    inst r: R on rclk;
    cdc s0.tx -> r.rx depth 4 sync 2;
}
";

#[test]
fn arrays_of_structs_stages_and_fifo_items_agree() {
    let (program, stop) = agree("structs", STRUCTS, 2000);
    assert_eq!(stop, Stop::LimitReached);
    // Each instance's `m` (1,536 slots) and the reader's `got` (256).
    assert_eq!(sparse_commits(&program), 3);
}

/// A run-time index that leaves the array faults at the edge where it is
/// out of range; the instant completes with the tick's other writes.
const OUT_OF_RANGE: &str = "
clock clk = 1 GHz;

unit Walker {
    reg i: u16 = 190;
    reg m: [u32; 200];
    reg seen: u32 = 0;
    tick {
        m[i - 180] <= m[i - 181] + 1;
        m[i] <= m[i - 1] + 7;
        seen <= seen + m[i - 3];
        i <= i + 1;
    }
}

system Top { inst w: Walker on clk; }
";

#[test]
fn an_index_out_of_range_faults_on_both_engines() {
    let (program, stop) = agree("out_of_range", OUT_OF_RANGE, 100);
    let Stop::Fault(fault) = stop else {
        panic!("expected a fault, got {stop:?}");
    };
    assert!(
        fault.construct.contains("array index"),
        "{}",
        fault.construct
    );
    assert_eq!(sparse_commits(&program), 1);
}

/// An out-of-range read faults too (and reads 0 on both engines).
const READ_OUT_OF_RANGE: &str = "
clock clk = 1 GHz;

unit Reader {
    reg i: u16 = 250;
    reg m: [u8; 256];
    reg last: u8 = 0;
    tick {
        m[i & 255] <= i as u8;
        last <= m[i] + 1;
        i <= i + 1;
    }
}

system Top { inst r: Reader on clk; }
";

#[test]
fn an_out_of_range_read_faults_on_both_engines() {
    let (_, stop) = agree("read_out_of_range", READ_OUT_OF_RANGE, 100);
    assert!(matches!(stop, Stop::Fault(_)), "{stop:?}");
}

/// The largest array the language allows (2^20 elements of 16 bits),
/// written and read at run-time indices.
const HUGE: &str = "
clock clk = 1 GHz;
const N: u32 = 1048576;

unit Mem {
    reg m: [u16; N] = [3; N];
    reg i: u32 = 0;
    reg acc: u64 = 0;
    tick {
        let a: u32 = (i * 2654435761) % N;
        m[a] <= m[a] + (i as u16) + 1;
        m[(a + 1) % N] <= m[a];
        acc <= acc + (m[(a + 7) % N] as u64);
        i <= i + 1;
    }
}

system Top { inst u: Mem on clk; }
";

#[test]
fn a_two_to_the_twenty_element_memory_agrees() {
    let (program, stop) = agree("huge", HUGE, 40);
    assert_eq!(stop, Stop::LimitReached);
    assert_eq!(sparse_commits(&program), 1);
}

/// Writes through two and three run-time indices (`m[a][b].y[c] <= v`),
/// into arrays of structs holding arrays; `WHICH` picks which index, if
/// any, leaves its range at some edge: none, the outer, the middle or the
/// innermost. Each is checked in order, faults when out of range and the
/// write is skipped, as the compare per element did.
const NESTED: &str = "
clock clk = 1 GHz;

struct Q { x: u8, y: [u16; 3] }

unit Nested {
    reg m: [[Q; 5]; 40];
    reg flat: [[u8; 16]; 64];
    reg i: u16 = 0;
    reg s: u64 = 0;
    tick {
        let a: u16 = (i * 7) % OUTER;
        let b: u16 = (i * 5) % MIDDLE;
        let c: u16 = (i * 7) % INNER;
        m[a][b].y[c] <= i;
        m[a][b].x <= i as u8;
        m[(a + 1) % 40][2].y[1] <= m[a % 40][b % 5].y[0] + 1;
        m[3][b % 5].y[c % 3] <= m[3][b % 5].y[c % 3] + 2;
        flat[i % 64][(i * 11) % 16] <= flat[(i + 1) % 64][i % 16] + (i as u8);
        s <= s + (m[i % 40][i % 5].y[i % 3] as u64) + (flat[(i * 13) % 64][i % 16] as u64);
        i <= i + 1;
    }
}

system Top { inst u: Nested on clk; }
";

#[test]
fn nested_run_time_indices_write_one_element() {
    let design = |outer: u32, middle: u32, inner: u32| {
        NESTED
            .replace("OUTER", &outer.to_string())
            .replace("MIDDLE", &middle.to_string())
            .replace("INNER", &inner.to_string())
    };
    let (program, stop) = agree("nested", &design(40, 5, 3), 1500);
    assert_eq!(stop, Stop::LimitReached);
    assert_eq!(
        sparse_commits(&program),
        2,
        "`m` and `flat` commit sparsely"
    );
    // The same writes spelled as a compare per element in the source, the
    // way they were lowered before: the same state after as many edges.
    let spelled = design(40, 5, 3)
        .replace(
            "m[a][b].y[c] <= i;",
            "for r in 0..40 { for q in 0..5 { if a as u32 == r && b as u32 == q { m[r][q].y[c] <= i; } } }",
        )
        .replace(
            "flat[i % 64][(i * 11) % 16] <=",
            "for r in 0..64 { if (i % 64) as u32 == r { flat[r][(i * 11) % 16] <= flat[(i + 1) % 64][i % 16] + (i as u8); } }\n        let _unused: u8 =",
        );
    assert_ne!(spelled, design(40, 5, 3));
    let states: Vec<Vec<u64>> = [design(40, 5, 3), spelled]
        .iter()
        .map(|text| {
            let program = Arc::new(lower_text("nested_spelled", text));
            let mut sim = Simulator::new(program, EngineKind::Interp).expect("builds");
            let stop = sim.sim.run(RunLimit::Edges {
                domain: chronon_runtime::DomainId(0),
                count: 1500,
            });
            assert_eq!(stop, Stop::LimitReached);
            sim.state().to_vec()
        })
        .collect();
    assert_eq!(
        states[0], states[1],
        "indexed writes equal the compare per element"
    );
    for (what, outer, middle, inner) in [
        ("outer", 43, 5, 3),
        ("middle", 40, 6, 3),
        ("inner", 40, 5, 4),
    ] {
        let (_, stop) = agree(
            &format!("nested_{what}"),
            &design(outer, middle, inner),
            1500,
        );
        let Stop::Fault(fault) = stop else {
            panic!("{what}: expected a fault, got {stop:?}");
        };
        assert!(
            fault.construct.contains("array index"),
            "{what}: {}",
            fault.construct
        );
    }
}

/// Run-time indices into temporaries: a copy of a register array indexed
/// by a `u8` past element 255 (element 256 answered index 0 before), and
/// a stage register holding a 4,096-element array (its read indexed at
/// run time overflowed the compiler's stack, a compare nested per
/// element), against indexed loads of the register and the values
/// written.
const TEMPORARIES: &str = "
clock clk = 1 GHz;

unit T {
    reg m: [u8; 300];
    reg i: u16 = 0;
    reg a: u64 = 0;
    stage st: [u16; 4096] pipes 1;
    tick {
        m[i % 300] <= (i * 7) as u8;
        let t: [u8; 300] = m;
        let x: u8 = (i * 13) as u8;
        a <= a + (t[x] as u64);
        assert(t[x] == m[x], \"a temporary reads what the register holds\");
        st.write(0, [i; 4096]);
        if st.valid(0) {
            let v: u16 = st.read(0)[(i * 5) % 4096];
            assert(v == i - 1, \"the stage holds last edge's array\");
            a <= a + (v as u64);
        }
        i <= i + 1;
    }
}

system Top { inst t: T on clk; }
";

#[test]
fn run_time_indices_into_temporaries_agree() {
    let (_, stop) = agree("temporaries", TEMPORARIES, 700);
    assert_eq!(stop, Stop::LimitReached);
}

/// `st.read(p)[x]` with the pipe or the element out of range at some
/// edge: a stage range fault, then an array index fault, as the whole
/// read's were.
const STAGE_RANGE: &str = "
clock clk = 1 GHz;

unit T {
    reg i: u16 = 0;
    reg a: u64 = 0;
    stage st: [u16; 100] pipes 3;
    tick {
        st.write(i % 3, [i; 100]);
        a <= a + (st.read(PIPE)[ELEMENT] as u64);
        i <= i + 1;
    }
}

system Top { inst t: T on clk; }
";

#[test]
fn stage_element_reads_fault_like_whole_reads() {
    let design = |pipe: &str, element: &str| {
        STAGE_RANGE
            .replace("PIPE", pipe)
            .replace("ELEMENT", element)
    };
    let (_, stop) = agree(
        "stage_in_range",
        &design("(i * 7) % 3", "(i * 3) % 100"),
        300,
    );
    assert_eq!(stop, Stop::LimitReached);
    for (what, pipe, element, construct) in [
        ("pipe", "(i * 7) % 5", "(i * 3) % 100", "st"),
        ("element", "(i * 7) % 3", "(i * 3) % 120", "array index"),
    ] {
        let (_, stop) = agree(&format!("stage_{what}"), &design(pipe, element), 300);
        let Stop::Fault(fault) = stop else {
            panic!("{what}: expected a fault, got {stop:?}");
        };
        assert!(
            fault.construct.contains(construct),
            "{what}: {}",
            fault.construct
        );
    }
}

/// A register written whole keeps the whole copy: listing every slot
/// would cost as much.
#[test]
fn a_register_written_whole_keeps_the_whole_copy() {
    let text = "
clock clk = 1 GHz;
unit U {
    reg m: [u8; 128];
    reg i: u8 = 0;
    tick {
        if (i & 1) == 0 { m <= [i; 128]; } else { m[i & 127] <= 9; }
        i <= i + 1;
    }
}
system Top { inst u: U on clk; }
";
    let (program, _) = agree("whole", text, 300);
    assert_eq!(sparse_commits(&program), 0);
}
