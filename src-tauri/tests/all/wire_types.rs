//! The UI's wire types (`ui/src/lib/wire.ts`) are generated from the Rust
//! types that cross the IPC boundary, and the image limits from their Rust
//! constants, so the two cannot drift. This test
//! regenerates them and fails when the committed file differs; run it with
//! `UPDATE_WIRE_TYPES=1` to rewrite the file after changing a type.

use ts_rs::TS;

const HEADER: &str = "// Generated from the Rust types by src-tauri/tests/all/wire_types.rs; do not edit.\n// After changing a type: UPDATE_WIRE_TYPES=1 cargo test -p corral --test all -- wire_types::\n";

/// Every type the UI reads or sends, in the order they are declared.
fn declarations() -> Vec<String> {
    use corral_app::{commands, store};
    use corral_session::approvals;
    use corral_tools::{checkpoint, dispatch, display, fs, lsp, policy, shell, tool};
    vec![
        corral_protocol::ErrorCode::decl(),
        corral_protocol::Error::decl(),
        policy::Risk::decl(),
        policy::Mode::decl(),
        policy::Decision::decl(),
        tool::ToolSpec::decl(),
        display::ToolDisplay::decl(),
        display::Subject::decl(),
        display::ResultView::decl(),
        fs::Preview::decl(),
        dispatch::PolicyCheck::decl(),
        approvals::Scope::decl(),
        corral_session::grants::Grant::decl(),
        corral_session::grants::GrantEntry::decl(),
        corral_session::grants::CallCheck::decl(),
        corral_session::Ticket::decl(),
        commands::tools::ShellEvent::decl(),
        commands::tools::ApprovalAnswer::decl(),
        corral_session::domains::DomainQuestion::decl(),
        checkpoint::Checkpoint::decl(),
        checkpoint::ChangeCounts::decl(),
        checkpoint::ChangeStatus::decl(),
        checkpoint::EntryKind::decl(),
        checkpoint::FileChange::decl(),
        checkpoint::Skipped::decl(),
        checkpoint::Comparison::decl(),
        checkpoint::Restored::decl(),
        checkpoint::CallUndo::decl(),
        shell::Stream::decl(),
        fs::EntryKind::decl(),
        fs::ListEntry::decl(),
        fs::ListDirectoryOutput::decl(),
        fs::ReadFileOutput::decl(),
        shell::ExecShellOutput::decl(),
        lsp::Severity::decl(),
        lsp::Diagnostic::decl(),
        lsp::FileDiagnostics::decl(),
        lsp::Report::decl(),
        lsp::Location::decl(),
        lsp::Symbol::decl(),
        shell::Profile::decl(),
        shell::Sandbox::decl(),
        shell::Limit::decl(),
        shell::SavedRule::decl(),
        store::shell::ShellConfig::decl(),
        store::mcp::McpServerConfig::decl(),
        store::mcp::McpSettings::decl(),
        store::mcp::McpSettingsView::decl(),
        corral_session::mcp::McpState::decl(),
        corral_session::mcp::McpServerStatus::decl(),
        corral_session::index::IndexStatus::decl(),
        corral_session::watch::TreeChanges::decl(),
        commands::project::Notice::decl(),
        shell::background::Started::decl(),
        shell::background::ListeningPort::decl(),
        shell::background::CommandOutput::decl(),
        corral_llm::Role::decl(),
        corral_llm::Block::decl(),
        corral_llm::Message::decl(),
        corral_llm::ToolDef::decl(),
        corral_llm::ChatRequest::decl(),
        corral_llm::StreamEvent::decl(),
        corral_llm::Provider::decl(),
        corral_llm::LocalServer::decl(),
        corral_llm::ModelInfo::decl(),
        corral_llm::ListedModel::decl(),
        commands::llm::LlmTarget::decl(),
        corral_llm::Price::decl(),
        store::Settings::decl(),
        store::SettingsView::decl(),
        store::SettingsInput::decl(),
        store::ProjectInfo::decl(),
        store::updates::UpdateSettings::decl(),
        corral_app::updates::Install::decl(),
        corral_app::updates::UpdateStatus::decl(),
        corral_app::updates::UpdateOffer::decl(),
        corral_app::updates::InstalledUpdate::decl(),
        corral_app::launch::Launch::decl(),
        commands::llm::ConnectionOk::decl(),
        store::history::ConversationSummary::decl(),
        store::history::ForkPoint::decl(),
        store::history::StoredEntry::decl(),
        store::history::ConversationData::decl(),
        store::history::NewEntry::decl(),
        store::history::TokenUsage::decl(),
        store::history::Appended::decl(),
        store::history::SearchHit::decl(),
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
    for decl in declarations() {
        out.push('\n');
        out.push_str("export ");
        out.push_str(&decl);
        out.push('\n');
    }
    out.push_str(&limits());
    out
}

#[test]
fn the_ui_wire_types_are_generated_from_the_rust_types() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/wire.ts");
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
