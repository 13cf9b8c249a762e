//! The UI's wire types (`ui/src/lib/wire.ts`) are generated from the Rust
//! types that cross the IPC boundary, and the image limits from their Rust
//! constants, so the two cannot drift. This test regenerates them and
//! fails when the committed file differs; run it with `UPDATE_WIRE_TYPES=1`
//! to rewrite the file after changing a type.
//!
//! The types are listed once, in [`wire_types!`], and the list is checked
//! both ways: every type of the workspace that derives `TS` is on it (a
//! new wire type cannot be forgotten), and every type on it is used: the
//! window names it, or a command's arguments or result reach it, directly
//! or through another listed type (none is left there after it stopped
//! crossing).

use corral_app::commands::every_command;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use ts_rs::TS;

const HEADER: &str = "// Generated from the Rust types by src-tauri/tests/all/wire_types.rs; do not edit.\n// After changing a type: UPDATE_WIRE_TYPES=1 cargo test -p corral --test all -- wire_types::\n";

/// One wire type: its TypeScript name, declaration, and the types it
/// uses (flattened ones too, which its declaration does not name).
struct Wire {
    name: String,
    decl: String,
    uses: BTreeSet<String>,
}

/// The list, in the order wire.ts declares them.
macro_rules! wire_types {
    ($($ty:ty),* $(,)?) => {
        vec![$(Wire {
            name: <$ty as TS>::ident(),
            decl: <$ty as TS>::decl(),
            uses: <$ty as TS>::dependencies().into_iter().map(|d| d.ts_name).collect(),
        }),*]
    };
}

/// Every type the UI reads or sends.
fn wire() -> Vec<Wire> {
    use corral_app::{commands, store};
    use corral_session::approvals;
    use corral_tools::{checkpoint, dispatch, display, fs, lsp, policy, shell, tool};
    wire_types![
        corral_protocol::ErrorCode,
        corral_protocol::Error,
        policy::Risk,
        policy::Mode,
        policy::Decision,
        tool::ToolSpec,
        display::ToolDisplay,
        display::Subject,
        display::ResultView,
        fs::Preview,
        dispatch::PolicyCheck,
        approvals::Scope,
        corral_session::grants::Grant,
        corral_session::grants::GrantEntry,
        corral_session::grants::CallCheck,
        corral_session::tickets::ResolvedPath,
        corral_session::marked::Piece,
        corral_session::marked::ShownCall,
        corral_session::marked::ShownField,
        corral_session::marked::ShownPath,
        corral_session::marked::ShownChange,
        corral_session::Ticket,
        corral_host::ShellEvent,
        corral_session::approvals::ApprovalAnswer,
        corral_session::domains::DomainQuestion,
        corral_session::hooks::HookEvent,
        corral_session::hooks::HookVerdict,
        corral_session::hooks::HookLine,
        corral_session::hooks::UntrustedHooks,
        corral_session::hooks::HookStatus,
        corral_session::hooks::HookRequest,
        corral_session::hooks::HookOutcome,
        checkpoint::Checkpoint,
        checkpoint::ChangeCounts,
        checkpoint::ChangeStatus,
        checkpoint::EntryKind,
        checkpoint::FileChange,
        checkpoint::Skipped,
        checkpoint::Comparison,
        checkpoint::Restored,
        checkpoint::CallUndo,
        shell::Stream,
        fs::EntryKind,
        fs::ListEntry,
        fs::ListDirectoryOutput,
        fs::ReadFileOutput,
        shell::ExecShellOutput,
        corral_tools::tools::update_plan::StepStatus,
        corral_tools::tools::update_plan::PlanStep,
        corral_tools::tools::update_plan::UpdatePlanOutput,
        lsp::Severity,
        lsp::Diagnostic,
        lsp::FileDiagnostics,
        lsp::Report,
        shell::Profile,
        shell::Sandbox,
        shell::Limit,
        shell::SavedRule,
        store::shell::ShellConfig,
        commands::sandbox::SandboxLimits,
        store::mcp::McpServerConfig,
        store::mcp::McpSettings,
        store::mcp::McpSettingsView,
        corral_session::mcp::McpState,
        corral_session::mcp::McpServerStatus,
        corral_session::index::IndexStatus,
        corral_session::watch::TreeChanges,
        corral_session::customization::SetupSource,
        corral_session::customization::CommandFile,
        corral_session::customization::SkillFolder,
        corral_session::customization::Customization,
        corral_session::customization::SkillFile,
        commands::project::Notice,
        shell::background::Started,
        shell::background::ListeningPort,
        shell::background::CommandOutput,
        corral_llm::Role,
        corral_llm::Block,
        corral_llm::Message,
        corral_llm::ToolDef,
        corral_llm::ChatRequest,
        corral_llm::StreamEvent,
        corral_llm::Provider,
        corral_llm::LocalServer,
        corral_llm::ModelInfo,
        corral_llm::ListedModel,
        commands::llm::LlmTarget,
        corral_llm::Price,
        store::ToolchainSetting,
        store::TaskContainer,
        store::KubeSetting,
        store::KubeKind,
        store::Settings,
        store::SettingsView,
        store::SettingsInput,
        store::ProjectInfo,
        store::updates::UpdateSettings,
        store::updates::Install,
        corral_app::updates::UpdateStatus,
        corral_app::updates::UpdateOffer,
        corral_app::updates::InstalledUpdate,
        corral_app::launch::Launch,
        commands::llm::ConnectionOk,
        store::history::ConversationSummary,
        store::history::ForkPoint,
        store::history::StoredEntry,
        store::history::ConversationData,
        store::history::NewEntry,
        store::history::TokenUsage,
        store::history::DayUsage,
        store::history::Appended,
        store::history::SearchHit,
        corral_host::worktree::DiffSize,
        corral_host::tasks::TaskInfo,
        commands::tasks::TaskPlace,
        commands::tasks::TaskEntry,
        commands::tasks::TaskList,
        corral_host::worktree::TaskFile,
        corral_host::worktree::TaskDiff,
        corral_host::worktree::Side,
        corral_host::worktree::Merged,
        corral_host::worktree::Applied,
    ]
}

/// The limits the window keeps to, as the Rust side defines them: the UI
/// imports these rather than writing the numbers again.
fn limits() -> String {
    let types: Vec<String> = corral_llm::IMAGE_TYPES
        .iter()
        .map(|t| format!("{t:?}"))
        .collect();
    format!(
        "\n/** The image types a message may carry. */\nexport const IMAGE_TYPES: readonly string[] = [{}];\n\
         /** The largest image a message may carry, in bytes before base64. */\nexport const IMAGE_MAX_BYTES = {};\n\
         /** The most images the person may attach to one message. */\nexport const IMAGES_PER_MESSAGE = {};\n\
         /** The most images one request may carry, all messages together. */\nexport const IMAGES_PER_REQUEST = {};\n",
        types.join(", "),
        corral_llm::IMAGE_MAX_BYTES,
        corral_llm::IMAGES_PER_MESSAGE,
        corral_llm::IMAGES_PER_REQUEST,
    )
}

fn generated() -> String {
    let mut out = String::from(HEADER);
    for wire in wire() {
        out.push('\n');
        out.push_str("export ");
        out.push_str(&wire.decl);
        out.push('\n');
    }
    out.push_str(&limits());
    out
}

#[test]
fn the_ui_wire_types_are_generated_from_the_rust_types() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/wire.ts");
    let fresh = generated();
    if std::env::var_os("UPDATE_WIRE_TYPES").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "ui/src/lib/wire.ts is not what the Rust types generate; rerun with UPDATE_WIRE_TYPES=1 and commit it"
    );
}

/// A type that derives `TS`, as its source shows it.
struct Derived {
    /// Its TypeScript name (a `#[ts(rename = "...")]` of the type counts).
    ts: String,
    /// Its Rust name.
    rust: String,
    /// The line its derive starts on.
    line: usize,
    /// The Rust types of its `#[serde(flatten)]` fields: their fields are
    /// written into its declaration, so it uses them without naming them.
    flattened: Vec<String>,
}

/// The types `source` derives `TS` for.
fn ts_types_in(source: &str) -> Vec<Derived> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at].trim_start();
        if !line.starts_with("#[derive(") {
            at += 1;
            continue;
        }
        // The derive, over as many lines as it takes.
        let start = at;
        let mut derive = String::new();
        loop {
            derive.push_str(lines[at]);
            at += 1;
            if derive.contains(")]") || at == lines.len() {
                break;
            }
        }
        let derives_ts = derive
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .any(|word| word == "TS" || word == "ts_rs::TS");
        if !derives_ts {
            continue;
        }
        // Attributes and doc lines up to the item.
        let mut rename = None;
        while at < lines.len() {
            let line = lines[at].trim();
            if let Some(rest) = line.strip_prefix("#[ts(rename = \"") {
                rename = rest.split('"').next().map(str::to_string);
            }
            if line.starts_with("#[") || line.starts_with("//") || line.is_empty() {
                at += 1;
                continue;
            }
            break;
        }
        let item = lines.get(at).copied().unwrap_or_default();
        let name = item
            .split_whitespace()
            .skip_while(|w| !matches!(*w, "struct" | "enum" | "type"))
            .nth(1)
            .map(|w| {
                w.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            });
        let Some(name) = name else { continue };
        // Its fields, up to the closing brace at the item's indent.
        let indent = item.len() - item.trim_start().len();
        let mut flattened = Vec::new();
        let mut body = at + 1;
        while item.trim_end().ends_with('{') && body < lines.len() {
            let line = lines[body];
            if line.trim() == "}" && line.len() - line.trim_start().len() == indent {
                break;
            }
            if line.trim() == "#[serde(flatten)]" {
                let field = lines.get(body + 1).copied().unwrap_or_default();
                if let Some((_, ty)) = field.split_once(':') {
                    flattened.push(ty.trim().trim_end_matches(',').to_string());
                }
            }
            body += 1;
        }
        found.push(Derived {
            ts: rename.unwrap_or_else(|| name.clone()),
            rust: name,
            line: start + 1,
            flattened,
        });
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every type of the workspace's libraries that derives `TS`, with the
/// file it is in.
fn ts_types_of_the_workspace() -> Vec<(Derived, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&root.join("src-tauri/src"), &mut files);
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        if entry.path().join("src").is_dir() {
            rust_files(&entry.path().join("src"), &mut files);
        }
    }
    let mut types = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        types.extend(ts_types_in(&source).into_iter().map(|d| (d, file.clone())));
    }
    types
}

/// The TypeScript names each type uses through its flattened fields (by
/// the fields' Rust names, so a name two types share counts for both).
fn flattened_uses() -> BTreeMap<String, BTreeSet<String>> {
    let types = ts_types_of_the_workspace();
    let mut ts_of: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (d, _) in &types {
        ts_of
            .entry(d.rust.as_str())
            .or_default()
            .push(d.ts.as_str());
    }
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (d, _) in &types {
        for field in &d.flattened {
            let names = ts_of.get(field.as_str()).into_iter().flatten();
            uses.entry(d.ts.clone())
                .or_default()
                .extend(names.map(|n| n.to_string()));
        }
    }
    uses
}

/// The capitalised words of TypeScript text: the type names it uses.
fn type_names(ts: &str) -> BTreeSet<String> {
    ts.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_type_that_derives_ts_is_on_the_list() {
    let listed: BTreeSet<String> = wire().into_iter().map(|w| w.name).collect();
    let missing: Vec<String> = ts_types_of_the_workspace()
        .into_iter()
        .filter(|(d, _)| !listed.contains(&d.ts))
        .map(|(d, file)| format!("{} ({}:{})", d.ts, file.display(), d.line))
        .collect();
    assert!(
        missing.is_empty(),
        "these types derive TS but are not on the wire list (add them to wire_types! and rerun with UPDATE_WIRE_TYPES=1): {missing:?}"
    );
}

/// The type names the window's own code uses (not the generated file nor
/// its re-export under ipc.md's names).
fn names_in_the_window() -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                walk(&path, out);
            } else if (name.ends_with(".ts") || name.ends_with(".svelte"))
                && name != "wire.ts"
                && name != "types.ts"
            {
                out.extend(type_names(&std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let mut names = BTreeSet::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src"),
        &mut names,
    );
    names
}

/// The listed types `roots` reach, through what each listed type uses.
fn reached(wire: &[Wire], roots: impl IntoIterator<Item = String>) -> BTreeSet<String> {
    let by_name: BTreeMap<&str, &Wire> = wire.iter().map(|w| (w.name.as_str(), w)).collect();
    let flattened = flattened_uses();
    let mut reached = BTreeSet::new();
    let mut next: Vec<String> = roots.into_iter().collect();
    while let Some(name) = next.pop() {
        if let Some(wire) = by_name.get(name.as_str()) {
            if reached.insert(name.clone()) {
                next.extend(type_names(&wire.decl));
                next.extend(wire.uses.iter().cloned());
                next.extend(flattened.get(&name).into_iter().flatten().cloned());
            }
        }
    }
    reached
}

#[test]
fn every_type_on_the_list_is_used_by_the_window_or_a_command() {
    let wire = wire();
    let commands = every_command().flat_map(|c| type_names(&format!("{} {}", c.args, c.result)));
    let reached = reached(&wire, commands.chain(names_in_the_window()));
    let unused: Vec<&str> = wire
        .iter()
        .map(|w| w.name.as_str())
        .filter(|name| !reached.contains(*name))
        .collect();
    assert!(
        unused.is_empty(),
        "neither the window nor a command uses these listed types: {unused:?}"
    );
}

#[test]
fn what_a_listed_type_uses_is_listed() {
    let wire = wire();
    let listed: BTreeSet<&str> = wire.iter().map(|w| w.name.as_str()).collect();
    for w in &wire {
        let unlisted: Vec<&String> = w
            .uses
            .iter()
            .filter(|u| !listed.contains(u.as_str()))
            .collect();
        assert!(unlisted.is_empty(), "{} uses {unlisted:?}", w.name);
    }
}

#[test]
fn a_type_only_the_list_names_is_unused() {
    let wire = wire();
    let from_settings = reached(&wire, ["Settings".to_string()]);
    assert!(from_settings.contains("Provider"), "{from_settings:?}");
    assert!(!from_settings.contains("Ticket"), "{from_settings:?}");
    // A flattened type is reached through the type that flattens it.
    let from_ticket = reached(&wire, ["Ticket".to_string()]);
    assert!(from_ticket.contains("CallCheck"), "{from_ticket:?}");
}

#[test]
fn the_scan_finds_a_derive_over_lines_and_its_rename() {
    let source = "\
/// A thing.
#[derive(Debug, Serialize, TS)]
pub struct Plain {
    a: u8,
    #[serde(flatten)]
    pub check: Checked,
}

#[derive(
    Debug,
    ts_rs::TS,
)]
#[serde(rename_all = \"snake_case\")]
#[ts(rename = \"Renamed\")]
pub(crate) enum Inner {}

#[derive(Debug, Serialize)]
pub struct NotWire;

#[derive(Debug, TSX)]
pub struct Lookalike;
";
    let found = ts_types_in(source);
    let names: Vec<(&str, &str)> = found
        .iter()
        .map(|d| (d.ts.as_str(), d.rust.as_str()))
        .collect();
    assert_eq!(names, [("Plain", "Plain"), ("Renamed", "Inner")]);
    assert_eq!(found[0].flattened, ["Checked"]);
}
