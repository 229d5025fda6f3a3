//! `--html FILE`: the run on one self-contained page, readable without a network or a script:
//! inline CSS, inline SVG plots (`crate::plot`), nothing fetched. It holds the first screen
//! (`crate::glance`) as tables, the plots of the sections that ran, section 10's list as a
//! table, and the whole text report folded at the end.

use std::fmt::Write as _;
use std::path::Path;

use crate::findings::{Finding, SLOWER};
use crate::glance::{Glance, Pick};
use crate::plot::{self, Figure};
use crate::text;

/// A group of plots under one heading.
pub struct Plots {
    pub heading: String,
    /// What the plots show, one sentence.
    pub about: String,
    pub figures: Vec<Figure>,
}

/// What the page shows.
pub struct Page<'a> {
    pub glance: &'a Glance,
    pub plots: Vec<Plots>,
    /// Section 10's list (in the order the sections registered it).
    pub slower: Vec<Finding>,
    /// The whole text report.
    pub text: &'a str,
}

const STYLE: &str = "\
body{font-family:'DejaVu Sans',Verdana,sans-serif;color:#222;background:#fff;margin:0 auto;\
max-width:1220px;padding:16px 20px;line-height:1.4;font-size:15px}\
h1{font-size:24px;margin:4px 0}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ccc}\
p{margin:6px 0}.machine{color:#555}\
table{border-collapse:collapse;margin:8px 0}\
th,td{border:1px solid #d4d4d4;padding:3px 9px;text-align:right;vertical-align:top}\
th{background:#f2f2f2}td.l,th.l{text-align:left}td.mode{font-weight:bold;text-align:left}\
td.good{background:#e3f3e3}td.bad{background:#fbe3e1}\
pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:13px}\
code{background:#f2f2f2;padding:1px 4px}\
figure{margin:10px 0 18px}figure svg{max-width:100%;height:auto;display:block}\
details{margin:20px 0}summary{cursor:pointer;font-weight:bold}";

/// `&`, `<`, `>` and quotes as entities, for text and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A ratio cell, shaded by whether it is at least as fast as its baseline.
fn ratio_cell(r: f64) -> String {
    let class = if r >= 1.0 {
        "good"
    } else if r < SLOWER {
        "bad"
    } else {
        ""
    };
    format!("<td class=\"{class}\">{r:.2}x</td>")
}

/// The first screen's table.
fn glance_table(g: &Glance, s: &mut String) {
    let cols = if g.libmem { 4 } else { 3 };
    let _ = write!(
        s,
        "<table class=\"glance\"><thead><tr><th class=\"l\" rowspan=\"2\">what</th>\
         <th class=\"l\" rowspan=\"2\">size</th><th colspan=\"{cols}\">hot destination (cached)\
         </th><th colspan=\"{cols}\">cold destination (not cached)</th></tr><tr>"
    );
    for _ in 0..2 {
        s.push_str("<th class=\"l\">use</th><th>÷ glibc</th><th>lowest</th>");
        if g.libmem {
            s.push_str("<th>÷ LibMem</th>");
        }
    }
    s.push_str("</tr></thead><tbody>\n");
    let mut last = None;
    for r in &g.rows {
        let what = if last == Some(r.what) {
            ""
        } else {
            r.what.plural()
        };
        last = Some(r.what);
        let _ = write!(
            s,
            "<tr><td class=\"l\">{what}</td><td class=\"l\">{}</td>",
            esc(&r.size)
        );
        for p in [&r.hot, &r.cold] {
            pick_cells(p.as_ref(), g.libmem, s);
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table>\n");
}

/// One destination's cells of a row.
fn pick_cells(p: Option<&Pick>, libmem: bool, s: &mut String) {
    match p {
        Some(p) => {
            let _ = write!(
                s,
                "<td class=\"mode\" title=\"over {} shape{}\">{}</td>{}{}",
                p.shapes,
                if p.shapes == 1 { "" } else { "s" },
                esc(p.mode),
                ratio_cell(p.vs_glibc),
                ratio_cell(p.lowest)
            );
            if libmem {
                match p.vs_libmem {
                    Some(r) => s.push_str(&ratio_cell(r)),
                    None => s.push_str("<td></td>"),
                }
            }
        }
        None => {
            s.push_str("<td class=\"l\">not measured</td><td></td><td></td>");
            if libmem {
                s.push_str("<td></td>");
            }
        }
    }
}

/// A table of findings: section, what ran, against what, shape, ratio and its range.
fn findings_table(fs: &[Finding], s: &mut String) {
    s.push_str(
        "<table class=\"slower\"><thead><tr><th class=\"l\">section</th>\
         <th class=\"l\">cachecopy</th><th class=\"l\">against</th><th class=\"l\">shape</th>\
         <th>ratio</th><th>min-max</th></tr></thead><tbody>\n",
    );
    for f in fs {
        let _ = writeln!(
            s,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td>{}<td>{}-{}</td></tr>",
            esc(&f.section),
            esc(&f.op),
            esc(&f.against()),
            esc(&f.shape),
            ratio_cell(f.ratio.median),
            text::num(f.ratio.min),
            text::num(f.ratio.max)
        );
    }
    s.push_str("</tbody></table>\n");
}

/// The page.
pub fn render(page: &Page) -> Result<String, String> {
    let g = page.glance;
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>{}</h1>\n<p class=\"machine\">{}</p>\n",
        esc(&g.title),
        esc(&g.title),
        esc(&g.machine)
    );
    s.push_str("<h2>At a glance</h2>\n");
    if g.rows.is_empty() {
        s.push_str("<p>No figure against glibc in the sections run.</p>\n");
    } else {
        let _ = writeln!(
            s,
            "<p>{}. Green: at least as fast as glibc; red: below {SLOWER:.2}x of it.</p>",
            esc(&g.legend())
        );
        glance_table(g, &mut s);
    }
    let tuning = g.tuning();
    let _ = writeln!(s, "<p>{}</p>", esc(&tuning[0]));
    if let Some(line) = tuning.get(1) {
        let _ = writeln!(s, "<pre>{}</pre>", esc(line.trim()));
    }
    let _ = writeln!(s, "<p>{}</p>", esc(&g.slower_line()));
    if !g.worst().is_empty() {
        findings_table(g.worst(), &mut s);
    }
    for group in &page.plots {
        let _ = write!(
            s,
            "<h2>{}</h2>\n<p>{}</p>\n",
            esc(&group.heading),
            esc(&group.about)
        );
        for fig in &group.figures {
            let svg = plot::svg(fig)?;
            // The title is the plot's own first line.
            let _ = write!(s, "<figure>\n{}\n</figure>\n", svg.trim());
        }
    }
    let _ = write!(
        s,
        "<h2>Where cachecopy is slower here (section 10)</h2>\n<p>Every shape held to its \
         baseline whose median ratio to it is below {SLOWER:.2}x (the baseline's time ÷ \
         cachecopy's, paired per round), in the order of the sections: {} of {}.</p>\n",
        page.slower.len(),
        g.held
    );
    if !page.slower.is_empty() {
        findings_table(&page.slower, &mut s);
    }
    let _ = write!(
        s,
        "<details>\n<summary>The whole text report</summary>\n<pre>{}</pre>\n</details>\n\
         </body>\n</html>\n",
        esc(page.text)
    );
    Ok(s)
}

/// Writes the page to `path`.
pub fn write(page: &Page, path: &Path) -> Result<(), String> {
    let html = render(page)?;
    std::fs::write(path, html).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{Findings, Place, What};
    use crate::measure::Dest;
    use crate::plot::{Panel, Series, Style};
    use crate::stats::summary;

    fn figure(title: &str) -> Figure {
        let series = |name: &str, style, k: f64| Series {
            name: name.into(),
            style,
            points: vec![(64, k), (4096, 2.0 * k), (1 << 20, 3.0 * k)],
            extra: vec![(300, k)],
        };
        Figure {
            title: title.into(),
            x_desc: "copy size (log scale)".into(),
            y_desc: "GB/s".into(),
            panels: ["hot", "cold"]
                .map(|c| Panel {
                    caption: c.into(),
                    series: vec![
                        series("glibc memcpy", Style::Baseline, 1.0),
                        series("Auto", Style::Auto, 1.5),
                    ],
                })
                .to_vec(),
            mark: None,
            extra: Some("a mix".into()),
        }
    }

    fn page_html() -> (String, usize) {
        let mut f = Findings::default();
        for (k, mode) in ["Temporal", "Auto"].into_iter().enumerate() {
            for bytes in [64, 1 << 20] {
                f.add(
                    "2",
                    format!("copy {mode}"),
                    "memcpy",
                    format!("{bytes} & <hot>"),
                    summary(&[0.9 + k as f64 * 0.2]),
                )
                .place = Place::glibc(What::Copy, mode, bytes, Dest::Hot);
            }
        }
        let g = Glance::new(
            "cachecopy 0.1.0 report, 2026-12-07".into(),
            "a <machine>".into(),
            16 << 20,
            f.all(),
            Some("CACHECOPY_TUNE=nt=16M".into()),
            None,
        );
        let plots = vec![
            Plots {
                heading: "Bandwidth".into(),
                about: "GB/s".into(),
                figures: vec![figure("copies"), figure("fills")],
            },
            Plots {
                heading: "Small calls".into(),
                about: "ns".into(),
                figures: vec![figure("8a")],
            },
        ];
        let page = Page {
            glance: &g,
            plots,
            slower: f.slower(),
            text: "1. Machine <x> & \"y\"\n",
        };
        (render(&page).unwrap(), 3)
    }

    /// The tags of `html` balance (void elements and `/>` aside); the first mismatch if not.
    fn balanced(html: &str) -> Result<(), String> {
        const VOID: [&str; 4] = ["meta", "br", "hr", "img"];
        let mut stack: Vec<String> = Vec::new();
        let mut rest = html;
        while let Some(i) = rest.find('<') {
            rest = &rest[i + 1..];
            let end = rest.find('>').ok_or("a tag never closed")?;
            let tag = &rest[..end];
            rest = &rest[end + 1..];
            if tag.starts_with('!') {
                continue;
            }
            let name: String = tag
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            if let Some(closing) = tag.strip_prefix('/') {
                let _ = closing;
                match stack.pop() {
                    Some(open) if open == name => {}
                    other => return Err(format!("</{name}> closes {other:?}")),
                }
            } else if !tag.ends_with('/') && !VOID.contains(&name.as_str()) {
                stack.push(name);
            }
        }
        if stack.is_empty() {
            Ok(())
        } else {
            Err(format!("left open: {stack:?}"))
        }
    }

    #[test]
    fn the_page_is_self_contained_and_well_formed() {
        let (html, plots) = page_html();
        assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..60]);
        balanced(&html).unwrap();
        let lower = html.to_ascii_lowercase();
        assert!(!lower.contains("<script"), "no script");
        assert!(!lower.contains("<link"), "nothing linked");
        // The only URL is the SVG namespace, which names and fetches nothing.
        let urls = lower.matches("http://").count() + lower.matches("https://").count();
        let ns = lower
            .matches("xmlns=\"http://www.w3.org/2000/svg\"")
            .count();
        assert_eq!(urls, ns, "a URL other than the SVG namespace");
        assert!(!lower.contains("src="), "nothing loaded");
        assert!(!lower.contains("url("), "nothing loaded from CSS");
        // One SVG per plot, each with its title and legend.
        assert_eq!(html.matches("<svg").count(), plots);
        assert_eq!(html.matches("</svg>").count(), plots);
        for label in ["copies", "fills", "8a", "glibc memcpy", "a mix"] {
            assert!(html.contains(label), "{label}");
        }
        // The first screen, the tuning line and section 10's table.
        assert!(html.contains("<table class=\"glance\">"));
        assert!(
            html.contains("<td class=\"mode\" title=\"over 1 shape\">Auto</td>"),
            "{html}"
        );
        assert!(html.contains("<pre>CACHECOPY_TUNE=nt=16M</pre>"));
        assert!(html.contains("<table class=\"slower\">"));
        assert_eq!(
            html.matches("0.90x</td>").count(),
            2 + 2,
            "worst and list: {html}"
        );
        // Text is escaped wherever it goes.
        assert!(html.contains("a &lt;machine&gt;"));
        assert!(html.contains("64 &amp; &lt;hot&gt;"));
        assert!(html.contains("1. Machine &lt;x&gt; &amp; &quot;y&quot;"));
        assert!(!html.contains("<machine>") && !html.contains("<hot>"));
    }

    #[test]
    fn the_balance_check_finds_a_stray_tag() {
        assert!(balanced("<p><b>x</b></p><meta charset=\"a\"><br/>").is_ok());
        assert!(balanced("<p><b>x</p></b>").is_err());
        assert!(balanced("<p>").is_err());
        assert!(balanced("<p").is_err());
    }
}
