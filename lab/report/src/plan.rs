//! What a run measures at each scale: the sizes and sample counts of every section, chosen so
//! that `--quick` stays under 30 s and `--tiny` exercises every section in a moment.

use crate::cli::{Options, Scale};

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// The sizes and sample counts of one scale.
pub struct Plan {
    /// Section 2: copy sizes.
    pub sizes: Vec<usize>,
    /// Sections 2 and 6: samples (interleaved rounds) per figure.
    pub samples: usize,
    /// Sections 2, 5 and 6: bytes of traffic per timed sample.
    pub sample_bytes: usize,
    /// Section 6: fill sizes.
    pub fill_sizes: Vec<usize>,
    /// Section 3: ring sizes.
    pub rings: Vec<usize>,
    /// Section 3: chunk sizes.
    pub chunks: Vec<usize>,
    /// Section 3: bytes through the ring per run.
    pub seed_bytes: usize,
    /// Section 3: runs per mode and setup.
    pub seed_rounds: usize,
    /// Section 4: victim working-set sizes.
    pub victims: Vec<usize>,
    /// Section 4: the size of the copy between the victim's reads.
    pub pollution_copy: usize,
    /// Section 4: samples per figure.
    pub pollution_samples: usize,
    /// Section 5: calibration sizes.
    pub calib_sizes: Vec<usize>,
    /// Section 5: samples per figure.
    pub calib_samples: usize,
}

fn geometric(from: usize, to: usize, step: usize) -> Vec<usize> {
    std::iter::successors(Some(from), |&s| Some(s * step))
        .take_while(|&s| s <= to)
        .collect()
}

impl Plan {
    /// The full run's plan, on which the quick one builds.
    fn full() -> Plan {
        Plan {
            sizes: geometric(64, 256 * MIB, 4),
            samples: 11,
            sample_bytes: 16 * MIB,
            fill_sizes: geometric(64, 256 * MIB, 4),
            rings: vec![2 * MIB, 64 * MIB],
            chunks: vec![512 * KIB, 128 * KIB],
            seed_bytes: 512 * MIB,
            seed_rounds: 5,
            victims: vec![256 * KIB, 8 * MIB],
            pollution_copy: 4 * MIB,
            pollution_samples: 15,
            calib_sizes: geometric(4 * KIB, 64 * MIB, 2),
            calib_samples: 7,
        }
    }

    /// The plan of `o.scale`, with `--sizes` and `--iterations` applied.
    pub fn new(o: &Options) -> Plan {
        let mut p = match o.scale {
            Scale::Full => Plan::full(),
            // The full run's rings, chunks, victims and pollution copy: the same shapes, fewer
            // and smaller sizes, fewer samples.
            Scale::Quick => Plan {
                sizes: geometric(64, 64 * MIB, 16),
                samples: 5,
                sample_bytes: 4 * MIB,
                fill_sizes: vec![64 * KIB, 4 * MIB],
                seed_bytes: 128 * MIB,
                seed_rounds: 3,
                pollution_samples: 7,
                calib_sizes: geometric(16 * KIB, 64 * MIB, 4),
                calib_samples: 5,
                ..Plan::full()
            },
            Scale::Tiny => Plan {
                sizes: vec![64, 64 * KIB, MIB],
                samples: 2,
                sample_bytes: 256 * KIB,
                fill_sizes: vec![64 * KIB],
                rings: vec![MIB],
                chunks: vec![128 * KIB],
                seed_bytes: 4 * MIB,
                seed_rounds: 1,
                victims: vec![64 * KIB],
                pollution_copy: 256 * KIB,
                pollution_samples: 2,
                calib_sizes: vec![16 * KIB, 256 * KIB, MIB],
                calib_samples: 2,
            },
        };
        if let Some(s) = &o.sizes {
            p.sizes = s.clone();
            p.fill_sizes = s.clone();
        }
        if let Some(n) = o.iterations {
            p.samples = n;
            p.pollution_samples = n;
            p.calib_samples = n;
            p.seed_rounds = n.div_ceil(2);
        }
        p
    }

    /// Progress-bar steps: one per table row, seed round, pollution round.
    pub fn steps(&self) -> u64 {
        let n = 2 * self.sizes.len()
            + 2 * self.fill_sizes.len()
            + self.rings.len() * self.chunks.len() * self.seed_rounds
            + self.victims.len() * self.pollution_samples
            + 4 * self.calib_sizes.len();
        n as u64
    }

    /// One of three values by how much this run measures: `tiny` for a run of a moment (the
    /// tests' `--tiny`), `quick` for fewer samples than the full run's (`--quick`, or fewer
    /// `--iterations`), else `full`. For the sections whose budgets are not in the plan.
    pub fn by_scale<T>(&self, tiny: T, quick: T, full: T) -> T {
        if self.sample_bytes < MIB {
            tiny
        } else if self.samples < Plan::full().samples {
            quick
        } else {
            full
        }
    }

    /// The largest buffer any section copies from or into.
    pub fn largest(&self) -> usize {
        self.sizes
            .iter()
            .chain(&self.fill_sizes)
            .chain(&self.calib_sizes)
            .copied()
            .fold(self.pollution_copy, usize::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_fit_their_budgets() {
        let o = |scale| Options {
            scale,
            json: None,
            svg: None,
            sizes: None,
            iterations: None,
            ..Options::default()
        };
        let full = Plan::new(&o(Scale::Full));
        assert_eq!(full.sizes.first(), Some(&64));
        assert_eq!(full.sizes.last(), Some(&(256 * MIB)));
        assert_eq!(full.largest(), 256 * MIB);
        let quick = Plan::new(&o(Scale::Quick));
        assert!(quick.steps() < full.steps());
        let mut custom = o(Scale::Quick);
        custom.sizes = Some(vec![100]);
        custom.iterations = Some(3);
        let p = Plan::new(&custom);
        assert_eq!(p.largest(), 64 * MIB, "the calibration's largest size");
        assert_eq!((p.sizes, p.samples, p.seed_rounds), (vec![100], 3, 2));
    }
}
