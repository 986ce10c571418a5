//! Every byte the CLI prints passes its one writer: outside `output.rs`
//! (and `output/`), no source of `mcp-cli` names stdout or stderr, prints
//! with the standard macros, or lets a library write to the terminal
//! (`rpassword`'s prompt, clap's own printing); and `xtask check-config`,
//! which prints config text, writes each line through the shared rule.

#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};

/// What only the writer may say, and why each is a way around it.
const FORBIDDEN: &[&str] = &[
    // the standard printing macros
    "println!",
    "eprintln!",
    "print!(",
    "eprint!(",
    "dbg!(",
    // a handle on a stream, to write to or to lock
    "io::stdout(",
    "io::stderr(",
    "stdout().lock",
    "stderr().lock",
    // libraries that write to the terminal themselves
    "prompt_password",
    ".print()",
    "print_help",
    // the subscriber's default writer
    "with_writer(std",
];

fn sources(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// The `(file:line, token)` pairs where `text` says something forbidden.
fn violations(name: &str, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        for token in FORBIDDEN {
            if code.contains(token) {
                found.push(format!("{name}:{}: {token}: {}", number + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn the_check_finds_every_way_around_the_writer() {
    // The tidy check itself, on lines it must catch and lines it must not.
    let check = |line: &str, caught: bool| {
        assert_eq!(!violations("x.rs", line).is_empty(), caught, "{line}");
    };
    check(r#"println!("{x}");"#, true);
    check(r#"eprintln!("{x}");"#, true);
    check(r#"print!("a");"#, true);
    check("let _ = writeln!(std::io::stderr(), \"x\");", true);
    check("let mut out = std::io::stdout().lock();", true);
    check("use std::io::stdout; let o = stdout().lock();", true);
    check("rpassword::prompt_password(question)", true);
    check("let _ = err.print();", true);
    check(".with_writer(std::io::stderr)", true);
    check("outln!(\"{}\", shown(name));", false);
    check("errln!(\"note: …\");", false);
    check("// println! in a comment is fine", false);
    check("let line = std::io::stdin().lock();", false);
}

#[test]
fn no_print_site_bypasses_the_one_writer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 10, "found only {files:?}");
    let mut found = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        if relative == Path::new("output.rs") || relative.starts_with("output") {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("read");
        found.extend(violations(&relative.display().to_string(), &text));
    }
    assert!(
        found.is_empty(),
        "print sites outside output.rs:\n{}",
        found.join("\n")
    );
}

#[test]
fn check_config_in_xtask_writes_every_line_through_the_rule() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../xtask/src/check_config.rs");
    let text = std::fs::read_to_string(&file).expect("read xtask/src/check_config.rs");
    assert!(
        text.contains("#[path = \"../../crates/mcp-cli/src/output/escape.rs\"]"),
        "check-config no longer shares the CLI's rule"
    );
    let writes: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("writeln!(") || line.contains("write!("))
        .collect();
    assert!(!writes.is_empty(), "check-config prints nothing?");
    let unescaped: Vec<&&str> = writes
        .iter()
        .filter(|line| !line.contains("escape::") && !line.contains("\"{text}\""))
        .collect();
    assert!(
        unescaped.is_empty(),
        "check-config writes without the rule: {unescaped:?}"
    );
    // The one "{text}" write prints what `json_pretty` made.
    assert!(text.contains("escape::json_pretty"), "{}", file.display());
    let prints: Vec<String> = violations("check_config.rs", &text)
        .into_iter()
        .filter(|found| !found.contains("io::stdout(") && !found.contains("io::stderr("))
        .collect();
    assert!(prints.is_empty(), "{prints:?}");
}
