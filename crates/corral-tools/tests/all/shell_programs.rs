//! `exec_shell`'s spec as the model is sent it names the built-in programs
//! of the one table of them (`corral_sandbox::PROGRAMS`), in its order,
//! once, and nowhere else: no second list in the description or the input
//! schema that could drift from it.

use corral_tools::shell::PROGRAMS;
use corral_tools::spec::{specs, ToolSpec};
use serde_json::Value;

const BEFORE: &str = "Run one allowlisted program (";
const AFTER: &str = ", or a program the user added)";

fn exec_shell() -> ToolSpec {
    specs()
        .into_iter()
        .find(|spec| spec.name == "exec_shell")
        .expect("exec_shell is registered")
}

/// Every string of a JSON value: the schema's descriptions and names.
fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k);
            strings(v, out);
        }),
        _ => {}
    }
}

/// The words of a text that are names of built-in programs.
fn programs_named(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| PROGRAMS.iter().any(|p| p.name == *word))
        .collect()
}

#[test]
fn exec_shell_names_every_built_in_program_and_no_other() {
    let spec = exec_shell();
    let (before, rest) = spec
        .description
        .split_once(BEFORE)
        .expect("the description opens with its list of programs");
    let (list, after) = rest
        .split_once(AFTER)
        .expect("the list of programs ends with the user's own");
    let listed: Vec<&str> = list.split(' ').collect();
    let table: Vec<&str> = PROGRAMS.iter().map(|p| p.name).collect();
    assert_eq!(listed, table, "{}", spec.description);

    let mut elsewhere = vec![before, after];
    strings(&spec.input_schema, &mut elsewhere);
    for text in elsewhere {
        assert_eq!(
            programs_named(text),
            Vec::<&str>::new(),
            "a second list of programs in exec_shell's spec: {text:?}"
        );
    }
}

#[test]
fn a_second_list_would_be_seen() {
    assert_eq!(
        programs_named("The program: one of git cargo npm, or perl."),
        ["git", "cargo", "npm"]
    );
    assert_eq!(
        programs_named("run_id, command_output, stop_command"),
        Vec::<&str>::new()
    );
}
