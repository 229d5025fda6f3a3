//! Text for every section: sizes ("4 KiB"), figures and ratio cells, table layout, labelled
//! lines and the date, and the one writer to stdout. One module, so that every section prints
//! alike.

use std::fmt::{Display, Write as _};
use std::io::Write as _;

use crate::stats::Summary;

/// `1536` → `1.5 KiB`, `4194304` → `4 MiB`.
pub fn size(bytes: usize) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Three significant digits.
pub fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `~` before a noisy figure, nothing before a tight one.
fn noisy(s: &Summary) -> &'static str {
    if s.noisy {
        "~"
    } else {
        ""
    }
}

/// `median (min-max)`, with `~` when noisy.
pub fn range(s: &Summary) -> String {
    format!(
        "{}{} ({}-{})",
        noisy(s),
        num(s.median),
        num(s.min),
        num(s.max)
    )
}

/// A ratio cell: `1.23x`, with `~` when noisy.
pub fn ratio(s: &Summary) -> String {
    format!("{}{:.2}x", noisy(s), s.median)
}

/// One labelled line of a section, `   label          value`, the values in one column.
pub fn field(out: &mut String, label: &str, value: impl Display) {
    let _ = writeln!(out, "   {label:<15}{value}");
}

/// The distinct items, in the order they first appear.
pub fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut v = Vec::new();
    for item in items {
        if !v.contains(&item) {
            v.push(item);
        }
    }
    v
}

/// A table with one row per size (the first column, headed `corner`) and one column per
/// `(header, key)` of `cols`; `cell(size, key)` fills each cell, empty when `None`.
pub fn by_size<C: Copy>(
    corner: &str,
    sizes: &[usize],
    cols: &[(&str, C)],
    cell: impl Fn(usize, C) -> Option<String>,
) -> String {
    let mut header = vec![corner.to_string()];
    header.extend(cols.iter().map(|(h, _)| h.to_string()));
    let rows: Vec<Vec<String>> = sizes
        .iter()
        .map(|&sz| {
            let mut row = vec![size(sz)];
            row.extend(cols.iter().map(|&(_, c)| cell(sz, c).unwrap_or_default()));
            row
        })
        .collect();
    grid(&header, &rows)
}

/// Right-aligned columns, the first left-aligned, indented under the section's heading.
pub fn grid(header: &[impl AsRef<str>], rows: &[Vec<String>]) -> String {
    left_grid(header, rows, 1)
}

/// [`grid`] with the first `left` columns left-aligned (names), the rest right-aligned (figures).
pub fn left_grid(header: &[impl AsRef<str>], rows: &[Vec<String>], left: usize) -> String {
    aligned_grid(header, rows, |i| i < left)
}

/// [`grid`] with the columns `left` says left-aligned, the rest right-aligned.
pub fn aligned_grid(
    header: &[impl AsRef<str>],
    rows: &[Vec<String>],
    left: impl Fn(usize) -> bool,
) -> String {
    let header: Vec<&str> = header.iter().map(AsRef::as_ref).collect();
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut l = String::from("   ");
        for (i, c) in cells.iter().enumerate() {
            let pad = " ".repeat(w[i] - c.chars().count());
            if i == 0 {
                l.push_str(c);
                l.push_str(&pad);
            } else if left(i) {
                l.push_str("  ");
                l.push_str(c);
                l.push_str(&pad);
            } else {
                l.push_str("  ");
                l.push_str(&pad);
                l.push_str(c);
            }
        }
        // A left-aligned last column would end the line in its padding.
        if cells.len() > 1 && left(cells.len() - 1) {
            l.truncate(l.trim_end().len());
        }
        l.push('\n');
        l
    };
    let mut s = line(&header);
    for r in rows {
        s.push_str(&line(&r.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    s
}

/// Today's UTC date, `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil(secs / 86_400)
}

/// Days since 1970-01-01 → `YYYY-MM-DD` (days-from-civil inverted, Howard Hinnant's algorithm).
fn civil(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Writes `text` to stdout now (flushed, so it shows before the next long measurement).
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_in_binary_units() {
        assert_eq!(size(64), "64 B");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(4 << 20), "4 MiB");
        assert_eq!(size(192 << 20), "192 MiB");
    }

    #[test]
    fn dates() {
        assert_eq!(civil(0), "1970-01-01");
        assert_eq!(civil(19_782), "2024-02-29");
        assert_eq!(civil(20_000), "2024-10-04");
    }

    #[test]
    fn numbers() {
        assert_eq!(num(123.4), "123");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(1.234), "1.23");
        let s = Summary::of(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(range(&s), "~2.00 (1.00-3.00)");
        assert_eq!(ratio(&s), "~2.00x");
        assert_eq!(ratio(&Summary::of(&[1.5]).unwrap()), "1.50x");
    }

    #[test]
    fn fields_and_tables_line_up() {
        let mut s = String::new();
        field(&mut s, "NT threshold", "4 MiB");
        assert_eq!(s, "   NT threshold   4 MiB\n");
        assert_eq!(distinct([3, 1, 3, 2, 1]), [3, 1, 2]);
        let t = left_grid(
            &["a".to_string(), "bb".to_string(), "c".to_string()],
            &[vec!["x".into(), "y".into(), "1".into()]],
            2,
        );
        assert_eq!(t, "   a  bb  c\n   x  y   1\n");
        let t = by_size("size", &[64, 4096], &[("a", 1), ("bb", 2)], |sz, c| {
            (sz > 64 || c == 1).then(|| format!("{}", sz * c))
        });
        assert_eq!(
            t,
            "   size      a    bb\n   64 B     64      \n   4 KiB  4096  8192\n"
        );
    }
}
