//! Which file a stdio server's `command` runs, and whether the kernel can
//! run it without a shell.
//!
//! The C library's `execvp` (which the standard library's spawn ends in)
//! hands a file the kernel refuses as "Exec format error" to `/bin/sh`, so
//! a script without an interpreter line would run under a shell. The rule
//! here is the kernel's own, decided before the spawn: the file `execvp`
//! would pick (the path itself when `command` names one, relative to the
//! server's `cwd`; else the first executable regular file on the child's
//! `PATH`, or `/bin:/usr/bin` when it has none) must start with an ELF
//! header or `#!`. Anything else is refused with `ENOEXEC`, the error the
//! kernel gave. A file swapped between this check and the spawn is not
//! caught; whoever can swap it can already change what the server runs.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The search path `execvp` uses when the environment has no `PATH`.
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Refuses `command` with `ENOEXEC` when the file it resolves to is one the
/// kernel cannot run itself. A command that resolves to nothing passes:
/// the spawn then fails with the error the search gives.
pub(super) fn refuse_unknown_format(
    command: &str,
    env: &BTreeMap<String, String>,
    cwd: Option<&Path>,
) -> std::io::Result<()> {
    let Some(file) = resolve(command, env, cwd) else {
        return Ok(());
    };
    if runs_without_shell(&file) {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(nix::libc::ENOEXEC))
    }
}

/// The file `execvp` would try to run.
fn resolve(command: &str, env: &BTreeMap<String, String>, cwd: Option<&Path>) -> Option<PathBuf> {
    let in_cwd = |path: &Path| match cwd {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    if command.is_empty() {
        return None;
    }
    if command.contains('/') {
        // Not executable: the kernel refuses it before reading it.
        return Some(in_cwd(Path::new(command))).filter(|file| is_executable_file(file));
    }
    let search = env.get("PATH").map_or(DEFAULT_PATH, String::as_str);
    search
        .split(':')
        // An empty entry is the current directory, as for `execvp`.
        .map(|dir| in_cwd(&Path::new(if dir.is_empty() { "." } else { dir }).join(command)))
        .find(|candidate| is_executable_file(candidate))
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Whether `file` starts as a binary or a script the kernel runs. A file
/// that cannot be read passes: the kernel decides (execute-only binaries
/// exist, and a shell could not read such a file either).
fn runs_without_shell(file: &Path) -> bool {
    let mut head = [0u8; 4];
    let Ok(mut opened) = std::fs::File::open(file) else {
        return true;
    };
    let mut read = 0;
    while read < head.len() {
        match opened.read(&mut head[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return true,
        }
    }
    let head = &head[..read];
    head.starts_with(b"#!") || head == b"\x7fELF"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_elf_files_and_scripts_with_an_interpreter_line_run() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cases: [(&str, &[u8], bool); 6] = [
            ("elf", b"\x7fELF\x02\x01", true),
            ("script", b"#!/bin/sh\necho hi\n", true),
            ("bare-script", b"echo hi\n", false),
            ("empty", b"", false),
            ("short", b"#", false),
            ("elf-prefix-only", b"\x7fEL", false),
        ];
        for (name, content, runs) in cases {
            let path = dir.path().join(name);
            std::fs::write(&path, content).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(runs_without_shell(&path), runs, "{name}");
        }
    }
}
