//! Rules of the project runners: `python3 pytest uv make go`.
//!
//! Like the package tools, these run project code by design (a test, a
//! Makefile's recipe, `go run`), so their options stay open and the build
//! profile is their fence: they are never on the read-only table, so they
//! ask outside full auto. What is refused early, with a clear reason: an
//! option or operand that points them at a file or folder outside the
//! project (`make -C /elsewhere`, `python3 /tmp/x.py`, `uv --project ..`,
//! `go -C ..`, `pytest --rootdir=/`).

use super::Ctx;
use corral_fs::Result;

/// One runner's options: those whose value is a path, those that take a
/// separate value that is not a path, and whether its first operand is
/// the file it runs (`python3 script.py`), after which the rest is the
/// script's own.
struct Runner {
    paths: &'static [&'static str],
    values: &'static [&'static str],
    /// Operands are paths (`pytest tests/`, `make` has targets instead).
    operands_are_paths: bool,
    /// Options after which the rest belongs to what runs (`python3 -c`).
    ends_options: &'static [&'static str],
    /// Whether a short option's value may be joined to it (`-Csrc`); go's
    /// one-dash long flags (`-overlay`) would read as `-o verlay`.
    joined: bool,
}

fn runner(program: &str) -> Runner {
    match program {
        "python3" => Runner {
            paths: &[],
            values: &["-W", "-X", "--check-hash-based-pycs"],
            operands_are_paths: true,
            ends_options: &["-c", "-m", "-"],
            joined: true,
        },
        "pytest" => Runner {
            paths: &[
                "--rootdir",
                "-c",
                "--config-file",
                "--confcutdir",
                "--basetemp",
                "--junitxml",
                "--junit-xml",
                "--log-file",
                "--resultlog",
                "--result-log",
                "--ignore",
                "--ignore-glob",
                "--deselect",
                "--cov-config",
            ],
            values: &[
                "-k",
                "-m",
                "-p",
                "-o",
                "--override-ini",
                "-W",
                "--pythonwarnings",
                "--tb",
                "--maxfail",
                "--durations",
                "-n",
                "--log-level",
                "--import-mode",
                "--cov",
                "--cov-report",
            ],
            operands_are_paths: true,
            ends_options: &[],
            joined: true,
        },
        "uv" => Runner {
            paths: &[
                "--directory",
                "--project",
                "--cache-dir",
                "--config-file",
                "--with-requirements",
                "-r",
                "--requirement",
                "-c",
                "--constraint",
                "--constraints",
                "--overrides",
                "--target",
                "--prefix",
                "--env-file",
            ],
            values: &[
                "--python",
                "-p",
                "--with",
                "--from",
                "--extra",
                "--group",
                "--package",
                "--index-url",
                "--index",
            ],
            operands_are_paths: false,
            ends_options: &["--"],
            joined: true,
        },
        "make" => Runner {
            paths: &[
                "-C",
                "--directory",
                "-f",
                "--file",
                "--makefile",
                "-I",
                "--include-dir",
                "-o",
                "--old-file",
                "--assume-old",
                "-W",
                "--what-if",
                "--new-file",
                "--assume-new",
            ],
            values: &[
                "-j",
                "--jobs",
                "-l",
                "--load-average",
                "-O",
                "--output-sync",
            ],
            operands_are_paths: false,
            ends_options: &[],
            joined: true,
        },
        // go's flags take one dash; `-C` must come first.
        _ => Runner {
            paths: &[
                "-C",
                "-modfile",
                "-o",
                "-overlay",
                "-pkgdir",
                "-coverprofile",
                "-cpuprofile",
                "-memprofile",
                "-blockprofile",
                "-mutexprofile",
                "-outputdir",
                "-trace",
            ],
            values: &[
                "-run", "-bench", "-tags", "-count", "-timeout", "-p", "-ldflags", "-gcflags",
            ],
            operands_are_paths: false,
            ends_options: &["--"],
            joined: false,
        },
    }
}

/// `python3 pytest uv make go`: paths they are pointed at stay inside the
/// root. Arguments after `--`, or after what a runner runs, are its own.
pub(super) fn check_runner(ctx: &Ctx<'_>, args: &[String]) -> Result<()> {
    let rules = runner(ctx.program);
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" || rules.ends_options.contains(&arg.as_str()) {
            return Ok(());
        }
        if !arg.starts_with('-') {
            if !rules.operands_are_paths {
                continue;
            }
            // `tests/test_x.py::test_a` names a file and a test in it.
            let path = arg.split("::").next().unwrap_or(arg);
            ctx.path(arg, path)?;
            if ctx.program == "python3" {
                // The script's own arguments follow it.
                return Ok(());
            }
            continue;
        }
        match option_value(arg, args.get(i), &rules) {
            Some((value, separate)) => {
                i += usize::from(separate);
                if let Some(path) = value {
                    // The argument named is the one that holds the path.
                    ctx.path(if separate { path } else { arg }, path)?;
                }
            }
            None if ctx.program == "python3" && joined_end(arg) => return Ok(()),
            None => {}
        }
    }
    Ok(())
}

/// `-cCODE` or `-mmodule`: python3 reads the rest as code or a module.
fn joined_end(arg: &str) -> bool {
    !arg.starts_with("--") && (arg.starts_with("-c") || arg.starts_with("-m"))
}

/// If `arg` is an option taking a value: its value when that value is a
/// path (`None` for other values, and for a path missing at the end), and
/// whether the value is the next argument. `--x=v`, `-x v`, and for short
/// options `-xv` (`-Csrc`).
fn option_value<'a>(
    arg: &'a str,
    next: Option<&'a String>,
    rules: &Runner,
) -> Option<(Option<&'a str>, bool)> {
    let find = |names: &[&str]| -> Option<(Option<&'a str>, bool)> {
        for name in names {
            if arg == *name {
                return Some((next.map(String::as_str), true));
            }
            if let Some(v) = arg.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
                return Some((Some(v), false));
            }
            // A short option's value may be joined to it: `-Csrc`.
            let short = rules.joined && name.len() == 2 && !name.starts_with("--");
            if short && arg.len() > 2 && arg.starts_with(name) && !arg.starts_with("--") {
                return Some((Some(&arg[2..]), false));
            }
        }
        None
    };
    if let Some((value, separate)) = find(rules.paths) {
        return Some((value, separate));
    }
    find(rules.values).map(|(_, separate)| (None, separate))
}
