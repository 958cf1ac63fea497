//! The small pages browsers get from the verification link, and the HTML
//! bodies of the e-mails. Every inserted value is escaped.

/// `s` with the five HTML-significant characters escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// A page with a title, a message and, optionally, a link onward.
pub fn page(title: &str, message: &str, link: Option<(&str, &str)>) -> String {
    let link = link
        .map(|(href, label)| format!("<p><a href=\"{}\">{}</a></p>", escape(href), escape(label)))
        .unwrap_or_default();
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title>\
         <style>body{{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}}\
         a{{color:#0b5cad}}</style></head>\
         <body><h1>{title}</h1><p>{message}</p>{link}</body></html>\n",
        title = escape(title),
        message = escape(message),
    )
}

/// Whether the client prefers an HTML page to JSON: its `Accept` names
/// `text/html` before (or without) `application/json`. A client that sends
/// no `Accept`, or `*/*`, gets JSON.
pub fn prefers_html(accept: Option<&str>) -> bool {
    let Some(accept) = accept else {
        return false;
    };
    let mut html: Option<(f32, usize)> = None;
    let mut json: Option<(f32, usize)> = None;
    for (i, part) in accept.split(',').enumerate() {
        let mut pieces = part.split(';').map(str::trim);
        let media = pieces.next().unwrap_or("").to_ascii_lowercase();
        let q = pieces
            .find_map(|p| p.strip_prefix("q="))
            .and_then(|q| q.parse::<f32>().ok())
            .unwrap_or(1.0);
        if q <= 0.0 {
            continue;
        }
        let better = |cur: Option<(f32, usize)>| match cur {
            Some((best, _)) if best >= q => cur,
            _ => Some((q, i)),
        };
        match media.as_str() {
            "text/html" | "application/xhtml+xml" => html = better(html),
            "application/json" => json = better(json),
            _ => {}
        }
    }
    match (html, json) {
        (Some(_), None) => true,
        (Some((hq, hi)), Some((jq, ji))) => hq > jq || (hq == jq && hi < ji),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_negotiates() {
        assert_eq!(
            escape("<a href='x'>&\""),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;"
        );
        let html = page("Hi <b>", "x & y", Some(("https://e.test/?a=1&b=2", "Go")));
        assert!(html.contains("Hi &lt;b&gt;"));
        assert!(html.contains("href=\"https://e.test/?a=1&amp;b=2\""));
        assert!(prefers_html(Some(
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
        )));
        assert!(!prefers_html(Some("application/json")));
        assert!(!prefers_html(Some("*/*")));
        assert!(!prefers_html(None));
        assert!(!prefers_html(Some("application/json, text/html")));
        assert!(prefers_html(Some("application/json;q=0.5, text/html")));
        assert!(!prefers_html(Some("text/html;q=0")));
    }
}
