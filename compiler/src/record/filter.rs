//! `--trace-filter`: which units, events and times are recorded.
//!
//! Syntax: comma-separated `KEY=VALUE` terms, the flag repeatable:
//! `unit=GLOB` (instance path, `*` and `?`), `event=NAME` (a design trace
//! name or a FIFO event kind such as `write`), `from=TIME` and `to=TIME`
//! (inclusive, exact: `1us`, `2.5 ns`). Terms with the same key are
//! alternatives; different keys must all hold.

use chronon_record::Time;
use chronon_record::vcd::glob_match;

use crate::run::parse_time;

/// A parsed `--trace-filter`; the default keeps everything.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceFilter {
    /// Instance-path globs; empty: every unit.
    pub units: Vec<String>,
    /// Event names; empty: every event.
    pub events: Vec<String>,
    /// Earliest time kept, in picoseconds.
    pub from: Option<Time>,
    /// Latest time kept, in picoseconds.
    pub to: Option<Time>,
}

impl TraceFilter {
    /// Adds the terms of one `--trace-filter` argument.
    pub fn add(&mut self, text: &str) -> Result<(), String> {
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let Some((key, value)) = term.split_once('=') else {
                return Err(format!(
                    "`{term}` is not KEY=VALUE (keys: unit, event, from, to)"
                ));
            };
            let value = value.trim();
            match key.trim() {
                "unit" => self.units.push(value.to_string()),
                "event" => self.events.push(value.to_string()),
                "from" => self.from = Some(exact_time(value)?),
                "to" => self.to = Some(exact_time(value)?),
                other => {
                    return Err(format!(
                        "unknown filter key `{other}` (keys: unit, event, from, to)"
                    ));
                }
            }
        }
        // An empty window would record nothing: almost surely swapped bounds.
        if let (Some(from), Some(to)) = (self.from, self.to)
            && from > to
        {
            return Err(
                "the time window is empty: `from` is later than `to` (swap them?)".to_string(),
            );
        }
        Ok(())
    }

    /// Whether unit `path` is kept.
    pub fn keeps_unit(&self, path: &str) -> bool {
        self.units.is_empty() || self.units.iter().any(|g| glob_match(g, path))
    }

    /// Whether event `name` is kept.
    pub fn keeps_event(&self, name: &str) -> bool {
        self.events.is_empty() || self.events.iter().any(|e| e == name)
    }

    /// Whether `time` is inside the window.
    #[inline]
    pub fn keeps_time(&self, time: Time) -> bool {
        self.from.is_none_or(|f| time >= f) && self.to.is_none_or(|t| time <= t)
    }

    /// Whether nothing after `time` can be kept.
    pub fn past_window(&self, time: Time) -> bool {
        self.to.is_some_and(|t| time > t)
    }
}

/// A time argument as an exact [`Time`].
fn exact_time(text: &str) -> Result<Time, String> {
    let ps = parse_time(text)?;
    let (num, den) = (*ps.numer(), *ps.denom());
    match (u128::try_from(num), u64::try_from(den)) {
        (Ok(num), Ok(den)) => Time::new(num, den).ok_or_else(|| format!("bad time `{text}`")),
        _ => Err(format!("time `{text}` is out of range")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_combine_by_key() {
        let mut f = TraceFilter::default();
        f.add("unit=top.p*, event=got").expect("valid filter");
        f.add("unit=top.q,from=1ns,to=2.5ns").expect("valid filter");
        let cases = [
            ("top.p1", true),
            ("top.q", true),
            ("top.r", false),
            ("top.pq.x", true),
        ];
        for (unit, kept) in cases {
            assert_eq!(f.keeps_unit(unit), kept, "{unit}");
        }
        assert!(f.keeps_event("got") && !f.keeps_event("write"));
        let ps = |n: u128| Time::from_ps(n);
        for (t, kept) in [(999, false), (1000, true), (2500, true), (2501, false)] {
            assert_eq!(f.keeps_time(ps(t)), kept, "{t} ps");
        }
        assert!(f.past_window(ps(2501)) && !f.past_window(ps(2500)));
    }

    #[test]
    fn bad_terms_are_reported() {
        for text in ["unit", "colour=red", "from=soon", "to=-1ns"] {
            assert!(TraceFilter::default().add(text).is_err(), "{text}");
        }
    }

    #[test]
    fn an_empty_time_window_is_refused_in_one_argument_or_across_two() {
        let err = TraceFilter::default().add("from=5ns,to=1ns").unwrap_err();
        assert!(err.contains("window is empty"), "{err}");
        let mut f = TraceFilter::default();
        f.add("to=1ns").expect("valid filter");
        assert!(f.add("from=1001ps").is_err());
        let mut f = TraceFilter::default();
        f.add("from=1ns,to=1000ps")
            .expect("a window of one instant is kept");
    }
}
