//! The web console in a real browser: `tests/console/console.test.mjs` (node's test runner,
//! playwright-core driving Debian's chromium) against this binary's local stack, whose api serves
//! the console at `/console/`. Sign-in and a wrong secret, a group's life on the page (VMs InService,
//! resize, activity, a VM killed on the cloud and replaced, delete), names with markup shown as
//! text, an administrator's clouds and users, credentials and SSH keys. Chromium comes from
//! `tests/console/install.sh`, run first (quick when it is there); playwright-core from
//! `console/node_modules`, which the api's build installed (`console/build.sh`).
//! `PHANTOM_SCREENSHOTS=<dir>` saves the main pages as PNGs (docs/console/ holds a set).

use phantom_e2e::stack;
use std::process::Command;
use std::time::Instant;

#[test]
fn the_console_in_a_browser() {
    let s = stack();
    let installed = Command::new(s.root.join("tests/console/install.sh"))
        .status()
        .expect("tests/console/install.sh runs")
        .success();
    assert!(installed, "tests/console/install.sh failed");
    assert!(
        s.root.join("console/node_modules/playwright-core").exists(),
        "console/node_modules has no playwright-core: run console/build.sh (the api's build runs it)"
    );
    let started = Instant::now();
    let out = Command::new("node")
        .args(["--test", "--test-reporter=spec"])
        .arg(s.root.join("tests/console/query.test.mjs"))
        .arg(s.root.join("tests/console/console.test.mjs"))
        .current_dir(&s.root)
        .envs(&s.env)
        .env_remove("PHANTOM_CONSOLE_URL")
        .output()
        .expect("node runs (the console's tests need node 20 or later)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the console's browser tests failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    println!(
        "{stdout}\nthe console's browser tests passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
