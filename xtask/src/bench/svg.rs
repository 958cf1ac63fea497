//! Hand-written SVG bar charts (no dependency): one row per scenario, the
//! figure as a bar and its target as a line on the row's own scale (rows
//! without a target of the chart's kind share one scale).

use std::fmt::Write;

/// One scenario's bar.
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub target: Option<f64>,
    /// Throughput: met at or above the target; latency: at or below.
    pub higher_is_better: bool,
    pub unit: &'static str,
}

impl Bar {
    fn met(&self) -> Option<bool> {
        let target = self.target?;
        Some(if self.higher_is_better {
            self.value >= target
        } else {
            self.value <= target
        })
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn figure(v: f64) -> String {
    if v >= 1000.0 {
        super::summary::thousands(Some(v))
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

const LABEL_W: f64 = 430.0;
const BAR_W: f64 = 360.0;
const VALUE_W: f64 = 250.0;
const ROW_H: f64 = 30.0;
const TOP: f64 = 44.0;

/// The chart as SVG text.
pub fn chart(title: &str, bars: &[Bar]) -> String {
    let width = LABEL_W + BAR_W + VALUE_W;
    let height = TOP + ROW_H * bars.len().max(1) as f64 + 34.0;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"13\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n\
         <text x=\"12\" y=\"24\" font-size=\"15\" font-weight=\"bold\" fill=\"#1d2433\">{}</text>\n",
        escape(title)
    );
    let untargeted = bars
        .iter()
        .filter(|b| b.target.is_none())
        .map(|b| b.value)
        .fold(0.0, f64::max);
    for (i, bar) in bars.iter().enumerate() {
        let y = TOP + ROW_H * i as f64;
        // A row with a target on its own scale; those without share one.
        let scale = match bar.target {
            Some(target) => bar.value.max(target) * 1.15,
            None => untargeted * 1.15,
        };
        let scale = if scale > 0.0 { scale } else { 1.0 };
        let len = (bar.value / scale * BAR_W).max(1.0);
        let color = match bar.met() {
            Some(true) => "#2e9e5b",
            Some(false) => "#cc3d3d",
            None => "#8a94a6",
        };
        let _ = write!(
            svg,
            "<text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#1d2433\">{}</text>\n\
             <rect x=\"{LABEL_W:.0}\" y=\"{:.1}\" width=\"{BAR_W:.0}\" height=\"18\" fill=\"#eef0f3\"/>\n\
             <rect x=\"{LABEL_W:.0}\" y=\"{:.1}\" width=\"{len:.1}\" height=\"18\" fill=\"{color}\"/>\n",
            LABEL_W - 10.0,
            y + 14.0,
            escape(&bar.label),
            y + 1.0,
            y + 1.0,
        );
        let mut text = format!("{} {}", figure(bar.value), bar.unit);
        if let Some(target) = bar.target {
            let x = LABEL_W + target / scale * BAR_W;
            let _ = writeln!(
                svg,
                "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#1d2433\" stroke-width=\"2.5\"/>",
                y - 2.0,
                y + 22.0
            );
            let sign = if bar.higher_is_better { "≥" } else { "≤" };
            let _ = write!(text, " (target {sign} {})", figure(target));
        }
        let _ = writeln!(
            svg,
            "<text x=\"{:.0}\" y=\"{:.1}\" fill=\"#1d2433\">{}</text>",
            LABEL_W + BAR_W + 10.0,
            y + 14.0,
            escape(&text)
        );
    }
    let legend_y = TOP + ROW_H * bars.len().max(1) as f64 + 18.0;
    let _ = write!(
        svg,
        "<rect x=\"12\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"#2e9e5b\"/>\
         <text x=\"30\" y=\"{:.1}\" fill=\"#1d2433\">target met</text>\
         <rect x=\"120\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"#cc3d3d\"/>\
         <text x=\"138\" y=\"{:.1}\" fill=\"#1d2433\">missed</text>\
         <rect x=\"210\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"#8a94a6\"/>\
         <text x=\"228\" y=\"{:.1}\" fill=\"#1d2433\">no target of this kind</text>\n</svg>\n",
        legend_y - 10.0,
        legend_y,
        legend_y - 10.0,
        legend_y,
        legend_y - 10.0,
        legend_y,
    );
    svg
}

/// A line over time: the soak's windows (x in minutes) and one figure each.
pub struct Timeline<'a> {
    pub title: &'a str,
    pub unit: &'a str,
    /// (minute, value), in order.
    pub points: &'a [(f64, f64)],
    /// A dashed horizontal line the values are checked against, with its
    /// caption (e.g. the soak's RSS bound).
    pub limit: Option<(f64, &'a str)>,
}

const PLOT_W: f64 = 640.0;
const PLOT_H: f64 = 220.0;
const PLOT_LEFT: f64 = 70.0;

/// The timeline as SVG text: the line, a dot per window, the axes with their
/// extremes, and the limit line when given.
pub fn timeline(line: &Timeline<'_>) -> String {
    let width = PLOT_LEFT + PLOT_W + 40.0;
    let height = TOP + PLOT_H + 60.0;
    let max_x = line.points.iter().map(|p| p.0).fold(0.0, f64::max);
    let max_y = line
        .points
        .iter()
        .map(|p| p.1)
        .chain(line.limit.map(|l| l.0))
        .fold(0.0, f64::max);
    let (sx, sy) = (
        if max_x > 0.0 { max_x } else { 1.0 },
        if max_y > 0.0 { max_y * 1.15 } else { 1.0 },
    );
    let x = |v: f64| PLOT_LEFT + v / sx * PLOT_W;
    let y = |v: f64| TOP + PLOT_H - v / sy * PLOT_H;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"13\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n\
         <text x=\"12\" y=\"24\" font-size=\"15\" font-weight=\"bold\" fill=\"#1d2433\">{}</text>\n\
         <line x1=\"{PLOT_LEFT:.0}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#8a94a6\"/>\n\
         <line x1=\"{PLOT_LEFT:.0}\" y1=\"{TOP:.0}\" x2=\"{PLOT_LEFT:.0}\" y2=\"{:.1}\" stroke=\"#8a94a6\"/>\n\
         <text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#1d2433\">{} {}</text>\n\
         <text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#1d2433\">0</text>\n\
         <text x=\"{PLOT_LEFT:.0}\" y=\"{:.1}\" fill=\"#1d2433\">0</text>\n\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#1d2433\">{} min</text>\n",
        escape(line.title),
        y(0.0),
        x(sx),
        y(0.0),
        y(0.0),
        PLOT_LEFT - 6.0,
        y(sy) + 10.0,
        figure(sy),
        escape(line.unit),
        PLOT_LEFT - 6.0,
        y(0.0),
        y(0.0) + 18.0,
        x(sx),
        y(0.0) + 18.0,
        figure(sx),
    );
    if let Some((limit, caption)) = line.limit {
        let _ = writeln!(
            svg,
            "<line x1=\"{PLOT_LEFT:.0}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#cc3d3d\" \
             stroke-dasharray=\"6 4\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#cc3d3d\">{} ({} {})</text>",
            y(limit),
            x(sx),
            y(limit),
            x(sx),
            y(limit) - 5.0,
            escape(caption),
            figure(limit),
            escape(line.unit),
        );
    }
    let path: Vec<String> = line
        .points
        .iter()
        .map(|&(px, py)| format!("{:.1},{:.1}", x(px), y(py)))
        .collect();
    let _ = writeln!(
        svg,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#2f6fd0\" stroke-width=\"2\"/>",
        path.join(" ")
    );
    for &(px, py) in line.points {
        let _ = writeln!(
            svg,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#2f6fd0\"><title>{:.1} min: {} {}</title></circle>",
            x(px),
            y(py),
            px,
            figure(py),
            escape(line.unit)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_has_one_bar_and_line_per_target() {
        let svg = chart(
            "t & u",
            &[
                Bar {
                    label: "a <b>".into(),
                    value: 10.0,
                    target: Some(20.0),
                    higher_is_better: false,
                    unit: "ms",
                },
                Bar {
                    label: "c".into(),
                    value: 5.0,
                    target: None,
                    higher_is_better: true,
                    unit: "req/s",
                },
            ],
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<line").count(), 1);
        assert!(svg.contains("a &lt;b&gt;") && svg.contains("t &amp; u"));
        assert!(svg.contains("#2e9e5b") && svg.contains("(target ≤ 20.0)"));
    }

    #[test]
    fn a_timeline_has_a_dot_per_window_and_its_limit() {
        let svg = timeline(&Timeline {
            title: "RSS",
            unit: "MiB",
            points: &[(1.0, 50.0), (2.0, 51.0), (3.0, 50.5)],
            limit: Some((76.0, "bound")),
        });
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(svg.contains("stroke-dasharray") && svg.contains("bound (76.0 MiB)"));
    }
}
