//! Random designs of many small units joined by channels, for the
//! differential tests of channel code (issue 16): latency 0 to 3,
//! capacities 1 to 4, send rates 1 and 2, fan-in and fan-out, one- and
//! two-word items, every send and receive form (`send`, `try_send`,
//! `can_send`, `recv`, `peek`), sends and receives on some edges only (so
//! items wait and senders are refused), and now and then a `send` that may
//! be refused, which faults. Latency-0 connections run only from a unit to
//! a later one, so they never form a cycle.

use std::fmt::Write;

use super::rng::Rng;

/// One unit's ports: its outputs' send rates and how many inputs it has.
struct Ports {
    rates: Vec<u32>,
    inputs: usize,
}

/// Generates the design for `seed`.
pub fn random_channel_design(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut s = String::new();
    let _ = writeln!(s, "clock a = 1 GHz;");
    let _ = writeln!(s, "clock b = 750 MHz phase 113 ps;");
    let _ = writeln!(s, "struct W {{ lo: u64, hi: u64 }}");
    let wide = rng.one_in(3);
    let item = if wide {
        "W"
    } else {
        *rng.pick(&["u32", "u64", "u8"])
    };
    let units = 3 + rng.below(8) as usize;
    // A quarter of the designs may `send` without asking, which faults
    // when refused; the rest run their whole length.
    let may_fault = rng.one_in(4);
    let domain: Vec<&str> = (0..units)
        .map(|_| if rng.one_in(4) { "b" } else { "a" })
        .collect();
    let ports: Vec<Ports> = (0..units)
        .map(|u| Ports {
            rates: (0..usize::from(u + 1 < units) + rng.below(2) as usize)
                .map(|_| if rng.one_in(4) { 2 } else { 1 })
                .collect(),
            inputs: usize::from(u > 0) + rng.below(2) as usize,
        })
        .collect();
    // Connections: every input is fed by one or two outputs of its domain
    // (fan-in), and an output may feed several inputs (fan-out).
    let mut links = Vec::new();
    let mut used = vec![Vec::new(); units];
    let mut fed = vec![Vec::new(); units];
    for (v, p) in ports.iter().enumerate() {
        for i in 0..p.inputs {
            let sources: Vec<(usize, usize)> = (0..units)
                .filter(|&u| u != v && domain[u] == domain[v])
                .flat_map(|u| (0..ports[u].rates.len()).map(move |o| (u, o)))
                .collect();
            if sources.is_empty() {
                continue;
            }
            let mut fed_by = Vec::new();
            for _ in 0..1 + usize::from(rng.one_in(3)) {
                let (u, o) = *rng.pick(&sources);
                if fed_by.contains(&(u, o)) {
                    continue;
                }
                fed_by.push((u, o));
                let latency = if u < v && !rng.one_in(3) {
                    0
                } else {
                    1 + rng.below(3)
                };
                let capacity = 1 + rng.below(4);
                links.push(format!(
                    "    connect u{u}.o{o} -> u{v}.i{i} latency {latency} capacity {capacity};"
                ));
                used[u].push(o);
                fed[v].push(i);
            }
        }
    }
    let value = |rng: &mut Rng, u: usize| {
        let x = match rng.below(3) {
            0 => format!("n * {} + {u}", 1 + rng.below(9)),
            1 => "r ^ n".to_string(),
            _ => format!("r + {}", rng.below(50)),
        };
        if wide {
            format!("W {{ lo: ({x}) as u64, hi: (n as u64) * 3 }}")
        } else {
            format!("({x}) as {item}")
        }
    };
    let fold = |v: &str| {
        if wide {
            format!("({v}.lo ^ {v}.hi) as u32")
        } else {
            format!("{v} as u32")
        }
    };
    for (u, p) in ports.iter().enumerate() {
        let _ = writeln!(s, "unit U{u} {{");
        // Only the ports that links reach (no unused-port warnings).
        for (o, rate) in p.rates.iter().enumerate() {
            if used[u].contains(&o) {
                let _ = writeln!(s, "    out o{o}: {item} rate {rate};");
            }
        }
        let inputs: Vec<usize> = (0..p.inputs).filter(|i| fed[u].contains(i)).collect();
        for i in &inputs {
            let _ = writeln!(s, "    in i{i}: {item};");
        }
        let _ = writeln!(s, "    reg r: u32 = {};", rng.below(100));
        let _ = writeln!(s, "    reg n: u32;");
        let _ = writeln!(s, "    counter sent;");
        let _ = writeln!(s, "    counter got;");
        let _ = writeln!(s, "    tick {{");
        let _ = writeln!(s, "        n <= n + 1;");
        let _ = writeln!(s, "        let acc: u32 = r;");
        let _ = writeln!(s, "        if n == 0xFFFFFFF {{ sent += 1; got += 1; }}");
        for i in inputs {
            let take = fold("v");
            let line = match rng.below(5) {
                0 => {
                    format!("if let Some(v) = i{i}.recv() {{ acc = acc * 7 + {take}; got += 1; }}")
                }
                1 => format!(
                    "if (n % {}) == 0 {{ if let Some(v) = i{i}.recv() {{ acc = acc + {take}; got += 1; }} }}",
                    2 + rng.below(3)
                ),
                2 => format!(
                    "match i{i}.peek() {{ Some(v) => {{ if ({take} & 1) == 0 || (n & 1) == 1 {{ i{i}.recv(); got += 1; acc = acc ^ {take}; }} }} None => {{ }} }}"
                ),
                3 => format!(
                    "match i{i}.recv() {{ Some(v) => {{ acc = acc + {take}; got += 1; }} None => {{ acc = acc + 1; }} }}"
                ),
                _ => format!(
                    "if let Some(v) = i{i}.recv() {{ acc = acc ^ {take}; }} if let Some(w) = i{i}.recv() {{ acc = acc + {}; got += 1; }}",
                    fold("w")
                ),
            };
            let _ = writeln!(s, "        {line}");
        }
        for (o, rate) in p.rates.iter().enumerate() {
            if !used[u].contains(&o) {
                continue;
            }
            let v = value(&mut rng, u);
            let line = match rng.below(6) {
                0 => format!("if o{o}.can_send() {{ o{o}.send({v}); sent += 1; }}"),
                1 => format!("let ok{o}: bool = o{o}.try_send({v}); if ok{o} {{ sent += 1; }}"),
                2 => format!(
                    "if (n % {}) != 0 {{ let ok{o}: bool = o{o}.try_send({v}); if ok{o} {{ sent += 1; }} }}",
                    2 + rng.below(3)
                ),
                3 if *rate == 2 => format!(
                    "let a{o}: bool = o{o}.try_send({v}); let b{o}: bool = o{o}.try_send({v}); if a{o} && b{o} {{ sent += 2; }}"
                ),
                4 if may_fault && rng.one_in(2) => format!("o{o}.send({v}); sent += 1;"),
                _ => format!("if o{o}.can_send() {{ o{o}.try_send({v}); }}"),
            };
            let _ = writeln!(s, "        {line}");
        }
        let _ = writeln!(s, "        r <= acc;");
        let _ = writeln!(s, "    }}\n}}");
    }
    let _ = writeln!(s, "system Top {{");
    for (u, d) in domain.iter().enumerate() {
        let _ = writeln!(s, "    inst u{u}: U{u} on {d};");
    }
    for l in &links {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "}}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn designs_differ_by_seed_and_use_every_form() {
        let texts: Vec<String> = (0..64).map(random_channel_design).collect();
        let all = texts.concat();
        for form in [
            "latency 0",
            "latency 3",
            "capacity 4",
            "rate 2",
            ".can_send()",
            ".try_send(",
            ".send(",
            ".peek()",
            ".recv()",
            "W {",
            "on b;",
        ] {
            assert!(all.contains(form), "no design has `{form}`");
        }
        assert_ne!(texts[0], texts[1]);
    }
}
