//! Files another program runs or loads by itself when the user opens,
//! builds or commits the project: the one table that the policy asks
//! before writing (in every mode, never covered by a grant or a saved
//! rule) and that the sandbox holds read-only for every command.
//!
//! A name counts at any depth (`pkg/.vscode/tasks.json`: a package opened
//! as a folder of its own reads its own).

/// One row: the file or folder name, and what runs or loads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoRun {
    /// The name of the file or folder.
    pub name: &'static str,
    /// Whether it is a folder (the name holds files) or a file.
    pub folder: bool,
    /// Who runs or loads it, and when.
    pub runs_it: &'static str,
}

const fn row(name: &'static str, folder: bool, runs_it: &'static str) -> AutoRun {
    AutoRun {
        name,
        folder,
        runs_it,
    }
}

/// The agents' configuration folders: held read-only for every command
/// and asked about before every write, one at a time.
pub const AGENT_CONFIG: [&str; 2] = [".claude", ".codex"];

/// What an agent's configuration folder is to the agent.
const AGENT_CONFIG_RUNS: &str = "the project's agent configuration: its hooks run commands; its commands, skills and agents instruct the agent";

/// Every name, with what runs it. `.git/` is here for the table's sake:
/// the file tools never write it at all.
pub const AUTO_RUN: &[AutoRun] = &[
    row(
        ".git",
        true,
        "git's own folder: its config names programs and its hooks run at the user's next commit",
    ),
    row(
        ".gitmodules",
        false,
        "git clones and checks out what it names at `git submodule update`",
    ),
    row(AGENT_CONFIG[0], true, AGENT_CONFIG_RUNS),
    row(AGENT_CONFIG[1], true, AGENT_CONFIG_RUNS),
    row(
        ".mcp.json",
        false,
        "agents (Claude Code and others) start the MCP servers it names",
    ),
    row(
        ".cursor",
        true,
        "Cursor starts the MCP servers its mcp.json names",
    ),
    row(
        ".gemini",
        true,
        "Gemini CLI runs the hooks and MCP servers its settings name",
    ),
    row(
        ".zed",
        true,
        "Zed runs the tasks and context servers its settings name",
    ),
    row(
        ".vscode",
        true,
        "VS Code runs a task marked `runOn: folderOpen` when the folder is opened",
    ),
    row(
        ".idea",
        true,
        "JetBrains IDEs run its run configurations and startup tasks",
    ),
    row(
        ".devcontainer",
        true,
        "Dev Containers build it and run its lifecycle commands",
    ),
    row(
        ".envrc",
        false,
        "direnv runs it when the user enters the folder",
    ),
    row(
        ".husky",
        true,
        "husky points git's hooks here: they run at the user's next commit",
    ),
    row(
        ".pre-commit-config.yaml",
        false,
        "pre-commit runs the hooks it names at the user's next commit",
    ),
];

/// The row of the first component of `path` (relative, `/`-separated)
/// that another program runs or loads by itself, if any.
pub fn auto_run(path: &str) -> Option<&'static AutoRun> {
    path.split('/').find_map(|part| {
        AUTO_RUN.iter().find(|row| {
            if row.name == ".git" {
                part.eq_ignore_ascii_case(".git")
            } else {
                part == row.name
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_component_at_any_depth_counts() {
        for path in [
            ".vscode/tasks.json",
            "pkg/.vscode/tasks.json",
            ".mcp.json",
            "a/b/.mcp.json",
            ".cursor/mcp.json",
            ".gemini/settings.json",
            ".zed/settings.json",
            ".idea/workspace.xml",
            ".devcontainer/devcontainer.json",
            ".envrc",
            "pkg/.claude/settings.json",
            ".codex",
            ".GIT/config",
            ".husky/pre-commit",
        ] {
            assert!(auto_run(path).is_some(), "{path}");
        }
        for path in [
            "src/vscode.ts",
            ".vscode-test/x",
            "docs/.mcp.json.md",
            ".claudex/a.md",
            "envrc",
            ".cursorrules",
        ] {
            assert_eq!(auto_run(path), None, "{path}");
        }
        assert!(auto_run("a/.vscode/tasks.json")
            .unwrap()
            .runs_it
            .contains("folderOpen"));
    }
}
