//! Random well-typed `.chr` designs for end-to-end differential testing:
//! several clocks, units with registers of mixed widths (past 64 bits
//! too, up to 128, where division still is allowed) and signedness,
//! register arrays under dynamic indices, a struct register written whole
//! and field by field under a `match`, stage registers, channels of
//! several latencies and capacities, and CDC FIFOs between clocks (both
//! read styles). Over a few dozen seeds the designs use every statement
//! and pattern form of docs/language.md (`tests/statement_forms.rs` lists
//! them), options taken apart each way. Every generated design
//! type-checks.

use std::fmt::Write;

use super::rng::Rng;

/// Widths past 64 bits stop at 128, where division still is allowed.
const TYPES: &[&str] = &[
    "u1", "u8", "i8", "u13", "i16", "u32", "i32", "u64", "i64", "u65", "i100", "u128",
];

/// The widest concatenation the generator builds.
const MAX_CONCAT: u64 = 256;

fn lit(rng: &mut Rng, ty: &str) -> String {
    let v = rng.below(100.min(1 << width(ty).min(7)));
    format!("{v}{ty}")
}

/// An expression of type `ty` over the registers `regs` (name, type).
fn expr(rng: &mut Rng, ty: &str, regs: &[(String, String)], depth: u32) -> String {
    let same: Vec<&(String, String)> = regs.iter().filter(|(_, t)| t == ty).collect();
    if depth >= 3 || rng.one_in(3) {
        // A seeded `random()` now and then (typed by `as`, like a literal).
        if rng.one_in(8) {
            return format!("(random() as {ty})");
        }
        return match same.is_empty() || rng.one_in(3) {
            true => lit(rng, ty),
            false => rng.pick(&same).0.clone(),
        };
    }
    let d = depth + 1;
    match rng.below(6) {
        0 => {
            // Division past 64 bits unrolls into thousands of operations:
            // rare, so that the designs stay quick to compile.
            let ops: &[&str] = if width(ty) <= 64 || rng.one_in(8) {
                &["+", "-", "*", "/", "%", "&", "|", "^"]
            } else {
                &["+", "-", "*", "&", "|", "^"]
            };
            let op = *rng.pick(ops);
            format!(
                "({} {op} {})",
                expr(rng, ty, regs, d),
                expr(rng, ty, regs, d)
            )
        }
        1 => {
            let op = *rng.pick(&["<<", ">>"]);
            format!(
                "({} {op} {})",
                expr(rng, ty, regs, d),
                expr(rng, "u8", regs, d)
            )
        }
        2 => {
            let from = *rng.pick(TYPES);
            format!("({} as {ty})", expr(rng, from, regs, d))
        }
        3 if ty.starts_with('u') => {
            let at = *rng.pick(TYPES);
            let op = *rng.pick(&["==", "!=", "<", "<=", ">", ">="]);
            format!(
                "(({} {op} {}) as {ty})",
                expr(rng, at, regs, d),
                expr(rng, at, regs, d)
            )
        }
        4 if ty.starts_with('i') => format!("(-{})", expr(rng, ty, regs, d)),
        5 | 6 => format!("({} as {ty})", bits(rng, regs, d)),
        _ => format!("(~{})", expr(rng, ty, regs, d)),
    }
}

/// The width of one of [`TYPES`].
fn width(ty: &str) -> u64 {
    ty[1..].parse().unwrap_or(1)
}

/// A bit-level expression (an unsigned value of some width): a bit
/// select, a slice of each form (run-time positions kept in range, so a
/// fault is rare), a concatenation, a replication or a reduction.
fn bits(rng: &mut Rng, regs: &[(String, String)], d: u32) -> String {
    let from = *rng.pick(TYPES);
    let w = width(from);
    let x = expr(rng, from, regs, d + 1);
    match rng.below(7) {
        0 => format!("{x}[{}]", rng.below(w)),
        1 => {
            let i = expr(rng, "u8", regs, d + 1);
            format!("{x}[{i} % {w}u8]")
        }
        2 => {
            let lo = rng.below(w);
            let hi = lo + rng.below(w - lo);
            format!("{x}[{hi}:{lo}]")
        }
        3 | 4 => {
            let k = 1 + rng.below(w);
            let i = expr(rng, "u8", regs, d + 1);
            let at = format!("({i} % {}u8)", w - k + 1);
            if rng.one_in(2) {
                format!("{x}[{at} +: {k}]")
            } else {
                format!("{x}[{at} + {}u8 -: {k}]", k - 1)
            }
        }
        5 => {
            let other = *rng.pick(TYPES);
            if w + width(other) <= MAX_CONCAT {
                format!("{{{x}, {}}}", expr(rng, other, regs, d + 1))
            } else {
                let n = 1 + rng.below(MAX_CONCAT / w);
                format!("{{{n}{{{x}}}}}")
            }
        }
        _ => format!("({}{x})", rng.pick(&["&", "|", "^"])),
    }
}

/// One of the ways docs/language.md gives to take apart the option `src`
/// (`rx.recv()`): `if let`, with or without `else`, or a `match` with the
/// arms `Some(v)`, `None` and `_` in each combination that can run `then`
/// (on the value `v`) or `otherwise` (when there is none).
fn take_apart(rng: &mut Rng, src: &str, then: &str, otherwise: &str) -> String {
    match rng.below(8) {
        0 | 1 => format!("if let Some(v) = {src} {{ {then} }}"),
        2 => format!("if let Some(v) = {src} {{ {then} }} else {{ {otherwise} }}"),
        3 => format!("match {src} {{ Some(v) => {{ {then} }} None => {{ {otherwise} }} }}"),
        4 => format!("match {src} {{ None => {{ {otherwise} }} Some(v) => {{ {then} }} }}"),
        5 => format!("match {src} {{ Some(v) => {{ {then} }} _ => {{ {otherwise} }} }}"),
        6 => format!("match {src} {{ Some(v) => {{ {then} }} }}"),
        // The value is taken and dropped.
        _ => format!("match {src} {{ None => {{ {otherwise} }} _ => {{ }} }}"),
    }
}

/// A look at the head of `port` that takes nothing: `peek` with a `match`
/// of `_` alone, of `None` alone, or an `if let`.
fn peek(rng: &mut Rng, port: &str) -> String {
    match rng.below(3) {
        0 => format!("match {port}.peek() {{ _ => {{ }} }}"),
        1 => format!("match {port}.peek() {{ None => {{ idle += 1; }} }}"),
        _ => format!("if let Some(h) = {port}.peek() {{ trace(\"head\", h = h); }}"),
    }
}

/// A look at `port`'s head ([`peek`]), then its `recv()` taken apart
/// ([`take_apart`]): two tick lines.
fn receive(rng: &mut Rng, port: &str, then: &str, otherwise: &str) -> String {
    let look = peek(rng, port);
    let take = take_apart(rng, &format!("{port}.recv()"), then, otherwise);
    format!("        {look}\n        {take}")
}

fn cond(rng: &mut Rng, regs: &[(String, String)]) -> String {
    let at = *rng.pick(TYPES);
    let op = *rng.pick(&["==", "!=", "<", ">="]);
    format!("{} {op} {}", expr(rng, at, regs, 1), expr(rng, at, regs, 2))
}

/// Generates the design for `seed`.
pub fn random_design(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut s = String::new();
    let clocks = 1 + rng.below(3) as usize;
    for c in 0..clocks {
        let mhz = *rng.pick(&[250u64, 500, 914, 1000, 1326]);
        let phase = rng.below(300);
        let _ = writeln!(s, "clock c{c} = {mhz} MHz phase {phase} ps;");
    }
    let units = 2 + rng.below(3) as usize;
    let shapes: Vec<(usize, &str)> = (0..units)
        .map(|_| (rng.below(clocks as u64) as usize, *rng.pick(&TYPES[..4])))
        .collect();
    // Links: each unit's output feeds units with the same item type, through
    // a channel in its own clock or a CDC FIFO (one per reader port).
    let mut links = Vec::new();
    let mut fed = vec![[false; 3]; units];
    let mut feeds = vec![false; units];
    for a in 0..units {
        for b in 0..units {
            if a == b || shapes[a].1 != shapes[b].1 || rng.one_in(3) {
                continue;
            }
            if shapes[a].0 == shapes[b].0 && rng.one_in(2) {
                let (latency, capacity) = (1 + rng.below(3), 1 + rng.below(4));
                links.push(format!(
                    "    connect u{a}.tx -> u{b}.rx latency {latency} capacity {capacity};"
                ));
                fed[b][0] = true;
            } else {
                let which = 1 + rng.below(2) as usize;
                if fed[b][which] {
                    continue;
                }
                fed[b][which] = true;
                let port = ["rx", "rd", "rf"][which];
                let depth = *rng.pick(&[2u32, 4, 8]);
                let sync = 2 + rng.below(3);
                links.push(format!(
                    "    cdc u{a}.tx -> u{b}.{port} depth {depth} sync {sync};"
                ));
            }
            feeds[a] = true;
        }
    }
    for (u, &(_, item)) in shapes.iter().enumerate() {
        let mut regs: Vec<(String, String)> = Vec::new();
        let fields = [*rng.pick(TYPES), *rng.pick(TYPES)];
        let _ = writeln!(s, "struct S{u} {{ a: {}, b: {} }}", fields[0], fields[1]);
        let _ = writeln!(s, "enum M{u} {{ Idle, Busy, Done }}");
        let _ = writeln!(
            s,
            "fn step{u}(x: u64) -> u64 {{ if x > 3 {{ return x - 1; }} return x + 1; }}"
        );
        let _ = writeln!(s, "unit U{u} {{");
        if feeds[u] {
            let _ = writeln!(s, "    out tx: {item};");
        }
        for (i, decl) in ["in rx: {}", "in rd: {} cdc", "in rf: {} cdc fwft"]
            .iter()
            .enumerate()
        {
            if fed[u][i] {
                let _ = writeln!(s, "    {};", decl.replace("{}", item));
            }
        }
        for r in 0..2 + rng.below(3) {
            let ty = *rng.pick(TYPES);
            let init = if ty == "u1" {
                rng.below(2)
            } else {
                rng.below(100)
            };
            let _ = writeln!(s, "    reg r{r}: {ty} = {init};");
            regs.push((format!("r{r}"), ty.to_string()));
        }
        let aty = *rng.pick(TYPES);
        let _ = writeln!(s, "    reg arr: [{aty}; 4];");
        let _ = writeln!(s, "    reg k: u2;");
        let _ = writeln!(s, "    reg sr: S{u};");
        let _ = writeln!(s, "    reg mode: M{u} = M{u}::Idle;");
        let _ = writeln!(s, "    stage st: {item} pipes 2;");
        let _ = writeln!(s, "    counter got;");
        let _ = writeln!(s, "    counter idle;");
        let _ = writeln!(s, "    counter looped;");
        let _ = writeln!(s, "    tick {{");
        let _ = writeln!(s, "        k <= k + 1;");
        // A local with an inferred type, reassigned, read after the
        // receives below (whatever form takes their options apart).
        let _ = writeln!(s, "        let seen = k as u64;");
        let _ = writeln!(s, "        seen = step{u}(seen + 1);");
        let _ = writeln!(
            s,
            "        match mode {{ M{u}::Idle => {{ mode <= M{u}::Busy; }} M{u}::Busy => {{ mode <= M{u}::Done; }} _ => {{ mode <= M{u}::Idle; }} }}"
        );
        let _ = writeln!(
            s,
            "        match k == 3 {{ true => {{ idle += 1; }} false => {{ }} }}"
        );
        let _ = writeln!(
            s,
            "        for i in 0..4 {{ if i == 3 {{ arr[i] <= arr[i] + 1; }} else if i == 0 {{ }} }}"
        );
        // Run-time loops: a range from a register, a condition on locals
        // the body changes.
        let e = expr(&mut rng, aty, &regs, 1);
        let _ = writeln!(s, "        let acc: u64 = 0;");
        let _ = writeln!(
            s,
            "        for j in (k as u32)..4 max 4 {{ acc = acc + ({e} as u64) + (j as u64); if j == 1 {{ arr[j] <= arr[j] + 1; }} }}"
        );
        let _ = writeln!(s, "        let w: u8 = k as u8;");
        let _ = writeln!(
            s,
            "        while w < 5 && acc != 7 max 8 {{ w = w + 1; acc = acc ^ (w as u64); }}"
        );
        let _ = writeln!(s, "        looped += acc;");
        let _ = writeln!(s, "        assert(seen != 0, \"seen is never zero\");");
        let _ = writeln!(s, "        if seen == 0xFFFFFFFFFFFF {{ finish; }}");
        let _ = writeln!(
            s,
            "        arr[k] <= arr[k] + {};",
            expr(&mut rng, aty, &regs, 1)
        );
        for (name, ty) in &regs {
            let c = cond(&mut rng, &regs);
            let a = expr(&mut rng, ty, &regs, 0);
            let b = expr(&mut rng, ty, &regs, 0);
            let _ = writeln!(
                s,
                "        if {c} {{ {name} <= {a}; }} else {{ {name} <= {b}; }}"
            );
        }
        // Bits of one register written under a condition, then the bit
        // or bits at a run-time position: the two combine bit by bit.
        let (name, ty) = rng.pick(&regs).clone();
        let w = width(&ty);
        let (lo, k) = (rng.below(w), 1 + rng.below(w));
        let k = k.min(w - lo);
        let v = expr(&mut rng, &format!("u{k}"), &regs, 2);
        let c = cond(&mut rng, &regs);
        let at = format!("(k as u8 % {}u8)", w - k + 1);
        let _ = writeln!(
            s,
            "        if {c} {{ {name}[{}:{lo}] <= {v}; }} {name}[{at} +: {k}] <= {v};",
            lo + k - 1
        );
        // The struct's fields read as registers of their own types.
        let mut with_fields = regs.clone();
        with_fields.push(("sr.a".to_string(), fields[0].to_string()));
        with_fields.push(("sr.b".to_string(), fields[1].to_string()));
        let (fa, fb) = (
            expr(&mut rng, fields[0], &with_fields, 1),
            expr(&mut rng, fields[1], &with_fields, 1),
        );
        let whole = format!(
            "S{u} {{ a: {}, b: {} }}",
            expr(&mut rng, fields[0], &regs, 2),
            expr(&mut rng, fields[1], &regs, 2)
        );
        let _ = writeln!(
            s,
            "        match k {{ 0 => {{ sr.a <= {fa}; }} 1 | 2 => {{ sr.b <= {fb}; }} _ => {{ sr <= {whole}; }} }}"
        );
        let _ = writeln!(s, "        trace(\"sr\", a = sr.a, b = sr.b);");
        if feeds[u] {
            let v = expr(&mut rng, item, &with_fields, 1);
            match rng.below(2) {
                0 => {
                    let _ = writeln!(s, "        let ok: bool = tx.try_send({v});");
                }
                _ => {
                    let _ = writeln!(s, "        let ok: bool = tx.can_send();");
                    let _ = writeln!(s, "        if ok {{ tx.send({v}); }}");
                }
            }
            let _ = writeln!(s, "        trace(\"sent\", ok = ok);");
        }
        if fed[u][0] {
            let lines = receive(&mut rng, "rx", "got += 1; st.write(0, v);", "idle += 1;");
            let _ = writeln!(s, "{lines}");
        }
        let _ = writeln!(
            s,
            "        if st.valid(0) {{ st.write(1, st.read(0)); }} else {{ st.retain(1); }}"
        );
        let _ = writeln!(
            s,
            "        if st.valid(1) {{ trace(\"st\", v = st.read(1)); }}"
        );
        if fed[u][1] {
            let _ = writeln!(
                s,
                "        if rd.valid() {{ if let Some(v) = rd.take() {{ got += v as u64; }} }}"
            );
            let _ = writeln!(s, "        let asked: bool = rd.request();");
            let _ = writeln!(s, "        trace(\"asked\", asked = asked);");
        }
        if fed[u][2] {
            let lines = receive(
                &mut rng,
                "rf",
                "got += 4; trace(\"rf\", v = v);",
                "idle += 2;",
            );
            let _ = writeln!(s, "{lines}");
        }
        let _ = writeln!(s, "        trace(\"r\", a = arr[k], seen = seen);");
        let _ = writeln!(
            s,
            "        print(\"u{u} {{}} {{:#x}} {{:b}} {{{{k}}}}\", seen, arr[k], seen == 0);"
        );
        let _ = writeln!(s, "    }}\n}}");
    }
    let _ = writeln!(s, "system Top {{");
    for (u, (clock, _)) in shapes.iter().enumerate() {
        let _ = writeln!(s, "    inst u{u}: U{u} on c{clock};");
    }
    for l in links {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "}}");
    s
}
