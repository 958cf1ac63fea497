//! Reading and writing the figures of the bench's notes and tables:
//! numbers before or after a marker, thousands separators, short forms.

/// The number right after `marker` in `text` (sign, digits, dot, commas).
pub(super) fn number_after(text: &str, marker: &str) -> Option<f64> {
    let at = text.find(marker)? + marker.len();
    leading_number(&text[at..])
}

pub(super) fn leading_number(text: &str) -> Option<f64> {
    let text = text.trim_start();
    let end = text
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit() || c == '.' || c == ',' || (i == 0 && "+-".contains(c)))
        })
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    text[..end].replace(',', "").parse().ok()
}

/// The number just before `marker` in `text`.
pub(super) fn number_before(text: &str, marker: &str) -> Option<f64> {
    let at = text.find(marker)?;
    let head = &text[..at];
    let start = head
        .rfind(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .map(|i| i + 1)
        .unwrap_or(0);
    head[start..].replace(',', "").parse().ok()
}

/// Groups thousands: 12345.6 -> "12,346".
pub fn thousands(v: Option<f64>) -> String {
    let Some(v) = v else {
        return "-".into();
    };
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 { format!("-{out}") } else { out }
}

pub(super) fn short(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A target's number as written: `20`, `76.3`.
pub(super) fn plain(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}
