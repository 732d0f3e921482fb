//! `< <= > >=` on `bool` order `false < true` (docs/language.md,
//! "Types"), as Verilog compares one bit and Rust orders `bool`: in
//! constants and at run time, the same on both engines, with Rust's own
//! `bool` order as the reference.

use std::sync::Arc;

use chronon_compiler::simulate::{EngineKind, Simulator};
use chronon_runtime::{DomainId, RunLimit, Stop};
use chronon_suite::designs::lower_text;

const DESIGN: &str = "
clock clk = 1 GHz;

const LT: bool = false < true;
const GT: bool = false > true;
const LE: bool = true <= true;
const GE: bool = false >= true;

unit U {
    reg a: bool = false;
    reg b: bool = false;
    reg n: u8 = 0;
    counter lt;
    counter le;
    counter gt;
    counter ge;
    tick {
        if a < b { lt += 1; }
        if a <= b { le += 1; }
        if a > b { gt += 1; }
        if a >= b { ge += 1; }
        assert(LT && !GT && LE && !GE, \"constants order false < true\");
        a <= (n & 1) == 1;
        b <= (n & 2) == 2;
        n <= n + 1;
    }
}

system Top { inst u: U on clk; }
";

#[test]
// Rust's own `<` on `bool` is the reference here, not its simplification.
#[allow(clippy::bool_comparison)]
fn bool_orders_false_before_true_on_both_engines() {
    let edges = 9u64;
    // The reference: at edge 0 both registers hold their initial `false`;
    // at edge k > 0 they hold the bits of k - 1.
    let mut want = [0u64; 4];
    for k in 0..edges {
        let (a, b) = if k == 0 {
            (false, false)
        } else {
            ((k - 1) & 1 == 1, (k - 1) & 2 == 2)
        };
        for (i, holds) in [a < b, a <= b, a > b, a >= b].into_iter().enumerate() {
            want[i] += u64::from(holds);
        }
    }
    let program = Arc::new(lower_text("bool_order", DESIGN));
    for engine in [EngineKind::Interp, EngineKind::Jit] {
        let mut sim = Simulator::new(program.clone(), engine).expect("builds");
        let stop = sim.sim.run(RunLimit::Edges {
            domain: DomainId(0),
            count: edges,
        });
        assert_eq!(stop, Stop::LimitReached, "{engine:?}");
        let got: Vec<(String, u64)> = sim
            .counters()
            .into_iter()
            .map(|(_, name, v)| (name, v))
            .collect();
        let want: Vec<(String, u64)> = ["lt", "le", "gt", "ge"]
            .iter()
            .zip(want)
            .map(|(n, v)| (n.to_string(), v))
            .collect();
        assert_eq!(got, want, "{engine:?}");
    }
}
