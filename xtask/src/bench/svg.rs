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
}
