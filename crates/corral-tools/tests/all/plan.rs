//! `update_plan` through `dispatch::call`: the plan comes back with its
//! progress, and a plan that makes no sense is `invalid_input`.

use corral_tools::dispatch::{self, CallContext};
use corral_tools::policy::{Approval, Mode};
use corral_tools::ProjectRoot;
use serde_json::json;

fn call(input: serde_json::Value) -> Result<serde_json::Value, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = ProjectRoot::open(dir.path()).map_err(|e| e.to_string())?;
    // Read-only mode: the plan touches nothing, so it runs even there.
    let ctx = CallContext::new(Mode::ReadOnly, Approval::None);
    dispatch::call(&root, "update_plan", input, &ctx).map_err(|e| e.code.to_string())
}

#[test]
fn a_plan_is_returned_with_its_progress() {
    let plan = json!({"steps": [
        {"step": "Read the parser", "status": "completed"},
        {"step": "Fix the bug", "status": "in_progress"},
        {"step": "Run the tests", "status": "pending"},
    ]});
    let out = call(plan.clone());
    assert_eq!(
        out,
        Ok(json!({"steps": plan["steps"], "completed": 1, "total": 3}))
    );
}

#[test]
fn a_plan_that_makes_no_sense_is_invalid_input() {
    let two_running = json!({"steps": [
        {"step": "a", "status": "in_progress"},
        {"step": "b", "status": "in_progress"},
    ]});
    let bad = [
        json!({"steps": []}),
        two_running,
        json!({"steps": [{"step": "  ", "status": "pending"}]}),
        json!({"steps": [{"step": "a", "status": "done"}]}),
        json!({"steps": [{"step": "a".repeat(501), "status": "pending"}]}),
    ];
    for input in bad {
        assert_eq!(call(input.clone()), Err("invalid_input".into()), "{input}");
    }
}
