//! Within each crate of `shared/`, the modules import one another without a circle (issue 46):
//! each file's `crate::<module>` paths outside its tests, read from the sources, form no cycle. A
//! cycle's files can be learnt only together. Between the crates, Cargo refuses a circle itself.
//! And the handlers' libraries build no real adapter: only the mains do.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module of each crate in `shared/` (`crate/module`) and the modules of its crate it names
/// (`crate::x`, or `super::x` from a top-level file), tests left out.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the rules crate is in shared/");
    let mut edges = BTreeMap::new();
    for krate in std::fs::read_dir(shared).expect("shared/ is readable") {
        let src = krate.expect("an entry").path().join("src");
        let Ok(entries) = std::fs::read_dir(&src) else {
            continue;
        };
        let krate = src.parent().and_then(|p| p.file_name()).expect("a name");
        let krate = krate.to_string_lossy();
        for entry in entries {
            let path = entry.expect("an entry").path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .expect("a file name");
            let name = name.strip_suffix(".rs").unwrap_or(name);
            if name == "lib" {
                continue;
            }
            let mut deps = BTreeSet::new();
            for (file, top) in sources(&path) {
                let text = std::fs::read_to_string(&file).expect("a source file");
                let text = text
                    .split("#[cfg(test)]\nmod tests")
                    .next()
                    .unwrap_or_default();
                let prefixes: &[&str] = if top {
                    &["crate::", "super::"]
                } else {
                    &["crate::"]
                };
                for prefix in prefixes {
                    deps.extend(
                        text.split(prefix)
                            .skip(1)
                            .map(|rest| {
                                rest.chars()
                                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                                    .collect::<String>()
                            })
                            .filter(|d| !d.is_empty() && d != name && d != "super")
                            .map(|d| format!("{krate}/{d}")),
                    );
                }
            }
            edges.insert(format!("{krate}/{name}"), deps);
        }
    }
    edges
}

/// The files of a module (a file, or a folder's files) and whether each is the module's top file.
fn sources(path: &Path) -> Vec<(std::path::PathBuf, bool)> {
    if !path.is_dir() {
        return vec![(path.to_path_buf(), true)];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).expect("a module folder") {
        let p = entry.expect("an entry").path();
        if p.is_dir() {
            files.extend(sources(&p).into_iter().map(|(f, _)| (f, false)));
        } else {
            files.push((p, false));
        }
    }
    files
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
    for read in [
        "rules/reconcile",
        "model/group",
        "seams/store",
        "wire/query",
    ] {
        assert!(edges.contains_key(read), "the sources of {read} were read");
    }
    assert!(
        edges["model/group"].contains("model/hold"),
        "a top-level file's super:: paths are read"
    );
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

/// Only the mains build real adapters: the handlers' libraries (each function's `src` but its
/// `main.rs`) take their seams (`phantom_seams::wiring::Seams`) and name no adapter's type.
#[test]
fn only_the_mains_build_real_adapters() {
    const ADAPTERS: [&str; 9] = [
        "DynamoStore",
        "SqsQueue",
        "SqsPulse",
        "SnsSqs",
        "Ec2Lookups",
        "Ec2Clouds",
        "SystemClock",
        "aws_sdk_config",
        "Seams::from_env",
    ];
    let functions = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../functions");
    let mut read = 0;
    for function in std::fs::read_dir(&functions).expect("functions/ is readable") {
        let src = function.expect("an entry").path().join("src");
        for (file, _) in sources(&src) {
            if file.file_name().is_some_and(|n| n == "main.rs") {
                continue;
            }
            read += 1;
            let text = std::fs::read_to_string(&file).expect("a source file");
            for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for adapter in ADAPTERS {
                    assert!(
                        !line.contains(adapter),
                        "{} builds a real adapter ({adapter}): only a main should",
                        file.display()
                    );
                }
            }
        }
    }
    assert!(read > 10, "the handlers' sources were read");
}
