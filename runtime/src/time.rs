//! Exact clock arithmetic: periods, phases and edge lookup in rational picoseconds.
//!
//! Every value is a `Ratio<i128>` of picoseconds. Arithmetic is checked: a result
//! that does not fit is a [`TimeError::Overflow`], never a wrap, a saturation or a
//! float. The front end hands over exact rationals; [`Clock::from_big`] accepts
//! arbitrary-precision ones and reports those that do not fit.

use num_bigint::BigInt;
use num_rational::Ratio;
use num_traits::{CheckedAdd, CheckedDiv, CheckedMul, CheckedSub, ToPrimitive, Zero};

/// An exact physical time or duration in picoseconds.
pub type Picos = Ratio<i128>;

/// Picoseconds per second, for frequency conversion.
const PICOS_PER_SECOND: i128 = 1_000_000_000_000;

/// Why a clock could not be built or an edge could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// The period (or the frequency) is zero or negative.
    #[error("clock period must be positive, got {0} ps")]
    NonPositivePeriod(String),
    /// The phase is negative.
    #[error("clock phase must not be negative, got {0} ps")]
    NegativePhase(String),
    /// A value or an intermediate result does not fit the exact representation.
    #[error("time arithmetic overflow while computing {0}")]
    Overflow(&'static str),
}

/// A clock domain's timing: edge `n` happens at `phase + n * period` (contract §1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clock {
    period: Picos,
    phase: Picos,
}

impl Clock {
    /// A clock with the given period and phase, both in picoseconds.
    pub fn new(period_ps: Picos, phase_ps: Picos) -> Result<Self, TimeError> {
        if period_ps <= Picos::zero() {
            return Err(TimeError::NonPositivePeriod(period_ps.to_string()));
        }
        if phase_ps < Picos::zero() {
            return Err(TimeError::NegativePhase(phase_ps.to_string()));
        }
        Ok(Clock {
            period: period_ps,
            phase: phase_ps,
        })
    }

    /// A clock of frequency `hz` (exact: the period is `10^12 / hz` ps) and the given phase.
    pub fn from_frequency_hz(hz: Picos, phase_ps: Picos) -> Result<Self, TimeError> {
        if hz <= Picos::zero() {
            return Err(TimeError::NonPositivePeriod(format!("1/({hz} Hz)")));
        }
        let period = Picos::from_integer(PICOS_PER_SECOND)
            .checked_div(&hz)
            .ok_or(TimeError::Overflow("period from frequency"))?;
        Clock::new(period, phase_ps)
    }

    /// A clock from arbitrary-precision period and phase in picoseconds; values that
    /// do not fit `Ratio<i128>` are an overflow error.
    pub fn from_big(
        period_ps: &Ratio<BigInt>,
        phase_ps: &Ratio<BigInt>,
    ) -> Result<Self, TimeError> {
        Clock::new(
            big_to_picos(period_ps, "period")?,
            big_to_picos(phase_ps, "phase")?,
        )
    }

    /// The period in picoseconds.
    pub fn period(&self) -> &Picos {
        &self.period
    }

    /// The phase (time of edge 0) in picoseconds.
    pub fn phase(&self) -> &Picos {
        &self.phase
    }

    /// The exact time of edge `n`.
    pub fn edge_time(&self, n: u64) -> Result<Picos, TimeError> {
        Picos::from_integer(i128::from(n))
            .checked_mul(&self.period)
            .and_then(|offset| offset.checked_add(&self.phase))
            .ok_or(TimeError::Overflow("edge time"))
    }

    /// The index of the first edge at or after `t`.
    pub fn first_edge_at_or_after(&self, t: &Picos) -> Result<u64, TimeError> {
        let cycles = self.cycles_since_phase(t)?;
        if cycles <= Picos::zero() {
            return Ok(0);
        }
        to_edge_index(cycles.ceil())
    }

    /// The index of the first edge strictly after `t`.
    pub fn first_edge_after(&self, t: &Picos) -> Result<u64, TimeError> {
        let cycles = self.cycles_since_phase(t)?;
        if cycles < Picos::zero() {
            return Ok(0);
        }
        let floor = cycles.floor();
        let next = floor
            .checked_add(&Picos::from_integer(1))
            .ok_or(TimeError::Overflow("edge index"))?;
        to_edge_index(next)
    }

    /// `(t - phase) / period`, exactly.
    fn cycles_since_phase(&self, t: &Picos) -> Result<Picos, TimeError> {
        t.checked_sub(&self.phase)
            .and_then(|d| d.checked_div(&self.period))
            .ok_or(TimeError::Overflow("edge lookup"))
    }
}

/// An integral, non-negative rational as an edge index, if it fits 64 bits.
fn to_edge_index(integral: Picos) -> Result<u64, TimeError> {
    integral
        .to_integer()
        .to_u64()
        .ok_or(TimeError::Overflow("edge index beyond 64 bits"))
}

/// Converts an arbitrary-precision rational into the runtime's representation.
fn big_to_picos(value: &Ratio<BigInt>, what: &'static str) -> Result<Picos, TimeError> {
    let numer = value.numer().to_i128().ok_or(TimeError::Overflow(what))?;
    let denom = value.denom().to_i128().ok_or(TimeError::Overflow(what))?;
    if denom == 0 {
        return Err(TimeError::Overflow(what));
    }
    Ok(Picos::new(numer, denom))
}
