//! The plots: a [`Figure`] is panels side by side (hot and cold destinations, or working sets),
//! a line per variant against size, log axes, and a legend beside them, drawn as SVG (plotters,
//! SVG backend only). `--svg` writes the copy bandwidth's; `--html` puts every section's on its
//! page (`crate::html`).

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::json::Report;
use crate::text::size;

/// How a series is drawn: one colour per variant, the same in every plot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// glibc's function, the reference: grey, thicker.
    Baseline,
    Temporal,
    NonTemporal,
    FlushCache,
    Auto,
    /// `Temporal` with the mode a run-time value.
    TemporalRt,
    /// `Auto` with the mode a run-time value.
    AutoRt,
    /// AOCL-LibMem's function.
    LibMem,
}

impl Style {
    /// The style of a mode's name (`Temporal`, ...); the baseline's for anything else.
    pub fn of_mode(name: &str) -> Style {
        match name {
            "Temporal" => Style::Temporal,
            "NonTemporal" => Style::NonTemporal,
            "FlushCache" => Style::FlushCache,
            "Auto" => Style::Auto,
            _ => Style::Baseline,
        }
    }

    /// The line's colour.
    pub fn colour(self) -> RGBColor {
        match self {
            Style::Baseline => RGBColor(110, 110, 110),
            Style::Temporal => RGBColor(31, 119, 180),
            Style::NonTemporal => RGBColor(214, 39, 40),
            Style::FlushCache => RGBColor(44, 160, 44),
            Style::Auto => RGBColor(255, 127, 14),
            Style::TemporalRt => RGBColor(23, 190, 207),
            Style::AutoRt => RGBColor(148, 103, 189),
            Style::LibMem => RGBColor(140, 86, 75),
        }
    }

    fn width(self) -> u32 {
        if self == Style::Baseline {
            3
        } else {
            2
        }
    }
}

/// One line of a panel: `(bytes, value)` points joined in order, and `extra` points drawn as
/// hollow squares, unjoined (what [`Figure::extra`] names).
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub style: Style,
    pub points: Vec<(usize, f64)>,
    pub extra: Vec<(usize, f64)>,
}

/// One panel: a caption and its series.
#[derive(Clone, Debug)]
pub struct Panel {
    pub caption: String,
    pub series: Vec<Series>,
}

/// A plot of values against size, both axes log.
#[derive(Clone, Debug)]
pub struct Figure {
    pub title: String,
    /// The x axis' label, e.g. `copy size (log scale)`.
    pub x_desc: String,
    /// The y axis' label, with its unit.
    pub y_desc: String,
    pub panels: Vec<Panel>,
    /// A vertical line at a size, and its label.
    pub mark: Option<(usize, String)>,
    /// What the hollow squares stand for, when any series has some.
    pub extra: Option<String>,
}

/// The width and height of every figure, in pixels.
pub const SIZE: (u32, u32) = (1200, 470);
/// The legend's strip, right of the panels.
const LEGEND: u32 = 210;

/// Writes the plot of the report's copy bandwidth (`--svg`) to `path`, titled with the machine
/// and date.
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
    let fig = crate::sections::bandwidth::figure(
        crate::measure::Kind::Copy,
        &report.bandwidth,
        m.nt_threshold,
        title,
    );
    let text = svg(&fig)?;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The figure as an SVG document.
pub fn svg(fig: &Figure) -> Result<String, String> {
    let mut buf = String::new();
    draw(fig, &mut buf).map_err(|e| format!("plot {:?}: {e}", fig.title))?;
    Ok(buf)
}

/// log2 of a size, 0 for 0.
fn lg(bytes: usize) -> f64 {
    (bytes.max(1) as f64).log2()
}

fn draw(fig: &Figure, buf: &mut String) -> Result<(), Box<dyn std::error::Error>> {
    let points = || {
        fig.panels
            .iter()
            .flat_map(|p| &p.series)
            .flat_map(|s| s.points.iter().chain(&s.extra))
            .filter(|p| p.1 > 0.0 && p.1.is_finite())
    };
    if points().next().is_none() {
        return Err("nothing to plot".into());
    }
    let (mut x0, mut x1) = (f64::MAX, f64::MIN);
    let (mut y0, mut y1) = (f64::MAX, f64::MIN);
    for &(x, y) in points() {
        x0 = x0.min(lg(x));
        x1 = x1.max(lg(x));
        y0 = y0.min(y.log2());
        y1 = y1.max(y.log2());
    }
    if x1 - x0 < 1.0 {
        (x0, x1) = (x0 - 1.0, x1 + 1.0);
    }
    // Both axes are log2 of the value, labelled at powers of two: sizes read as 64 B, 1 KiB, ...
    // and values as 0.5, 1, 2, 4, every gridline one doubling.
    let (y0, y1) = (y0.floor() - 0.2, y1.ceil() + 0.3);
    let (x0, x1) = (x0 - 0.3, x1 + 0.3);

    let root = SVGBackend::with_string(buf, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(&fig.title, ("sans-serif", 22))?;
    let (plots, legend) = root.split_horizontally(SIZE.0 - LEGEND);
    let panels = plots.split_evenly((1, fig.panels.len().max(1)));
    for (area, panel) in panels.iter().zip(&fig.panels) {
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.caption, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(62)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .x_labels(((x1 - x0) as usize + 1).min(12))
            .x_label_formatter(&|v| {
                let r = v.round();
                if (v - r).abs() < 1e-6 && r >= 0.0 {
                    size(2f64.powf(r) as usize).replace(' ', "\u{a0}")
                } else {
                    String::new()
                }
            })
            .y_labels(((y1 - y0) as usize + 2).min(14))
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
            .x_desc(&fig.x_desc)
            .y_desc(&fig.y_desc)
            .axis_desc_style(("sans-serif", 15))
            .label_style(("sans-serif", 14))
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()?;
        if let Some((at, label)) = &fig.mark {
            let t = lg(*at);
            if t >= x0 && t <= x1 {
                let grey = RGBColor(150, 150, 150);
                chart.draw_series(LineSeries::new([(t, y0), (t, y1)], grey.stroke_width(1)))?;
                // The label on the side with room: left of the line near the right edge.
                let (x, anchor) = if t > x1 - (x1 - x0) / 3.0 {
                    (t - 0.15, Pos::new(HPos::Right, VPos::Top))
                } else {
                    (t + 0.15, Pos::new(HPos::Left, VPos::Top))
                };
                let style = ("sans-serif", 13).into_font().color(&grey).pos(anchor);
                chart.draw_series([Text::new(label.clone(), (x, y1 - 0.1), style)])?;
            }
        }
        for s in &panel.series {
            let colour = s.style.colour();
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|p| p.1 > 0.0)
                .map(|&(x, y)| (lg(x), y.log2()))
                .collect();
            chart.draw_series(LineSeries::new(
                pts.clone(),
                colour.stroke_width(s.style.width()),
            ))?;
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
            chart.draw_series(s.extra.iter().filter(|p| p.1 > 0.0).map(|&(x, y)| {
                let (x, y) = (lg(x), y.log2());
                EmptyElement::at((x, y))
                    + Rectangle::new([(-5, -5), (5, 5)], colour.stroke_width(2))
            }))?;
        }
    }
    draw_legend(fig, &legend)?;
    root.present()?;
    Ok(())
}

/// The legend: a swatch and a name per distinct series, then the hollow square's meaning.
fn draw_legend<DB: DrawingBackend>(
    fig: &Figure,
    area: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let mut seen: Vec<(&str, Style)> = Vec::new();
    for s in fig.panels.iter().flat_map(|p| &p.series) {
        if !seen.iter().any(|(n, _)| *n == s.name) {
            seen.push((&s.name, s.style));
        }
    }
    let font = ("sans-serif", 15)
        .into_font()
        .color(&RGBColor(34, 34, 34))
        .pos(Pos::new(HPos::Left, VPos::Center));
    let mut y = 44;
    for (name, style) in seen {
        let colour = style.colour();
        area.draw(&PathElement::new(
            [(8, y), (36, y)],
            colour.stroke_width(style.width() + 1),
        ))?;
        area.draw(&Circle::new((22, y), 3, colour.filled()))?;
        area.draw(&Text::new(name.to_string(), (44, y), font.clone()))?;
        y += 24;
    }
    let has_extra = fig
        .panels
        .iter()
        .flat_map(|p| &p.series)
        .any(|s| !s.extra.is_empty());
    if let (Some(what), true) = (&fig.extra, has_extra) {
        y += 8;
        let grey = RGBColor(90, 90, 90);
        area.draw(&Rectangle::new(
            [(17, y - 5), (27, y + 5)],
            grey.stroke_width(2),
        ))?;
        for (i, line) in what.split('\n').enumerate() {
            area.draw(&Text::new(
                line.to_string(),
                (44, y + 18 * i as i32),
                font.clone(),
            ))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn figure() -> Figure {
        let series = |name: &str, style, k: f64| Series {
            name: name.into(),
            style,
            points: [64usize, 4096, 1 << 20]
                .into_iter()
                .enumerate()
                .map(|(i, s)| (s, k + i as f64))
                .collect(),
            extra: Vec::new(),
        };
        let panel = |caption: &str| Panel {
            caption: caption.into(),
            series: vec![
                series("memcpy", Style::Baseline, 1.0),
                series("Temporal", Style::Temporal, 2.0),
                series("NonTemporal", Style::NonTemporal, 3.0),
            ],
        };
        Figure {
            title: "test plot".into(),
            x_desc: "size".into(),
            y_desc: "GB/s".into(),
            panels: vec![panel("hot"), panel("cold")],
            mark: Some((4096, "Auto threshold 4 KiB".into())),
            extra: Some("fleet mix".into()),
        }
    }

    #[test]
    fn draws_a_line_per_series_and_panel_and_one_legend() {
        let mut fig = figure();
        let svg = svg(&fig).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        // 3 series x 2 panels, the threshold marks, the legend's 3 swatches.
        assert!(svg.matches("<polyline").count() >= 6 + 2);
        for label in [
            "test plot",
            "NonTemporal",
            "1\u{a0}KiB",
            "Auto threshold 4 KiB",
            "hot",
            "cold",
        ] {
            assert!(svg.contains(label), "missing {label:?}");
        }
        // The legend names each series once.
        assert_eq!(svg.matches(">\nNonTemporal\n<").count(), 1, "{svg}");
        assert!(!svg.contains("fleet mix"), "no hollow squares, no note");
        fig.panels[0].series[0].extra = vec![(100, 2.0)];
        assert!(svg_of(&fig).contains("fleet mix"));
        fig.panels.iter_mut().for_each(|p| p.series.clear());
        assert!(self::svg(&fig).is_err());
    }

    fn svg_of(fig: &Figure) -> String {
        svg(fig).unwrap()
    }
}
