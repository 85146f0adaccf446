//! Speed profiles: how fast each processor runs at each iteration.

use std::fmt;

use crate::random::SplitMix64;

/// A processor's speed over the iterations, as a factor of its nominal speed
/// (1.0 = nominal, 0.5 = half speed: each item takes twice as long).
///
/// The shape is SimGrid's speed profile: a list of `(date, factor)` events, sorted by
/// date, optionally repeated with a period. Dates count completed iterations:
/// iteration `k` (from 1) runs at the factor in force at date `k - 1`. Before the
/// first event the factor is 1.0 (SimGrid's peak speed).
#[derive(Clone, Debug, PartialEq)]
pub struct SpeedProfile {
    events: Vec<(f64, f64)>,
    period: Option<f64>,
}

/// Why a speed profile is invalid. Lines are numbered from 1.
#[derive(Clone, Debug, PartialEq)]
pub enum ProfileError {
    /// A line is neither `DATE VALUE`, `LOOPAFTER DELAY` nor `PERIODICITY DELAY`.
    Syntax {
        /// The line (from 1).
        line: usize,
        /// The text of the line.
        text: String,
    },
    /// A date is negative or not finite, or smaller than the previous one.
    BadDate {
        /// The line (from 1; 0 for events given in code).
        line: usize,
        /// The date.
        date: f64,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// A speed factor is zero, negative or not finite (a stopped processor would
    /// never finish its iteration).
    BadFactor {
        /// The line (from 1; 0 for events given in code).
        line: usize,
        /// The factor.
        factor: f64,
    },
    /// The loop delay is negative or not finite, or given twice.
    BadLoop {
        /// The line (from 1; 0 for events given in code).
        line: usize,
        /// What is wrong.
        reason: &'static str,
    },
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileError::Syntax { line, text } => write!(
                f,
                "line {line}: `{text}` is not `DATE VALUE` or `LOOPAFTER DELAY`"
            ),
            ProfileError::BadDate { line, date, rule } => {
                write!(f, "line {line}: date {date} {rule}")
            }
            ProfileError::BadFactor { line, factor } => write!(
                f,
                "line {line}: speed factor {factor} must be finite and > 0 \
                 (a stopped processor never finishes its iteration)"
            ),
            ProfileError::BadLoop { line, reason } => write!(f, "line {line}: {reason}"),
        }
    }
}

impl std::error::Error for ProfileError {}

impl SpeedProfile {
    /// A processor that always runs at its nominal speed.
    ///
    /// ```
    /// use hetbal::iterative::SpeedProfile;
    /// assert_eq!(SpeedProfile::constant().factor_at(123.0), 1.0);
    /// ```
    pub fn constant() -> SpeedProfile {
        SpeedProfile {
            events: Vec::new(),
            period: None,
        }
    }

    /// A profile from `(date, factor)` events sorted by date; with `loop_after`,
    /// the events repeat with period `last date + loop_after` (SimGrid's `LOOPAFTER`).
    ///
    /// # Errors
    /// [`ProfileError::BadDate`] for a negative, non-finite or decreasing date,
    /// [`ProfileError::BadFactor`] for a factor that is not finite and > 0,
    /// [`ProfileError::BadLoop`] for a bad loop delay or a loop without events.
    ///
    /// ```
    /// use hetbal::iterative::SpeedProfile;
    /// let p = SpeedProfile::new(vec![(0.0, 0.5), (2.0, 2.0)], Some(1.0)).unwrap();
    /// // period 3: 0.5 on [0, 2), 2.0 on [2, 3), then again
    /// assert_eq!((p.factor_at(1.0), p.factor_at(2.0), p.factor_at(3.0)), (0.5, 2.0, 0.5));
    /// ```
    pub fn new(events: Vec<(f64, f64)>, loop_after: Option<f64>) -> Result<Self, ProfileError> {
        Self::checked(
            events.into_iter().map(|e| (0, e)).collect(),
            loop_after.map(|d| (0, d)),
        )
    }

    fn checked(
        events: Vec<(usize, (f64, f64))>,
        loop_after: Option<(usize, f64)>,
    ) -> Result<Self, ProfileError> {
        let mut previous = 0.0;
        for &(line, (date, factor)) in &events {
            if !date.is_finite() || date < 0.0 {
                return Err(ProfileError::BadDate {
                    line,
                    date,
                    rule: "must be finite and >= 0",
                });
            }
            if date < previous {
                return Err(ProfileError::BadDate {
                    line,
                    date,
                    rule: "comes before the previous event's date (events must be sorted)",
                });
            }
            previous = date;
            if !factor.is_finite() || factor <= 0.0 {
                return Err(ProfileError::BadFactor { line, factor });
            }
        }
        let period = match loop_after {
            None => None,
            Some((line, delay)) => {
                if !delay.is_finite() || delay < 0.0 {
                    return Err(ProfileError::BadLoop {
                        line,
                        reason: "the loop delay must be finite and >= 0",
                    });
                }
                let Some(&(_, (last, _))) = events.last() else {
                    return Err(ProfileError::BadLoop {
                        line,
                        reason: "a loop needs at least one event",
                    });
                };
                let period = last + delay;
                if period <= events[0].1 .0 {
                    return Err(ProfileError::BadLoop {
                        line,
                        reason: "the period (last date + loop delay) must exceed the first date",
                    });
                }
                Some(period)
            }
        };
        Ok(SpeedProfile {
            events: events.into_iter().map(|(_, e)| e).collect(),
            period,
        })
    }

    /// Reads SimGrid's profile syntax: one `DATE VALUE` event per line, sorted by
    /// date, and optionally `LOOPAFTER DELAY` (or the older `PERIODICITY DELAY`).
    /// Blank lines and lines starting with `#` are skipped. Dates count iterations
    /// (see [`SpeedProfile`]); values are speed factors, as in SimGrid's host speed
    /// profiles.
    ///
    /// # Errors
    /// A [`ProfileError`] naming the line.
    ///
    /// # Complexity
    /// O(length of the text).
    ///
    /// ```
    /// use hetbal::iterative::SpeedProfile;
    /// let p = SpeedProfile::parse("0 1.0\n30 0.5\n70 2\n").unwrap();
    /// assert_eq!((p.factor_at(29.0), p.factor_at(30.0), p.factor_at(99.0)), (1.0, 0.5, 2.0));
    /// assert!(SpeedProfile::parse("10 0\n").unwrap_err().to_string().contains("line 1"));
    /// ```
    pub fn parse(text: &str) -> Result<Self, ProfileError> {
        let mut events = Vec::new();
        let mut loop_after = None;
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let syntax = || ProfileError::Syntax {
                line,
                text: trimmed.to_string(),
            };
            let words: Vec<&str> = trimmed.split_whitespace().collect();
            if words.len() != 2 {
                return Err(syntax());
            }
            if words[0] == "LOOPAFTER" || words[0] == "PERIODICITY" {
                if loop_after.is_some() {
                    return Err(ProfileError::BadLoop {
                        line,
                        reason: "the loop delay is given twice",
                    });
                }
                let delay: f64 = words[1].parse().map_err(|_| syntax())?;
                loop_after = Some((line, delay));
                continue;
            }
            let date: f64 = words[0].parse().map_err(|_| syntax())?;
            let factor: f64 = words[1].parse().map_err(|_| syntax())?;
            events.push((line, (date, factor)));
        }
        Self::checked(events, loop_after)
    }

    /// The speed factor in force at `date` (iterations completed). O(log e) for e
    /// events.
    ///
    /// ```
    /// use hetbal::iterative::SpeedProfile;
    /// let p = SpeedProfile::new(vec![(10.0, 0.25)], None).unwrap();
    /// assert_eq!((p.factor_at(9.0), p.factor_at(10.0)), (1.0, 0.25));
    /// ```
    pub fn factor_at(&self, date: f64) -> f64 {
        let Some(&(first, _)) = self.events.first() else {
            return 1.0;
        };
        let mut date = date;
        if let Some(period) = self.period {
            if date >= period {
                // Events recur at `d + m * period`: fold the date into [first, period + first).
                date = first + (date - first).rem_euclid(period);
            }
        }
        let after = self.events.partition_point(|&(d, _)| d <= date);
        if after == 0 {
            1.0
        } else {
            self.events[after - 1].1
        }
    }

    /// The dates at which the factor may change before `horizon` (loops unrolled),
    /// sorted. O(changes).
    pub(crate) fn change_dates(&self, horizon: f64) -> Vec<f64> {
        let mut dates = Vec::new();
        let mut offset = 0.0;
        loop {
            for &(d, _) in &self.events {
                if d + offset >= horizon {
                    return dates;
                }
                dates.push(d + offset);
            }
            match self.period {
                Some(period) if period > 0.0 => offset += period,
                _ => return dates,
            }
        }
    }
}

/// The speed changes of the ring paper's experiment (section 7): every processor
/// changes speed twice, once at an iteration drawn uniformly in the first fifth to
/// two fifths of the run (iterations 20–40 of 100) and once in the three to four
/// fifths (60–80). Each new speed is the nominal one times a factor drawn
/// log-uniformly in `[1/spread, spread]` (the paper draws speeds from a list of
/// measured machines; this keeps the ratio of slowest to fastest bounded by
/// `spread^2` times the platform's own).
///
/// # Arguments
/// * `seed` - the same seed gives the same profiles;
/// * `processors` - how many profiles;
/// * `iterations` - the length of the run;
/// * `spread` - the largest factor (>= 1).
///
/// # Complexity
/// O(processors).
///
/// ```
/// use hetbal::iterative::paper_speed_changes;
/// let profiles = paper_speed_changes(7, 8, 100, 3.0);
/// assert_eq!(profiles.len(), 8);
/// assert_eq!(profiles[0].factor_at(0.0), 1.0); // nominal at the start
/// ```
pub fn paper_speed_changes(
    seed: u64,
    processors: usize,
    iterations: u32,
    spread: f64,
) -> Vec<SpeedProfile> {
    let mut rng = SplitMix64(seed ^ 0x005E_ED0F_1AB5);
    let k = f64::from(iterations);
    let spread = if spread.is_finite() && spread >= 1.0 {
        spread
    } else {
        1.0
    };
    let mut draw_iteration = |lo: f64, hi: f64| {
        let lo = (lo * k).round() as u64;
        let hi = ((hi * k).round() as u64).max(lo);
        lo + rng.next_u64() % (hi - lo + 1)
    };
    let mut dates = Vec::with_capacity(processors);
    for _ in 0..processors {
        let first = draw_iteration(0.2, 0.4);
        let second = draw_iteration(0.6, 0.8);
        dates.push((first, second));
    }
    dates
        .into_iter()
        .map(|(first, second)| {
            let mut factor = || spread.powf(rng.range((-1.0, 1.0)));
            // Iteration `u` (from 1) runs at the factor in force at date u - 1.
            let events = vec![
                (first.saturating_sub(1) as f64, factor()),
                (second.saturating_sub(1) as f64, factor()),
            ];
            SpeedProfile {
                events,
                period: None,
            }
        })
        .collect()
}

/// `p` distinct hosts out of `hosts`, in random order: the ring paper's random
/// ring ("we randomly select p processors in the platform to build the execution
/// ring"). A partial Fisher–Yates shuffle: O(hosts) time and memory.
///
/// Panics if `p > hosts`.
///
/// ```
/// use hetbal::iterative::draw_hosts;
/// let mut ring = draw_hosts(3, 10, 4);
/// assert_eq!(ring.len(), 4);
/// ring.sort();
/// ring.dedup();
/// assert_eq!(ring.len(), 4);
/// assert_eq!(draw_hosts(3, 10, 4), draw_hosts(3, 10, 4));
/// ```
pub fn draw_hosts(seed: u64, hosts: usize, p: usize) -> Vec<usize> {
    assert!(p <= hosts, "cannot draw {p} distinct hosts out of {hosts}");
    let mut rng = SplitMix64(seed);
    let mut pool: Vec<usize> = (0..hosts).collect();
    for i in 0..p {
        let j = i + rng.below(hosts - i);
        pool.swap(i, j);
    }
    pool.truncate(p);
    pool
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SimGrid's own example profile (events 0, 2, 4, 6, 8; LOOPAFTER 10): the first
    /// event recurs 10 after the last one, at 18, then every 18.
    #[test]
    fn loop_after_matches_simgrid_semantics() {
        let p = SpeedProfile::parse("0 0.5\n2 1.0\n4 0.7\n6 0.1\n8 4\nLOOPAFTER 10\n").unwrap();
        let expect = [
            (0.0, 0.5),
            (1.9, 0.5),
            (2.0, 1.0),
            (8.0, 4.0),
            (17.9, 4.0),
            (18.0, 0.5),
            (20.0, 1.0),
            (26.0, 4.0),
            (36.0, 0.5),
        ];
        for (date, factor) in expect {
            assert_eq!(p.factor_at(date), factor, "date {date}");
        }
        assert_eq!(
            p.change_dates(21.0),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 18.0, 20.0]
        );
    }

    #[test]
    fn first_date_after_zero_keeps_the_period() {
        // Events at 3 and 5, LOOPAFTER 1: period 6, so 3 recurs at 9.
        let p = SpeedProfile::parse("3 0.5\n5 2\nLOOPAFTER 1\n").unwrap();
        assert_eq!(p.factor_at(2.0), 1.0);
        assert_eq!(p.factor_at(8.0), 2.0);
        assert_eq!(p.factor_at(9.0), 0.5);
        assert_eq!(p.factor_at(11.0), 2.0);
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("0 1\nfast 2\n", "line 2"),
            ("0 1\n5 -1\n", "line 2: speed factor -1"),
            ("5 1\n3 1\n", "line 2: date 3 comes before"),
            (
                "0 1\nLOOPAFTER 1\nLOOPAFTER 2\n",
                "line 3: the loop delay is given twice",
            ),
            ("LOOPAFTER 4\n", "line 1: a loop needs at least one event"),
            ("0 1 2\n", "line 1"),
            ("-1 1\n", "line 1: date -1 must be finite"),
        ];
        for (text, expected) in cases {
            let message = SpeedProfile::parse(text).unwrap_err().to_string();
            assert!(message.contains(expected), "{text:?}: {message}");
        }
    }

    #[test]
    fn paper_changes_fall_in_their_windows() {
        for seed in 0..200 {
            for profile in paper_speed_changes(seed, 4, 100, 3.0) {
                let dates = profile.change_dates(1e9);
                assert_eq!(dates.len(), 2);
                assert!((19.0..=39.0).contains(&dates[0]), "{dates:?}");
                assert!((59.0..=79.0).contains(&dates[1]), "{dates:?}");
                for (_, factor) in &profile.events {
                    assert!((1.0 / 3.0..=3.0).contains(factor));
                }
            }
        }
    }
}
