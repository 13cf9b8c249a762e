//! The manifests `corral_host::kube` builds, checked offline against the
//! published schemas by tests/kube/validate.py: the Job, the
//! NetworkPolicy and the Sandbox's pod template against Kubernetes'
//! OpenAPI (kubernetes-validate's strict JSON schemas), the Sandbox
//! against the agent-sandbox CRD committed beside it. The validator runs
//! from tests/kube/.venv (pinned in tests/kube/requirements.txt, installed
//! by `scripts/setup.sh --test`), and must refuse the broken manifests
//! this test makes too, so a validator that passes everything fails here.

#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use corral_host::kube::{self, TaskSpec};
use corral_tools::policy::Mode;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kube")
}

/// The venv's Python, or a failure saying how to make it.
fn python() -> PathBuf {
    let python = dir().join(".venv/bin/python");
    assert!(
        python.exists(),
        "the Kubernetes schema validator is missing: run `scripts/setup.sh --test` ({} not found)",
        python.display()
    );
    let wanted = std::fs::read(dir().join("requirements.txt")).unwrap();
    let installed = std::fs::read(dir().join(".venv/.corral-requirements")).unwrap_or_default();
    assert!(
        wanted == installed,
        "the Kubernetes schema validator's venv is not of tests/kube/requirements.txt: run `scripts/setup.sh --test`"
    );
    python
}

/// Runs the validator on `manifest`; its exit status and printed lines.
fn validate(name: &str, manifest: &Value) -> (bool, String) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(manifest).unwrap()).unwrap();
    let out = Command::new(python())
        .arg(dir().join("validate.py"))
        .arg(&path)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "the validator did not run: {text}"
    );
    (out.status.success(), text)
}

fn specs() -> Vec<TaskSpec> {
    let plain = TaskSpec::new(
        "Fix the typo",
        "registry.example/corral-task:0.1.0",
        "agents",
    );
    let mut tuned = TaskSpec::new(
        "Port the parser to nom 8 (and its benches)",
        "ghcr.io/example/corral-rust:1.85",
        "team-a",
    );
    tuned.mode = Mode::FullAuto;
    tuned.cpu = "500m".into();
    tuned.memory = "1536Mi".into();
    tuned.work_size = "20Gi".into();
    tuned.context = Some("prod-eu".into());
    tuned.keep_seconds = 60;
    tuned
        .labels
        .insert("example.com/team".into(), "parsers".into());
    tuned.labels.insert("cost-centre".into(), "r-and-d".into());
    vec![plain, tuned]
}

#[test]
fn the_jobs_network_policies_and_sandboxes_meet_the_published_schemas() {
    for spec in specs() {
        let sandbox = kube::sandbox(&spec, Some("2030-01-01T00:00:00Z")).unwrap();
        let objects = kube::list(vec![
            kube::network_policy(&spec).unwrap(),
            kube::job(&spec).unwrap(),
            sandbox,
            kube::sandbox(&spec, None).unwrap(),
        ]);
        let (valid, text) = validate(&spec.slug, &objects);
        assert!(valid, "{}: {text}", spec.slug);
        // Each object was looked at: two Sandboxes, the Job, the policy.
        assert_eq!(text.matches("valid Sandbox corral-").count(), 2, "{text}");
        assert!(text.contains("valid Job corral-"), "{text}");
        assert!(text.contains("valid NetworkPolicy corral-"), "{text}");
    }
}

/// A broken copy of `manifest`: `change` applied to it.
fn broken(manifest: &Value, change: impl FnOnce(&mut Value)) -> Value {
    let mut manifest = manifest.clone();
    change(&mut manifest);
    manifest
}

#[test]
fn the_validator_refuses_a_wrong_type_an_unknown_field_and_a_bad_value() {
    let spec = &specs()[0];
    let job = kube::job(spec).unwrap();
    let sandbox = kube::sandbox(spec, None).unwrap();
    let cases = [
        (
            "job-backoff-string",
            broken(&job, |j| j["spec"]["backoffLimit"] = "0".into()),
            "spec/backoffLimit",
        ),
        (
            "job-unknown-container-field",
            broken(&job, |j| {
                j["spec"]["template"]["spec"]["containers"][0]["stdinonce"] = true.into();
            }),
            "stdinonce",
        ),
        (
            "sandbox-unknown-field",
            broken(&sandbox, |s| {
                s["spec"]["ttlSecondsAfterFinished"] = 600.into();
            }),
            "CRD schema",
        ),
        (
            "sandbox-shutdown-policy",
            broken(&sandbox, |s| s["spec"]["shutdownPolicy"] = "Remove".into()),
            "spec/shutdownPolicy",
        ),
        (
            "sandbox-shutdown-time",
            broken(&sandbox, |s| s["spec"]["shutdownTime"] = "tomorrow".into()),
            "spec/shutdownTime",
        ),
        (
            "sandbox-pod-stdin",
            broken(&sandbox, |s| {
                s["spec"]["podTemplate"]["spec"]["containers"][0]["stdin"] = "yes".into();
            }),
            "podTemplate as a Pod",
        ),
        (
            "sandbox-old-kind",
            broken(&sandbox, |s| s["kind"] = "SandboxJob".into()),
            "SandboxJob",
        ),
    ];
    for (name, manifest, said) in cases {
        let (valid, text) = validate(name, &manifest);
        assert!(!valid, "{name} was taken as valid: {text}");
        assert!(text.contains("invalid "), "{name}: {text}");
        assert!(text.contains(said), "{name} should name {said}: {text}");
    }
}
