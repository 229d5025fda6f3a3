//! Medians, ranges and the noisy flag: every figure the report prints is a [`Summary`] of
//! interleaved samples, never a single time.

use serde::{Deserialize, Serialize};

/// A figure is flagged noisy when `(max - min) / median` exceeds this: beyond it a neighbour was
/// busy during part of the run and the median deserves less trust (lab/report/README.md, "How to read
/// it").
pub const NOISY_SPREAD: f64 = 0.5;

/// Median, minimum and maximum of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// `(max - min) / median > NOISY_SPREAD`.
    pub noisy: bool,
}

impl Summary {
    /// Summarizes the finite samples; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let (min, max) = (v[0], v[n - 1]);
        let mut s = Summary {
            median,
            min,
            max,
            noisy: false,
        };
        s.noisy = s.spread() > NOISY_SPREAD;
        Some(s)
    }

    /// The summary of the samples' reciprocals: a ratio of times turned into a ratio of speeds.
    /// Exact for an odd count; for an even one the median is the reciprocal of the mean of the
    /// middle two, within a hair of the mean of their reciprocals.
    pub fn recip(&self) -> Summary {
        let mut s = Summary {
            median: 1.0 / self.median,
            min: 1.0 / self.max,
            max: 1.0 / self.min,
            noisy: false,
        };
        s.noisy = s.spread() > NOISY_SPREAD;
        s
    }

    /// `(max - min) / median`, 0 for a zero median.
    pub fn spread(&self) -> f64 {
        if self.median > 0.0 {
            (self.max - self.min) / self.median
        } else {
            0.0
        }
    }
}

/// The per-round ratios `a[i] / b[i]` of two interleaved sample series, summarized: pairing
/// samples taken side by side cancels drift that would skew a ratio of two medians.
pub fn paired_ratio(a: &[f64], b: &[f64]) -> Option<Summary> {
    let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    Summary::of(&r)
}

/// [`Summary::of`] for a test's figures, which are never empty.
#[cfg(test)]
pub fn summary(v: &[f64]) -> Summary {
    Summary::of(v).expect("a test's figures")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_and_even_medians() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        let s = Summary::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.5, 1.0, 4.0));
    }

    #[test]
    fn empty_and_non_finite() {
        assert_eq!(Summary::of(&[]), None);
        assert_eq!(Summary::of(&[f64::NAN, f64::INFINITY]), None);
        let s = Summary::of(&[f64::NAN, 5.0]).unwrap();
        assert_eq!(s.median, 5.0);
    }

    #[test]
    fn noisy_flag_follows_spread() {
        let tight = Summary::of(&[10.0, 10.5, 11.0]).unwrap();
        assert!(!tight.noisy);
        assert!((tight.spread() - 0.1 / 1.05).abs() < 1e-9);
        let wide = Summary::of(&[5.0, 10.0, 11.0]).unwrap();
        assert!(wide.noisy, "spread {}", wide.spread());
    }

    #[test]
    fn reciprocals_turn_time_ratios_into_speed_ratios() {
        let s = Summary::of(&[0.5, 2.0, 4.0]).unwrap().recip();
        assert_eq!((s.median, s.min, s.max), (0.5, 0.25, 2.0));
        assert!(s.noisy);
    }

    #[test]
    fn paired_ratios_cancel_drift() {
        // Both series slow down by 2x halfway: the ratio of each pair stays 1.5.
        let a = [15.0, 15.0, 7.5, 7.5, 7.5];
        let b = [10.0, 10.0, 5.0, 5.0, 5.0];
        let r = paired_ratio(&a, &b).unwrap();
        assert_eq!((r.median, r.min, r.max), (1.5, 1.5, 1.5));
    }
}
