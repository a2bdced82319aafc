//! The library's modules import one another without a circle (issue 46): each file's
//! `crate::<module>` paths outside its tests, read from the sources, form no cycle. A cycle's
//! files can be learnt only together; this keeps them apart until the crates split by layer.

use std::collections::{BTreeMap, BTreeSet};

/// Each module of `shared/src` and the modules it names (`crate::x`), tests left out.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut edges = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("shared/src is readable") {
        let path = entry.expect("an entry").path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".rs"))
        else {
            continue;
        };
        if name == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        let text = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        let deps: BTreeSet<String> = text
            .split("crate::")
            .skip(1)
            .map(|rest| {
                rest.chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect::<String>()
            })
            .filter(|d| !d.is_empty() && d != name && d != "model")
            .collect();
        edges.insert(name.to_string(), deps);
    }
    edges
}

/// A path back to `from` through `edges`, if there is one.
fn back_to(
    from: &str,
    at: &str,
    edges: &BTreeMap<String, BTreeSet<String>>,
    seen: &mut BTreeSet<String>,
    path: &mut Vec<String>,
) -> bool {
    for next in edges.get(at).into_iter().flatten() {
        if next == from {
            return true;
        }
        if seen.insert(next.clone()) {
            path.push(next.clone());
            if back_to(from, next, edges, seen, path) {
                return true;
            }
            path.pop();
        }
    }
    false
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let edges = graph();
    assert!(edges.contains_key("reconcile"), "the sources were read");
    for module in edges.keys() {
        let mut path = vec![module.clone()];
        let found = back_to(module, module, &edges, &mut BTreeSet::new(), &mut path);
        assert!(
            !found,
            "a circle of imports: {} -> {module}",
            path.join(" -> ")
        );
    }
}
