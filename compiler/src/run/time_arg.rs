//! Exact time arguments on the command line: `5us`, `1/3 ms`, `2.5 ns`.

use chronon_runtime::Picos;
use num_traits::CheckedMul;

/// Parses a number (integer, decimal or ratio) and a unit
/// (`fs ps ns us ms s`) into exact picoseconds.
pub fn parse_time(text: &str) -> Result<Picos, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic())
        .ok_or_else(|| format!("`{text}` has no unit"))?;
    let (number, unit) = (t[..split].trim(), t[split..].trim());
    let scale: Picos = match unit {
        "fs" => Picos::new(1, 1000),
        "ps" => Picos::from_integer(1),
        "ns" => Picos::from_integer(1_000),
        "us" => Picos::from_integer(1_000_000),
        "ms" => Picos::from_integer(1_000_000_000),
        "s" => Picos::from_integer(1_000_000_000_000),
        other => {
            return Err(format!(
                "unknown time unit `{other}` (use fs, ps, ns, us, ms or s)"
            ));
        }
    };
    // Numbers carry no sign, so a negative time would otherwise read as
    // "not a number".
    if number.starts_with('-') {
        return Err(format!("`{text}` is negative"));
    }
    let value = parse_number(number).ok_or_else(|| format!("`{number}` is not a number"))?;
    if value < Picos::from_integer(0) {
        return Err(format!("`{text}` is negative"));
    }
    value
        .checked_mul(&scale)
        .ok_or_else(|| format!("`{text}` is too large"))
}

fn parse_number(s: &str) -> Option<Picos> {
    if let Some((n, d)) = s.split_once('/') {
        // One ratio: `1/3/7` is refused, not read as `1/(3/7)`.
        if d.contains('/') {
            return None;
        }
        let (n, d) = (parse_number(n.trim())?, parse_number(d.trim())?);
        return (d != Picos::from_integer(0)).then(|| n / d);
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let digits = |x: &str| x.chars().all(|c| c.is_ascii_digit() || c == '_');
    if !digits(int) || !digits(frac) {
        return None;
    }
    let clean = |x: &str| x.replace('_', "");
    let whole: i128 = if int.is_empty() {
        0
    } else {
        clean(int).parse().ok()?
    };
    let frac_clean = clean(frac);
    let denom = 10i128.checked_pow(frac_clean.len() as u32)?;
    let num: i128 = if frac_clean.is_empty() {
        0
    } else {
        frac_clean.parse().ok()?
    };
    Some(Picos::from_integer(whole) + Picos::new(num, denom))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_exactly() {
        let cases: &[(&str, Option<Picos>)] = &[
            ("5us", Some(Picos::from_integer(5_000_000))),
            ("1/3 ms", Some(Picos::new(1_000_000_000, 3))),
            ("2.5 ns", Some(Picos::from_integer(2_500))),
            ("750fs", Some(Picos::new(3, 4))),
            ("10", None),
            ("3 parsecs", None),
            ("-1 ns", None),
            ("1/0 ns", None),
            ("1/3/7 ps", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_time(text).ok(), *want, "{text}");
        }
    }
}
