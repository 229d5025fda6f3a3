//! Self-calibration of the `Auto` thresholds: measures, on the machine at hand, the size from
//! which streaming into a destination that is already cached stops losing to ordinary stores,
//! for copies and for fills, within about 100 ms.
//!
//! Why measure: no cache-size formula fits every CPU (the crossover is the L2 size on Intel
//! server parts and a quarter of the L3 on AMD), and a VM's cache report is a hint. Why the hot
//! destination (the same buffer, copied into again and again): into a cold destination
//! streaming wins from a few KiB on every machine measured, so the hot crossover is the one
//! that can make `Auto` lose. The method is the report's section 5, in a smaller budget.
//!
//! The measurement neither allocates nor locks (its buffers come from `mmap`), so
//! `CACHECOPY_NT_THRESHOLD=calibrate`, which runs it inside the first call, is safe in an
//! allocator.

use core::sync::atomic::Ordering;
use core::time::Duration;

use std::time::Instant;

use crate::backend::Kernels;
use crate::tune;

/// Sizes tried, smallest first: 256 KiB to 16 MiB by factors of 2 (the crossovers measured so
/// far lie between 2 and 8 MiB: docs/machines/).
const SIZES: [usize; 7] = [
    256 << 10,
    512 << 10,
    1 << 20,
    2 << 20,
    4 << 20,
    8 << 20,
    16 << 20,
];
/// Rounds per size.
const ROUNDS: usize = 5;
/// The wall-time budget: a size whose measurement would end past it (projected from the
/// previous size, which took about half as long) is left undecided.
const BUDGET: Duration = Duration::from_millis(95);
/// A size counts as "streaming no slower" when the median NT ÷ T time is at most this.
const NO_SLOWER: f64 = 1.0;
/// A size whose per-round ratios disagree by more than this (second largest ÷ second smallest:
/// one preempted round either way is forgiven) is too noisy to count.
const NOISY: f64 = 1.5;

/// What [`calibrate`](crate::calibrate) found. See [`Calibration::apply`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// The copy threshold measured, or `None` when timing was too noisy to decide (or
    /// streaming never stopped losing within the sizes tried): then the built-in rule stays.
    pub copy: Option<usize>,
    /// The same for fills (zeroing).
    pub fill: Option<usize>,
    /// Wall time the measurement took.
    pub elapsed: Duration,
    /// Median time of a streaming ÷ an ordinary copy into a cached destination, per size
    /// tried (`(size, ratio)`, below 1: streaming wins; `NaN` where not measured).
    pub copy_ratios: [(usize, f64); SIZES.len()],
    /// The same for fills.
    pub fill_ratios: [(usize, f64); SIZES.len()],
}

impl Calibration {
    /// Installs every threshold this calibration decided (for the whole process, as
    /// [`set_nt_threshold`](crate::set_nt_threshold) and
    /// [`set_fill_nt_threshold`](crate::set_fill_nt_threshold)); leaves the others as they
    /// are. Safe to call while other threads copy: every value is a valid threshold.
    pub fn apply(&self) {
        // A `Calibration` exists only after detection ran (it measured the active backend), so
        // these stores are never overwritten by detection's defaults.
        if let Some(t) = self.copy {
            tune::COPY_NT.store(t, Ordering::Relaxed);
        }
        if let Some(t) = self.fill {
            tune::FILL_NT.store(t, Ordering::Relaxed);
        }
    }
}

/// A private anonymous mapping, unmapped on drop (no global allocator involved).
struct Map {
    ptr: *mut u8,
    len: usize,
}

impl Map {
    fn new(len: usize) -> Option<Map> {
        // SAFETY: an anonymous private mapping; the result is checked.
        let p = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(Map { ptr: p.cast(), len })
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, not used after this.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Runs the calibration on the kernels `k` (which run on this CPU).
pub(crate) fn run(k: &Kernels) -> Calibration {
    let t0 = Instant::now();
    let largest = SIZES[SIZES.len() - 1];
    let mut copy_ratios = [(0, f64::NAN); SIZES.len()];
    let mut fill_ratios = [(0, f64::NAN); SIZES.len()];
    for (i, &s) in SIZES.iter().enumerate() {
        copy_ratios[i].0 = s;
        fill_ratios[i].0 = s;
    }
    if let (Some(src), Some(dst)) = (Map::new(largest), Map::new(largest)) {
        // SAFETY: both mappings are `largest` writable bytes, disjoint; `k` runs here. The
        // streamed stores are fenced by the kernels themselves before each call returns.
        unsafe {
            (k.fill_temporal)(src.ptr, 0x5a, largest);
            (k.fill_temporal)(dst.ptr, 0, largest);
        }
        let mut last = Duration::ZERO;
        let (mut copy_done, mut fill_done) = (false, false);
        for (i, &size) in SIZES.iter().enumerate() {
            let start = t0.elapsed();
            if (copy_done && fill_done) || start + 2 * last > BUDGET {
                break;
            }
            if !copy_done {
                // SAFETY: as above; `size <= largest`.
                copy_ratios[i].1 = paired(|nt| unsafe {
                    if nt {
                        (k.copy_nontemporal)(dst.ptr, src.ptr, size)
                    } else {
                        (k.copy_temporal)(dst.ptr, src.ptr, size)
                    }
                });
                copy_done = crossover(&copy_ratios).is_some();
            }
            if !fill_done {
                // SAFETY: as above.
                fill_ratios[i].1 = paired(|nt| unsafe {
                    if nt {
                        (k.fill_nontemporal)(dst.ptr, 0, size)
                    } else {
                        (k.fill_temporal)(dst.ptr, 0, size)
                    }
                });
                fill_done = crossover(&fill_ratios).is_some();
            }
            last = t0.elapsed() - start;
        }
    }
    Calibration {
        copy: crossover(&copy_ratios),
        fill: crossover(&fill_ratios),
        elapsed: t0.elapsed(),
        copy_ratios,
        fill_ratios,
    }
}

/// The median NT ÷ T time over [`ROUNDS`] rounds into the same destination. In each round each
/// op runs once untimed, which leaves the destination in that op's own steady state (cached
/// after a temporal op, written back after a streamed one), then once timed; the order flips
/// every round. This is the report's "hot destination" (section 5): a buffer a program keeps
/// copying into with one mode. `NaN` when the middle rounds disagree by more than [`NOISY`].
fn paired(mut op: impl FnMut(bool)) -> f64 {
    let mut r = [0f64; ROUNDS];
    for (round, slot) in r.iter_mut().enumerate() {
        let mut t = [0f64; 2];
        for k in 0..2 {
            let nt = (round + k) % 2 == 1;
            op(nt);
            let start = Instant::now();
            op(nt);
            t[nt as usize] = start.elapsed().as_nanos().max(1) as f64;
        }
        *slot = t[1] / t[0];
    }
    r.sort_by(f64::total_cmp);
    if r[ROUNDS - 2] / r[1] > NOISY {
        return f64::NAN;
    }
    r[ROUNDS / 2]
}

/// The smallest measured size from which streaming is no slower at every larger size measured
/// (unmeasured and noisy sizes, `NaN`, count for nothing), backed by at least two measured
/// sizes; `None` otherwise. Two sizes are the evidence that the crossover holds beyond the
/// first one.
fn crossover(ratios: &[(usize, f64); SIZES.len()]) -> Option<usize> {
    let mut from = None;
    let mut backing = 0;
    for &(size, r) in ratios.iter().rev() {
        if r.is_nan() {
            continue;
        }
        if r > NO_SLOWER {
            break;
        }
        from = Some(size);
        backing += 1;
    }
    from.filter(|_| backing >= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(r: [f64; SIZES.len()]) -> [(usize, f64); SIZES.len()] {
        core::array::from_fn(|i| (SIZES[i], r[i]))
    }

    #[test]
    fn the_crossover_is_where_streaming_stops_losing_for_good() {
        let n = f64::NAN;
        // Loses below 2 MiB, wins from there up.
        let t = table([3.0, 2.0, 1.2, 0.9, 0.7, 0.5, 0.6]);
        assert_eq!(crossover(&t), Some(2 << 20));
        // A dip below 1 that does not hold at larger sizes is not a crossover.
        let t = table([3.0, 0.9, 1.2, 1.1, 0.8, 0.7, 0.6]);
        assert_eq!(crossover(&t), Some(4 << 20));
        // Never wins, or only at the last size: undecided.
        assert_eq!(crossover(&table([2.0; 7])), None);
        assert_eq!(crossover(&table([2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.9])), None);
        // Unmeasured at the top (decided early, or the budget ran out): what was measured
        // stands, if two sizes back it.
        let t = table([3.0, 0.9, 0.8, n, n, n, n]);
        assert_eq!(crossover(&t), Some(512 << 10));
        assert_eq!(crossover(&table([3.0, 2.0, 0.9, n, n, n, n])), None);
        // A noisy size counts for nothing either way.
        let t = table([3.0, 0.9, 1.3, n, 0.8, 0.7, 0.6]);
        assert_eq!(crossover(&t), Some(4 << 20));
        let t = table([3.0, 2.0, 0.9, n, 0.8, n, n]);
        assert_eq!(crossover(&t), Some(1 << 20));
        assert_eq!(crossover(&table([n; 7])), None);
    }

    #[test]
    #[cfg_attr(miri, ignore = "mmap and timing")]
    fn a_calibration_measures_and_applies() {
        let k = crate::dispatch::active();
        let c = run(k);
        assert!(c.copy_ratios.iter().any(|&(_, r)| !r.is_nan()), "{c:?}");
        for t in [c.copy, c.fill].into_iter().flatten() {
            assert!(SIZES.contains(&t));
        }
    }
}
