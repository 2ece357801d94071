//! Markdown → HTML for showing a memory in the app. Memory files are written by models and
//! teammates, so the output must be safe to put into the web view as-is: raw HTML in the source is
//! shown as text (never interpreted), and link or image targets with a scheme other than
//! http, https or mailto (`javascript:`, `data:`, `file:`, …) are dropped. Frontmatter is not part
//! of the body and must be stripped by the caller.

use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag};

/// Renders a memory body to sanitised HTML.
pub fn render_markdown(body: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let events = Parser::new_ext(body, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        other => other,
    });
    let mut out = String::with_capacity(body.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

/// Keeps relative targets and http(s)/mailto; anything else with a scheme becomes empty.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let lower = url.trim_start().to_ascii_lowercase();
    let scheme_end = lower.find(':');
    let first_delimiter = lower.find(['/', '?', '#']);
    let has_scheme = match (scheme_end, first_delimiter) {
        (Some(colon), Some(delim)) => colon < delim,
        (Some(_), None) => true,
        _ => false,
    };
    let allowed = ["http:", "https:", "mailto:"]
        .iter()
        .any(|s| lower.starts_with(s));
    if has_scheme && !allowed {
        CowStr::Borrowed("")
    } else {
        url
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_common_markdown() {
        let html = render_markdown("Rule first. **Why:** tests\n\n- a\n- b\n");
        assert!(html.contains("<strong>Why:</strong>"), "{html}");
        assert!(html.contains("<li>a</li>"), "{html}");
    }

    #[test]
    fn raw_html_is_shown_as_text_not_interpreted() {
        let html =
            render_markdown("hello <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn dangerous_link_schemes_are_dropped() {
        let html = render_markdown(
            "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) ![z](data:text/html,hi)",
        );
        assert!(!html.to_ascii_lowercase().contains("javascript:"), "{html}");
        assert!(!html.contains("data:"), "{html}");
    }

    #[test]
    fn safe_links_survive() {
        let html = render_markdown("[docs](https://example.com/a) [topic](other_file.md) [m](mailto:a@b.c) [q](a.md?x=1:2)");
        assert!(html.contains("href=\"https://example.com/a\""), "{html}");
        assert!(html.contains("href=\"other_file.md\""), "{html}");
        assert!(html.contains("href=\"mailto:a@b.c\""), "{html}");
        assert!(html.contains("href=\"a.md?x=1:2\""), "{html}");
    }
}
