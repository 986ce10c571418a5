//! Nothing from outside drives a terminal, through any sink: one hostile
//! stdio server (`mcp-hostile-text-server`) quotes a string of each
//! control class in a tool result, a tool error, an elicitation, a
//! refused `server/discover` (logged at `-vv`) and an invalid message
//! (a default-level warning), and every sink the CLI writes it to is
//! checked for raw characters of the class: stdout, stderr notes, the
//! error line, log lines at each verbosity, `--raw`, `--json`, and a real
//! pseudo-terminal on stdin, stdout and stderr where the CLI asks its
//! questions and draws its live lines.
//!
//! Long text and repeated notes are bounded: each line has a ceiling, a
//! cut says how much was left out, and 2,000 elicitations print three
//! notes and a count.

#![allow(clippy::expect_used)]
#![cfg(unix)]

mod support;

use std::io::{Read as _, Write as _};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::{Run, Tree, test_server};

/// A class of characters that must never reach a terminal raw, with
/// several members.
struct Class {
    name: &'static str,
    members: &'static [&'static str],
}

const CLASSES: &[Class] = &[
    Class {
        name: "c0",
        members: &[
            "\u{0}", "\u{7}", "\u{8}", "a\rb", "\u{e}", "\u{c}", "\u{7f}", "x\ty", "\u{1a}",
        ],
    },
    Class {
        name: "csi",
        members: &[
            "\u{1b}[2J",
            "\u{1b}[31mred",
            "\u{1b}[?1049h",
            "\u{1b}[1;1H",
            "\u{1b}c",
            "\u{1b}[6n",
        ],
    },
    Class {
        name: "osc",
        members: &[
            "\u{1b}]0;pwned\u{7}",
            "\u{1b}]52;c;cHduZWQ=\u{7}",
            "\u{1b}]8;;http://evil.example/\u{1b}\\link\u{1b}]8;;\u{1b}\\",
            "\u{1b}]2;title\u{1b}\\",
        ],
    },
    Class {
        name: "c1",
        members: &[
            "\u{9b}2J",
            "\u{9d}0;t\u{9c}",
            "\u{85}",
            "\u{90}q\u{9c}",
            "\u{80}",
        ],
    },
    Class {
        name: "bidi",
        members: &[
            "\u{202e}txt.exe",
            "\u{202d}",
            "\u{202a}",
            "\u{2066}x\u{2069}",
            "\u{2067}",
            "\u{2068}",
            "\u{200f}",
            "\u{200e}",
            "\u{61c}",
            "\u{2028}",
        ],
    },
    Class {
        name: "tags",
        members: &[
            "ok\u{e0001}",
            "\u{e0072}\u{e006d}\u{e0020}\u{e002d}\u{e0072}\u{e0066}",
            "\u{e007f}",
            "\u{e0041}",
        ],
    },
    Class {
        name: "soft-hyphen",
        members: &["pay\u{ad}pal", "\u{ad}", "rm\u{ad}\u{ad}-rf"],
    },
    Class {
        name: "zero-width",
        members: &[
            "a\u{200b}b",
            "\u{200c}",
            "\u{200d}",
            "\u{2060}",
            "\u{2063}",
            "\u{feff}",
            "\u{180e}",
            "\u{3164}",
            "x\u{fe0f}\u{fe01}\u{fe02}",
            "\u{e0100}",
        ],
    },
];

/// What the server says, and how it is marked so each sink can be found.
fn hostile_text(class: &Class) -> String {
    format!("mark-{} {} end", class.name, class.members.join(" "))
}

/// Each character of `text` with whether a terminal must not get it raw:
/// every control (a newline ends a line and is the CLI's own), every
/// non-ASCII character of the classes above, and a variation selector
/// that does not directly follow a character it can modify.
fn flagged(text: &str) -> Vec<(char, bool)> {
    let selector = |c: char| matches!(c, '\u{fe00}'..='\u{fe0f}');
    let listed = |c: char| {
        !c.is_ascii()
            && !selector(c)
            && CLASSES
                .iter()
                .any(|class| class.members.iter().any(|member| member.contains(c)))
    };
    let mut out: Vec<(char, bool)> = Vec::new();
    for c in text.chars() {
        let orphan = selector(c)
            && out
                .last()
                .is_none_or(|&(prev, flagged)| flagged || selector(prev));
        out.push((c, (c.is_control() && c != '\n') || listed(c) || orphan));
    }
    out
}

/// The characters of `text` a terminal must not get raw.
fn raw_controls(text: &str) -> Vec<char> {
    flagged(text)
        .into_iter()
        .filter_map(|(c, flagged)| flagged.then_some(c))
        .collect()
}

/// The human spelling of `text`, computed independently of the CLI.
fn spelled(text: &str) -> String {
    let mut out = String::new();
    for (c, flagged) in flagged(text) {
        match c {
            _ if !flagged => out.push(c),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0'..='\u{1f}' | '\u{7f}' => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            _ => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    out
}

/// One place the CLI writes outside text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sink {
    /// A tool's text result, human output on stdout.
    Stdout,
    /// The note for a declined elicitation, on stderr.
    Note,
    /// The `error:` line for a tool call the server refused.
    ErrorLine,
    /// The warning quoting an invalid message, at each verbosity.
    Log(u8),
    /// `call --raw`, human.
    Raw,
    /// `--json call`.
    Json,
    /// `--json call --raw`.
    JsonRaw,
    /// Stdin, stdout and stderr on a pseudo-terminal: the url question
    /// and the result, as a person sees them.
    Terminal,
}

const TOOL: &str = "mcp__h__echo";

impl Sink {
    fn server_args(self) -> Vec<&'static str> {
        match self {
            Sink::Note => vec!["--elicit", "1"],
            Sink::ErrorLine | Sink::Log(_) => vec!["--fail"],
            Sink::Terminal => vec!["--url-bytes", "300"],
            _ => vec![],
        }
    }

    fn cli_args(self) -> Vec<&'static str> {
        let verbose: &[&str] = match self {
            Sink::Log(1) => &["-v"],
            Sink::Log(2) => &["-vv"],
            Sink::Log(3) => &["-vvv"],
            _ => &[],
        };
        let mut args: Vec<&str> = verbose.to_vec();
        if matches!(self, Sink::Json | Sink::JsonRaw) {
            args.push("--json");
        }
        args.extend(["call", TOOL]);
        if matches!(self, Sink::Raw | Sink::JsonRaw) {
            args.push("--raw");
        }
        args
    }
}

/// A tree whose one project server is the hostile server saying `text`.
fn tree(text: &str, repeat: usize, extra: &[&str]) -> Tree {
    let tree = Tree::new("empty");
    let server = test_server("mcp-hostile-text-server");
    let text = serde_json::to_string(text).expect("json");
    let repeat = repeat.to_string();
    let mut args = vec!["--text-json", &text, "--repeat", &repeat];
    args.extend(extra);
    tree.write(
        "project/.mcp.json",
        &serde_json::json!({"mcpServers": {"h": {"command": server, "args": args}}}).to_string(),
    );
    tree.write(
        "home/.claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    tree
}

/// Runs the CLI with stdin, stdout and stderr on one pseudo-terminal,
/// answering `answer` to the first question; everything the terminal
/// received is the run's stderr (stdout is empty). The line discipline's
/// `\r\n` is read back as `\n`.
fn on_terminal(tree: &Tree, args: &[&str], question: &str, answer: &str) -> Run {
    let pty = nix::pty::openpty(None, None).expect("openpty");
    let mut command = tree.std_command();
    command
        .args(args)
        .env("TERM", "xterm")
        .stdin(pty.slave.try_clone().expect("dup"))
        .stdout(pty.slave.try_clone().expect("dup"))
        .stderr(pty.slave.try_clone().expect("dup"));
    let mut child = command.spawn().expect("run mcp-cli");
    drop(command);
    drop(pty.slave);
    let mut master = std::fs::File::from(pty.master);
    let seen = Arc::new(Mutex::new(Vec::<u8>::new()));
    let reader = {
        let mut master = master.try_clone().expect("dup");
        let seen = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buffer = vec![0_u8; 1 << 16];
            // Ends with EIO once the child has closed the terminal.
            while let Ok(n @ 1..) = master.read(&mut buffer) {
                seen.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(&buffer[..n]);
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut answered = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        let text =
            String::from_utf8_lossy(&seen.lock().unwrap_or_else(|e| e.into_inner())).into_owned();
        if !answered && text.contains(question) {
            master
                .write_all(format!("{answer}\n").as_bytes())
                .expect("type");
            answered = true;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mcp-cli {args:?} did not finish on the terminal; it showed:\n{text:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(master);
    let _ = reader.join();
    let shown = String::from_utf8_lossy(&seen.lock().unwrap_or_else(|e| e.into_inner()))
        .replace("\r\n", "\n");
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::new(),
        stderr: shown,
    }
}

/// What the terminal got with the CLI's own live-line sequences taken
/// out (no class member spells them).
fn without_own_sequences(text: &str) -> String {
    let mut out = text.replace("\r\u{1b}[2K", "");
    for lines in 1..64 {
        out = out.replace(&format!("\u{1b}[{lines}F"), "");
    }
    out
}

fn run(sink: Sink, text: &str, repeat: usize) -> Run {
    let tree = tree(text, repeat, &sink.server_args());
    let args = sink.cli_args();
    if sink == Sink::Terminal {
        let mut run = on_terminal(&tree, &args, "[y/N]", "n");
        run.stderr = without_own_sequences(&run.stderr);
        run
    } else {
        tree.run(&args)
    }
}

/// The line of `output` that holds `needle`, or a failure naming the sink.
#[track_caller]
fn line_with<'a>(what: &str, output: &'a str, needle: &str, also: &str) -> &'a str {
    output
        .lines()
        .find(|line| line.contains(needle) && line.contains(also))
        .unwrap_or_else(|| panic!("{what}: no line with {needle:?} and {also:?} in\n{output}"))
}

/// Whether some string in `value` is exactly `text`.
fn holds(value: &serde_json::Value, text: &str) -> bool {
    match value {
        serde_json::Value::String(s) => s == text,
        serde_json::Value::Array(items) => items.iter().any(|item| holds(item, text)),
        serde_json::Value::Object(map) => map.values().any(|item| holds(item, text)),
        _ => false,
    }
}

/// The JSON document a run printed, which holds the hostile text exactly
/// as the server sent it.
#[track_caller]
fn json_holds(what: &str, stdout: &str, text: &str) -> serde_json::Value {
    let json: serde_json::Value = serde_json::from_str(stdout)
        .unwrap_or_else(|err| panic!("{what}: stdout is not JSON ({err}):\n{stdout}"));
    assert!(
        holds(&json["result"], text),
        "{what}: the JSON result does not hold the text exactly:\n{stdout}"
    );
    json
}

/// Runs `sink` against the server saying `class`'s members and checks
/// that nothing of the class reached the output raw, that the sink was
/// reached (the marked text is where the sink puts it), and that it reads
/// as the server sent it: escaped for people, exact in JSON.
#[track_caller]
fn check(sink: Sink, class: &Class) {
    let text = hostile_text(class);
    let what = format!("{sink:?} × {}", class.name);
    let run = run(sink, &text, 1);
    let both = format!("{}{}", run.stdout, run.stderr);
    let raw = raw_controls(&both);
    assert!(
        raw.is_empty(),
        "{what}: raw {raw:?} reached the output\nstdout: {:?}\nstderr: {:?}",
        run.stdout,
        run.stderr
    );
    let mark = format!("mark-{}", class.name);
    let human = spelled(&text);
    match sink {
        Sink::Stdout => {
            assert!(
                run.stdout.contains(&human),
                "{what}: {human:?} not in\n{}",
                run.stdout
            );
        }
        Sink::Note => {
            line_with(&what, &run.stderr, "note: server", &human);
        }
        Sink::ErrorLine => {
            line_with(&what, &run.stderr, "error:", &human);
        }
        Sink::Log(level) => {
            let warning = line_with(&what, &run.stderr, "WARN", "skipping an invalid message");
            assert!(warning.contains(&mark), "{what}: {warning}");
            if level >= 1 {
                line_with(&what, &run.stderr, "INFO", "not JSON");
            }
            if level >= 2 {
                line_with(&what, &run.stderr, "DEBUG", &mark);
            }
            if level >= 3 {
                line_with(&what, &run.stderr, "TRACE", "server stderr");
            }
        }
        Sink::Raw => {
            let (human_part, raw_part) = run
                .stdout
                .split_once("--- raw result\n")
                .unwrap_or_else(|| panic!("{what}: no raw result in\n{}", run.stdout));
            assert!(human_part.contains(&human), "{what}: {human_part}");
            let raw: serde_json::Value = serde_json::from_str(raw_part)
                .unwrap_or_else(|err| panic!("{what}: the raw result is not JSON ({err})"));
            assert_eq!(
                raw["structuredContent"]["text"].as_str(),
                Some(text.as_str()),
                "{what}"
            );
            assert_eq!(raw["_meta"]["note"].as_str(), Some(text.as_str()), "{what}");
        }
        Sink::Json => {
            json_holds(&what, &run.stdout, &text);
        }
        Sink::JsonRaw => {
            let json = json_holds(&what, &run.stdout, &text);
            assert_eq!(
                json["raw"]["structuredContent"]["text"].as_str(),
                Some(text.as_str()),
                "{what}"
            );
        }
        Sink::Terminal => {
            // The question's message is the line after its heading.
            let asked = run
                .stderr
                .split_once("asks you to open a web page:\n")
                .and_then(|(_, after)| after.lines().next())
                .unwrap_or_else(|| panic!("{what}: no question in {:?}", run.stderr));
            assert_eq!(asked, format!("  {human}"), "{what}");
            // The result printed after the question, on the terminal.
            assert!(
                run.stderr.matches(human.as_str()).count() >= 2,
                "{what}: {:?}",
                run.stderr
            );
        }
    }
}

#[track_caller]
fn table(sinks: &[Sink]) {
    for sink in sinks {
        for class in CLASSES {
            check(*sink, class);
        }
    }
}

#[test]
fn stdout_notes_and_errors_never_carry_raw_controls() {
    table(&[Sink::Stdout, Sink::Note, Sink::ErrorLine]);
}

#[test]
fn log_lines_at_every_verbosity_never_carry_raw_controls() {
    table(&[Sink::Log(0), Sink::Log(1), Sink::Log(2), Sink::Log(3)]);
}

#[test]
fn raw_and_json_output_are_exact_and_never_carry_raw_controls() {
    table(&[Sink::Raw, Sink::Json, Sink::JsonRaw]);
}

#[test]
fn a_real_terminal_never_gets_raw_controls() {
    table(&[Sink::Terminal]);
}

/// The longest line of `text`, in characters.
fn longest_line(text: &str) -> usize {
    text.lines()
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0)
}

#[test]
fn long_text_is_cut_in_every_human_sink_with_what_was_left_out() {
    // 1 MiB of text in every place, and a 4 MiB url on a terminal.
    #[track_caller]
    fn check_long(sink: Sink, stdout_ceiling: usize, stderr_ceiling: usize, cut_in: &str) {
        let run = run(sink, "y", 1 << 20);
        let what = format!("{sink:?} × long text");
        assert!(
            longest_line(&run.stdout) <= stdout_ceiling,
            "{what}: a stdout line of {} characters",
            longest_line(&run.stdout)
        );
        assert!(
            longest_line(&run.stderr) <= stderr_ceiling,
            "{what}: a stderr line of {} characters",
            longest_line(&run.stderr)
        );
        let cut = if cut_in == "stdout" {
            &run.stdout
        } else {
            &run.stderr
        };
        assert!(
            cut.contains("… [") && cut.contains(" more]"),
            "{what}: no note of what was left out in {cut_in}"
        );
    }
    // A line quoting outside values: each value keeps 4,096 characters,
    // a stderr line at most 16,384; a tool's text was already cut by the
    // catalog at 100,000 bytes.
    let stdout_ceiling = 100_000;
    let stderr_ceiling = 16_384 + 32;
    check_long(Sink::Note, stdout_ceiling, stderr_ceiling, "stderr");
    check_long(Sink::ErrorLine, stdout_ceiling, stderr_ceiling, "stderr");
    for level in 0..=2 {
        check_long(Sink::Log(level), stdout_ceiling, stderr_ceiling, "stderr");
        // A log line is one outside value.
        let run = run(Sink::Log(level), "y", 1 << 20);
        let warning = line_with("long log line", &run.stderr, "WARN", "invalid message");
        assert!(warning.chars().count() <= 4_096 + 32, "{}", warning.len());
    }
    // A tool's text was already cut by the catalog at 100,000 bytes; the
    // stderr warning says so.
    let run = run(Sink::Stdout, "y", 1 << 20);
    assert!(
        longest_line(&run.stdout) <= 100_000,
        "{}",
        longest_line(&run.stdout)
    );
    assert!(run.stderr.contains("the result was cut"), "{}", run.stderr);

    let tree = tree("y", 1, &["--url-bytes", &(4 << 20).to_string()]);
    let run = on_terminal(&tree, &["call", TOOL], "[y/N]", "n");
    let url = line_with("4 MiB url", &run.stderr, "url:", "https://");
    assert!(url.chars().count() <= 4_096 + 32, "{}", url.len());
    assert!(url.ends_with(" MiB more]"), "{}", &url[url.len() - 40..]);
    assert!(
        run.stderr.len() < 64 * 1024,
        "{} bytes on the terminal",
        run.stderr.len()
    );
}

#[test]
fn repeated_notes_are_counted_after_the_first_few() {
    let check_count = |elicit: usize, notes: usize, summary: Option<&str>| {
        let tree = tree("Name?", 1, &["--elicit", &elicit.to_string()]);
        let run = tree.run(&["call", TOOL]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let shown = run
            .stderr
            .lines()
            .filter(|line| line.starts_with("note: server \"h\" asked for input"))
            .count();
        assert_eq!(shown, notes, "{elicit} elicitations:\n{}", run.stderr);
        match summary {
            Some(summary) => assert!(
                run.stderr.contains(summary),
                "{elicit} elicitations: no {summary:?} in\n{}",
                run.stderr
            ),
            None => assert!(!run.stderr.contains("more like this"), "{}", run.stderr),
        }
        assert!(
            run.stderr.len() < 4096,
            "{} bytes of stderr",
            run.stderr.len()
        );
    };
    check_count(1, 1, None);
    check_count(3, 3, None);
    check_count(
        4,
        3,
        Some("note: … and 1 more like this (input requests declined)"),
    );
    check_count(
        2_000,
        3,
        Some("note: … and 1997 more like this (input requests declined)"),
    );
}
