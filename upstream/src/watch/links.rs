//! Downloads come only from the index's own host: the links on a package's index page are
//! checked before pip reads it, and a link to another host is refused with its URL (pip
//! would follow it).

use crate::source::LoadError;
use std::time::Duration;

/// Every link target on an HTML page (`href="…"`, `href='…'` or unquoted), in page order.
pub fn hrefs(page: &str) -> Vec<&str> {
    // ASCII lower-casing keeps every byte offset.
    let lower = page.to_ascii_lowercase();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find("href") {
        at += i + 4;
        let Some(value) = page[at..].trim_start().strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        let start = page.len() - value.len();
        let (from, to) = match value.as_bytes().first() {
            Some(&q @ (b'"' | b'\'')) => {
                let body = &value[1..];
                (
                    start + 1,
                    start + 1 + body.find(q as char).unwrap_or(body.len()),
                )
            }
            _ => {
                let end = value.find(|c: char| c.is_ascii_whitespace() || c == '>');
                (start, start + end.unwrap_or(value.len()))
            }
        };
        found.push(page[from..to].trim());
        at = to;
    }
    found
}

/// `scheme://host[:port]` of an absolute URL, lower-cased; `None` for a relative one.
fn origin(url: &str) -> Option<String> {
    let url = url.trim();
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r))
            if !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) =>
        {
            (s.to_ascii_lowercase(), r)
        }
        // Scheme-relative: another host over the page's own scheme.
        _ => ("".to_owned(), url.strip_prefix("//")?),
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    // user:password@host names `host`.
    let host = host.rsplit('@').next().unwrap_or(host);
    Some(format!("{scheme}://{}", host.to_ascii_lowercase()))
}

/// The first link on `page` (the index page at `page_url`) to another host than the page's.
pub fn foreign_link<'a>(page: &'a str, page_url: &str) -> Option<&'a str> {
    let own = origin(page_url)?;
    let own_host = own.split_once("://").map_or("", |(_, h)| h).to_owned();
    hrefs(page).into_iter().find(|href| {
        let lowered = href.trim_start().to_ascii_lowercase();
        // A link with a scheme but no `//` (`javascript:`, `file:`) is no index file either.
        let schemed = lowered.split_once(':').is_some_and(|(s, _)| {
            !s.is_empty()
                && !s.contains('/')
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        });
        match origin(href) {
            Some(o) if o.starts_with("://") => o[3..] != own_host,
            Some(o) => o != own,
            None => schemed,
        }
    })
}

/// With `--index-url`: the package's index page, refused if it links to another host
/// (pip would download from there). Without, pip's configured index is its own.
pub fn vetted_page(
    index_url: Option<&str>,
    package: &str,
    label: &str,
    timeout: Duration,
) -> Result<Option<String>, LoadError> {
    let Some(base) = index_url else {
        return Ok(None);
    };
    let url = format!("{}/{package}/", base.trim_end_matches('/'));
    let limits = crate::fetch::Limits {
        max_bytes: 16 << 20,
        timeout,
    };
    let bytes = crate::fetch::get(&url, limits).map_err(|e| LoadError::new(&url, e))?;
    let page = String::from_utf8_lossy(&bytes).into_owned();
    if let Some(link) = foreign_link(&page, &url) {
        // The link as pip would request it (no fragment), at the page that has it.
        let link = link.split('#').next().unwrap_or(link);
        return Err(LoadError::new(
            format!("{label}: {url}"),
            format!("links to another host: {link}; downloads come only from the index's own host"),
        ));
    }
    Ok(Some(page))
}

/// The `#sha256=` a page's link to `file` gives.
pub fn listed_sha256(page: &str, file: &str) -> Option<String> {
    hrefs(page).into_iter().find_map(|href| {
        let (path, fragment) = href.split_once('#')?;
        (path.rsplit('/').next() == Some(file)).then(|| {
            fragment
                .strip_prefix("sha256=")
                .map(str::to_ascii_lowercase)
        })?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_of_every_quoting_are_found() {
        let page =
            "<a href=\"a.whl\">x</a><A HREF='b.whl'>y</A><a href=c.whl>z</a><a href = \"d\">";
        assert_eq!(hrefs(page), ["a.whl", "b.whl", "c.whl", "d"]);
    }

    #[test]
    fn only_links_on_the_pages_own_host_pass() {
        let url = "http://127.0.0.1:8000/simple/pkg/";
        for own in [
            "<a href=\"../../files/p-1.whl#sha256=00\">",
            "<a href=\"/files/p-1.whl\">",
            "<a href=\"HTTP://127.0.0.1:8000/files/p-1.whl\">",
            "<a href=\"//127.0.0.1:8000/files/p-1.whl\">",
        ] {
            assert_eq!(foreign_link(own, url), None, "{own}");
        }
        for (page, link) in [
            (
                "<a href=\"https://evil.example/p-1.whl\">",
                "https://evil.example/p-1.whl",
            ),
            (
                "<a href='http://127.0.0.1:8001/p-1.whl'>",
                "http://127.0.0.1:8001/p-1.whl",
            ),
            ("<a href=//evil.example/p.whl>", "//evil.example/p.whl"),
            (
                "<a href=\"http://127.0.0.1:8000@evil.example/p.whl\">",
                "http://127.0.0.1:8000@evil.example/p.whl",
            ),
            (
                "<a href=\"https://127.0.0.1:8000/p.whl\">",
                "https://127.0.0.1:8000/p.whl",
            ),
            ("<a href=\"file:///etc/p.whl\">", "file:///etc/p.whl"),
        ] {
            assert_eq!(foreign_link(page, url), Some(link), "{page}");
        }
    }
}
