//! The model's string patterns. All but one are ordinary regular expressions that must match the
//! whole value; the XML-character class (`[\u0020-\uD7FF\uE000-\uFFFD\uD800\uDC00-\uDBFF\uDFFF\r\n\t]*`)
//! names surrogates, which Rust's regex cannot, so it is checked by hand.

use regex_lite::Regex;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// True when `value` satisfies the model's `pattern`.
pub fn matches(pattern: &str, value: &str) -> bool {
    if pattern.contains(r"\uD800") {
        return value.chars().all(is_xml_char);
    }
    match compiled(pattern) {
        Some(re) => re.is_match(value),
        // A pattern we cannot compile constrains nothing rather than refusing every request.
        None => true,
    }
}

/// Characters that XML 1.0 can carry: what AWS allows in its XmlString shapes.
pub fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

fn compiled(pattern: &str) -> Option<Regex> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Regex>>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    cache
        .entry(pattern.to_string())
        .or_insert_with(|| {
            let body = pattern.trim_start_matches('^').trim_end_matches('$');
            Regex::new(&format!("^(?:{body})$")).ok()
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_patterns() {
        let xml = r"[\u0020-\uD7FF\uE000-\uFFFD\uD800\uDC00-\uDBFF\uDFFF\r\n\t]*";
        assert!(matches(xml, "web@hotel é 😀\r\n\t"));
        assert!(!matches(xml, "a\u{1}b"));
        assert!(!matches(xml, "\u{FFFE}"));
        assert!(matches(r"^ami-[a-z0-9]{1,17}$", "ami-12ab"));
        assert!(!matches(r"^ami-[a-z0-9]{1,17}$", "ami-12AB"));
        assert!(matches(r"[A-Za-z0-9\-_\/]+", "hook-1/a_b"));
        assert!(!matches(r"[A-Za-z0-9\-_\/]+", "hook 1"));
        assert!(matches(
            r"[\u0009\u000A\u000D\u0020-\u007e]+",
            "plain ascii"
        ));
        assert!(!matches(r"[\u0009\u000A\u000D\u0020-\u007e]+", "é"));
    }
}
