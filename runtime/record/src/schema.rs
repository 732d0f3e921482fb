//! What a run can record: its domains, units, event names, FIFOs, counters
//! and signals, declared once before the first record.

use serde::{Deserialize, Serialize};

use crate::error::SchemaError;
use crate::time::Time;

/// The most values one trace record may carry (the front end's limit on a
/// `trace`'s values, E0326, where an argument wider than 64 bits counts
/// one per 64-bit limb); every writer takes any count up to it.
pub const MAX_ARGS: usize = 64;

/// Everything a recorder needs to name the indices that records carry.
///
/// Indices in records are positions in these lists. Domains are listed in
/// declaration order, which is the canonical order within an instant.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Schema {
    /// The design's name (the Perfetto process name).
    pub design: String,
    /// Clock domains in declaration order.
    pub domains: Vec<DomainInfo>,
    /// Unit instances; their canonical order is that of their paths.
    pub units: Vec<UnitInfo>,
    /// Trace event names with their argument names.
    pub events: Vec<EventInfo>,
    /// CDC FIFOs.
    pub fifos: Vec<FifoInfo>,
    /// Counters, each sampled in one domain.
    pub counters: Vec<CounterInfo>,
    /// Registers and ports that the VCD writer can dump.
    pub signals: Vec<SignalInfo>,
}

/// A clock domain: edge `n` is at `phase + n * period`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DomainInfo {
    /// Declared name.
    pub name: String,
    /// Exact period.
    #[serde(with = "time_text")]
    pub period: Time,
    /// Exact phase.
    #[serde(with = "time_text")]
    pub phase: Time,
}

/// A unit instance.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct UnitInfo {
    /// Dotted instance path, e.g. `top.core.alu`.
    pub path: String,
    /// Index of the unit's domain.
    pub domain: u32,
}

/// A trace event name and the names of its arguments.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EventInfo {
    /// Event name.
    pub name: String,
    /// Argument names, in the order records carry the values.
    pub args: Vec<String>,
    /// Per argument, its width when it is a signed integer (1 to 64), or 0
    /// for an unsigned one (bools and enums too); empty when every argument
    /// is unsigned, the default, so schemas and manifests written before
    /// this field existed still read. Records always carry raw bits; the
    /// writers sign-extend a signed argument from this width, once per
    /// value, from a per-event table built at start (never per record).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signed_widths: Vec<u32>,
    /// Per argument, its width when it is an integer wider than 64 bits
    /// (65 to [`MAX_SIGNAL_BITS`]), or 0; empty when no argument is wide,
    /// the default. A wide argument's value is `width.div_ceil(64)`
    /// consecutive record values, its limbs, least significant first; the
    /// writers show it as one number. A signed wide argument has the same
    /// width in `signed_widths`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wide_widths: Vec<u32>,
}

impl EventInfo {
    /// An event whose arguments are all unsigned and at most 64 bits wide.
    pub fn plain(name: &str, args: &[&str]) -> EventInfo {
        EventInfo {
            name: name.to_owned(),
            args: args.iter().map(|&a| a.to_owned()).collect(),
            signed_widths: Vec::new(),
            wide_widths: Vec::new(),
        }
    }

    /// The signed width of argument `i`: `Some(width)` for a signed
    /// argument, `None` for an unsigned one.
    pub fn signed_width(&self, i: usize) -> Option<u32> {
        self.signed_widths.get(i).copied().filter(|&w| w != 0)
    }

    /// The width of argument `i` when it is wider than 64 bits.
    pub fn wide_width(&self, i: usize) -> Option<u32> {
        self.wide_widths.get(i).copied().filter(|&w| w != 0)
    }

    /// How many values a record of this event carries: one per argument,
    /// one per 64-bit limb of a wide one.
    pub fn values(&self) -> usize {
        (0..self.args.len())
            .map(|i| self.wide_width(i).map_or(1, |w| w.div_ceil(64) as usize))
            .sum()
    }
}

/// Reads the raw bits of a `width`-bit two's complement value (1 to 64) as
/// an `i64`: bit `width - 1` is the sign, bits above it are ignored, so a
/// masked value and an already sign-extended one read the same.
#[inline(always)]
pub fn sign_extend(bits: u64, width: u32) -> i64 {
    let shift = 64 - width.clamp(1, 64);
    ((bits << shift) as i64) >> shift
}

/// A CDC FIFO between a writer and a reader domain.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FifoInfo {
    /// Instance path of the FIFO.
    pub path: String,
    /// Writer domain index.
    pub writer_domain: u32,
    /// Reader domain index.
    pub reader_domain: u32,
    /// Storage depth (the VCD occupancy signal is sized from it).
    pub depth: u32,
}

/// A counter sampled at edges of one domain.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CounterInfo {
    /// Counter name.
    pub name: String,
    /// Index of the sampling domain.
    pub domain: u32,
}

/// A register or port value that can be dumped to VCD.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SignalInfo {
    /// Index of the owning unit (its path is the VCD scope).
    pub unit: u32,
    /// Signal name inside the unit.
    pub name: String,
    /// Bit width: 1 to 64, or up to [`MAX_SIGNAL_BITS`] for a value held
    /// in several signals ([`SignalInfo::limb`]).
    pub width: u32,
    /// For a value wider than 64 bits: which of its 64-bit limbs this
    /// signal carries, least significant first. The limbs are consecutive
    /// signals with the value's name and width, limb 0 first; a waveform
    /// shows them as one variable. 0 for every other signal.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub limb: u32,
}

/// The widest value a signal's limbs may make up.
pub const MAX_SIGNAL_BITS: u32 = 1024;

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl Schema {
    /// Checks that every cross reference is in range and every name is
    /// usable in every output format.
    pub fn validate(&self) -> Result<(), SchemaError> {
        let domains = self.domains.len();
        for d in &self.domains {
            check_name("domain", &d.name)?;
            if d.period.num() == 0 {
                return Err(SchemaError::ZeroPeriod(d.name.clone()));
            }
        }
        for u in &self.units {
            check_name("unit", &u.path)?;
            check_index("unit", &u.path, u.domain, domains)?;
        }
        for e in &self.events {
            check_name("event", &e.name)?;
            for a in &e.args {
                check_name("argument", a)?;
            }
            let wide_fit = e.wide_widths.is_empty()
                || (e.wide_widths.len() == e.args.len()
                    && e.wide_widths
                        .iter()
                        .all(|&w| w == 0 || (65..=MAX_SIGNAL_BITS).contains(&w)));
            if !wide_fit {
                return Err(SchemaError::WideWidths {
                    event: e.name.clone(),
                    widths: e.wide_widths.clone(),
                    args: e.args.len(),
                });
            }
            if e.values() > MAX_ARGS {
                return Err(SchemaError::TooManyArgs {
                    event: e.name.clone(),
                    count: e.values(),
                });
            }
            // A narrow argument's signed width is at most 64; a wide one's
            // is its width.
            let widths_fit = e.signed_widths.is_empty()
                || (e.signed_widths.len() == e.args.len()
                    && e.signed_widths.iter().enumerate().all(|(i, &w)| {
                        w == 0 || e.wide_width(i).map_or(w <= 64, |wide| w == wide)
                    }));
            if !widths_fit {
                return Err(SchemaError::SignedWidths {
                    event: e.name.clone(),
                    widths: e.signed_widths.clone(),
                    args: e.args.len(),
                });
            }
        }
        for f in &self.fifos {
            check_name("fifo", &f.path)?;
            check_index("fifo", &f.path, f.writer_domain, domains)?;
            check_index("fifo", &f.path, f.reader_domain, domains)?;
        }
        for c in &self.counters {
            check_name("counter", &c.name)?;
            check_index("counter", &c.name, c.domain, domains)?;
        }
        for (i, s) in self.signals.iter().enumerate() {
            check_name("signal", &s.name)?;
            check_index("signal", &s.name, s.unit, self.units.len())?;
            let limbs = s.width.div_ceil(64);
            // A limb past 0 follows its value's previous limb.
            let follows = |prev: &SignalInfo| {
                prev.limb + 1 == s.limb && prev.width == s.width && prev.name == s.name
            };
            let limb_ok = s.limb == 0 || (i > 0 && follows(&self.signals[i - 1]));
            if !(1..=MAX_SIGNAL_BITS).contains(&s.width) || s.limb >= limbs || !limb_ok {
                return Err(SchemaError::SignalWidth {
                    signal: s.name.clone(),
                    width: s.width,
                });
            }
        }
        Ok(())
    }

    /// The time of edge `cycle` of domain `domain`; `None` on overflow.
    pub fn edge_time(&self, domain: u32, cycle: u64) -> Option<Time> {
        let d = self.domains.get(domain as usize)?;
        d.phase.add_mul(d.period, cycle)
    }

    /// Ranks of the units in canonical instance-path order: `rank[u]` is the
    /// position of unit `u` when paths are compared segment by segment.
    pub fn unit_ranks(&self) -> Vec<u32> {
        let mut order: Vec<usize> = (0..self.units.len()).collect();
        order.sort_by(|&a, &b| {
            self.units[a]
                .path
                .split('.')
                .cmp(self.units[b].path.split('.'))
        });
        let mut rank = vec![0u32; order.len()];
        for (r, &u) in order.iter().enumerate() {
            rank[u] = r as u32;
        }
        rank
    }
}

fn check_name(what: &'static str, name: &str) -> Result<(), SchemaError> {
    let usable = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_graphic() && !matches!(c, '=' | '"' | '\\' | ','));
    if usable {
        Ok(())
    } else {
        Err(SchemaError::BadName {
            what,
            name: name.to_owned(),
        })
    }
}

fn check_index(what: &'static str, name: &str, index: u32, len: usize) -> Result<(), SchemaError> {
    if (index as usize) < len {
        Ok(())
    } else {
        Err(SchemaError::BadIndex {
            what,
            name: name.to_owned(),
            index,
        })
    }
}

/// Serialises a [`Time`] as its exact text form in the manifest.
mod time_text {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use crate::time::Time;

    pub fn serialize<S: Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(t)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        let text = String::deserialize(d)?;
        Time::parse(&text).ok_or_else(|| D::Error::custom(format!("bad exact time {text:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_widths(widths: Vec<u32>) -> Schema {
        Schema {
            design: "t".to_owned(),
            events: vec![EventInfo {
                signed_widths: widths,
                ..EventInfo::plain("e", &["a", "b"])
            }],
            ..Schema::default()
        }
    }

    fn with_wide(wide: Vec<u32>, signed: Vec<u32>) -> Schema {
        let mut s = with_widths(signed);
        s.events[0].wide_widths = wide;
        s
    }

    /// Wide widths are none or one per argument, each 0 or 65 to 1024; a
    /// signed wide argument's signed width is its width; the limbs count
    /// toward the values a record carries.
    #[test]
    fn wide_widths_are_validated() {
        for (wide, signed) in [
            (vec![], vec![]),
            (vec![0, 65], vec![]),
            (vec![1024, 0], vec![1024, 8]),
            (vec![128, 128], vec![0, 128]),
        ] {
            let s = with_wide(wide.clone(), signed);
            assert_eq!(s.validate(), Ok(()), "{wide:?}");
        }
        assert_eq!(with_wide(vec![1024, 65], vec![]).events[0].values(), 18);
        for bad in [vec![64, 0], vec![1025, 0], vec![128]] {
            assert!(
                matches!(
                    with_wide(bad.clone(), vec![]).validate(),
                    Err(SchemaError::WideWidths { .. })
                ),
                "{bad:?}"
            );
        }
        for bad in [vec![65, 0], vec![0, 64], vec![0, 129]] {
            assert!(
                matches!(
                    with_wide(vec![0, 128], bad.clone()).validate(),
                    Err(SchemaError::SignedWidths { .. })
                ),
                "{bad:?}"
            );
        }
        let mut many = with_wide(vec![1024; 2], vec![]);
        many.events[0].args = vec!["a".into(), "b".into(), "c".into(), "d".into(), "e".into()];
        many.events[0].wide_widths = vec![1024, 1024, 1024, 1024, 0];
        assert!(matches!(
            many.validate(),
            Err(SchemaError::TooManyArgs { count: 65, .. })
        ));
    }

    /// Signed widths are none or one per argument, each 0 to 64.
    #[test]
    fn signed_widths_are_validated() {
        for ok in [vec![], vec![0, 0], vec![8, 0], vec![1, 64]] {
            assert_eq!(with_widths(ok.clone()).validate(), Ok(()), "{ok:?}");
        }
        for bad in [vec![8], vec![8, 0, 0], vec![0, 65]] {
            assert!(
                matches!(
                    with_widths(bad.clone()).validate(),
                    Err(SchemaError::SignedWidths { .. })
                ),
                "{bad:?}"
            );
        }
    }

    /// An event without the field (a manifest written before it existed)
    /// reads as all unsigned, and all unsigned writes no field.
    #[test]
    fn signed_widths_default_to_none() {
        let old: EventInfo =
            serde_json::from_str(r#"{"name":"e","args":["a"]}"#).expect("old event");
        assert!(old.signed_widths.is_empty() && old.signed_width(0).is_none());
        let text = serde_json::to_string(&old).expect("serialises");
        assert!(!text.contains("signed_widths"), "{text}");
        let signed = with_widths(vec![0, 12]);
        let e = &signed.events[0];
        assert_eq!((e.signed_width(0), e.signed_width(1)), (None, Some(12)));
    }

    /// Sign extension reads bit `width - 1` as the sign and ignores the
    /// bits above it.
    #[test]
    fn sign_extension() {
        assert_eq!(sign_extend(0xfd, 8), -3);
        assert_eq!(sign_extend(0xffff_ffff_ffff_fffd, 8), -3);
        assert_eq!(sign_extend(0x17f, 8), 127);
        assert_eq!(sign_extend(1, 1), -1);
        assert_eq!(sign_extend(2, 1), 0);
        assert_eq!(sign_extend(1 << 63, 64), i64::MIN);
        assert_eq!(sign_extend(0x10, 5), -16);
    }
}
