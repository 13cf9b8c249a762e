//! A task's toolchain image: the project's own (its devcontainer's
//! `image` or `build`, or a Dockerfile in the project) or one the user
//! names, with this corral-cli added on top, built by the user's engine
//! and kept under a tag that names what it was made from.
//!
//! Building runs the project's Dockerfile with the engine, as Dev
//! Containers do: choosing it in Settings is trusting it. What it may
//! reach is held to the project: the Dockerfile and its build context
//! must lie inside the project's folder (a `context` of `../..` could
//! otherwise put the user's home, keys and all, in the image the agent
//! reads). The layer that adds corral-cli is built with no network.

use corral_protocol::{Error, ErrorCode};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Where a task's toolchain comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Toolchain {
    /// An image the engine has or can pull.
    Image(String),
    /// A Dockerfile built by the engine in `context`, both in the project.
    Build {
        dockerfile: PathBuf,
        context: PathBuf,
    },
}

/// The devcontainer file's parts Corral reads.
#[derive(Debug, serde::Deserialize)]
struct DevContainer {
    image: Option<String>,
    build: Option<DevBuild>,
    /// The older spelling of `build.dockerfile`.
    #[serde(rename = "dockerFile")]
    docker_file: Option<String>,
    context: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
struct DevBuild {
    dockerfile: Option<String>,
    context: Option<String>,
}

/// The project's devcontainer files, in the order Dev Containers looks.
const DEVCONTAINER_FILES: [&str; 2] = [".devcontainer/devcontainer.json", ".devcontainer.json"];

impl Toolchain {
    /// The toolchain `spec` names for `project`: `devcontainer`,
    /// `image:NAME` or `dockerfile:PATH` (in the project), as exec's
    /// `--toolchain` and the settings' toolchain give it.
    pub fn named(project: &Path, spec: &str) -> Result<Toolchain, Error> {
        match spec.split_once(':') {
            _ if spec == "devcontainer" => Toolchain::devcontainer(project),
            Some(("image", image)) if !image.is_empty() && !image.starts_with('-') => {
                Ok(Toolchain::Image(image.to_string()))
            }
            Some(("dockerfile", file)) if !file.is_empty() => Toolchain::dockerfile(project, file),
            _ => Err(Error::invalid_input(format!(
                "`{spec}` is not a toolchain: devcontainer, image:NAME or dockerfile:PATH"
            ))),
        }
    }

    /// The project's devcontainer (`.devcontainer/devcontainer.json` or
    /// `.devcontainer.json`, JSON with comments): its `image`, or its
    /// `build.dockerfile` and `build.context` (relative to the file's
    /// folder, as Dev Containers reads them).
    pub fn devcontainer(project: &Path) -> Result<Toolchain, Error> {
        let Some((file, text)) = DEVCONTAINER_FILES
            .iter()
            .map(|name| project.join(name))
            .find_map(|file| read_small(&file).map(|text| (file, text)))
        else {
            return Err(Error::new(
                ErrorCode::NotFound,
                "the project has no devcontainer (.devcontainer/devcontainer.json)",
            )
            .hint("Name an image or a Dockerfile for the tasks' toolchain instead."));
        };
        let options = jsonc_parser::ParseOptions {
            allow_comments: true,
            allow_trailing_commas: true,
            ..jsonc_parser::ParseOptions::default()
        };
        let read: Option<DevContainer> = jsonc_parser::parse_to_serde_value(&text, &options)
            .map_err(|e| Error::invalid_input(format!("{}: {e}", file.display())))?;
        let Some(read) = read else {
            return Err(Error::invalid_input(format!("{} is empty", file.display())));
        };
        let folder = file.parent().unwrap_or(project);
        let build = read.build.unwrap_or(DevBuild {
            dockerfile: read.docker_file,
            context: read.context,
        });
        match (read.image, build.dockerfile) {
            (_, Some(dockerfile)) => Toolchain::build(
                project,
                &folder.join(dockerfile),
                &folder.join(build.context.as_deref().unwrap_or(".")),
            ),
            (Some(image), None) => Ok(Toolchain::Image(image)),
            (None, None) => Err(Error::invalid_input(format!(
                "{} names neither an image nor a Dockerfile",
                file.display()
            ))
            .hint("Corral reads its `image`, or `build.dockerfile` and `build.context`; Compose files are not read.")),
        }
    }

    /// A Dockerfile of the project (`file`, relative to it), built in the
    /// folder it is in.
    pub fn dockerfile(project: &Path, file: &str) -> Result<Toolchain, Error> {
        let dockerfile = project.join(file);
        let context = dockerfile.parent().unwrap_or(project).to_path_buf();
        Toolchain::build(project, &dockerfile, &context)
    }

    /// A build whose Dockerfile and context, links resolved, lie inside
    /// `project`.
    fn build(project: &Path, dockerfile: &Path, context: &Path) -> Result<Toolchain, Error> {
        let root = real(project)?;
        let inside = |path: &Path, what: &str| -> Result<PathBuf, Error> {
            let path = real(path)?;
            if path.starts_with(&root) {
                return Ok(path);
            }
            Err(Error::new(
                ErrorCode::PathOutsideRoot,
                format!(
                    "the toolchain's {what} {} is outside the project",
                    path.display()
                ),
            )
            .hint("A task's image is built from the project's own files only."))
        };
        Ok(Toolchain::Build {
            dockerfile: inside(dockerfile, "Dockerfile")?,
            context: inside(context, "build context")?,
        })
    }
}

/// The task image over `toolchain` for this corral-cli (`cli`): the
/// toolchain built or taken as it is, then a layer adding `cli` as
/// `/usr/local/bin/corral-cli`, made once per toolchain image and binary
/// (its tag names both). `options`: the engine's words for a build (its
/// `--ulimit`s, say). Blocks while the engine builds.
pub fn task_image(
    engine: &str,
    toolchain: &Toolchain,
    cli: &Path,
    options: &[String],
) -> Result<String, Error> {
    let base = match toolchain {
        Toolchain::Image(image) => image.clone(),
        Toolchain::Build {
            dockerfile,
            context,
        } => {
            let tag = format!(
                "localhost/corral-toolchain-{:016x}:latest",
                stable_hash(context.to_string_lossy().as_bytes())
            );
            let mut build = Command::new(engine);
            build
                .args(["build", "--quiet", "--tag", &tag, "--file"])
                .arg(dockerfile)
                .args(options)
                .arg(context);
            engine_run(engine, &mut build, "build the project's toolchain image")?;
            tag
        }
    };
    // The base by its id: a name is the user's text, an id is hex.
    let mut inspect = Command::new(engine);
    inspect.args(["image", "inspect", "--format", "{{.Id}}", &base]);
    let id = engine_run(engine, &mut inspect, "find the toolchain image")
        .map_err(|e| e.hint(format!("Pull or build {base} with {engine} first.")))?;
    let id = id.trim().trim_start_matches("sha256:").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(Error::new(
            ErrorCode::Io,
            format!("{engine} gave `{id}` as the id of {base}"),
        ));
    }
    let stamp = binary_stamp(cli)?;
    let tag = format!(
        "localhost/corral-task-{:016x}:latest",
        stable_hash(format!("{id} {stamp}").as_bytes())
    );
    let mut exists = Command::new(engine);
    exists.args(["image", "inspect", "--format", "{{.Id}}", &tag]);
    if engine_run(engine, &mut exists, "look for the task image").is_ok() {
        return Ok(tag);
    }
    let work = tempfile::tempdir()
        .map_err(|e| Error::new(ErrorCode::Io, format!("could not make a build folder: {e}")))?;
    // Outside any project: the app's own build folder.
    #[allow(clippy::disallowed_methods)]
    let written = std::fs::copy(cli, work.path().join("corral-cli")).and_then(|_| {
        std::fs::write(
            work.path().join("Containerfile"),
            format!("FROM {id}\nCOPY corral-cli /usr/local/bin/corral-cli\n"),
        )
    });
    written.map_err(|e| {
        Error::new(
            ErrorCode::Io,
            format!("could not prepare the task image's layer: {e}"),
        )
    })?;
    let mut layer = Command::new(engine);
    layer
        .args(["build", "--quiet", "--network=none", "--tag", &tag])
        .args(options)
        .arg(work.path());
    engine_run(engine, &mut layer, "add corral-cli to the toolchain image")?;
    Ok(tag)
}

/// A file's text when it is a regular file of at most 1 MiB.
fn read_small(path: &Path) -> Option<String> {
    // The user's own project, read at the user's request.
    #[allow(clippy::disallowed_methods)]
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 1 << 20 {
        return None;
    }
    #[allow(clippy::disallowed_methods)]
    std::fs::read_to_string(path).ok()
}

/// `path` with its links resolved; `not_found` when it is not there.
fn real(path: &Path) -> Result<PathBuf, Error> {
    #[allow(clippy::disallowed_methods)]
    std::fs::canonicalize(path)
        .map_err(|e| Error::new(ErrorCode::NotFound, format!("{}: {e}", path.display())))
}

/// What tells one corral-cli binary from another cheaply: its version,
/// size and change time.
fn binary_stamp(cli: &Path) -> Result<String, Error> {
    #[allow(clippy::disallowed_methods)]
    let meta = std::fs::metadata(cli).map_err(|e| {
        Error::new(
            ErrorCode::NotFound,
            format!("no corral-cli at {}: {e}", cli.display()),
        )
    })?;
    let changed = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok(format!("{} {} {changed}", crate::VERSION, meta.len()))
}

/// FNV-1a: a tag's part that stays the same across runs and builds.
fn stable_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Runs the engine's `command`; its stdout, or an error with its words.
fn engine_run(engine: &str, command: &mut Command, what: &str) -> Result<String, Error> {
    let out: Output = command.output().map_err(|e| {
        Error::new(ErrorCode::NotFound, format!("could not run {engine}: {e}"))
            .hint("Install Podman or Docker, or choose the engine you have in Settings.")
    })?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let last = said
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(
        Error::new(ErrorCode::Io, format!("{engine} could not {what}: {last}"))
            .detail("engine", said.trim()),
    )
}

#[cfg(test)]
mod tests {
    // Fixture projects in temporary folders.
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)]
    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_devcontainer_names_an_image_or_a_build_in_the_project() {
        let image = project(&[(
            ".devcontainer/devcontainer.json",
            "// the team's toolchain\n{ \"name\": \"app\", \"image\": \"node:22\", }\n",
        )]);
        assert_eq!(
            Toolchain::devcontainer(image.path()).unwrap(),
            Toolchain::Image("node:22".into())
        );

        let built = project(&[
            (
                ".devcontainer/devcontainer.json",
                "{ /* built */ \"build\": { \"dockerfile\": \"Dockerfile\", \"context\": \"..\" } }",
            ),
            (".devcontainer/Dockerfile", "FROM debian\n"),
        ]);
        let root = std::fs::canonicalize(built.path()).unwrap();
        assert_eq!(
            Toolchain::devcontainer(built.path()).unwrap(),
            Toolchain::Build {
                dockerfile: root.join(".devcontainer/Dockerfile"),
                context: root.clone(),
            }
        );

        let none = project(&[("README.md", "hi")]);
        let e = Toolchain::devcontainer(none.path()).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        let neither = project(&[(".devcontainer.json", "{\"name\": \"x\"}")]);
        let e = Toolchain::devcontainer(neither.path()).unwrap_err();
        assert!(e.message.contains("neither"), "{}", e.message);
    }

    /// A hostile project's devcontainer cannot make the user's home (or
    /// any folder outside the project) the image's build context, nor
    /// build a Dockerfile from outside, by `..` or by a link.
    #[test]
    fn a_build_reaching_outside_the_project_is_refused() {
        let outside = project(&[("Dockerfile", "FROM debian\nCOPY . /stolen\n")]);
        let up = project(&[
            (
                ".devcontainer/devcontainer.json",
                "{\"build\": {\"dockerfile\": \"Dockerfile\", \"context\": \"../..\"}}",
            ),
            (".devcontainer/Dockerfile", "FROM debian\n"),
        ]);
        let e = Toolchain::devcontainer(up.path()).unwrap_err();
        assert_eq!(e.code, ErrorCode::PathOutsideRoot, "{}", e.message);

        let linked = project(&[]);
        std::os::unix::fs::symlink(
            outside.path().join("Dockerfile"),
            linked.path().join("Dockerfile"),
        )
        .unwrap();
        let e = Toolchain::dockerfile(linked.path(), "Dockerfile").unwrap_err();
        assert_eq!(e.code, ErrorCode::PathOutsideRoot, "{}", e.message);
        let e = Toolchain::dockerfile(linked.path(), "../x/Dockerfile").unwrap_err();
        assert!(
            matches!(e.code, ErrorCode::PathOutsideRoot | ErrorCode::NotFound),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_toolchain_is_named_by_its_kind() {
        let dir = project(&[("ci/Dockerfile", "FROM debian\n")]);
        assert_eq!(
            Toolchain::named(dir.path(), "image:node:22").unwrap(),
            Toolchain::Image("node:22".into())
        );
        assert!(matches!(
            Toolchain::named(dir.path(), "dockerfile:ci/Dockerfile").unwrap(),
            Toolchain::Build { .. }
        ));
        for bad in ["image:", "image:--privileged", "docker", "devcontainers"] {
            let e = Toolchain::named(dir.path(), bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidInput, "{bad}");
        }
    }

    #[test]
    fn the_hash_of_a_tag_is_stable() {
        assert_eq!(stable_hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
