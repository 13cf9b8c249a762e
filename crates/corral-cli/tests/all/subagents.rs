//! Subagents through `corral-cli exec`: the model's `task` calls start
//! subagents of their own context, and read-only ones run at the same time
//! (the same loop runs in the window).

use crate::common::{Home, Scripted};
use serde_json::{json, Value};

/// The text of a request's messages after its system prompt.
fn conversation(request: &Value) -> Vec<Value> {
    let messages = request["messages"].as_array().unwrap();
    messages
        .iter()
        .filter(|m| m["role"] != "system")
        .cloned()
        .collect()
}

fn system(request: &Value) -> String {
    request["messages"][0]["content"].to_string()
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn two_explore_subagents_run_at_once_each_with_its_own_context() {
    let task = |word: &str| format!("Find what {word}.txt says.");
    let read =
        |file: &str| json!({ "tools": [{ "name": "read_file", "input": { "path": file } }] });
    // The first subagent's first reply is held until the second subagent's
    // first request has come (three in all): were they run one after the
    // other, it would never come, the turn would fail and the run with it.
    let server = Scripted::start(json!([
        { "tools": [
            { "name": "task", "input": { "subagent_type": "explore", "description": "alpha", "prompt": task("ALPHA") } },
            { "name": "task", "input": { "subagent_type": "explore", "description": "beta", "prompt": task("BETA") } },
        ] },
        { "after": 3, "by_task": { "ALPHA": read("ALPHA.txt"), "BETA": read("BETA.txt") } },
        { "by_task": { "ALPHA": read("ALPHA.txt"), "BETA": read("BETA.txt") } },
        { "by_task": { "ALPHA": { "text": "ALPHA.txt says one." }, "BETA": { "text": "BETA.txt says two." } } },
        { "by_task": { "ALPHA": { "text": "ALPHA.txt says one." }, "BETA": { "text": "BETA.txt says two." } } },
        { "text": "Both files read." },
    ]));
    let home = Home::new(&server.base_url());
    std::fs::write(home.project().join("ALPHA.txt"), "one\n").unwrap();
    std::fs::write(home.project().join("BETA.txt"), "two\n").unwrap();
    let run = home.exec(&["What do the two files say?"]);
    let requests = server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.ends_with("Both files read.\n"), "{}", run.stdout);
    assert_eq!(requests.len(), 6);

    // Each subagent's requests: its own instructions, its own task first,
    // the read-only tools without `task`, nothing of the parent's conversation.
    for word in ["ALPHA", "BETA"] {
        let other = if word == "ALPHA" { "BETA" } else { "ALPHA" };
        let own: Vec<&Value> = requests[1..5]
            .iter()
            .filter(|r| conversation(r)[0]["content"].to_string().contains(word))
            .collect();
        assert_eq!(own.len(), 2, "{word}: {requests:?}");
        for request in own {
            assert!(
                system(request).contains("You explore a codebase"),
                "{request}"
            );
            let sent = json!(conversation(request)).to_string();
            assert!(sent.contains(&task(word)), "{sent}");
            assert!(
                !sent.contains(other),
                "{word} was sent {other}'s work: {sent}"
            );
            assert!(!sent.contains("What do the two files say?"), "{sent}");
            let tools = tool_names(request);
            assert!(tools.contains(&"read_file".to_string()), "{tools:?}");
            for absent in ["task", "write_file", "exec_shell"] {
                assert!(!tools.contains(&absent.to_string()), "{tools:?}");
            }
        }
    }
    // The parent offers `task`, and its next request carries both answers.
    assert!(tool_names(&requests[0]).contains(&"task".to_string()));
    let parent = json!(conversation(&requests[5])).to_string();
    assert!(parent.contains("ALPHA.txt says one."), "{parent}");
    assert!(parent.contains("BETA.txt says two."), "{parent}");
    assert!(
        !parent.contains("read_file"),
        "a subagent's calls stay in its own context: {parent}"
    );
}

#[test]
fn a_projects_agent_file_is_a_subagent_with_its_instructions_and_tools() {
    let server = Scripted::start(json!([
        { "tools": [{ "name": "task", "input": {
            "subagent_type": "checker", "description": "check a.txt", "prompt": "Check a.txt." } }] },
        { "text": "a.txt greets." },
        { "text": "Checked." },
    ]));
    let home = Home::new(&server.base_url());
    let agents = home.project().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("checker.md"),
        "---\nname: checker\ndescription: Checks one file closely.\ntools: Read, Glob\nmodel: haiku\n---\nYou check files and say what they do.\n",
    )
    .unwrap();
    let run = home.exec(&["Check a.txt"]);
    let requests = server.finish();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.ends_with("Checked.\n"), "{}", run.stdout);
    let offered = requests[0]["tools"].to_string();
    assert!(
        offered.contains("- checker: Checks one file closely."),
        "{offered}"
    );
    let sub = &requests[1];
    assert!(
        system(sub).contains("You check files and say what they do."),
        "{sub}"
    );
    let mut tools = tool_names(sub);
    tools.sort();
    assert_eq!(tools, ["glob", "read_file"]);
    assert_eq!(conversation(sub).len(), 1, "{sub}");
}
