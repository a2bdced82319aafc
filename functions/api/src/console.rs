//! The web console's files (built from `console/` by build.rs), served at `/console/` beside the
//! API: the page is revalidated on every load, the hashed assets are cached for a year. Nothing of
//! the console's logic is here: it is a client of the API like any other.

use crate::HttpResponse;
use std::borrow::Cow;

include!(concat!(env!("OUT_DIR"), "/console_assets.rs"));

const SEGMENT: &str = "/console";
/// The page's rules: only our own scripts, styles and API; never framed.
const POLICY: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; \
script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/// What follows `/console` in a path that is the console's (`""`, `"/"`, `"/assets/app.js"`). The
/// path may sit below a stage (`/Prod/console/`).
pub fn file_of(path_and_query: &str) -> Option<&str> {
    let path = crate::path_of(path_and_query);
    let (_, rest) = path.split_once(SEGMENT)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

pub fn serve(method: &str, file: &str) -> HttpResponse {
    if !matches!(method, "GET" | "HEAD") {
        return text(405, "The console is read with GET.");
    }
    if file.is_empty() {
        // Relative, so that `/Prod/console` goes to `/Prod/console/`.
        return HttpResponse {
            status: 301,
            content_type: "text/plain; charset=utf-8",
            headers: vec![("location", "console/".into())],
            body: Cow::Borrowed(b""),
        };
    }
    let file = match file.trim_start_matches('/') {
        "" => "index.html",
        f => f,
    };
    let Some((name, body)) = ASSETS.iter().find(|(name, _)| *name == file) else {
        return text(404, "No such file in the console.");
    };
    let cache = if name.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut headers = vec![
        ("cache-control", cache.into()),
        ("x-content-type-options", "nosniff".into()),
    ];
    if name.ends_with(".html") {
        headers.push(("content-security-policy", POLICY.into()));
        headers.push(("referrer-policy", "no-referrer".into()));
    }
    HttpResponse {
        status: 200,
        content_type: content_type(name),
        headers,
        body: Cow::Borrowed(body.as_bytes()),
    }
}

fn text(status: u16, message: &'static str) -> HttpResponse {
    HttpResponse {
        status,
        content_type: "text/plain; charset=utf-8",
        headers: vec![("cache-control", "no-cache".into())],
        body: Cow::Borrowed(message.as_bytes()),
    }
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("json" | "map") => "application/json",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_below_a_stage_are_the_consoles() {
        assert_eq!(file_of("/console"), Some(""));
        assert_eq!(file_of("/console/"), Some("/"));
        assert_eq!(
            file_of("/Prod/console/assets/app.js?x=1"),
            Some("/assets/app.js")
        );
        assert_eq!(file_of("/consoles"), None);
        assert_eq!(file_of("/"), None);
        assert_eq!(file_of("/?Action=DescribeAutoScalingGroups"), None);
    }

    #[test]
    fn the_page_is_revalidated_and_assets_are_cached() {
        let page = serve("GET", "");
        assert_eq!(page.status, 301);
        let page = serve("GET", "/");
        assert_eq!(page.status, 200);
        assert!(page.content_type.starts_with("text/html"));
        assert!(page.headers.contains(&("cache-control", "no-cache".into())));
        assert!(page
            .headers
            .iter()
            .any(|(k, _)| *k == "content-security-policy"));
        let asset = ASSETS
            .iter()
            .find(|(n, _)| n.starts_with("assets/") && n.ends_with(".js"))
            .expect("a script among the assets");
        let script = serve("GET", &format!("/{}", asset.0));
        assert_eq!(script.content_type, "text/javascript; charset=utf-8");
        assert!(script.headers.contains(&(
            "cache-control",
            "public, max-age=31536000, immutable".into()
        )));
        assert_eq!(serve("GET", "/nope.html").status, 404);
        assert_eq!(serve("POST", "/").status, 405);
    }
}
