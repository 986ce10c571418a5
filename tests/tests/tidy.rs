//! Tidy: no time arithmetic that can panic outside the one helper that
//! saturates (`mcp_transport::time::later`).
//!
//! `Instant + Duration` panics past the clock's range, `Instant - Duration`
//! before its start, and `Duration` `+`, `-` and `*` on overflow; a host's
//! `Duration::MAX`, a configuration's timeout or a server's interval
//! reaches all of them. The scan reads the library and CLI sources
//! (`crates/*/src`, test modules left out) without types, so it knows an
//! instant or a duration by how the same file declares the name (`x:
//! Instant`, `let x = Instant::now()`, `x: Duration`, …) or by its
//! constructor (`Instant::now()`, `Duration::from_secs(…)`), and fails
//! naming the file and line of every `+`, `-`, `*`, `+=`, `-=` or
//! `checked_add`/`add` on one. Saturating forms (`later`,
//! `saturating_add`, `saturating_sub`, `saturating_duration_since`) pass.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The one file allowed to add to an instant.
const HELPER: &str = "crates/mcp-transport/src/time.rs";

#[derive(Debug, Clone, PartialEq, Eq)]
struct Token {
    text: String,
    line: usize,
}

/// `source` as tokens (identifiers, numbers, punctuation; `::`, `+=`,
/// `-=`, `*=`, `->` and `=>` as one), comments, strings and characters
/// left out.
fn tokens(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if c == 'r'
            && (at(i + 1) == '"' || (at(i + 1) == '#' && matches!(at(i + 2), '"' | '#')))
        {
            // A raw string: r"…", r#"…"#, …
            let mut j = i + 1;
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '\n' {
                    line += 1;
                }
                if chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push(Token {
                text: "\"\"".into(),
                line,
            });
            i = j;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                if chars[j] == '\\' {
                    j += 1;
                }
                if at(j) == '\n' {
                    line += 1;
                }
                j += 1;
            }
            out.push(Token {
                text: "\"\"".into(),
                line,
            });
            i = j + 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), else a lifetime.
            if at(i + 1) == '\\' {
                let mut j = i + 2;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
            out.push(Token {
                text: "'".into(),
                line,
            });
        } else if c.is_alphanumeric() || c == '_' {
            let mut j = i;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            out.push(Token {
                text: chars[i..j].iter().collect(),
                line,
            });
            i = j;
        } else {
            let two: String = [c, at(i + 1)].iter().collect();
            let len = if matches!(
                two.as_str(),
                "::" | "+=" | "-=" | "*=" | "->" | "=>" | "==" | "!=" | "<=" | ">=" | "&&" | "||"
            ) {
                2
            } else {
                1
            };
            out.push(Token {
                text: chars[i..i + len].iter().collect(),
                line,
            });
            i += len;
        }
    }
    out
}

/// The tokens without `#[cfg(test)] mod name { … }` blocks.
fn without_test_modules(tokens: Vec<Token>) -> Vec<Token> {
    let texts: Vec<&str> = tokens.iter().map(|t| t.text.as_str()).collect();
    let mut keep = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let test_mod = texts.get(i..i + 10).is_some_and(|w| {
            w[..7] == ["#", "[", "cfg", "(", "test", ")", "]"] && w[7] == "mod" && w[9] == "{"
        });
        if test_mod {
            let mut depth = 0;
            let mut j = i + 9;
            while j < tokens.len() {
                match texts[j] {
                    "{" => depth += 1,
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            i = j + 1;
        } else {
            keep.push(tokens[i].clone());
            i += 1;
        }
    }
    keep
}

/// Names the file declares as instants and as durations.
fn declared(tokens: &[Token]) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut instants = BTreeSet::new();
    let mut durations = BTreeSet::new();
    let t = |i: usize| tokens.get(i).map_or("", |t| t.text.as_str());
    for i in 0..tokens.len() {
        // `name: [&][Option<][path::]Type`
        if t(i + 1) == ":" && t(i) != ":" && t(i + 2) != ":" {
            let mut j = i + 2;
            while matches!(t(j), "&" | "Option" | "<" | "mut") {
                j += 1;
            }
            while t(j + 1) == "::" {
                j += 2;
            }
            match t(j) {
                "Instant" | "SystemTime" => {
                    instants.insert(t(i).to_owned());
                }
                "Duration" => {
                    durations.insert(t(i).to_owned());
                }
                _ => {}
            }
        }
        // `let [mut] name = [path::]Instant::now()` or `= later(…)`
        if t(i) == "let" {
            let name = if t(i + 1) == "mut" { i + 2 } else { i + 1 };
            if t(name + 1) == "=" {
                let mut j = name + 2;
                while t(j + 1) == "::" {
                    j += 2;
                }
                let init = t(j);
                let now_call =
                    matches!(init, "now") && matches!(t(j - 2), "Instant" | "SystemTime");
                // `let x = self.clock.now();` / `.wall_now();`
                let mut k = name + 2;
                while !matches!(t(k), ";" | "" | "{") {
                    k += 1;
                }
                let clock_call = t(k) == ";"
                    && t(k - 1) == ")"
                    && t(k - 2) == "("
                    && matches!(t(k - 3), "now" | "wall_now");
                if now_call || clock_call || matches!(init, "later" | "later_tokio" | "later_wall")
                {
                    instants.insert(t(name).to_owned());
                }
                if t(j - 2) == "Duration" && j >= 2 {
                    durations.insert(t(name).to_owned());
                }
            }
        }
    }
    (instants, durations)
}

/// Lines of `source` (as `line: what`) with time arithmetic that can
/// panic.
fn findings(source: &str) -> Vec<String> {
    let tokens = without_test_modules(tokens(source));
    let (instants, durations) = declared(&tokens);
    let t = |i: usize| tokens.get(i).map_or("", |t| t.text.as_str());
    let mut out = Vec::new();
    let mut lines = BTreeSet::new();
    let mut flag = |i: usize, what: &str| {
        let line = tokens[i].line;
        if lines.insert(line) {
            out.push(format!("{line}: {what}"));
        }
    };
    for i in 0..tokens.len() {
        let word = t(i);
        // The end of an operand naming a time: a declared name (not a
        // method or a path segment), `Instant::now()`, or a `Duration`
        // constructor.
        let named = !matches!(t(i + 1), "(" | "::" | "!") && t(i.wrapping_sub(1)) != "::";
        let is_instant_name = named && instants.contains(word);
        let is_duration_name = named && durations.contains(word);
        let now_call = word == "now" && matches!(t(i.wrapping_sub(2)), "Instant" | "SystemTime");
        let duration_path = t(i.wrapping_sub(2)) == "Duration" && t(i.wrapping_sub(1)) == "::";
        let operand_end = if (now_call || duration_path) && t(i + 1) == "(" {
            let mut depth = 0;
            let mut j = i + 1;
            while j < tokens.len() {
                match t(j) {
                    "(" => depth += 1,
                    ")" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            Some(j)
        } else if is_instant_name || is_duration_name || duration_path || word == "UNIX_EPOCH" {
            Some(i)
        } else {
            None
        };
        let Some(end) = operand_end else { continue };
        let instant = is_instant_name || now_call || word == "UNIX_EPOCH";
        let kind = if instant { "an instant" } else { "a duration" };
        let after = t(end + 1);
        let before = t(i.wrapping_sub(1));
        // Where the operand starts: `Duration::x`, `Instant::now`, `self.x`.
        let two_before =
            duration_path || now_call || before == "." && t(i.wrapping_sub(2)) == "self";
        let starts = if two_before { i.wrapping_sub(2) } else { i };
        let before_start = t(starts.wrapping_sub(1));
        if matches!(after, "+" | "+=" | "-" | "-=" | "*" | "*=") {
            // `instant - instant` saturates; `instant - duration` does not.
            let next = t(end + 2);
            let minus_instant = instant
                && after == "-"
                && (instants.contains(next)
                    || next == "Instant"
                    || next == "self" && instants.contains(t(end + 4)));
            if !minus_instant {
                flag(i, &format!("`{after}` on {kind} (`{word}`)"));
            }
        }
        // `*x` and `-x` after an operator or an opening are a deref and a
        // negation, not arithmetic.
        let prev = t(starts.wrapping_sub(2));
        let binary = prev == ")"
            || prev == "]"
            || prev
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let assigning = matches!(before_start, "+=" | "-=");
        if (assigning || binary && matches!(before_start, "+" | "-" | "*"))
            && !instant
            && after != "."
        {
            flag(i, &format!("`{before_start}` with a duration (`{word}`)"));
        }
        if after == "."
            && instant
            && matches!(
                t(end + 2),
                "checked_add" | "checked_sub" | "add" | "sub" | "add_assign"
            )
        {
            flag(i, &format!("`{}` on an instant (`{word}`)", t(end + 2)));
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_time_arithmetic_outside_the_saturating_helper() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    files.sort();
    assert!(files.len() > 50, "found only {} files", files.len());
    let helper = root.join(HELPER);
    assert!(files.contains(&helper), "{HELPER} is missing");
    let mut all = Vec::new();
    for file in files.iter().filter(|f| **f != helper) {
        let source = std::fs::read_to_string(file).unwrap();
        let shown = file.strip_prefix(root).unwrap().display().to_string();
        all.extend(
            findings(&source)
                .into_iter()
                .map(|f| format!("{shown}:{f}")),
        );
    }
    assert!(
        all.is_empty(),
        "time arithmetic that can panic; use mcp_transport::time::later or saturating_*:\n{}",
        all.join("\n")
    );
}

/// The scan finds what it must and passes what saturates.
#[test]
fn the_scan_finds_every_form() {
    #[track_caller]
    fn check(source: &str, want: &[&str]) {
        let got = findings(source);
        let got: Vec<&str> = got.iter().map(|f| f.split(':').next().unwrap()).collect();
        assert_eq!(got, want, "{source}\n{:?}", findings(source));
    }
    check("fn f() { let d = Instant::now() + grace; }", &["1"]);
    check(
        "fn f() { let d = tokio::time::Instant::now() + grace; }",
        &["1"],
    );
    check(
        "fn f(at: Instant, by: Duration) -> Instant {\n at + by\n}",
        &["2"],
    );
    check(
        "fn f(at: Instant) {\n let x = at.checked_add(d);\n}",
        &["2"],
    );
    check(
        "struct S { at: Option<Instant> }\nfn f(s: S) { s.at += d; }",
        &["2"],
    );
    check(
        "struct S { started: Instant, grace: Duration }\nfn f(&self) { let x = self.started\n - self.grace; }",
        &["2", "3"],
    );
    check(
        "struct S { a: Instant, b: Instant }\nfn f(&self) -> Duration { self.a - self.b }",
        &[],
    );
    check("fn f() { let x = GRACE + Duration::from_secs(1); }", &["1"]);
    check("fn f() { let x = Duration::from_secs(1) * n; }", &["1"]);
    check("fn f(t: Duration) { let x = t * 2; }", &["1"]);
    check(
        "fn f() { let now = Instant::now();\n let x = now\n + y; }",
        &["2"],
    );
    check("fn f() { let w = SystemTime::UNIX_EPOCH + d; }", &["1"]);
    check(
        "fn f(&self) { let w = self.clock.wall_now();\n w.checked_add(d); }",
        &["2"],
    );
    check(
        "fn f(p: Duration) { let x = -p; let y = f(*p); let z = a\n * p; }",
        &["2"],
    );
    // Saturating forms, instant differences, and text that only looks
    // like arithmetic.
    check(
        "fn f(at: Instant, by: Duration) { later(at, by); by.saturating_add(by); }",
        &[],
    );
    check(
        "fn f(a: Instant, b: Instant) { let d = a - b; let e = a.duration_since(b); }",
        &[],
    );
    check("fn f() { let s = \"now + grace\"; // at + by\n }", &[]);
    check("fn f(n: usize) { let m = n + 1; }", &[]);
    check(
        "#[cfg(test)]\nmod tests {\n fn f(at: Instant) { at + d; }\n}",
        &[],
    );
    check("fn f(t: Duration) -> u64 { t.as_secs() + 1 }", &[]);
    check("fn f(t: Duration) -> u64 { 1 + t.as_secs() }", &[]);
}
