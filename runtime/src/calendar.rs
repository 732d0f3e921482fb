//! The calendar: the ordered stream of instants (time + domains with an edge).
//!
//! Building a calendar does all the rational arithmetic once: every period and
//! phase is scaled to an integer number of *ticks* of a common time base (one
//! tick is `1 / ticks_per_ps` picoseconds, the LCM of all denominators). After
//! that, stepping is integer-only and allocation-free:
//!
//! - **Pattern mode**: when the domains' hyperperiod holds few instants, the
//!   instants of one hyperperiod are precomputed once every domain has started,
//!   and replayed: each step adds the precomputed distance to the next instant.
//! - **Merge mode** (fallback, and before every domain has started): each domain
//!   keeps its next edge in ticks and the earliest ones are merged.
//!
//! Both modes give exactly the same stream (tests compare them).

use crate::time::{Clock, Picos, TimeError};
use num_integer::Integer;
use num_traits::ToPrimitive;

/// The default bound on instants per hyperperiod for pattern mode.
pub const DEFAULT_PATTERN_LIMIT: usize = 1 << 14;

/// The common integer time base of a set of clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeBase {
    ticks_per_ps: u128,
}

impl TimeBase {
    /// A time base of `ticks_per_ps` ticks per picosecond (at least 1).
    pub fn from_ticks_per_ps(ticks_per_ps: u128) -> Self {
        TimeBase {
            ticks_per_ps: ticks_per_ps.max(1),
        }
    }

    /// Ticks per picosecond (the LCM of every period and phase denominator).
    pub fn ticks_per_ps(&self) -> u128 {
        self.ticks_per_ps
    }

    /// The exact time, in picoseconds, of a tick count.
    pub fn to_picos(&self, ticks: u128) -> Result<Picos, TimeError> {
        let numer = i128::try_from(ticks).map_err(|_| TimeError::Overflow("tick to time"))?;
        let denom =
            i128::try_from(self.ticks_per_ps).map_err(|_| TimeError::Overflow("tick to time"))?;
        Ok(Picos::new(numer, denom))
    }

    /// The last tick at or before `t`, or `None` if `t` is before time 0.
    pub fn floor_ticks(&self, t: &Picos) -> Result<Option<u128>, TimeError> {
        if *t < Picos::from_integer(0) {
            return Ok(None);
        }
        let scale =
            i128::try_from(self.ticks_per_ps).map_err(|_| TimeError::Overflow("time to tick"))?;
        let scaled = match t.numer().checked_mul(scale) {
            Some(n) => Integer::div_floor(&n, t.denom()),
            // A fine time with a large numerator (`--until 1.999...9 ps`
            // with 35 decimals) overflows the product but not the result:
            // exact in big integers, off the hot path.
            None => {
                let n = num_bigint::BigInt::from(*t.numer()) * num_bigint::BigInt::from(scale);
                Integer::div_floor(&n, &num_bigint::BigInt::from(*t.denom()))
                    .to_i128()
                    .ok_or(TimeError::Overflow("time to tick"))?
            }
        };
        Ok(Some(
            u128::try_from(scaled).map_err(|_| TimeError::Overflow("time to tick"))?,
        ))
    }

    /// An exact rational that is an integer number of ticks, as ticks.
    fn exact_ticks(&self, t: &Picos, what: &'static str) -> Result<u128, TimeError> {
        let scale = i128::try_from(self.ticks_per_ps).map_err(|_| TimeError::Overflow(what))?;
        let per_denom = scale / t.denom();
        let ticks = t
            .numer()
            .checked_mul(per_denom)
            .ok_or(TimeError::Overflow(what))?;
        u128::try_from(ticks).map_err(|_| TimeError::Overflow(what))
    }
}

/// A clock in ticks of the common base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickClock {
    /// Time of edge 0, in ticks.
    pub phase: u128,
    /// Period in ticks (> 0).
    pub period: u128,
}

impl TickClock {
    /// The tick of edge `n`, checked.
    pub fn edge_ticks(&self, n: u64) -> Result<u128, TimeError> {
        self.period
            .checked_mul(u128::from(n))
            .and_then(|o| o.checked_add(self.phase))
            .ok_or(TimeError::Overflow("edge time in ticks"))
    }
}

/// Options for building a calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CalendarConfig {
    /// The largest number of instants per hyperperiod for which pattern mode is
    /// used; 0 forces merge mode.
    pub pattern_limit: usize,
}

impl Default for CalendarConfig {
    fn default() -> Self {
        CalendarConfig {
            pattern_limit: DEFAULT_PATTERN_LIMIT,
        }
    }
}

/// The precomputed instants of one hyperperiod.
#[derive(Debug, Clone)]
struct Pattern {
    /// Per instant of the hyperperiod, in order.
    instants: Vec<PatternInstant>,
    domains: Vec<u32>,
    /// Time at or after which pattern mode may take over (every domain started).
    start: u128,
    /// The largest `step` of `instants` (> 0): bounds how far time can move
    /// in `n` steps, so [`Calendar::replay`] checks overflow once per call.
    max_step: u128,
    /// The time of the first replayed instant (the first instant at or
    /// after `start`) and the hyperperiod: instant `i` of the pattern is at
    /// `anchor + k * hyperperiod + offsets[i]` for every `k >= 0`.
    anchor: u128,
    hyperperiod: u128,
    /// Per instant of the hyperperiod, its distance from the hyperperiod's
    /// first (increasing, the first is 0), for [`Calendar::seek`].
    offsets: Vec<u128>,
}

/// The state of a caller-driven replay: see [`Calendar::replay_cursor`].
pub(crate) struct ReplayCursor<'a> {
    /// Instants that can be stepped with no overflow check.
    pub(crate) budget: u64,
    /// The next instant's pattern position and time.
    pub(crate) position: usize,
    pub(crate) upcoming: u128,
    /// Per domain, the cycle of its latest edge and the next edge's index.
    pub(crate) cycle: &'a mut [u64],
    pub(crate) next_cycle: &'a mut [u64],
    instants: &'a [PatternInstant],
    /// Where `finish` writes back: position, upcoming, and the current
    /// instant's time, position and span.
    #[allow(clippy::type_complexity)]
    state: (
        &'a mut usize,
        &'a mut u128,
        &'a mut u128,
        &'a mut usize,
        &'a mut (u32, u32),
    ),
}

impl ReplayCursor<'_> {
    /// Records the replay's end: `position` and `upcoming` are the next
    /// instant's; `ran` says whether any instant was stepped (the last
    /// one, the one before `position`, becomes the current instant).
    #[inline]
    pub(crate) fn finish(self, ran: bool) {
        let (position, upcoming, current_time, current_position, current_span) = self.state;
        if ran {
            let this = self
                .position
                .checked_sub(1)
                .unwrap_or(self.instants.len() - 1);
            *current_position = this;
            *current_time = self.upcoming - self.instants[this].step;
            *current_span = self.instants[this].span;
        }
        *position = self.position;
        *upcoming = self.upcoming;
    }
}

/// One precomputed instant: kept together so a step does one bounds check.
#[derive(Debug, Clone, Copy)]
struct PatternInstant {
    /// The distance to the next instant (the last wraps around the
    /// hyperperiod), so a step is one addition.
    step: u128,
    /// The range of `Pattern::domains` holding the domains with an edge.
    span: (u32, u32),
}

/// The ordered stream of instants of a set of clocks.
#[derive(Debug, Clone)]
pub struct Calendar {
    base: TimeBase,
    clocks: Vec<TickClock>,
    /// Per domain: time and index of its next edge (merge mode).
    next_time: Vec<u128>,
    next_cycle: Vec<u64>,
    /// Per domain: cycle of its latest edge, valid for domains of the current instant.
    cycle: Vec<u64>,
    /// Domains with an edge at the current instant, in declaration order (merge mode).
    current: Vec<u32>,
    current_time: u128,
    /// The time of the next instant (valid unless `exhausted`).
    upcoming: u128,
    pattern: Option<Pattern>,
    /// Pattern mode state: whether it is on, and the index of the next instant.
    in_pattern: bool,
    position: usize,
    /// The pattern position of the current instant (valid in pattern mode).
    current_position: usize,
    current_span: (u32, u32),
    /// Whether the next step is known to overflow.
    /// Why the next step cannot be taken (an overflow), if so.
    exhausted: Option<&'static str>,
}

/// The time base (LCM of denominators) of a set of clocks and their tick clocks.
pub fn time_base(clocks: &[Clock]) -> Result<(TimeBase, Vec<TickClock>), TimeError> {
    let mut lcm: i128 = 1;
    for clock in clocks {
        for value in [clock.period(), clock.phase()] {
            let d = *value.denom();
            let g = lcm.gcd(&d);
            lcm = (lcm / g)
                .checked_mul(d)
                .ok_or(TimeError::Overflow("common time base"))?;
        }
    }
    let base = TimeBase {
        ticks_per_ps: lcm as u128,
    };
    let ticks = clocks
        .iter()
        .map(|c| {
            Ok(TickClock {
                phase: base.exact_ticks(c.phase(), "phase in ticks")?,
                period: base.exact_ticks(c.period(), "period in ticks")?,
            })
        })
        .collect::<Result<Vec<_>, TimeError>>()?;
    Ok((base, ticks))
}

impl Calendar {
    /// A calendar for `clocks` (in declaration order), starting before time 0.
    pub fn new(clocks: &[Clock], config: CalendarConfig) -> Result<Calendar, TimeError> {
        let (base, ticks) = time_base(clocks)?;
        let n = ticks.len();
        let mut calendar = Calendar {
            base,
            next_time: ticks.iter().map(|c| c.phase).collect(),
            next_cycle: vec![0; n],
            cycle: vec![0; n],
            current: Vec::with_capacity(n),
            current_time: 0,
            upcoming: ticks.iter().map(|c| c.phase).min().unwrap_or(0),
            pattern: None,
            in_pattern: false,
            position: 0,
            current_position: 0,
            current_span: (0, 0),
            exhausted: ticks.is_empty().then_some("calendar without clocks"),
            clocks: ticks,
        };
        calendar.pattern = calendar.build_pattern(config.pattern_limit);
        Ok(calendar)
    }

    /// The common time base.
    pub fn base(&self) -> TimeBase {
        self.base
    }

    /// The domains' clocks in ticks.
    pub fn tick_clocks(&self) -> &[TickClock] {
        &self.clocks
    }

    /// Whether pattern mode is available for these clocks.
    pub fn uses_pattern(&self) -> bool {
        self.pattern.is_some()
    }

    /// Precomputes one hyperperiod of instants from the first instant at or after
    /// the latest phase, if the hyperperiod is short enough.
    fn build_pattern(&self, limit: usize) -> Option<Pattern> {
        if self.clocks.is_empty() || limit == 0 {
            return None;
        }
        let mut hyperperiod: u128 = 1;
        for c in &self.clocks {
            let g = hyperperiod.gcd(&c.period);
            hyperperiod = (hyperperiod / g).checked_mul(c.period)?;
        }
        let mut count: usize = 0;
        for c in &self.clocks {
            count = count.checked_add((hyperperiod / c.period).to_usize()?)?;
        }
        if count > limit {
            return None;
        }
        let start = self.clocks.iter().map(|c| c.phase).max()?;
        // Walk one hyperperiod with a scratch merge calendar from `start`.
        let mut scratch = self.clone();
        scratch.pattern = None;
        for (d, c) in self.clocks.iter().enumerate() {
            let first = if start <= c.phase {
                0
            } else {
                (start - c.phase).div_ceil(c.period)
            };
            scratch.next_time[d] = c.phase.checked_add(first.checked_mul(c.period)?)?;
        }
        scratch.upcoming = scratch.next_time.iter().copied().min()?;
        let mut offsets = Vec::new();
        let mut spans = Vec::new();
        let mut domains = Vec::new();
        let mut anchor = None;
        loop {
            let t = scratch.next_time.iter().copied().min()?;
            let a = *anchor.get_or_insert(t);
            if t - a >= hyperperiod {
                break;
            }
            scratch.merge_step();
            if scratch.exhausted.is_some() {
                return None;
            }
            offsets.push(t - a);
            let from = u32::try_from(domains.len()).ok()?;
            domains.extend_from_slice(&scratch.current);
            spans.push((from, u32::try_from(domains.len()).ok()?));
        }
        let max_step = offsets
            .windows(2)
            .map(|w| w[1] - w[0])
            .chain(std::iter::once(
                hyperperiod - offsets.last().copied().unwrap_or(0),
            ))
            .max()?;
        Some(Pattern {
            max_step,
            instants: offsets
                .iter()
                .skip(1)
                .copied()
                .chain(std::iter::once(hyperperiod))
                .zip(&offsets)
                .zip(spans)
                .map(|((next, this), span)| PatternInstant {
                    step: next - this,
                    span,
                })
                .collect(),
            domains,
            start,
            anchor: anchor?,
            hyperperiod,
            offsets,
        })
    }

    /// The time, in ticks, of the next instant (without consuming it).
    #[inline]
    pub fn peek_ticks(&self) -> Result<u128, TimeError> {
        match self.exhausted {
            None => Ok(self.upcoming),
            Some(what) => Err(TimeError::Overflow(what)),
        }
    }

    /// Moves to the next instant.
    #[inline(always)]
    pub fn advance(&mut self) -> Result<(), TimeError> {
        // The steady state of a replayed hyperperiod: one branch, then the step.
        if self.in_pattern && self.exhausted.is_none() {
            self.pattern_step();
            return Ok(());
        }
        self.advance_outside_pattern()
    }

    /// [`Calendar::advance`] before pattern mode, in merge mode, or at an overflow.
    #[cold]
    fn advance_outside_pattern(&mut self) -> Result<(), TimeError> {
        if let Some(what) = self.exhausted {
            return Err(TimeError::Overflow(what));
        }
        if !self.in_pattern
            && let Some(p) = &self.pattern
            && self.upcoming >= p.start
        {
            // Every domain has started: the next instant is the pattern's first.
            self.in_pattern = true;
            self.position = 0;
        }
        if self.in_pattern {
            self.pattern_step();
        } else {
            self.merge_step();
        }
        Ok(())
    }

    #[inline(always)]
    fn pattern_step(&mut self) {
        let p = self.pattern.as_ref().expect("pattern mode has a pattern");
        let position = self.position;
        let PatternInstant { step, span } = p.instants[position];
        for &d in &p.domains[span.0 as usize..span.1 as usize] {
            let d = d as usize;
            let n = self.next_cycle[d];
            self.cycle[d] = n;
            match n.checked_add(1) {
                Some(next) => self.next_cycle[d] = next,
                None => self.exhausted = Some("edge index"),
            }
        }
        self.current_time = self.upcoming;
        self.current_span = span;
        self.current_position = position;
        self.position = if position + 1 == p.instants.len() {
            0
        } else {
            position + 1
        };
        // The next instant is a fixed distance away: one addition per step.
        match self.upcoming.checked_add(step) {
            Some(t) => self.upcoming = t,
            None => self.exhausted = Some("calendar time"),
        }
    }

    /// A caller-driven replay (the replay loop's, `sim/replay.rs`): the
    /// calendar's replay state while it replays its pattern with no
    /// overflow ahead, else `None`. The caller steps instants itself with
    /// the per-position steps of [`Calendar::pattern_steps`]: at most
    /// [`ReplayCursor::budget`] instants, each adding one to the cycle of
    /// every domain with an edge there (`cycle[d] = next_cycle[d]`,
    /// `next_cycle[d] += 1`); then [`ReplayCursor::finish`] records where
    /// it ended.
    ///
    /// The overflow checks of [`Calendar::advance`] are made here, once:
    /// each instant adds one to a domain's edge index at most and at most
    /// `max_step` to the time, so the budget counts the instants that
    /// cannot overflow; past them (never, in practice) the caller's
    /// checked steps take over, so the stream and its overflow point are
    /// exactly those of `advance`.
    #[inline]
    pub(crate) fn replay_cursor(&mut self) -> Option<ReplayCursor<'_>> {
        let Calendar {
            cycle,
            next_cycle,
            upcoming,
            pattern: Some(p),
            in_pattern: true,
            position,
            current_time,
            current_position,
            current_span,
            exhausted: None,
            ..
        } = self
        else {
            return None;
        };
        let by_cycle = next_cycle.iter().map(|&n| u64::MAX - n).min().unwrap_or(0);
        let by_time = (u128::MAX - *upcoming) / p.max_step;
        Some(ReplayCursor {
            budget: u64::try_from(by_time).map_or(by_cycle, |t| t.min(by_cycle)),
            position: *position,
            upcoming: *upcoming,
            cycle,
            next_cycle,
            instants: &p.instants,
            state: (
                position,
                upcoming,
                current_time,
                current_position,
                current_span,
            ),
        })
    }

    /// Per position of the replayed hyperperiod, the distance to the next
    /// instant in ticks (the last wraps around); `None` without pattern mode.
    pub(crate) fn pattern_steps(&self) -> Option<Vec<u128>> {
        Some(
            self.pattern
                .as_ref()?
                .instants
                .iter()
                .map(|i| i.step)
                .collect(),
        )
    }

    /// Whether the calendar is replaying its pattern with no overflow ahead:
    /// the state [`Calendar::seek`] can move from.
    pub(crate) fn replaying(&self) -> bool {
        self.in_pattern && self.exhausted.is_none()
    }

    /// The latest tick run-ahead may run to: every domain's edge count and
    /// the time of the instant after stay far from overflow there (a
    /// quarter of their ranges), so [`Calendar::seek`] never overflows and
    /// the checked steps handle the approach to the limits.
    pub(crate) fn run_ahead_limit(&self) -> u128 {
        let quarter = u128::MAX / 4;
        let max_step = self.pattern.as_ref().map_or(0, |p| p.max_step);
        self.clocks
            .iter()
            .map(|c| c.edge_ticks(u64::MAX / 4).unwrap_or(quarter))
            .fold(quarter, u128::min)
            .min(u128::MAX - max_step)
    }

    /// The shortest period, in ticks.
    pub(crate) fn min_period(&self) -> u128 {
        self.clocks.iter().map(|c| c.period).min().unwrap_or(1)
    }

    /// The number of edges of domain `d` at or before tick `bound`.
    pub(crate) fn edges_at_or_before(&self, d: usize, bound: u128) -> u128 {
        let c = &self.clocks[d];
        if bound < c.phase {
            0
        } else {
            (bound - c.phase) / c.period + 1
        }
    }

    /// The time of the last instant at or before tick `bound` (the latest
    /// edge of any domain there), if any.
    pub(crate) fn last_instant_at_or_before(&self, bound: u128) -> Option<u128> {
        self.clocks
            .iter()
            .filter(|c| c.phase <= bound)
            .map(|c| c.phase + (bound - c.phase) / c.period * c.period)
            .max()
    }

    /// The pattern instant at tick `t` as an absolute instant number from
    /// the pattern's first instant, if `t` is one.
    fn pattern_index(p: &Pattern, t: u128) -> Option<u128> {
        let rel = t.checked_sub(p.anchor)?;
        let i = p.offsets.binary_search(&(rel % p.hyperperiod)).ok()?;
        Some(rel / p.hyperperiod * p.instants.len() as u128 + i as u128)
    }

    /// Moves the calendar to the instant at tick `t`, exactly as if every
    /// instant up to it had been stepped with [`Calendar::advance`], and
    /// returns how many instants that passed. Only while
    /// [`Calendar::replaying`], with `t` an instant at or after the current
    /// one; the caller (run-ahead) keeps `t` and every domain's edge count
    /// far from overflow. Returns `None`, changing nothing, if `t` is not
    /// such an instant.
    pub(crate) fn seek(&mut self, t: u128) -> Option<u64> {
        if !self.replaying() || t < self.current_time {
            return None;
        }
        let p = self.pattern.as_ref()?;
        let (from, to) = (
            Self::pattern_index(p, self.current_time)?,
            Self::pattern_index(p, t)?,
        );
        let position = (to % p.instants.len() as u128) as usize;
        let PatternInstant { step, span } = p.instants[position];
        let moved = u64::try_from(to - from).ok()?;
        let upcoming = t.checked_add(step)?;
        let fits = |d| u64::try_from(self.edges_at_or_before(d, t)).is_ok();
        if !(0..self.clocks.len()).all(fits) {
            return None;
        }
        for d in 0..self.clocks.len() {
            let n = self.edges_at_or_before(d, t) as u64;
            self.next_cycle[d] = n;
            self.cycle[d] = n.saturating_sub(1);
        }
        self.current_time = t;
        self.current_position = position;
        self.current_span = span;
        self.position = if position + 1 == p.instants.len() {
            0
        } else {
            position + 1
        };
        self.upcoming = upcoming;
        Some(moved)
    }

    fn merge_step(&mut self) {
        let t = self.upcoming;
        let mut upcoming = u128::MAX;
        self.current.clear();
        for d in 0..self.next_time.len() {
            if self.next_time[d] == t {
                // Capacity is the number of domains: this never reallocates.
                self.current.push(d as u32);
                let n = self.next_cycle[d];
                self.cycle[d] = n;
                match n.checked_add(1) {
                    Some(next) => self.next_cycle[d] = next,
                    None => self.exhausted = Some("edge index"),
                }
                match self.next_time[d].checked_add(self.clocks[d].period) {
                    Some(nt) => self.next_time[d] = nt,
                    None => self.exhausted = Some("calendar time"),
                }
            }
            upcoming = upcoming.min(self.next_time[d]);
        }
        self.current_time = t;
        self.upcoming = upcoming;
    }

    /// Per position of the replayed hyperperiod, in order, the domains with an
    /// edge (declaration order); `None` without pattern mode. Callers use it
    /// to precompute per-position work, indexed by [`Calendar::pattern_position`].
    pub fn pattern_domains(&self) -> Option<Vec<&[u32]>> {
        let p = self.pattern.as_ref()?;
        Some(
            p.instants
                .iter()
                .map(|i| &p.domains[i.span.0 as usize..i.span.1 as usize])
                .collect(),
        )
    }

    /// The current instant's position in the replayed hyperperiod (an index
    /// into [`Calendar::pattern_domains`]), or `None` outside pattern mode.
    #[inline]
    pub fn pattern_position(&self) -> Option<usize> {
        self.in_pattern.then_some(self.current_position)
    }

    /// The time of the current instant, in ticks.
    pub fn time_ticks(&self) -> u128 {
        self.current_time
    }

    /// The domains with an edge at the current instant, in declaration order.
    pub fn domains(&self) -> &[u32] {
        if self.in_pattern {
            let p = self.pattern.as_ref().expect("pattern mode has a pattern");
            &p.domains[self.current_span.0 as usize..self.current_span.1 as usize]
        } else {
            &self.current
        }
    }

    /// The local cycle of domain `d`'s latest edge (its edge at the current instant
    /// if it has one).
    pub fn cycle(&self, d: usize) -> u64 {
        self.cycle[d]
    }

    /// How many edges of domain `d` have been processed (the next edge's index).
    pub fn edges_done(&self, d: usize) -> u64 {
        self.next_cycle[d]
    }
}
