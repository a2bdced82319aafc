//! Builds the web console (`console/build.sh`: npm and esbuild) and embeds what it built
//! (`console/dist/`, copied) in the api, so one binary serves both and one deploy brings both. The
//! generated `console_assets.rs` lists every file with its bytes.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    // Its sources, not its outputs (node_modules, dist): watching those would rebuild every time.
    // Named relative to this package, so that a clone sharing this target folder (where cargo
    // gives this build the same name) is judged by its own files, not the other clone's.
    let sources = Path::new("../../console");
    for entry in std::fs::read_dir(manifest.join(sources)).expect("console/ is readable") {
        let name = entry.expect("a directory entry").file_name();
        if !matches!(name.to_str(), Some("node_modules" | "dist")) {
            watch(&manifest, &sources.join(name));
        }
    }
    let console = manifest.join(sources);
    let console = console
        .canonicalize()
        .unwrap_or_else(|e| panic!("the console's sources at {}: {e}", console.display()));
    let status = Command::new(console.join("build.sh"))
        .status()
        .unwrap_or_else(|e| panic!("console/build.sh could not run: {e}"));
    assert!(
        status.success(),
        "console/build.sh failed ({status}): the api embeds the console it builds"
    );
    // A private copy, taken at once: a later console/build.sh (up.sh, a developer) replaces
    // dist/ and its hashed names, and the files this build embeds must not go with it.
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    let dist = out_dir.join("console");
    let _ = std::fs::remove_dir_all(&dist);
    copy(&console.join("dist"), &dist);
    let mut files = Vec::new();
    collect(&dist, &dist, &mut files);
    files.sort();
    assert!(
        files.iter().any(|(name, _)| name == "index.html"),
        "console/build.sh wrote no index.html in {}",
        dist.display()
    );
    let mut out = String::from("/// The console's files, by path below `/console/`.\npub static ASSETS: &[(&str, &str)] = &[\n");
    for (name, path) in &files {
        out.push_str(&format!("    ({name:?}, include_str!({path:?})),\n"));
    }
    out.push_str("];\n");
    let target = out_dir.join("console_assets.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let path = entry.expect("a directory entry").path();
        let target = to.join(path.file_name().expect("a file name"));
        if path.is_dir() {
            copy(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

/// Every file below `dir`, as (path relative to `root` with `/`, absolute path). The console is
/// text only: API Gateway passes text bodies through without binary media types.
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect(root, &path, files);
            continue;
        }
        let bytes = std::fs::read(&path).expect("a readable file");
        assert!(
            std::str::from_utf8(&bytes).is_ok(),
            "{} is not text: the console serves text files only",
            path.display()
        );
        let relative = path.strip_prefix(root).expect("below dist");
        let name = relative
            .components()
            .map(|c| c.as_os_str().to_str().expect("a UTF-8 file name"))
            .collect::<Vec<_>>()
            .join("/");
        files.push((name, path.display().to_string()));
    }
}

/// Asks cargo to run this again when `path` (relative to `manifest`) changes: each file of a directory by name, since a
/// directory's own time moves only when an entry is added or removed, not when a file changes.
fn watch(manifest: &Path, path: &Path) {
    println!("cargo:rerun-if-changed={}", path.display());
    let full = manifest.join(path);
    if full.is_dir() {
        for entry in std::fs::read_dir(&full).expect("a console directory is readable") {
            watch(
                manifest,
                &path.join(entry.expect("a directory entry").file_name()),
            );
        }
    }
}
