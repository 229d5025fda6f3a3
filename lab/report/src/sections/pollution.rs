//! Section 4: what a copy costs the data around it. A victim working set is read (so it is
//! cached), a 4 MiB copy runs into a cold destination in one mode, then the victim is read
//! again and timed. "none" (no copy in between) is the baseline.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use crate::measure::{Arena, Buf, Dest, Op};
use crate::session::Session;
use crate::stats::{paired_ratio, Summary};
use crate::text::{self, num, range, ratio, size};

/// One figure: a victim size after one operation.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Bytes of the victim working set.
    pub victim: usize,
    /// `"none"` or the copy's op name.
    pub op: &'static str,
    /// Nanoseconds to re-read the victim.
    pub reread_ns: Summary,
    /// ÷ the no-copy re-read time, per round (1.0 = the copy evicted nothing the victim needs).
    pub slowdown: Summary,
}

/// Section 4's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Pollution {
    /// Bytes of the copy between the victim's reads.
    pub copy: usize,
    /// Every victim size, every op.
    pub rows: Vec<Row>,
}

/// Measures and prints section 4.
pub fn section(s: &mut Session) -> Pollution {
    s.start("4. cache pollution");
    let tick = s.ticker();
    let p = &s.plan;
    let pollution = run(
        &p.victims,
        p.pollution_copy,
        s.src.as_slice(),
        &mut s.arena,
        p.pollution_samples,
        tick,
    );
    s.print(&print(&pollution));
    pollution
}

/// Times the victim's re-read after each op (and after none), `samples` rounds per victim.
fn run(
    victims: &[usize],
    copy: usize,
    src: &[u8],
    arena: &mut Arena,
    samples: usize,
    mut tick: impl FnMut(),
) -> Pollution {
    let mut ops: Vec<Option<Op>> = vec![None, Some(Op::Memcpy)];
    ops.extend(cachecopy::Mode::ALL.iter().map(|&m| Some(Op::Copy(m))));
    let mut rows = Vec::new();
    for &victim_len in victims {
        let victim = Buf::new(victim_len, 3);
        let mut times = vec![Vec::new(); ops.len()];
        for round in 0..samples {
            for k in 0..ops.len() {
                let i = (round + k) % ops.len();
                read(victim.as_slice());
                read(victim.as_slice());
                if let Some(op) = ops[i] {
                    op.run(arena.dest(Dest::Cold, copy), src);
                }
                let t = Instant::now();
                read(victim.as_slice());
                times[i].push(t.elapsed().as_nanos() as f64);
            }
            tick();
        }
        for (i, op) in ops.iter().enumerate() {
            rows.push(Row {
                victim: victim_len,
                op: op.map_or("none", Op::name),
                reread_ns: Summary::of(&times[i]).expect("samples ≥ 1"),
                slowdown: paired_ratio(&times[i], &times[0]).expect("samples ≥ 1"),
            });
        }
    }
    Pollution { copy, rows }
}

/// Touches one word per cache line (what matters is which lines are still cached).
fn read(v: &[u8]) {
    let mut acc = 0u8;
    for line in v.chunks(64) {
        acc ^= line[0];
    }
    black_box(acc);
}

/// Section 4's text: a row per victim, µs to re-read it after each op and the slowdown.
fn print(p: &Pollution) -> String {
    let mut s = format!(
        "4. Cache pollution: re-reading a victim working set after one {} copy into a cold \
         destination; µs median (min-max) and ÷ the re-read with no copy in between\n",
        size(p.copy)
    );
    let ops = text::distinct(p.rows.iter().map(|r| r.op));
    let victims = text::distinct(p.rows.iter().map(|r| r.victim));
    let cols: Vec<(&str, &str)> = ops.iter().map(|&op| (op, op)).collect();
    s.push_str(&text::by_size("victim", &victims, &cols, |v, op| {
        let r = p.rows.iter().find(|r| r.victim == v && r.op == op)?;
        let us = Summary {
            median: r.reread_ns.median / 1e3,
            min: r.reread_ns.min / 1e3,
            max: r.reread_ns.max / 1e3,
            noisy: r.reread_ns.noisy,
        };
        Some(if r.op == "none" {
            range(&us)
        } else {
            format!("{} {}", num(us.median), ratio(&r.slowdown))
        })
    }));
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_is_measured() {
        let src = vec![5u8; 64 << 10];
        let mut arena = Arena::with_len(1 << 20);
        let p = run(&[16 << 10], 64 << 10, &src, &mut arena, 2, || {});
        let names: Vec<_> = p.rows.iter().map(|r| r.op).collect();
        assert_eq!(
            names,
            [
                "none",
                "memcpy",
                "Temporal",
                "NonTemporal",
                "FlushCache",
                "Auto"
            ]
        );
        assert!(p.rows.iter().all(|r| r.reread_ns.median > 0.0));
        let t = print(&p);
        assert!(t.starts_with("4. Cache pollution"), "{t}");
        assert!(t.contains("   victim  "), "{t}");
        assert!(t.contains("16 KiB"), "{t}");
    }
}
