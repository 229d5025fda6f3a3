//! Section 10, "Where cachecopy is slower here": every figure the sections registered
//! ([`Findings`]) whose median ratio to its baseline is below [`SLOWER`], grouped by section,
//! operation and baseline.

use crate::findings::{Finding, Findings, SLOWER};
use crate::text::{self, ratio};

/// The closing section's text.
pub fn section(findings: &Findings) -> String {
    let held = findings.all().iter().filter(|f| f.target).count();
    let slower = findings.slower();
    let mut s = format!(
        "10. Where cachecopy is slower here: every measured shape whose median ratio to its \
         baseline is below {SLOWER:.2}x (the baseline's time ÷ cachecopy's, paired per round; \
         ~ = noisy). Baselines: glibc memcpy, memset, memmove and a kernel-style checksum loop; \
         for Auto also Temporal and the better explicit mode of the same shape. Held to them: \
         Temporal, Auto, checksums and batched frames (NonTemporal and FlushCache trade speed \
         for the cache and are judged in their sections)\n"
    );
    if slower.is_empty() {
        s.push_str(&format!(
            "   none: all {held} figures at {SLOWER:.2}x or above\n\n"
        ));
        return s;
    }
    // One group per section, operation and baseline, in section order, its shapes in the order
    // measured: first a line each (how many, the lowest), then every shape with its figure.
    let mut groups: Vec<(String, Vec<&Finding>)> = Vec::new();
    for f in &slower {
        let head = format!("{} {} against {}", f.section, f.op, f.baseline);
        match groups.iter_mut().find(|g| g.0 == head) {
            Some(g) => g.1.push(f),
            None => groups.push((head, vec![f])),
        }
    }
    groups.sort_by(|a, b| a.1[0].section.cmp(&b.1[0].section));
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|(head, fs)| {
            let low = fs
                .iter()
                .min_by(|a, b| a.ratio.median.total_cmp(&b.ratio.median))
                .expect("a group has a finding");
            vec![
                head.clone(),
                fs.len().to_string(),
                ratio(&low.ratio),
                low.shape.clone(),
            ]
        })
        .collect();
    let header = ["cachecopy against its baseline", "shapes", "lowest", "at"];
    s.push_str(&text::aligned_grid(&header, &rows, |i| i == 0 || i == 3));
    s.push_str(&format!(
        "   {} of {held} figures below {SLOWER:.2}x; every one:\n",
        slower.len()
    ));
    for (head, fs) in &groups {
        s.push_str(&format!("   {head} ({}):\n", fs.len()));
        let items: Vec<String> = fs
            .iter()
            .map(|f| match &f.note {
                Some(n) => format!("{} {} ({n})", f.shape, ratio(&f.ratio)),
                None => format!("{} {}", f.shape, ratio(&f.ratio)),
            })
            .collect();
        s.push_str(&wrap(&items, "      ", 100));
    }
    s.push('\n');
    s
}

/// `items` joined by `; `, in lines of at most `width` characters after `indent`.
fn wrap(items: &[String], indent: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for (i, item) in items.iter().enumerate() {
        let piece = if i + 1 < items.len() {
            format!("{item};")
        } else {
            item.clone()
        };
        if !line.is_empty() && line.chars().count() + 1 + piece.chars().count() > width {
            out.push_str(&format!("{indent}{line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&piece);
    }
    if !line.is_empty() {
        out.push_str(&format!("{indent}{line}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summary as sum;

    #[test]
    fn the_closing_section_lists_what_is_slower_or_says_none() {
        let mut f = Findings::default();
        f.add("2", "copy Auto", "memcpy", "256 B hot", sum(&[1.2]));
        assert!(section(&f).contains("none: all 1 figures at 0.97x or above"));
        f.add(
            "8a",
            "copy Temporal",
            "memcpy",
            "96 B hot +5",
            sum(&[0.5, 0.9, 0.96]),
        );
        f.add("2", "copy NonTemporal", "memcpy", "1 KiB hot", sum(&[0.1]))
            .target = false;
        f.add_vs_better(
            "9",
            "move Auto",
            "48 MiB cold, by 4 KiB, down",
            &[7.0],
            ("Temporal", &[10.0]),
            ("NonTemporal", &[7.0]),
        );
        f.add("8a", "copy Temporal", "memcpy", "128 B hot +5", sum(&[0.8]));
        let t = section(&f);
        assert!(t.starts_with("10. Where cachecopy is slower here"), "{t}");
        assert!(
            t.contains("   8a copy Temporal against memcpy (2):\n      96 B hot +5 ~0.90x; 128 B hot +5 0.80x\n"),
            "{t}"
        );
        assert!(!t.contains("1 KiB hot"), "NonTemporal is not held: {t}");
        assert!(
            t.contains("9 move Auto against the better mode (1):\n      48 MiB cold, by 4 KiB, down 0.70x (Temporal)\n"),
            "{t}"
        );
        assert!(t.contains("3 of 4 figures below 0.97x; every one:"), "{t}");
        // The summary: a line per group, in section order, with the lowest figure.
        let summary = t
            .find("   8a copy Temporal against memcpy  ")
            .expect("summary line");
        assert!(summary < t.find("   9 move Auto against").unwrap(), "{t}");
        assert!(t.contains("0.80x  128 B hot +5\n"), "{t}");
    }

    #[test]
    fn long_lists_wrap() {
        let items: Vec<String> = (0..5).map(|i| format!("item{i}")).collect();
        assert_eq!(
            wrap(&items, "  ", 11),
            "  item0;\n  item1;\n  item2;\n  item3;\n  item4\n"
        );
        assert_eq!(wrap(&items[..2], "  ", 80), "  item0; item1\n");
    }
}
