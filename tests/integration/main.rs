//! One integration-test binary for the whole workspace; each area is a module.

mod bundle_config;
mod line_endings;

#[test]
fn real_fixtures_are_reachable() {
    let dir = engram_tests::real_fixtures().join("memory/stockerly/MEMORY.md");
    assert!(
        dir.is_file(),
        "shared fixtures must sit next to the checkout: {}",
        dir.display()
    );
}
