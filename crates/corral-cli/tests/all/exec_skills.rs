//! A skill loaded on demand, through `corral-cli exec` (the app's loop,
//! the real binary, the scripted server): the first request tells the
//! model the skill's name and description but not its body; the model
//! calls `load_skill`, and the next request carries the body, read from
//! the project's `.claude/skills` then. The user's own skills
//! (`~/.claude/skills`) are listed beside the project's.

use crate::common::{Home, Scripted};
use serde_json::json;

const SKILL: &str = "---
name: release-notes
description: Write release notes from the commits since the last tag.
---
# Release notes

Group the commits as features, fixes and other, newest first.
";

#[test]
fn exec_loads_a_skills_body_only_when_the_model_asks_for_it() {
    let server = Scripted::start(json!([
        { "tools": [{ "name": "load_skill", "input": { "name": "release-notes" } }] },
        { "text": "Notes written." },
    ]));
    let home = Home::new(&server.base_url());
    let skill = home.project().join(".claude/skills/release");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), SKILL).unwrap();
    std::fs::write(skill.join("template.md"), "## Features\n").unwrap();
    let mine = home.dir.path().join(".claude/skills/pdf-forms");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(
        mine.join("SKILL.md"),
        "---\ndescription: Fill in PDF forms.\n---\nUse the form's field names.\n",
    )
    .unwrap();

    let run = home.exec(&["Write the release notes."]);
    let requests = server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "Notes written.\n");
    assert_eq!(requests.len(), 2);

    let first = requests[0].to_string();
    assert!(
        first.contains("release-notes: Write release notes from the commits since the last tag."),
        "{first}"
    );
    assert!(first.contains("pdf-forms: Fill in PDF forms."), "{first}");
    assert!(!first.contains("Group the commits"), "{first}");
    assert!(!first.contains("field names"), "{first}");
    let tools: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"load_skill"), "{tools:?}");

    let second = requests[1].to_string();
    assert!(
        second.contains("Group the commits as features, fixes and other, newest first."),
        "{second}"
    );
    assert!(second.contains("template.md"), "{second}");
    assert!(!second.contains("field names"), "{second}");
}
