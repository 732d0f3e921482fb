//! The elaborated `Design` of the examples: what the back end receives.

use chronon_lang::design::{Design, ExprKind, PortKind, ReadStyle, StmtKind, Type, Value};
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};
use num_bigint::BigInt;
use num_rational::Ratio;

fn design(src: &str, params: &[(&str, &str)]) -> Design {
    let mut sources = SourceMap::new();
    sources.add("design.chr", src);
    let options = CompileOptions {
        params: params
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        require_top: true,
        ..CompileOptions::default()
    };
    let result = compile(&mut sources, &options);
    assert!(result.diagnostics.is_empty(), "{:?}", result.diagnostics);
    result.design.expect("a design")
}

fn ps(n: i64, d: i64) -> Ratio<BigInt> {
    Ratio::new(BigInt::from(n), BigInt::from(d))
}

#[test]
fn cdc_pair_has_exact_clocks_and_one_fifo() {
    let d = design(include_str!("../../examples/cdc_pair.chr"), &[]);
    assert_eq!(d.top, "Top");
    let clocks: Vec<(&str, Ratio<BigInt>, Ratio<BigInt>)> = d
        .clocks
        .iter()
        .map(|c| (c.name.as_str(), c.period_ps.clone(), c.phase_ps.clone()))
        .collect();
    assert_eq!(
        clocks,
        vec![
            ("wclk", ps(1_000_000, 914), ps(0, 1)),
            ("rclk", ps(1_000_000, 1326), ps(137, 1))
        ]
    );
    let paths: Vec<&str> = d.instances.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(paths, ["top.w", "top.r"]);
    assert_eq!(d.instances[1].domain, 1);
    assert_eq!(d.fifos.len(), 1);
    let f = &d.fifos[0];
    assert_eq!((f.depth, f.sync, f.style), (16, 2, ReadStyle::Registered));
    assert_eq!((f.writer.instance, f.reader.instance), (0, 1));
    let reader = &d.specs[d.instances[1].spec];
    assert_eq!(reader.ports[f.reader.port].kind, PortKind::CdcRegistered);
    assert!(d.channels.is_empty());
}

#[test]
fn pairs_expands_clock_and_instance_arrays_and_takes_overrides() {
    let d = design(include_str!("../../examples/pairs.chr"), &[("WORK", "16")]);
    let phases: Vec<Ratio<BigInt>> = d.clocks.iter().map(|c| c.phase_ps.clone()).collect();
    assert_eq!(phases, vec![ps(0, 1), ps(37, 1), ps(74, 1), ps(111, 1)]);
    assert_eq!(d.clocks[3].name, "dom[3]");
    assert_eq!(d.clocks[3].period_ps, ps(500, 1));
    assert_eq!(
        d.params,
        vec![
            ("PAIRS".to_string(), Value::Int(4)),
            ("WORK".to_string(), Value::Int(16)),
            ("COUNT".to_string(), Value::Int(500))
        ]
    );
    let paths: Vec<&str> = d.instances.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "top.p[0]", "top.c[0]", "top.p[1]", "top.c[1]", "top.p[2]", "top.c[2]", "top.p[3]",
            "top.c[3]"
        ]
    );
    let domains: Vec<usize> = d.instances.iter().map(|i| i.domain).collect();
    assert_eq!(domains, [0, 1, 1, 2, 2, 3, 3, 0]);
    // One specialization per unit: every producer has the same parameters.
    assert_eq!(d.specs.len(), 2);
    assert_eq!(
        d.specs[0].params,
        vec![("WORK".to_string(), Value::Int(16))]
    );
    assert_eq!(d.fifos.len(), 4);
    assert!(
        d.functions.iter().any(|f| f.name == "churn")
            && d.functions.iter().any(|f| f.name == "mix32")
    );
}

#[test]
fn channel_defaults_and_fan_in_follow_the_reference() {
    let d = design(include_str!("../../examples/producer_consumer.chr"), &[]);
    assert_eq!((d.channels[0].latency, d.channels[0].capacity), (2, 3));
    let d = design(include_str!("../../examples/three_clocks.chr"), &[]);
    let into_merger: Vec<(u32, u32)> = d.channels.iter().map(|c| (c.latency, c.capacity)).collect();
    assert_eq!(into_merger, [(1, 2), (1, 2)]);
    assert_eq!(
        d.channels[0].to, d.channels[1].to,
        "fan-in: both relays feed one input"
    );
    let styles: Vec<(u32, ReadStyle)> = d.fifos.iter().map(|f| (f.sync, f.style)).collect();
    assert_eq!(styles, [(2, ReadStyle::Fwft), (3, ReadStyle::Fwft)]);
}

#[test]
fn constants_fold_and_registers_get_typed_initial_values() {
    let src = "
        clock core = 1 GHz;
        const WIDTH: u32 = 8;
        const MASK: u32 = (1 << WIDTH) - 1;
        enum Op { Add, Sub, Xor }
        struct P { a: u8, op: Op }
        unit U<N: u32 = 3> {
            reg r: u32 = MASK;
            reg p: P = P { a: 200, op: Op::Xor };
            reg t: [i8; N] = [-1; N];
            stage s: u16 pipes N;
            tick {
                r <= r + MASK;
                p.a <= p.a + 1;
                t[0] <= t[0] - 1;
                if s.valid(0) { s.retain(0); }
            }
        }
        system Top { inst u: U<N = 2> on core; }
    ";
    let d = design(src, &[]);
    let spec = &d.specs[0];
    assert_eq!(spec.regs[0].init, Value::Int(255));
    assert_eq!(
        spec.regs[1].init,
        Value::Struct(vec![Value::Int(200), Value::Int(2)])
    );
    assert_eq!(spec.regs[2].init, Value::Array(vec![Value::Int(-1); 2]));
    assert_eq!(
        spec.regs[2].ty,
        Type::Array(
            Box::new(Type::Int {
                signed: true,
                width: 8
            }),
            2
        )
    );
    assert_eq!(spec.stages[0].pipes, 2);
    let Type::Struct(st) = &spec.regs[1].ty else {
        panic!("P is a struct")
    };
    assert_eq!(
        spec.regs[1].ty.bit_width(),
        10,
        "u8 plus a two-bit enum: {st:?}"
    );
    // `r <= r + MASK`: the constant is folded into the expression.
    let StmtKind::RegWrite { reg: 0, value, .. } = &spec.tick[0].kind else {
        panic!("first statement writes r")
    };
    let ExprKind::Binary(_, lhs, rhs) = &value.kind else {
        panic!("an addition")
    };
    assert!(matches!(lhs.kind, ExprKind::Reg(0)));
    assert!(matches!(rhs.kind, ExprKind::Const(Value::Int(255))));
    assert_eq!(value.ty, Type::uint(32));
}
