//! The standardized error's JSON is a contract: pinned here, exactly.

use crate::common::Project;
use corral_tools::{Error, ErrorCode};
use pretty_assertions::assert_eq;
use serde_json::json;

#[test]
fn every_code_has_its_pinned_wire_name() {
    let names: Vec<String> = ErrorCode::ALL
        .iter()
        .map(|c| {
            serde_json::to_value(c)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        names,
        vec![
            "no_project_open",
            "invalid_input",
            "not_found",
            "already_exists",
            "is_directory",
            "not_a_directory",
            "not_text",
            "too_large",
            "path_outside_root",
            "path_protected",
            "approval_required",
            "denied",
            "permission_denied",
            "no_match",
            "ambiguous_match",
            "stale_file",
            "invalid_regex",
            "command_not_allowed",
            "argument_not_allowed",
            "cancelled",
            "io",
            "llm_auth",
            "llm_rate_limited",
            "llm_unavailable",
            "llm_bad_response",
            "llm_context_overflow",
            "mcp_server",
            "language_server",
            "update",
        ]
    );
    for code in ErrorCode::ALL {
        assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        let back: ErrorCode = serde_json::from_value(json!(code.as_str())).unwrap();
        assert_eq!(back, code);
        let err = Error::new(code, "m");
        assert!(!err.hint.is_empty(), "{code} has no default hint");
    }
}

#[test]
fn path_outside_root_error_is_exactly_this_json() {
    let p = Project::new();
    let err = p
        .call("read_file", json!({"path": "../secrets.txt"}))
        .unwrap_err();
    assert_eq!(
        err.to_json(),
        json!({
            "code": "path_outside_root",
            "message": "`../secrets.txt` resolves outside the project folder",
            "hint": "Use a path inside the project, relative to its root.",
            "retryable": false,
            "details": {"path": "../secrets.txt"}
        })
    );
}

#[test]
fn ambiguous_match_error_is_exactly_this_json() {
    let p = Project::new();
    p.write("a.txt", "x\nx\n");
    let err = p
        .call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "x", "new_string": "y"}),
        )
        .unwrap_err();
    assert_eq!(
        err.to_json(),
        json!({
            "code": "ambiguous_match",
            "message": "old_string matches 2 times in `a.txt` (lines 1, 2)",
            "hint": "Add surrounding lines to old_string so it matches once, or set replace_all.",
            "retryable": false,
            "details": {"path": "a.txt", "count": 2, "lines": [1, 2]}
        })
    );
}

#[test]
fn retryable_codes_are_the_transient_ones() {
    let retryable: Vec<&str> = ErrorCode::ALL
        .iter()
        .filter(|c| Error::new(**c, "m").retryable)
        .map(|c| c.as_str())
        .collect();
    assert_eq!(
        retryable,
        vec!["stale_file", "llm_rate_limited", "llm_unavailable"]
    );
}

#[test]
fn error_round_trips_through_json() {
    let err = Error::new(ErrorCode::NotFound, "`a` does not exist").detail("path", "a");
    let back: Error = serde_json::from_value(err.to_json()).unwrap();
    assert_eq!(back, err);
}

#[test]
fn os_errors_map_to_their_codes() {
    use std::io::{Error as IoError, ErrorKind};
    // The OS's EEXIST and EIO cannot be provoked portably on a temp folder;
    // their mapping is pinned here, whole.
    assert_eq!(
        Error::from_io(&IoError::from(ErrorKind::AlreadyExists), "a.txt").to_json(),
        json!({
            "code": "already_exists",
            "message": "`a.txt` already exists",
            "hint": "Choose another path or remove the existing one first.",
            "retryable": false,
            "details": {"path": "a.txt"}
        })
    );
    let eio = Error::from_io(&IoError::from_raw_os_error(5), "a.txt");
    assert_eq!(eio.code, ErrorCode::Io);
    assert!(eio.message.starts_with("`a.txt`: "), "{}", eio.message);
    assert_eq!(
        Error::from_io(&IoError::from(ErrorKind::PermissionDenied), "a.txt").code,
        ErrorCode::PermissionDenied
    );
}
