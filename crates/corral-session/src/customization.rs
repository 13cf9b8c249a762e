//! The setup Claude Code and Codex users keep in files and carry from one
//! agent to the next: custom slash commands and skills, the project's and
//! the user's, listed in one place for every host (the window, exec, acp).
//!
//! | what | the project's | the user's |
//! |---|---|---|
//! | commands | `.claude/commands/**/*.md` | `~/.claude/commands/**/*.md`, Codex's `~/.codex/prompts/*.md` |
//! | skills | `.claude/skills/*/SKILL.md` | `~/.claude/skills/*/SKILL.md` |
//!
//! The project's files are read beneath the root handle, so a link leading
//! out of the project is not followed; the user's are the user's own and
//! read where they are, links and all. Files are handed over as text: the
//! agent loop reads their front matter and names them, so the naming
//! rules live once, beside the expansion. A file too large, unreadable or
//! over the count is a problem listed, never a failure of the others.
//!
//! ```
//! use corral_session::customization::{list, SetupSource};
//! use corral_tools::ProjectRoot;
//!
//! let project = tempfile::tempdir().unwrap();
//! let skill = project.path().join(".claude/skills/release");
//! std::fs::create_dir_all(&skill).unwrap();
//! std::fs::write(skill.join("SKILL.md"), "---\nname: release\n---\nSteps.\n").unwrap();
//! let found = list(&ProjectRoot::open(project.path()).unwrap(), None);
//! assert_eq!(found.skills[0].folder, "release");
//! assert_eq!(found.skills[0].source, SetupSource::Project);
//! ```

use corral_tools::fs::secret::is_secret_like;
use corral_tools::{Error, ErrorCode, ProjectRoot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// Where a file was found: it decides how a command is named and which of
/// two of the same name is used (the project's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum SetupSource {
    /// The project's `.claude/` folder.
    Project,
    /// The user's `~/.claude/` folder.
    User,
    /// Codex's prompts, `~/.codex/prompts`.
    Codex,
}

/// One command file, its text whole (front matter and body).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct CommandFile {
    pub source: SetupSource,
    /// Its path below its commands folder, `/`-separated (`tracker/fix-bug.md`):
    /// the name comes from it.
    pub relative: String,
    /// Where it is, as the user knows it (`.claude/commands/x.md` for the
    /// project's, an absolute path for the user's).
    pub path: String,
    pub text: String,
}

/// One skill: a folder holding a `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SkillFolder {
    pub source: SetupSource,
    /// The folder's name, what [`skill_file`] finds it by.
    pub folder: String,
    /// Where its `SKILL.md` is, as the user knows it.
    pub path: String,
    /// The `SKILL.md`'s text whole: the loop sends the model its name and
    /// description, and the rest only when the model loads the skill.
    pub text: String,
    /// The folder's other files, relative to it, `/`-separated, sorted (at
    /// most [`MAX_SKILL_FILES`]).
    pub files: Vec<String>,
}

/// Everything found, the project's first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Customization {
    pub commands: Vec<CommandFile>,
    pub skills: Vec<SkillFolder>,
    /// What could not be read, one line each.
    pub problems: Vec<String>,
    /// Claude Code's tool names and Corral's (`Bash`: `exec_shell`), the
    /// hooks' table ([`corral_hooks::claude_name`]): a subagent's file
    /// written for Claude names its tools by them.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(optional, as = "Option<BTreeMap<String, String>>")]
    pub claude_tools: BTreeMap<String, String>,
}

/// One file of a skill's folder, read for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SkillFile {
    /// Where it is, as the user knows it.
    pub path: String,
    pub content: String,
}

/// The largest command or skill file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// The most command files listed from one folder.
pub const MAX_COMMANDS: usize = 500;
/// The most skills listed from one folder.
pub const MAX_SKILLS: usize = 200;
/// The most of a skill folder's files listed.
pub const MAX_SKILL_FILES: usize = 100;
/// How deep subfolders are looked into (`a/b/c/name.md`).
const MAX_DEPTH: usize = 4;

/// The project's folders below its root.
pub const PROJECT_COMMANDS: &str = ".claude/commands";
pub const PROJECT_SKILLS: &str = ".claude/skills";

/// The user's home as the process has it (`$HOME`), where the user's
/// commands and skills are.
pub fn user_home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The commands and skills of the project and of the user (when `home`
/// is given).
pub fn list(root: &ProjectRoot, home: Option<&Path>) -> Customization {
    let mut found = Customization {
        claude_tools: claude_tools(),
        ..Customization::default()
    };
    let project = Place::Project(root);
    commands(
        &mut found,
        &project,
        PROJECT_COMMANDS,
        SetupSource::Project,
        MAX_DEPTH,
    );
    skills(&mut found, &project, PROJECT_SKILLS, SetupSource::Project);
    if let Some(home) = home {
        let user = Place::User(home.to_path_buf());
        commands(
            &mut found,
            &user,
            ".claude/commands",
            SetupSource::User,
            MAX_DEPTH,
        );
        // Codex reads its prompts folder itself, without subfolders.
        commands(&mut found, &user, ".codex/prompts", SetupSource::Codex, 0);
        skills(&mut found, &user, ".claude/skills", SetupSource::User);
    }
    found
}

/// Claude Code's name for each of Corral's tools that has one, and the
/// tool it stands for.
pub fn claude_tools() -> BTreeMap<String, String> {
    corral_tools::tools::names()
        .filter_map(|corral| {
            corral_hooks::claude_name(corral).map(|claude| (claude.to_string(), corral.to_string()))
        })
        .collect()
}

/// A file of the skill `folder` of `source`: `SKILL.md` when `file` is
/// `None`. The file must be below the skill's folder (no `..`, not
/// absolute) and not secret-like.
pub fn skill_file(
    root: &ProjectRoot,
    home: Option<&Path>,
    source: SetupSource,
    folder: &str,
    file: Option<&str>,
) -> Result<SkillFile, Error> {
    let file = file.unwrap_or("SKILL.md");
    let below = |text: &str| {
        let path = Path::new(text);
        !text.is_empty()
            && !text.contains('\0')
            && path
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    };
    if !below(folder) || Path::new(folder).components().count() != 1 {
        return Err(
            Error::invalid_input(format!("`{folder}` is not a skill's name"))
                .hint("Give the name of a skill as the list of skills gives it.")
                .detail("skill", folder),
        );
    }
    if !below(file) {
        return Err(Error::new(
            ErrorCode::PathOutsideRoot,
            format!("`{file}` is not a file inside the skill `{folder}`"),
        )
        .hint("Give a path relative to the skill's folder, as load_skill listed it.")
        .detail("path", file));
    }
    if is_secret_like(file) {
        return Err(Error::new(
            ErrorCode::PermissionDenied,
            format!("`{file}` of the skill `{folder}` has a secret-like name and is not read"),
        )
        .detail("path", file));
    }
    let (place, base) = match (source, home) {
        (SetupSource::Project, _) => (Place::Project(root), PROJECT_SKILLS),
        (SetupSource::User, Some(home)) => (Place::User(home.to_path_buf()), ".claude/skills"),
        (SetupSource::User | SetupSource::Codex, _) => {
            return Err(Error::new(
                ErrorCode::NotFound,
                format!("there is no skill `{folder}` of the user's"),
            ))
        }
    };
    let relative = Path::new(base).join(folder).join(file);
    let content = place.read(&relative).map_err(|e| {
        Error::from_io(&e, &place.shown(&relative)).hint("Load the skill again to see its files.")
    })?;
    Ok(SkillFile {
        path: place.shown(&relative),
        content,
    })
}

/// The folder a file is read from: the project beneath its root handle, or
/// the user's own folders as they are.
enum Place<'a> {
    Project(&'a ProjectRoot),
    User(PathBuf),
}

/// A folder's entry: its name and whether it is a folder.
struct Entry {
    name: String,
    is_dir: bool,
}

impl Place<'_> {
    fn shown(&self, relative: &Path) -> String {
        match self {
            Place::Project(_) => relative.display().to_string(),
            Place::User(home) => home.join(relative).display().to_string(),
        }
    }

    /// The entries of a folder, sorted by name; `None` when it is not there.
    // Only `Place::User` uses std::fs: the user's own home, outside the
    // project; the project's folders are listed through its root handle.
    #[allow(clippy::disallowed_methods)]
    fn entries(&self, relative: &Path) -> std::io::Result<Option<Vec<Entry>>> {
        let names: Vec<String> = match self {
            Place::Project(root) => match root.dir().read_dir(relative) {
                Ok(read) => read
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect(),
                Err(e) if missing(&e) => return Ok(None),
                Err(e) => return Err(e),
            },
            Place::User(home) => match std::fs::read_dir(home.join(relative)) {
                Ok(read) => read
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect(),
                Err(e) if missing(&e) => return Ok(None),
                Err(e) => return Err(e),
            },
        };
        let mut entries: Vec<Entry> = names
            .into_iter()
            .filter(|name| !name.starts_with('.'))
            .filter_map(|name| {
                let is_dir = self.is_dir(&relative.join(&name))?;
                Some(Entry { name, is_dir })
            })
            .collect();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Some(entries))
    }

    /// Whether the entry (its link followed) is a folder; `None` when it is
    /// neither a folder nor a file, or leads nowhere (or out of the project).
    fn is_dir(&self, relative: &Path) -> Option<bool> {
        let (dir, file) = match self {
            Place::Project(root) => {
                let meta = root.dir().metadata(relative).ok()?;
                (meta.is_dir(), meta.is_file())
            }
            Place::User(home) => {
                let meta = std::fs::metadata(home.join(relative)).ok()?;
                (meta.is_dir(), meta.is_file())
            }
        };
        (dir || file).then_some(dir)
    }

    /// A regular file's text, opened without blocking: a FIFO or a device
    /// where a file was listed is refused at once (it would never answer),
    /// and the project's is read beneath its root handle.
    // Only `Place::User` uses std::fs: the user's own home, outside the
    // project.
    #[allow(clippy::disallowed_methods)]
    fn read(&self, relative: &Path) -> std::io::Result<String> {
        let refused = |e: corral_tools::Error| std::io::Error::other(e.message);
        let bytes = match self {
            Place::Project(root) => {
                too_large(root.dir().metadata(relative)?.len())?;
                let rel = root.resolve(&relative.to_string_lossy()).map_err(refused)?;
                corral_tools::fs::read_regular(root, &rel)
                    .map_err(refused)?
                    .0
            }
            Place::User(home) => {
                let path = home.join(relative);
                corral_tools::fs::read_regular_outside(&path, MAX_FILE_BYTES).map_err(refused)?
            }
        };
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

fn missing(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

fn too_large(size: u64) -> std::io::Result<()> {
    if size > MAX_FILE_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("{size} bytes, over the {MAX_FILE_BYTES} read"),
        ));
    }
    Ok(())
}

/// The `.md` files below `base` (subfolders down to `depth`), as commands.
fn commands(
    found: &mut Customization,
    place: &Place,
    base: &str,
    source: SetupSource,
    depth: usize,
) {
    let mut files = Vec::new();
    markdown_below(found, place, Path::new(base), "", depth, &mut files);
    if files.len() > MAX_COMMANDS {
        found.problems.push(format!(
            "{}: {} commands; the first {MAX_COMMANDS} are listed",
            place.shown(Path::new(base)),
            files.len()
        ));
        files.truncate(MAX_COMMANDS);
    }
    for relative in files {
        let path = Path::new(base).join(&relative);
        match place.read(&path) {
            Ok(text) => found.commands.push(CommandFile {
                source,
                relative,
                path: place.shown(&path),
                text,
            }),
            Err(e) => found.problems.push(format!("{}: {e}", place.shown(&path))),
        }
    }
}

fn markdown_below(
    found: &mut Customization,
    place: &Place,
    folder: &Path,
    prefix: &str,
    depth: usize,
    out: &mut Vec<String>,
) {
    let entries = match place.entries(folder) {
        Ok(Some(entries)) => entries,
        Ok(None) => return,
        Err(e) => return found.problems.push(format!("{}: {e}", place.shown(folder))),
    };
    for entry in entries {
        let relative = format!("{prefix}{}", entry.name);
        if entry.is_dir {
            if depth > 0 {
                let inner = folder.join(&entry.name);
                markdown_below(
                    found,
                    place,
                    &inner,
                    &format!("{relative}/"),
                    depth - 1,
                    out,
                );
            }
        } else if entry.name.to_ascii_lowercase().ends_with(".md") {
            out.push(relative);
        }
    }
}

/// The folders below `base` holding a `SKILL.md`, as skills.
fn skills(found: &mut Customization, place: &Place, base: &str, source: SetupSource) {
    let base = Path::new(base);
    let entries = match place.entries(base) {
        Ok(Some(entries)) => entries,
        Ok(None) => return,
        Err(e) => return found.problems.push(format!("{}: {e}", place.shown(base))),
    };
    let folders: Vec<Entry> = entries.into_iter().filter(|e| e.is_dir).collect();
    if folders.len() > MAX_SKILLS {
        found.problems.push(format!(
            "{}: {} skills; the first {MAX_SKILLS} are listed",
            place.shown(base),
            folders.len()
        ));
    }
    for entry in folders.into_iter().take(MAX_SKILLS) {
        let folder = base.join(&entry.name);
        let skill = folder.join("SKILL.md");
        if place.is_dir(&skill) != Some(false) {
            continue; // a folder without a SKILL.md is not a skill
        }
        let text = match place.read(&skill) {
            Ok(text) => text,
            Err(e) => {
                found.problems.push(format!("{}: {e}", place.shown(&skill)));
                continue;
            }
        };
        let mut files = Vec::new();
        files_below(place, &folder, "", 2, &mut files);
        files.retain(|f| f != "SKILL.md");
        files.truncate(MAX_SKILL_FILES);
        found.skills.push(SkillFolder {
            source,
            folder: entry.name,
            path: place.shown(&skill),
            text,
            files,
        });
    }
}

/// Every file below `folder`, subfolders down to `depth`, until the list
/// holds one more than is kept.
fn files_below(place: &Place, folder: &Path, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let Ok(Some(entries)) = place.entries(folder) else {
        return;
    };
    for entry in entries {
        if out.len() > MAX_SKILL_FILES {
            return;
        }
        let relative = format!("{prefix}{}", entry.name);
        if !entry.is_dir {
            out.push(relative);
        } else if depth > 0 {
            let inner = folder.join(&entry.name);
            files_below(place, &inner, &format!("{relative}/"), depth - 1, out);
        }
    }
}

#[cfg(test)]
mod tests {
    // Test fixtures in temporary folders, not a project's files.
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    #[test]
    fn claudes_tool_names_are_sent_as_the_hooks_read_them() {
        let project = tempfile::tempdir().unwrap();
        let found = list(&ProjectRoot::open(project.path()).unwrap(), None);
        let named = |claude: &str| found.claude_tools.get(claude).map(String::as_str);
        assert_eq!(named("Bash"), Some("exec_shell"));
        assert_eq!(named("Write"), Some("write_file"));
        assert_eq!(named("Read"), Some("read_file"));
        assert_eq!(named("WebFetch"), Some("web_fetch"));
        assert_eq!(named("TodoWrite"), None);
        for (claude, corral) in &found.claude_tools {
            assert_eq!(corral_hooks::claude_name(corral), Some(claude.as_str()));
        }
        let sent = serde_json::to_value(&found).unwrap();
        assert_eq!(sent["claude_tools"]["Edit"], "edit_file");
    }

    /// A FIFO where a skill's SKILL.md is expected, in the project and in
    /// the user's home, is passed over at once (it is not a file), never a
    /// read that waits for a writer; the other skills are still listed.
    /// (A file swapped for a FIFO after it was listed is refused by the
    /// read itself, which opens without blocking.)
    #[test]
    fn a_fifo_for_a_skill_file_is_passed_over_at_once() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write(
            project.path(),
            ".claude/skills/good/SKILL.md",
            "---\nname: good\n---\nSteps.",
        );
        for base in [project.path(), home.path()] {
            let folder = base.join(".claude/skills/stuck");
            std::fs::create_dir_all(&folder).unwrap();
            let fifo = std::process::Command::new("mkfifo")
                .arg(folder.join("SKILL.md"))
                .status()
                .unwrap();
            assert!(fifo.success());
        }
        let root = ProjectRoot::open(project.path()).unwrap();
        let home_path = home.path().to_path_buf();
        let (sent, received) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sent.send(list(&root, Some(&home_path)));
        });
        let found = received
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("listing the skills waited on a FIFO");
        let names: Vec<&str> = found.skills.iter().map(|s| s.folder.as_str()).collect();
        assert_eq!(names, ["good"], "{:?}", found.problems);
        assert!(found.problems.is_empty(), "{:?}", found.problems);
    }

    /// The read itself refuses a FIFO at once, in the project and in the
    /// user's home (a file swapped for one after it was listed).
    #[test]
    fn reading_a_fifo_fails_at_once() {
        let base = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(base.path().join("SKILL.md"))
            .status()
            .unwrap();
        assert!(made.success());
        let root = ProjectRoot::open(base.path()).unwrap();
        let home = base.path().to_path_buf();
        let (sent, received) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let project = Place::Project(&root)
                .read(Path::new("SKILL.md"))
                .map_err(|e| e.to_string());
            let user = Place::User(home)
                .read(Path::new("SKILL.md"))
                .map_err(|e| e.to_string());
            let _ = sent.send((project, user));
        });
        let (project, user) = received
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the read waited on a FIFO");
        assert!(project.unwrap_err().contains("not a regular file"));
        assert!(user.unwrap_err().contains("not a regular file"));
    }

    fn write(base: &Path, relative: &str, text: &str) {
        let path = base.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_projects_and_the_users_commands_and_skills_are_listed_the_projects_first() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write(project.path(), ".claude/commands/review.md", "Review it.");
        write(
            project.path(),
            ".claude/commands/tracker/fix-bug.md",
            "Fix $1.",
        );
        write(
            project.path(),
            ".claude/commands/notes.txt",
            "not a command",
        );
        write(
            project.path(),
            ".claude/skills/release/SKILL.md",
            "---\nname: release\n---\nSteps.",
        );
        write(
            project.path(),
            ".claude/skills/release/checklist.md",
            "1. tag",
        );
        write(
            project.path(),
            ".claude/skills/release/scripts/bump.sh",
            "echo",
        );
        write(
            project.path(),
            ".claude/skills/empty/README.md",
            "no SKILL.md here",
        );
        write(home.path(), ".claude/commands/review.md", "My review.");
        write(home.path(), ".codex/prompts/draft.md", "Draft $ARGUMENTS.");
        write(
            home.path(),
            ".codex/prompts/deep/skipped.md",
            "Codex reads no subfolders.",
        );
        write(home.path(), ".claude/skills/pdf/SKILL.md", "PDF work.");
        let root = ProjectRoot::open(project.path()).unwrap();
        let found = list(&root, Some(home.path()));
        let commands: Vec<(SetupSource, &str, &str)> = found
            .commands
            .iter()
            .map(|c| (c.source, c.relative.as_str(), c.text.as_str()))
            .collect();
        assert_eq!(
            commands,
            [
                (SetupSource::Project, "review.md", "Review it."),
                (SetupSource::Project, "tracker/fix-bug.md", "Fix $1."),
                (SetupSource::User, "review.md", "My review."),
                (SetupSource::Codex, "draft.md", "Draft $ARGUMENTS."),
            ]
        );
        assert_eq!(
            found.commands[1].path,
            ".claude/commands/tracker/fix-bug.md"
        );
        let user_path = home.path().join(".claude/commands/review.md");
        assert_eq!(found.commands[2].path, user_path.display().to_string());
        assert_eq!(found.skills.len(), 2, "{:?}", found.skills);
        assert_eq!(
            found.skills[0],
            SkillFolder {
                source: SetupSource::Project,
                folder: "release".into(),
                path: ".claude/skills/release/SKILL.md".into(),
                text: "---\nname: release\n---\nSteps.".into(),
                files: vec!["checklist.md".into(), "scripts/bump.sh".into()],
            }
        );
        assert_eq!(
            (found.skills[1].source, found.skills[1].folder.as_str()),
            (SetupSource::User, "pdf")
        );
        assert!(found.problems.is_empty(), "{:?}", found.problems);
        // Without a home, only the project's.
        assert_eq!(list(&root, None).commands.len(), 2);
    }

    #[cfg(unix)]
    #[test]
    fn a_projects_link_leading_out_is_not_followed() {
        let project = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "stolen.md", "outside text");
        write(outside.path(), "skill/SKILL.md", "outside skill");
        write(project.path(), ".claude/commands/ok.md", "inside");
        std::fs::create_dir_all(project.path().join(".claude/skills")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("stolen.md"),
            project.path().join(".claude/commands/stolen.md"),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("skill"),
            project.path().join(".claude/skills/skill"),
        )
        .unwrap();
        let root = ProjectRoot::open(project.path()).unwrap();
        let found = list(&root, None);
        let text = serde_json::to_string(&found).unwrap();
        assert!(!text.contains("outside"), "{text}");
        assert_eq!(found.commands.len(), 1);
        let err = skill_file(&root, None, SetupSource::Project, "skill", None).unwrap_err();
        assert!(!err.message.contains("outside skill"), "{err:?}");
    }

    #[test]
    fn a_skills_file_is_read_only_from_inside_its_folder() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write(project.path(), ".claude/skills/release/SKILL.md", "Steps.");
        write(
            project.path(),
            ".claude/skills/release/ref/notes.md",
            "Notes.",
        );
        write(project.path(), ".claude/skills/release/.env", "TOKEN=1");
        write(project.path(), "secret.md", "not the skill's");
        write(home.path(), ".claude/skills/pdf/forms.md", "Forms.");
        let root = ProjectRoot::open(project.path()).unwrap();
        let read = |source, folder: &str, file: Option<&str>| {
            skill_file(&root, Some(home.path()), source, folder, file)
        };
        assert_eq!(
            read(SetupSource::Project, "release", None).unwrap(),
            SkillFile {
                path: ".claude/skills/release/SKILL.md".into(),
                content: "Steps.".into()
            }
        );
        assert_eq!(
            read(SetupSource::Project, "release", Some("ref/notes.md"))
                .unwrap()
                .content,
            "Notes."
        );
        assert_eq!(
            read(SetupSource::User, "pdf", Some("forms.md"))
                .unwrap()
                .content,
            "Forms."
        );
        let code = |r: Result<SkillFile, Error>| r.unwrap_err().code;
        assert_eq!(
            code(read(
                SetupSource::Project,
                "release",
                Some("../../../secret.md")
            )),
            ErrorCode::PathOutsideRoot
        );
        assert_eq!(
            code(read(SetupSource::Project, "release", Some("/etc/passwd"))),
            ErrorCode::PathOutsideRoot
        );
        assert_eq!(
            code(read(SetupSource::Project, "..", None)),
            ErrorCode::InvalidInput
        );
        assert_eq!(
            code(read(SetupSource::Project, "a/b", None)),
            ErrorCode::InvalidInput
        );
        assert_eq!(
            code(read(SetupSource::Project, "release", Some(".env"))),
            ErrorCode::PermissionDenied
        );
        assert_eq!(
            code(read(SetupSource::Project, "missing", None)),
            ErrorCode::NotFound
        );
        assert_eq!(
            code(skill_file(&root, None, SetupSource::User, "pdf", None)),
            ErrorCode::NotFound
        );
    }

    #[test]
    fn a_file_too_large_is_a_problem_and_the_others_are_listed() {
        let project = tempfile::tempdir().unwrap();
        write(project.path(), ".claude/commands/a.md", "fine");
        let big = "x".repeat(MAX_FILE_BYTES as usize + 1);
        write(project.path(), ".claude/commands/big.md", &big);
        let root = ProjectRoot::open(project.path()).unwrap();
        let found = list(&root, None);
        assert_eq!(found.commands.len(), 1);
        assert_eq!(found.problems.len(), 1, "{:?}", found.problems);
        assert!(
            found.problems[0].contains(".claude/commands/big.md"),
            "{:?}",
            found.problems
        );
    }
}
