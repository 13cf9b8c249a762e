//! `update_plan`: the model's plan for the task, as a list of steps with
//! their status. It touches nothing; the window draws it as a checklist
//! that updates in place, so the user sees where a long task stands.

use crate::display::ResultView;
use crate::error::{Error, Result};
use crate::policy::Risk;
use crate::root::ProjectRoot;
use crate::tool::{CallContext, Tool};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The most steps a plan may have.
pub const MAX_STEPS: usize = 50;
/// The longest a step's text may be, in characters.
pub const MAX_STEP_CHARS: usize = 500;

/// Where a step stands.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Pending,
    InProgress,
    Completed,
}

/// One step of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct PlanStep {
    /// What to do, in a short sentence.
    pub step: String,
    pub status: StepStatus,
}

/// Input of `update_plan`: the whole plan, every time.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePlanInput {
    /// Every step, in order, with its status; at most one in progress.
    pub steps: Vec<PlanStep>,
    /// Why the plan changed, when it did.
    #[serde(default)]
    pub explanation: Option<String>,
}

/// Output of `update_plan`: the plan as it now stands.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct UpdatePlanOutput {
    pub steps: Vec<PlanStep>,
    pub completed: usize,
    pub total: usize,
}

pub struct UpdatePlan;

impl Tool for UpdatePlan {
    type Input = UpdatePlanInput;
    type Output = UpdatePlanOutput;
    const NAME: &'static str = "update_plan";
    const RISK: Risk = Risk::Read;
    const DESCRIPTION: &'static str = "Set the plan for a task of several steps: every step, \
        in order, with its status (pending, in_progress, completed). Call it before starting \
        such a task and again whenever a step starts or finishes; the user sees it as a \
        checklist. It touches no file.";
    const RESULT: ResultView = ResultView::Plan;

    fn precheck(&self, _root: &ProjectRoot, input: &UpdatePlanInput) -> Result<()> {
        if input.steps.is_empty() || input.steps.len() > MAX_STEPS {
            return Err(Error::invalid_input(format!(
                "a plan has 1 to {MAX_STEPS} steps, not {}",
                input.steps.len()
            )));
        }
        if let Some(long) = input
            .steps
            .iter()
            .find(|s| s.step.trim().is_empty() || s.step.chars().count() > MAX_STEP_CHARS)
        {
            return Err(Error::invalid_input(format!(
                "each step is a sentence of 1 to {MAX_STEP_CHARS} characters"
            ))
            .detail("step", long.step.chars().take(80).collect::<String>()));
        }
        let in_progress = input
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::InProgress)
            .count();
        if in_progress > 1 {
            return Err(Error::invalid_input(format!(
                "{in_progress} steps are in progress; at most one may be"
            )));
        }
        Ok(())
    }

    fn run(
        &self,
        _root: &ProjectRoot,
        input: UpdatePlanInput,
        _: &CallContext,
    ) -> Result<UpdatePlanOutput> {
        let completed = input
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Completed)
            .count();
        Ok(UpdatePlanOutput {
            total: input.steps.len(),
            completed,
            steps: input.steps,
        })
    }

    fn probe(&self, path: &str) -> Value {
        json!({"steps": [{"step": format!("Read {path}"), "status": "pending"}]})
    }
}
