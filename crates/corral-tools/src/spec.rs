//! Tool specs: what the LLM sees of each registered tool (name,
//! description, JSON Schema of the input, risk). The app and the CLI both
//! read them from here; the schemas are generated from the input structs,
//! so they cannot drift from what the tools accept.

pub use crate::policy::Risk;
pub use crate::tool::ToolSpec;
use crate::tools;

/// The risk of a tool, if it exists.
pub fn risk_of(name: &str) -> Option<Risk> {
    tools::find(name).map(|tool| tool.risk())
}

/// Every tool spec, in registry order.
pub fn specs() -> Vec<ToolSpec> {
    tools::REGISTRY.iter().map(|tool| tool.spec()).collect()
}

/// The specs, with `exec_shell`'s description naming the programs the
/// user added (the model cannot guess them).
pub fn specs_with_programs(programs: &[String]) -> Vec<ToolSpec> {
    let mut specs = specs();
    if programs.is_empty() {
        return specs;
    }
    for spec in specs.iter_mut().filter(|s| s.name == "exec_shell") {
        spec.description.push_str(&format!(
            " The user added these programs (no argument rules, each call asks): {}.",
            programs.join(" ")
        ));
    }
    specs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_programs_are_named_in_exec_shell_only() {
        let programs = ["perl".to_string(), "ruby".to_string()];
        let specs = specs_with_programs(&programs);
        for (with, plain) in specs.iter().zip(specs_with_programs(&[])) {
            if with.name == "exec_shell" {
                assert!(with.description.ends_with("each call asks): perl ruby."));
                assert!(!plain.description.contains("perl"));
            } else {
                assert_eq!(with.description, plain.description);
            }
        }
    }

    #[test]
    fn every_tool_has_an_object_schema_and_a_description() {
        let specs = specs();
        assert_eq!(specs.len(), tools::REGISTRY.len());
        for spec in specs {
            assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
            assert!(spec.description.len() > 20, "{}", spec.name);
            assert!(spec.input_schema.get("$schema").is_none());
        }
    }

    #[test]
    fn the_specs_are_the_registry_in_order_with_unique_names() {
        let specs = specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        let registered: Vec<&str> = tools::names().collect();
        assert_eq!(names, registered);
        let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(
            unique.len(),
            names.len(),
            "a name is registered twice: {names:?}"
        );
        for (spec, tool) in specs.iter().zip(tools::REGISTRY) {
            assert_eq!(spec.risk, tool.risk(), "{}", spec.name);
            assert_eq!(risk_of(&spec.name), Some(tool.risk()), "{}", spec.name);
            assert!(spec.input_schema.is_object(), "{}", spec.name);
            assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
        }
        assert!(names.len() >= 11, "{names:?}");
        assert_eq!(risk_of("exec_shell"), Some(Risk::Shell));
        assert_eq!(risk_of("edit_file"), Some(Risk::Write));
        assert_eq!(risk_of("nope"), None);
    }

    #[test]
    fn the_display_hints_say_what_a_call_is_about_and_no_server() {
        use crate::display::{ResultView, Subject};
        let display = |name: &str| {
            let spec = specs().into_iter().find(|s| s.name == name).unwrap();
            (spec.display.subject, spec.display.result)
        };
        assert_eq!(
            display("exec_shell"),
            (Subject::Command, ResultView::Output)
        );
        assert_eq!(
            display("diagnostics"),
            (Subject::Path, ResultView::Diagnostics)
        );
        assert_eq!(
            display("search_files"),
            (Subject::Query, ResultView::Matches)
        );
        assert_eq!(display("glob"), (Subject::Pattern, ResultView::Files));
        assert_eq!(
            display("list_directory"),
            (Subject::Folder, ResultView::Entries)
        );
        assert_eq!(
            display("read_file"),
            (Subject::Path, ResultView::FileContent)
        );
        assert_eq!(display("edit_file"), (Subject::Path, ResultView::Edited));
        assert_eq!(display("update_plan"), (Subject::Path, ResultView::Plan));
        for spec in specs() {
            assert_eq!(spec.display.server, None, "{}", spec.name);
            assert_eq!(spec.display.label, None, "{}", spec.name);
        }
    }

    #[test]
    fn read_file_schema_names_its_fields() {
        let spec = specs().into_iter().find(|s| s.name == "read_file").unwrap();
        assert_eq!(spec.input_schema["required"], serde_json::json!(["path"]));
        assert!(spec.input_schema["properties"]["start_line"].is_object());
        assert_eq!(spec.risk, Risk::Read);
    }

    #[test]
    fn numeric_limits_are_in_the_schemas() {
        let prop = |tool: &str, field: &str| {
            let spec = specs().into_iter().find(|s| s.name == tool).unwrap();
            spec.input_schema["properties"][field].clone()
        };
        for (tool, field, min, max) in [
            ("list_directory", "depth", 1, 5),
            ("search_files", "max_results", 1, 1000),
            ("exec_shell", "timeout_secs", 1, 600),
        ] {
            let schema = prop(tool, field);
            assert_eq!(schema["minimum"], min, "{tool}.{field}: {schema}");
            assert_eq!(schema["maximum"], max, "{tool}.{field}: {schema}");
        }
    }
}
