//! The registry: every tool, once. `spec`, `dispatch`, the CLI and the app
//! read this list and nothing else, so a tool added here (one file, one
//! line) is specced, policed, callable and covered by the security suite.

mod command_output;
#[cfg(feature = "throwaway-tool")]
pub mod count_lines;
mod delete_file;
mod diagnostics;
mod edit_file;
mod exec_shell;
mod glob;
mod list_directory;
mod read_file;
mod search_files;
mod stop_command;
mod symbols;
pub mod update_plan;
pub mod web_fetch;
mod write_file;

use crate::tool::DynTool;

/// Every tool, in the order the model is shown them.
pub static REGISTRY: &[&dyn DynTool] = &[
    &read_file::ReadFile,
    &write_file::WriteFile,
    &edit_file::EditFile,
    &delete_file::DeleteFile,
    &list_directory::ListDirectory,
    &glob::Glob,
    &search_files::SearchFiles,
    &exec_shell::ExecShell,
    &command_output::CommandOutputTool,
    &stop_command::StopCommand,
    &update_plan::UpdatePlan,
    &diagnostics::Diagnostics,
    &symbols::Symbols,
    &web_fetch::WebFetch,
    #[cfg(feature = "throwaway-tool")]
    &count_lines::CountLines,
];

/// The tool called `name`.
pub fn find(name: &str) -> Option<&'static dyn DynTool> {
    REGISTRY.iter().copied().find(|tool| tool.name() == name)
}

/// The registered names, in registry order.
pub fn names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|tool| tool.name())
}
