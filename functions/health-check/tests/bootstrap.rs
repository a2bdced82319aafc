//! The bootstrap, started with none of its environment (tests/tests/template.rs starts it with
//! template.yaml's).

#[test]
fn without_its_environment_the_bootstrap_says_what_it_misses() {
    phantom_seams::wiring::stops_without_environment(env!("CARGO_BIN_EXE_health-check"));
}
