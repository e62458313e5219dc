//! A redirect is followed only within the scheme, host and port asked (pages through
//! [`crate::fetch::get`], pip's pages and files through [`PIP_GUARD_PY`]), and what is
//! reported is the URL finally read.

/// `origin(url)`: (scheme, host, port) with the scheme's default port, or `None` when the
/// URL has no valid port. The one rule for redirects, in both Python helpers.
pub const ORIGIN_PY: &str = r#"
import urllib.parse
def origin(url):
    p = urllib.parse.urlsplit(url)
    try:
        port = p.port or {"http": 80, "https": 443}.get(p.scheme.lower())
    except ValueError:
        return None
    return (p.scheme.lower(), (p.hostname or "").lower(), port)
"#;

/// `python3 -c PIP_GUARD_PY INDEX_URL LOG ARGS...` is `python3 -m pip ARGS...` whose requests
/// follow a redirect only within the index's scheme, host and port. Each redirect is
/// appended to LOG (`[from, status, reason, to]`, one JSON list a line); one elsewhere ends
/// pip at once with [`REDIRECT_REFUSED`].
pub const PIP_GUARD_PY: &str = r#"
import json, os, runpy, sys
index, log = sys.argv[1], sys.argv[2]
from pip._vendor.requests.sessions import SessionRedirectMixin
target_of = SessionRedirectMixin.get_redirect_target
def guarded(self, resp):
    target = target_of(self, resp)
    if target:
        to = urllib.parse.urljoin(resp.url, target)
        with open(log, "a") as f:
            f.write(json.dumps([resp.url, resp.status_code, resp.reason, to]) + "\n")
        if origin(to) != origin(index):
            os._exit(4)
    return target
SessionRedirectMixin.get_redirect_target = guarded
sys.argv = ["pip", *sys.argv[3:]]
runpy.run_module("pip", run_name="__main__", alter_sys=True)
"#;

/// pip's exit status when [`PIP_GUARD_PY`] refused a redirect.
pub const REDIRECT_REFUSED: i32 = 4;

/// A redirect refused (`[from, status, reason, to]`, as both helpers give it), in words (the
/// error is located at the URL first asked).
pub fn refused_redirect(json: &str) -> String {
    match serde_json::from_str::<(String, u16, String, String)>(json) {
        Ok((_, code, reason, to)) => format!(
            "redirected ({code} {reason}) to {to}: another scheme, host or port; redirects \
             are followed only within the one asked"
        ),
        Err(_) => format!("a redirect to another scheme, host or port was refused: {json}"),
    }
}

/// Where `url` ends up after the redirects in `log` (pip's, [`PIP_GUARD_PY`]'s lines).
pub fn redirected(url: &str, log: &str) -> String {
    let mut at = url.to_owned();
    for line in log.lines() {
        if let Ok((from, _, _, to)) = serde_json::from_str::<(String, u16, String, String)>(line)
            && from == at
        {
            at = to;
        }
    }
    at
}

/// The URL first asked that `url` was reached from through the redirects in `log`.
pub fn redirected_from(url: &str, log: &str) -> String {
    let mut at = url.to_owned();
    for line in log.lines().rev() {
        if let Ok((from, _, _, to)) = serde_json::from_str::<(String, u16, String, String)>(line)
            && to == at
        {
            at = from;
        }
    }
    at
}
