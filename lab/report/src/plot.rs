//! `--svg`: copy bandwidth versus size, one panel per destination, one line per mode, log
//! axes (plotters, SVG backend only).

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::json::Report;
use crate::measure::{Cell, Dest};
use crate::text::{self, size};

/// One colour per op, in table order (memcpy first): the baseline in grey.
const COLOURS: [RGBColor; 6] = [
    RGBColor(110, 110, 110),
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
];

/// Writes the plot of the report's copy bandwidth to `path`, titled with the machine and date.
pub fn write(report: &Report, path: &Path) -> Result<(), String> {
    let m = &report.machine;
    let cpu = if m.brand.is_empty() {
        &m.vendor
    } else {
        &m.brand
    };
    let title = format!(
        "cachecopy {}: copy bandwidth per mode, {cpu} ({}), {}",
        report.cachecopy, m.active, report.date
    );
    write_svg(&report.bandwidth, &title, m.nt_threshold, path)
}

/// Writes the plot of `cells` (a bandwidth table) to `path`. `threshold` marks `Auto`'s switch.
fn write_svg(cells: &[Cell], title: &str, threshold: usize, path: &Path) -> Result<(), String> {
    draw(cells, title, threshold, path).map_err(|e| format!("{}: {e}", path.display()))
}

fn draw(
    cells: &[Cell],
    title: &str,
    threshold: usize,
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let ops = text::distinct(cells.iter().map(|c| c.op));
    let lg = |s: usize| (s.max(1) as f64).log2();
    let (mut x0, mut x1) = (f64::MAX, f64::MIN);
    let (mut y0, mut y1) = (f64::MAX, f64::MIN);
    for c in cells {
        x0 = x0.min(lg(c.size));
        x1 = x1.max(lg(c.size));
        y0 = y0.min(c.gbps.median);
        y1 = y1.max(c.gbps.median);
    }
    if cells.is_empty() {
        return Err("nothing to plot".into());
    }
    if x1 - x0 < 1.0 {
        (x0, x1) = (x0 - 1.0, x1 + 1.0);
    }
    // Both axes are log2 of the value, labelled at powers of two: sizes read as 64 B, 1 KiB, ...
    // and bandwidths as 0.5, 1, 2, 4 GB/s, every gridline one doubling.
    let (y0, y1) = ((y0.max(1e-3)).log2().floor() - 0.2, y1.log2().ceil() + 0.6);

    let root = SVGBackend::new(path, (1400, 620)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 24))?;
    let panels = root.split_evenly((1, 2));
    for (area, dest) in panels.iter().zip(Dest::ALL) {
        let caption = match dest {
            Dest::Hot => "hot destination (cached when it fits)",
            Dest::Cold => "cold destination (not cached)",
        };
        let mut chart = ChartBuilder::on(area)
            .caption(caption, ("sans-serif", 19))
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(x0 - 0.3..x1 + 0.3, y0..y1)?;
        chart
            .configure_mesh()
            .x_labels(((x1 - x0) as usize + 1).min(16))
            .x_label_formatter(&|v| {
                let r = v.round();
                if (v - r).abs() < 1e-6 && r >= 0.0 {
                    size(2f64.powf(r) as usize).replace(' ', "\u{a0}")
                } else {
                    String::new()
                }
            })
            .y_labels(((y1 - y0) as usize + 2).min(16))
            .y_label_formatter(&|v| {
                let r = v.round();
                if (v - r).abs() > 1e-6 {
                    return String::new();
                }
                let g = 2f64.powf(r);
                if g >= 1.0 {
                    format!("{g:.0}")
                } else {
                    format!("{g}")
                }
            })
            .x_desc("copy size (log)")
            .y_desc("GB/s (median, log)")
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 14))
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(222, 222, 222))
            .draw()?;
        let t = lg(threshold);
        if t >= x0 - 0.3 && t <= x1 + 0.3 {
            let grey = RGBColor(150, 150, 150);
            chart.draw_series(LineSeries::new([(t, y0), (t, y1)], grey.stroke_width(1)))?;
            // Label on the side with room: left of the line near the right edge.
            let label = format!("Auto threshold {}", size(threshold));
            let (x, anchor) = if t > x1 - 3.0 {
                (t - 0.15, Pos::new(HPos::Right, VPos::Top))
            } else {
                (t + 0.15, Pos::new(HPos::Left, VPos::Top))
            };
            let style = ("sans-serif", 13).into_font().color(&grey).pos(anchor);
            chart.draw_series([Text::new(label, (x, y1 - 0.15), style)])?;
        }
        for (i, op) in ops.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let pts: Vec<(f64, f64)> = cells
                .iter()
                .filter(|c| c.dest == dest && c.op == *op)
                .map(|c| (lg(c.size), c.gbps.median.max(1e-3).log2()))
                .collect();
            let width = if i == 0 { 3 } else { 2 };
            chart
                .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(width)))?
                .label(*op)
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 22, y)], colour.stroke_width(width))
                });
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(("sans-serif", 14))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Summary;

    #[test]
    fn writes_one_line_per_op_and_panel() {
        let mut cells = Vec::new();
        for dest in Dest::ALL {
            for (k, size) in [64usize, 4096, 1 << 20].into_iter().enumerate() {
                for (i, op) in ["memcpy", "Temporal", "NonTemporal"]
                    .into_iter()
                    .enumerate()
                {
                    let v = 1.0 + (k * 3 + i) as f64;
                    cells.push(Cell {
                        size,
                        dest,
                        op,
                        gbps: Summary::of(&[v]).unwrap(),
                        ratio: None,
                        samples: vec![v],
                    });
                }
            }
        }
        let path = std::env::temp_dir().join(format!("cachecopy-plot-{}.svg", std::process::id()));
        write_svg(&cells, "test plot", 4096, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).ok();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        // 3 ops x 2 panels, plus the legend swatches and threshold marks.
        assert!(svg.matches("<polyline").count() >= 6);
        for label in [
            "test plot",
            "NonTemporal",
            "1\u{a0}KiB",
            "Auto threshold 4 KiB",
        ] {
            assert!(svg.contains(label), "missing {label:?}");
        }
        assert!(write_svg(&[], "empty", 0, &path).is_err());
    }
}
