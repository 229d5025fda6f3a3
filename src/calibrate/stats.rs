//! The sign test a sweep settles each size by, and the decision over a sweep's sizes: which
//! size to measure next, and when the answer is settled.

use super::result::{Outcome, Point};

/// The most rounds at one size; a size still unsettled after this many is a tie.
pub(super) const MAX_ROUNDS: u32 = 9;
/// A size whose median is within this of parity after five rounds is a tie (no more rounds).
pub(super) const TIE: f64 = 0.03;
/// A size whose median is within this of parity is near it: two rounds that happen to agree
/// say little there (a 2-0 sign test is what one round in four of a true tie shows), so its
/// sign test asks for two more wins (4-0, 6-1, 8-2). This is what keeps ten calibrations in a
/// row from reading a near-tie as a win in some and a loss in others.
pub(super) const NEAR: f64 = 0.10;

/// What a sweep does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// One more round at this point.
    Measure(usize),
    /// One more steady-state round at this point (an NT sweep's check of a size a lower
    /// threshold would start streaming at: `sweep::nt_guard`).
    Confirm(usize),
    /// Settled: the value, or `None` (the built-in rule stays), and why.
    Done(Option<usize>, Outcome),
}

/// Where one size stands after its rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    /// The candidate wins: of `n` rounds it won `k` and lost `m` with `k >= 2 + 2m` (2-0,
    /// 4-1, 6-2, 8-3): one preempted round either way is outvoted; with a median within
    /// [`NEAR`] of parity, `k >= 4 + 2m`.
    Win,
    /// The candidate loses, by the same test.
    Lose,
    /// Neither after `MAX_ROUNDS`, or a median within `TIE` of parity after five: it
    /// does not matter which way this size goes.
    Tie,
    /// Not enough rounds yet.
    Open,
}

pub(super) fn side(p: &Point) -> Side {
    let (w, l) = (p.wins, p.rounds - p.wins);
    let margin = if (p.ratio - 1.0).abs() < NEAR { 4 } else { 2 };
    if w >= margin + 2 * l {
        Side::Win
    } else if l >= margin + 2 * w {
        Side::Lose
    } else if p.rounds >= MAX_ROUNDS || (p.rounds >= 5 && (p.ratio - 1.0).abs() < TIE) {
        Side::Tie
    } else {
        Side::Open
    }
}

/// The next step of a sweep over `pts` (smallest size first). The answer is the lowest size
/// `c` that wins in the tail where the candidate does not lose: from the largest size down,
/// the sizes that win or tie (an open size counts while its median is at least 1, an
/// unmeasured one counts); ties at the bottom of that tail do not lower it (where it does not
/// matter which way a size goes, the answer stays at the first size that wins, so runs that
/// see the tie a little either side of parity agree). `c` and the size above it must be
/// settled, and the size below `c` must lose or tie (or `c` is the smallest size tried). Until then, the first
/// of these still open gets another round. So sizes are first measured upwards, one round
/// each, until two of them hold; sizes above the two that settle the answer are never
/// measured (streaming's lead grows with the size on every machine measured: lab/machines/).
/// `never_wins` is the answer when the largest size loses or ties.
pub(super) fn decide(pts: &[Point], never_wins: Option<usize>) -> Step {
    let top = pts.len() - 1;
    let holds = |p: &Point| match side(p) {
        Side::Win | Side::Tie => true,
        Side::Lose => false,
        Side::Open => p.rounds == 0 || p.ratio >= 1.0,
    };
    let open = |i: usize| side(&pts[i]) == Side::Open;
    let Some(c) = (0..=top).rev().take_while(|&i| holds(&pts[i])).last() else {
        return if open(top) {
            Step::Measure(top)
        } else {
            Step::Done(never_wins, Outcome::NeverWins)
        };
    };
    if c == top {
        // Only the largest size holds: settle it and the one below before concluding.
        return match (open(top), top > 0 && open(top - 1)) {
            (true, _) => Step::Measure(top),
            (_, true) => Step::Measure(top - 1),
            _ => Step::Done(None, Outcome::Noisy),
        };
    }
    for i in [c, c + 1] {
        if open(i) {
            return Step::Measure(i);
        }
    }
    if !pts[c..].iter().any(|p| side(p) == Side::Win) {
        // Ties only so far: the next size up must show a win.
        return match pts[c..].iter().position(|p| p.rounds == 0) {
            Some(j) => Step::Measure(c + j),
            None => Step::Done(None, Outcome::Noisy),
        };
    }
    // Ties at the bottom of the tail leave the answer at the first size that wins (one
    // exists above: checked), backed by the size above it.
    let mut c = c;
    while side(&pts[c]) == Side::Tie {
        c += 1;
        if open(c) {
            return Step::Measure(c);
        }
    }
    if c < top && open(c + 1) {
        return Step::Measure(c + 1);
    }
    if c > 0 && open(c - 1) {
        return Step::Measure(c - 1);
    }
    Step::Done(Some(pts[c].size), Outcome::Decided)
}

/// Adds one round's ratio (baseline time ÷ candidate time) to `p`, keeping its median.
/// `all` holds every round's ratio of this point so far (`p.rounds` of them).
pub(super) fn record(p: &mut Point, all: &mut [f64; MAX_ROUNDS as usize], ratio: f64) {
    all[p.rounds as usize] = ratio;
    p.rounds += 1;
    p.wins += u32::from(ratio > 1.0);
    let mut v = *all;
    let v = &mut v[..p.rounds as usize];
    v.sort_by(f64::total_cmp);
    let n = v.len();
    p.ratio = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
}
