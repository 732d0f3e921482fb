//! The calendar and edge arithmetic against an independent arbitrary-precision
//! model (BigRational sums written here, sharing no code with the runtime).

use chronon_runtime::{Calendar, CalendarConfig, Clock, Picos, TimeError};
use num_bigint::BigInt;
use num_rational::{BigRational, Ratio};

fn mhz(f: i128) -> Picos {
    Picos::from_integer(f * 1_000_000)
}

fn big(r: &Picos) -> BigRational {
    BigRational::new(BigInt::from(*r.numer()), BigInt::from(*r.denom()))
}

/// The model: each domain's next edge as an exact BigRational sum.
struct Model {
    next: Vec<BigRational>,
    period: Vec<BigRational>,
    cycle: Vec<u64>,
}

impl Model {
    fn new(clocks: &[(Picos, Picos)]) -> Self {
        // Periods computed here from the frequencies, not taken from the runtime.
        let period: Vec<BigRational> = clocks
            .iter()
            .map(|(hz, _)| BigRational::from_integer(BigInt::from(1_000_000_000_000i64)) / big(hz))
            .collect();
        Model {
            next: clocks.iter().map(|(_, phase)| big(phase)).collect(),
            period,
            cycle: vec![0; clocks.len()],
        }
    }

    /// The next instant: its time and (domain, cycle) pairs.
    fn step(&mut self) -> (BigRational, Vec<(u32, u64)>) {
        let t = self.next.iter().min().expect("clocks").clone();
        let mut edges = Vec::new();
        for d in 0..self.next.len() {
            if self.next[d] == t {
                edges.push((d as u32, self.cycle[d]));
                self.cycle[d] += 1;
                self.next[d] = &self.next[d] + &self.period[d];
            }
        }
        (t, edges)
    }
}

fn observed(cal: &Calendar) -> (BigRational, Vec<(u32, u64)>) {
    let base = cal.base().ticks_per_ps();
    let t = BigRational::new(BigInt::from(cal.time_ticks()), BigInt::from(base));
    let edges = cal
        .domains()
        .iter()
        .map(|&d| (d, cal.cycle(d as usize)))
        .collect();
    (t, edges)
}

/// One million instants over every ratio x phase pair, in pattern and merge modes.
#[test]
fn million_instants_match_the_bigrational_model() {
    let ratios: [(i128, i128); 6] = [
        (100, 100),
        (200, 100),
        (300, 200),
        (500, 300),
        (1000, 1001),
        (914, 1326),
    ];
    let phases = [0i128, 1, 137, 500];
    let per_config = 1_000_000 / (ratios.len() * phases.len()) + 1;
    let mut total = 0;
    let mut patterns = 0;
    for &(a, b) in &ratios {
        for &phase in &phases {
            let spec = [
                (mhz(a), Picos::from_integer(0)),
                (mhz(b), Picos::from_integer(phase)),
            ];
            let clocks: Vec<Clock> = spec
                .iter()
                .map(|(f, p)| Clock::from_frequency_hz(*f, *p).expect("valid clock"))
                .collect();
            let mut pattern = Calendar::new(&clocks, CalendarConfig::default()).expect("calendar");
            let mut merge =
                Calendar::new(&clocks, CalendarConfig { pattern_limit: 0 }).expect("calendar");
            assert!(!merge.uses_pattern());
            patterns += usize::from(pattern.uses_pattern());
            let mut model = Model::new(&spec);
            for i in 0..per_config {
                let expected = model.step();
                pattern.advance().expect("in range");
                merge.advance().expect("in range");
                let got = observed(&pattern);
                assert_eq!(
                    got, expected,
                    "pattern mode, {a}:{b} MHz phase {phase} ps, instant {i}"
                );
                assert_eq!(
                    observed(&merge),
                    expected,
                    "merge mode, {a}:{b} MHz phase {phase} ps, instant {i}"
                );
                total += 1;
            }
        }
    }
    assert!(total >= 1_000_000);
    assert_eq!(
        patterns,
        ratios.len() * phases.len(),
        "every set here has a short hyperperiod"
    );
}

/// Three domains with a hyperperiod too long for the pattern fall back to merging.
#[test]
fn long_hyperperiod_falls_back_to_merge_and_matches() {
    let spec = [
        (mhz(914), Picos::from_integer(0)),
        (mhz(1326), Picos::from_integer(137)),
        (Picos::from_integer(999_983_000), Picos::from_integer(500)),
    ];
    let clocks: Vec<Clock> = spec
        .iter()
        .map(|(f, p)| Clock::from_frequency_hz(*f, *p).expect("valid clock"))
        .collect();
    let mut cal = Calendar::new(&clocks, CalendarConfig::default()).expect("calendar");
    assert!(!cal.uses_pattern());
    let mut model = Model::new(&spec);
    for i in 0..20_000 {
        let expected = model.step();
        cal.advance().expect("in range");
        assert_eq!(observed(&cal), expected, "instant {i}");
    }
}

#[test]
fn edge_lookup_is_exact_far_out() {
    let clock = Clock::from_frequency_hz(mhz(914), Picos::from_integer(137)).expect("valid");
    let n = 1_000_000_000_000u64;
    let t = clock.edge_time(n).expect("fits");
    // 137 + 10^12 * 10^6 / 914 ps, computed independently.
    let expected = BigRational::from_integer(BigInt::from(137))
        + BigRational::new(BigInt::from(10u64).pow(18), BigInt::from(914));
    assert_eq!(big(&t), expected);
    assert_eq!(clock.first_edge_at_or_after(&t), Ok(n));
    assert_eq!(clock.first_edge_after(&t), Ok(n + 1));
    let just_before = t - Picos::new(1, 1_000_000);
    assert_eq!(clock.first_edge_at_or_after(&just_before), Ok(n));
    assert_eq!(clock.first_edge_after(&just_before), Ok(n));
    assert_eq!(clock.first_edge_at_or_after(&Picos::from_integer(0)), Ok(0));
    assert_eq!(clock.first_edge_after(&Picos::from_integer(137)), Ok(1));
    let last = clock.edge_time(u64::MAX).expect("fits in i128");
    assert_eq!(clock.first_edge_at_or_after(&last), Ok(u64::MAX));
    assert!(matches!(
        clock.first_edge_after(&last),
        Err(TimeError::Overflow(_))
    ));
}

#[test]
fn invalid_clocks_and_overflow_are_errors() {
    let zero = Picos::from_integer(0);
    let one = Picos::from_integer(1);
    let cases: Vec<(&str, Result<Clock, TimeError>)> = vec![
        ("zero period", Clock::new(zero, zero)),
        ("negative period", Clock::new(-one, zero)),
        ("negative phase", Clock::new(one, -one)),
        ("zero frequency", Clock::from_frequency_hz(zero, zero)),
        ("negative frequency", Clock::from_frequency_hz(-one, zero)),
        (
            "period beyond i128",
            Clock::from_big(
                &Ratio::new(BigInt::from(1) << 200, BigInt::from(1)),
                &BigRational::from_integer(BigInt::from(0)),
            ),
        ),
        (
            "frequency whose period overflows",
            Clock::from_frequency_hz(Picos::new(1, i128::MAX), zero),
        ),
    ];
    for (name, result) in cases {
        assert!(result.is_err(), "{name} must be rejected, got {result:?}");
    }
    let huge = Clock::new(Picos::from_integer(i128::MAX / 2), zero).expect("valid");
    assert!(matches!(huge.edge_time(3), Err(TimeError::Overflow(_))));
    // Denominators whose LCM does not fit: no common time base.
    let a = Clock::new(Picos::new(1, (1i128 << 100) - 1), zero).expect("valid");
    let b = Clock::new(Picos::new(1, (1i128 << 100) + 1), zero).expect("valid");
    assert!(matches!(
        Calendar::new(&[a, b], CalendarConfig::default()),
        Err(TimeError::Overflow(_))
    ));
    // A calendar whose tick counter runs out reports overflow instead of wrapping.
    let slow = Clock::new(Picos::from_integer(i128::MAX / 3), zero).expect("valid");
    let mut cal = Calendar::new(&[slow], CalendarConfig::default()).expect("calendar");
    let mut steps = 0;
    let err = loop {
        match cal.advance() {
            Ok(()) => steps += 1,
            Err(e) => break e,
        }
        assert!(steps < 1000, "must overflow");
    };
    assert!(matches!(err, TimeError::Overflow(_)));
    assert!(steps >= 3);
}

/// A limit with a fine denominator and a large numerator (a command-line
/// `--until` of 35 decimals) floors exactly instead of overflowing: the
/// product of numerator and ticks per ps passes i128, the result does not.
#[test]
fn floor_ticks_of_a_fine_large_time_is_exact() {
    let base = chronon_runtime::TimeBase::from_ticks_per_ps(302_991);
    let fine = Picos::new(
        199_999_999_999_999_999_999_999_999_999_999_999,
        100_000_000_000_000_000_000_000_000_000_000_000,
    );
    // 1.999... ps is 605,981.99... ticks.
    assert_eq!(base.floor_ticks(&fine), Ok(Some(605_981)));
    let whole = Picos::from_integer(2);
    assert_eq!(base.floor_ticks(&whole), Ok(Some(605_982)));
    let too_large = Picos::from_integer(i128::MAX);
    assert!(base.floor_ticks(&too_large).is_err());
}
