//! The tool specs as the model is sent them are pinned in
//! `ui/src/test/toolSpecs.json`, which the UI's prompt-budget tests measure
//! (the fixed prefix of each window class). This test fails when the
//! registry and that file differ; run it with `UPDATE_TOOL_SPECS=1` to
//! rewrite the file after changing a tool's spec.
#[test]
fn the_ui_measures_the_registrys_tool_specs() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/test/toolSpecs.json");
    // `cargo test --workspace` unifies the CLI's and the app's dev
    // features, which register the throwaway tool: the shipped registry
    // has no such tool, so neither does the file.
    let shipped: Vec<_> = corral_tools::spec::specs()
        .into_iter()
        .filter(|spec| !(cfg!(feature = "throwaway-tool") && spec.name == "count_lines"))
        .collect();
    let fresh = format!("{}\n", serde_json::to_string_pretty(&shipped).unwrap());
    if std::env::var_os("UPDATE_TOOL_SPECS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "ui/src/test/toolSpecs.json is not what the registry gives; rerun with UPDATE_TOOL_SPECS=1 and commit it"
    );
}
