//! A copy of a fixture tree in a temporary directory and a runner for the
//! built `mcp-cli` binary against it.

// Test helpers: a failed step fails the test that called it.
#![allow(dead_code, unreachable_pub, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// A fixture tree (`home/`, `project/`, `openclaw/`, `plugin/`) copied into
/// a temporary directory, so the binary can write to it.
pub struct Tree {
    dir: tempfile::TempDir,
    root: PathBuf,
}

/// What one run of the binary printed, with the tree's path replaced by
/// `[ROOT]` so snapshots do not depend on where the tree was made.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|err| panic!("stdout is not JSON ({err}):\n{}", self.stdout))
    }
}

impl Tree {
    /// Copies `tests/fixtures/<name>` into a fresh temporary directory.
    pub fn new(name: &str) -> Tree {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = fs::canonicalize(dir.path()).expect("canonical tempdir");
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        copy_dir(&fixture, &root);
        for sub in ["home", "project", "openclaw", "managed"] {
            fs::create_dir_all(root.join(sub)).expect("mkdir");
        }
        Tree { dir, root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub fn read(&self, relative: &str) -> String {
        fs::read_to_string(self.path(relative)).unwrap_or_default()
    }

    pub fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }

    /// The binary with the tree's directories as its global options, run
    /// from the project directory with a minimal environment.
    pub fn command(&self) -> Command {
        Command::from_std(self.std_command())
    }

    /// [`Tree::command`] as a plain process command, for runs that read
    /// the output while the process is running.
    pub fn std_command(&self) -> std::process::Command {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-cli"));
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .current_dir(self.path("project"))
            .arg("--home")
            .arg(self.path("home"))
            .arg("--project")
            .arg(self.path("project"))
            .arg("--openclaw-home")
            .arg(self.path("openclaw"))
            .arg("--managed-dir")
            .arg(self.path("managed"));
        command
    }

    /// Runs the binary with `args` after the global options.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, |_| {})
    }

    pub fn run_with(&self, args: &[&str], adjust: impl FnOnce(&mut Command)) -> Run {
        let mut command = self.command();
        command.args(args);
        adjust(&mut command);
        let output = command.output().expect("run mcp-cli");
        let clean = |bytes: &[u8]| {
            String::from_utf8_lossy(bytes).replace(&self.root.display().to_string(), "[ROOT]")
        };
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: clean(&output.stdout),
            stderr: clean(&output.stderr),
        }
    }

    /// Every file of the tree with its bytes, to prove a refusal wrote nothing.
    pub fn snapshot_files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files = Vec::new();
        collect_files(&self.root, &mut files);
        files.sort();
        files
    }

    /// Keeps the directory alive as long as the tree.
    pub fn keep(&self) -> &tempfile::TempDir {
        &self.dir
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    let Ok(entries) = fs::read_dir(from) else {
        return;
    };
    for entry in entries {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).expect("copy");
        }
    }
}

fn collect_files(dir: &Path, files: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in fs::read_dir(dir).expect("read dir") {
        let entry = entry.expect("dir entry");
        if entry.file_type().expect("file type").is_dir() {
            collect_files(&entry.path(), files);
        } else {
            files.push((entry.path(), fs::read(entry.path()).expect("read")));
        }
    }
}

/// Runs `args` and expects exit status `code`.
#[track_caller]
pub fn check(tree: &Tree, args: &[&str], code: i32) -> Run {
    let run = tree.run(args);
    assert_eq!(
        run.code,
        code,
        "`mcp-cli {}` exited {}\nstdout:\n{}\nstderr:\n{}",
        args.join(" "),
        run.code,
        run.stdout,
        run.stderr
    );
    run
}

/// Builds a binary of the workspace's test servers (`mcp-example-server`,
/// `mcp-misbehaving-server`) once per test process, next to this test's
/// binaries, and returns its path.
pub fn test_server(name: &str) -> PathBuf {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let built = BUILT.get_or_init(Mutex::default);
    let mut built = built.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = built.get(name) {
        return path.clone();
    }
    // target/<profile>/mcp-cli → target/<profile>: where binaries land,
    // which is not where the test itself runs from when a separate build
    // directory (`CARGO_BUILD_BUILD_DIR`) holds the intermediate files.
    let profile_dir = Path::new(env!("CARGO_BIN_EXE_mcp-cli"))
        .parent()
        .expect("profile dir");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = std::process::Command::new(cargo);
    build.current_dir(env!("CARGO_MANIFEST_DIR")).args([
        "build",
        "--quiet",
        "-p",
        "mcp-integration-tests",
        "--bin",
        name,
    ]);
    if profile_dir.file_name().is_some_and(|dir| dir == "release") {
        build.arg("--release");
    }
    // Cargo names the binary it built: with a separate build directory
    // (`CARGO_BUILD_BUILD_DIR`) it is not next to this test's binary.
    build.arg("--message-format=json-render-diagnostics");
    build.stdout(std::process::Stdio::piped());
    let output = build.output().expect("run cargo build");
    assert!(output.status.success(), "building {name} failed");
    let path = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact" && message["target"]["name"] == name
        })
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| profile_dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX)));
    assert!(path.exists(), "{} missing after build", path.display());
    built.insert(name.to_owned(), path.clone());
    path
}
