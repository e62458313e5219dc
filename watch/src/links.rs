//! Downloads come only from the index's own host: the links on a package's index page are
//! checked before pip reads it, and a link to another host is refused with its URL (pip
//! would follow it). Pages are read through [`crate::fetch::get`]; redirects are
//! [`crate::redirect`]'s.

use mooncake_sos_pysource::source::LoadError;
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
) -> Result<Option<Listed>, LoadError> {
    let Some(base) = index_url else {
        return Ok(None);
    };
    let url = page_url(base, package);
    let limits = crate::fetch::Limits {
        max_bytes: 16 << 20,
        timeout,
    };
    let response = crate::fetch::get(&url, limits).map_err(|e| LoadError::new(&url, e))?;
    let page = String::from_utf8_lossy(&response.body).into_owned();
    // Links are relative to where the page was read (pip reads them so).
    let url = response.url;
    if let Some(link) = foreign_link(&page, &url) {
        // The link as pip would request it (no fragment), at the page that has it.
        let link = link.split('#').next().unwrap_or(link);
        return Err(LoadError::new(
            format!("{label}: {url}"),
            format!("links to another host: {link}; downloads come only from the index's own host"),
        ));
    }
    Ok(Some(Listed { page, url }))
}

/// A package's index page, and the URL it was read from.
pub struct Listed {
    pub page: String,
    pub url: String,
}

/// `<index>/<package>/`: a package's page on a PEP 503 index.
pub fn page_url(index_url: &str, package: &str) -> String {
    format!("{}/{package}/", index_url.trim_end_matches('/'))
}

/// The file a link names (PEP 503: the last segment of its path).
fn file_of(href: &str) -> &str {
    let path = href.split('#').next().unwrap_or(href);
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether the page links a wheel of `package==version`.
pub fn lists_wheel(page: &str, package: &str, version: &str) -> bool {
    hrefs(page).into_iter().any(|href| {
        mooncake_sos_manifest::model::layers::is_wheel_of(file_of(href), package, version)
    })
}

/// Where the page (at `page_url`) links `file`: its link resolved against the page's URL,
/// without the fragment.
pub fn file_url(page: &str, page_url: &str, file: &str) -> Option<String> {
    let href = hrefs(page).into_iter().find(|h| file_of(h) == file)?;
    let href = href.split('#').next().unwrap_or(href);
    let own = origin(page_url)?;
    Some(match origin(href) {
        Some(o) if o.starts_with("://") => format!("{}:{href}", own.split("://").next()?),
        Some(_) => href.to_owned(),
        None if href.starts_with('/') => format!("{own}{href}"),
        None => {
            // Relative: against the page's directory, `.` and `..` applied.
            let path = page_url.split(['?', '#']).next()?.split_once("://")?.1;
            let mut segments: Vec<&str> = path.split('/').skip(1).collect();
            segments.pop();
            for segment in href.split('/') {
                match segment {
                    "." => {}
                    ".." => {
                        segments.pop();
                    }
                    s => segments.push(s),
                }
            }
            format!("{own}/{}", segments.join("/"))
        }
    })
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

/// Whether pip says its index has no file of the release asked (without `--index-url` the
/// page is pip's to read, so this is how a missing release shows).
pub fn pip_found_no_release(stderr: &str) -> bool {
    stderr.contains("No matching distribution found for")
}

/// pip's refusal of a file whose bytes are not the `#sha256=` its index page gives (pip checks
/// that itself), in the words of the check after pip: `FILE has sha256 GOT, the index page
/// lists WANT`.
pub fn pip_hash_mismatch(stderr: &str) -> Option<String> {
    let words: Vec<&str> = stderr.split_whitespace().collect();
    let at = words.windows(2).position(|w| w == ["Expected", "sha256"])?;
    let want = words.get(at + 2)?;
    let got = words[at..].windows(2).find(|w| w[0] == "Got")?[1];
    let url = words[..at].windows(2).rev().find(|w| w[0] == "from")?[1];
    Some(format!(
        "{} has sha256 {got}, the index page lists {want}",
        file_of(url.trim_end_matches(':'))
    ))
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
    fn a_files_url_is_its_link_resolved_against_the_page() {
        let url = "http://127.0.0.1:8000/simple/pkg/";
        for (href, want) in [
            (
                "../../files/p-1.whl#sha256=00",
                "http://127.0.0.1:8000/files/p-1.whl",
            ),
            ("/f/p-1.whl", "http://127.0.0.1:8000/f/p-1.whl"),
            ("./p-1.whl", "http://127.0.0.1:8000/simple/pkg/p-1.whl"),
            (
                "//127.0.0.1:8000/x/p-1.whl",
                "http://127.0.0.1:8000/x/p-1.whl",
            ),
            (
                "HTTP://127.0.0.1:8000/y/p-1.whl",
                "HTTP://127.0.0.1:8000/y/p-1.whl",
            ),
        ] {
            let page = format!("<a href=\"other-1.whl\">o</a><a href=\"{href}\">p</a>");
            assert_eq!(
                file_url(&page, url, "p-1.whl").as_deref(),
                Some(want),
                "{href}"
            );
        }
        assert_eq!(file_url("<a href=\"p-2.whl\">", url, "p-1.whl"), None);
        let page = "<a href=\"../../files/p_kg-1.0-py3-none-any.whl#sha256=00\">";
        assert!(lists_wheel(page, "p-kg", "1.0"));
        assert!(!lists_wheel(page, "p-kg", "1.1"));
    }

    #[test]
    fn pips_hash_refusal_is_one_line() {
        let stderr = "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. \
            If you have updated the package versions, please update the hashes.\n    \
            p==1 from http://127.0.0.1:8000/files/p-1-py3-none-any.whl#sha256=aa:\n        \
            Expected sha256 aa\n             Got        bb\n";
        assert_eq!(
            pip_hash_mismatch(stderr).as_deref(),
            Some("p-1-py3-none-any.whl has sha256 bb, the index page lists aa")
        );
        assert_eq!(
            pip_hash_mismatch("ERROR: No matching distribution found"),
            None
        );
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
