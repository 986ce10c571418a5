//! Hostile config text through the real loader: one table per class of
//! input a project, a plugin or a hand-edited file can hold, several rows
//! each, every row through one `check` helper.
//!
//! Classes: env keys that are not names and refused keys (issue 12 item 2),
//! deep nesting in any file (6), server names with control characters and
//! names every verb can manage (12), duplicate keys (13), surrogate escapes
//! and a byte order mark (14), header, url and env fields a check must
//! refuse (15), credentials in rendered urls and signatures (16).

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use mcp_config::env::is_dangerous_env_key;
use mcp_config::{
    CheckReport, Diagnostic, Level, LoadOptions, LoadedConfig, TransportConfig, child_env, load,
};
use serde_json::{Value, json};

/// A temporary home, project, OpenClaw home and one plugin root.
struct Dirs {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for sub in ["home/.claude", "project/.claude", "openclaw", "plugin"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        Dirs { _dir: dir, root }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn write(&self, relative: &str, text: impl AsRef<[u8]>) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn options(&self, env: &[(&str, &str)]) -> LoadOptions {
        LoadOptions::default()
            .with_home(self.path("home"))
            .with_project(self.path("project"))
            .with_openclaw_home(self.path("openclaw"))
            .with_plugin_roots(vec![self.path("plugin")])
            .with_env(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())))
            .with_trust_project_servers(true)
    }

    fn load(&self, env: &[(&str, &str)]) -> LoadedConfig {
        load(&self.options(env))
    }
}

/// The diagnostics at `level` and above.
fn at_least(config: &LoadedConfig, level: Level) -> Vec<&Diagnostic> {
    config
        .diagnostics
        .iter()
        .filter(|d| d.level >= level)
        .collect()
}

fn errors(config: &LoadedConfig) -> Vec<&Diagnostic> {
    at_least(config, Level::Error)
}

/// One user-scope server `s` whose entry is `entry`.
fn user_entry(dirs: &Dirs, entry: &Value) {
    dirs.write(
        "home/.claude.json",
        json!({"mcpServers": {"s": entry}}).to_string(),
    );
}

fn stdio_env(config: &LoadedConfig, name: &str) -> Option<BTreeMap<String, String>> {
    match &config.server(name)?.config.transport {
        TransportConfig::Stdio(s) => Some(s.env.clone()),
        _ => None,
    }
}

// ---------------------------------------------------------------- item 2

#[test]
fn env_keys_that_are_not_names_are_errors_and_never_kept() {
    #[track_caller]
    fn check(key: &str) {
        let dirs = Dirs::new();
        user_entry(
            &dirs,
            &json!({"command": "srv", "env": {key: "x", "SAFE_SETTING": "1"}}),
        );
        let config = dirs.load(&[]);
        let errors = errors(&config);
        assert_eq!(errors.len(), 1, "{key:?}: {:#?}", config.diagnostics);
        let d = errors[0];
        assert_eq!(d.server.as_deref(), Some("s"), "{key:?}");
        assert_eq!(d.field.as_deref(), Some("env"), "{key:?}");
        assert!(d.line.is_some() && d.column.is_some(), "{key:?}: {d:?}");
        assert!(
            d.message.contains("not a variable name"),
            "{key:?}: {}",
            d.message
        );
        assert!(
            !d.message.contains('\0'),
            "{key:?}: raw NUL in {}",
            d.message
        );
        let env = stdio_env(&config, "s").expect("the entry stays usable");
        assert_eq!(
            env.keys().collect::<Vec<_>>(),
            ["SAFE_SETTING"],
            "{key:?}: only the name reaches the entry's env"
        );
        assert!(CheckReport { config }.failed(false), "{key:?}");
    }
    for key in [
        "PYTHONPATH=/srv/hook:",
        "A=B=C",
        "NODE_OPTIONS=--require /x.js",
        "A B",
        "A\u{0}B",
        "9LIVES",
        "",
        "TOKEN-X",
        " PATH ",
        "ÄPFEL",
        "PATH\n",
    ] {
        check(key);
    }
}

#[test]
fn refused_env_keys_cover_every_common_interpreter_and_launcher() {
    #[track_caller]
    fn check(key: &str, refused: bool) {
        assert_eq!(is_dangerous_env_key(key), refused, "{key}");
        if !refused {
            return;
        }
        let dirs = Dirs::new();
        user_entry(&dirs, &json!({"command": "srv", "env": {key: "x"}}));
        let config = dirs.load(&[]);
        let errors = errors(&config);
        assert_eq!(errors.len(), 1, "{key}: {:#?}", config.diagnostics);
        assert_eq!(errors[0].field.as_deref(), Some("env"), "{key}");
        assert!(stdio_env(&config, "s").unwrap().is_empty(), "{key}");
    }
    for key in [
        // the floor of REFERENCE §1.6
        "LD_PRELOAD",
        "DYLD_INSERT_LIBRARIES",
        "NODE_OPTIONS",
        "PYTHONPATH",
        "BASH_ENV",
        "SSLKEYLOGFILE",
        // Node, npm, npx, yarn, corepack, Electron
        "NPM_CONFIG_NODE_OPTIONS",
        "npm_config_script_shell",
        "NPM_CONFIG_USERCONFIG",
        "NPM_CONFIG_REGISTRY",
        "YARN_RC_FILENAME",
        "COREPACK_NPM_REGISTRY",
        "ELECTRON_RUN_AS_NODE",
        // Python, pip, uv
        "PYTHONWARNINGS",
        "PYTHONUSERBASE",
        "PYTHONINSPECT",
        "PIP_INDEX_URL",
        "UV_INDEX_URL",
        "UV_PYTHON",
        // Perl, Ruby
        "PERL5DB",
        "PERLIO",
        "GEM_PATH",
        "BUNDLE_GEMFILE",
        // JVM, .NET
        "CLASSPATH",
        "JAVA_HOME",
        "MAVEN_OPTS",
        "DOTNET_ADDITIONAL_DEPS",
        "CORECLR_ENABLE_PROFILING",
        // Lua (versioned names), PHP, R, Tcl
        "LUA_INIT_5_4",
        "LUA_PATH_5_3",
        "PHPRC",
        "PHP_INI_SCAN_DIR",
        "R_PROFILE_USER",
        "R_LIBS",
        "TCLLIBPATH",
        // Deno, Bun
        "DENO_DIR",
        "BUN_CONFIG_REGISTRY",
        // shells and programs tools start
        "BASHOPTS",
        "ZDOTDIR",
        "SHELL",
        "EDITOR",
        "PAGER",
        // glibc and the dynamic loader
        "LOCPATH",
        "NLSPATH",
        "GCONV_PATH",
        // Git
        "GIT_SSH_COMMAND",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_KEY_0",
        "GIT_EXEC_PATH",
        "GIT_DIR",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        // OpenSSL
        "OPENSSL_CONF",
        "OPENSSL_ENGINES",
        "OPENSSL_MODULES",
        // where config files are looked up
        "HOME",
        "XDG_CONFIG_HOME",
    ] {
        check(key, true);
    }
    for key in [
        "PATH",
        "TOKEN",
        "NODE_ENV",
        "PYTHONUNBUFFERED",
        "GIT_AUTHOR_NAME",
        "UV_THREADPOOL_SIZE",
        "NPM_TOKEN",
        "RUST_LOG",
        "LDX",
        "JAVA",
    ] {
        check(key, false);
    }
}

#[test]
fn child_env_drops_keys_that_are_not_names_from_a_hand_built_entry() {
    let parent: BTreeMap<String, String> = [("PATH", "/bin")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    for key in [
        "PYTHONPATH=/srv/hook:",
        "A B",
        "A\u{0}B",
        "",
        "1X",
        " TOKEN",
    ] {
        let entry: BTreeMap<String, String> = [(key, "x"), ("TOKEN", "t")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let env = child_env(&parent, &entry, &[]);
        assert_eq!(
            env.keys().map(String::as_str).collect::<Vec<_>>(),
            ["PATH", "TOKEN"],
            "{key:?}"
        );
    }
}

// ---------------------------------------------------------------- item 6

/// `depth` nested containers around a value, built from `open`/`close`.
fn nested(open: &str, close: &str, depth: usize) -> String {
    format!("{}1{}", open.repeat(depth), close.repeat(depth))
}

#[test]
fn deep_nesting_in_any_file_is_one_error_naming_it_and_the_rest_loads() {
    #[track_caller]
    fn check(file: &str, text: &str) {
        let dirs = Dirs::new();
        // A good server elsewhere, which must still load: a project server
        // unless the deep file is the project's own `.mcp.json`.
        let good = if file == "project/.mcp.json" {
            "project/.claude/settings.json"
        } else {
            "project/.mcp.json"
        };
        dirs.write(
            good,
            json!({"mcpServers": {"good": {"command": "srv"}}}).to_string(),
        );
        dirs.write(
            "plugin/.mcp.json",
            r#"{"plugin-good": {"command": "plugin-srv"}}"#,
        );
        dirs.write(file, text);
        let config = dirs.load(&[]);
        let errors = errors(&config);
        assert_eq!(errors.len(), 1, "{file}: {:#?}", config.diagnostics);
        let d = errors[0];
        assert_eq!(d.file.as_deref(), Some(dirs.path(file).as_path()), "{file}");
        assert!(d.line.is_some() && d.column.is_some(), "{file}: {d:?}");
        assert!(d.message.contains("nested deeper"), "{file}: {}", d.message);
        assert!(
            config.server("good").is_some(),
            "{file}: lost the good file"
        );
        if file != "plugin/.mcp.json" {
            assert!(config.server("plugin-good").is_some(), "{file}");
        }
    }
    let arrays = nested("[", "]", 10_000);
    let objects = nested("{\"a\":", "}", 10_000);
    let mixed = nested("[{\"a\":", "}]", 5_000);
    let deep_settings = format!(r#"{{"theme": {arrays}}}"#);
    let deep_servers =
        format!(r#"{{"mcpServers": {{"s": {{"command": "x", "args": {arrays}}}}}}}"#);
    let deep_plugin_servers = format!(r#"{{"deep": {{"command": "x", "env": {objects}}}}}"#);
    for (file, text) in [
        ("project/.mcp.json", arrays.as_str()),
        ("project/.mcp.json", deep_servers.as_str()),
        ("project/.mcp.json", objects.as_str()),
        ("home/.claude.json", mixed.as_str()),
        ("home/.claude.json", deep_servers.as_str()),
        ("home/.claude/settings.json", deep_settings.as_str()),
        (
            "project/.claude/settings.local.json",
            deep_settings.as_str(),
        ),
        ("project/.claude.json", objects.as_str()),
        ("openclaw/openclaw.json", deep_settings.as_str()),
        ("plugin/.claude-plugin/plugin.json", deep_settings.as_str()),
        ("plugin/.mcp.json", deep_plugin_servers.as_str()),
    ] {
        check(file, text);
    }
}

#[test]
fn brackets_inside_strings_and_comments_do_not_count_as_nesting() {
    let brackets = "[{".repeat(5_000);
    let text = format!(
        "// {brackets}\n/* {brackets} */\n{{\"mcpServers\": {{\"s\": {{\"command\": \"srv\", \"args\": [\"{brackets}\", '{brackets}', \"\\\"{brackets}\"]}}}}}}"
    );
    let dirs = Dirs::new();
    dirs.write("home/.claude.json", &text);
    let config = dirs.load(&[]);
    assert!(errors(&config).is_empty(), "{:#?}", config.diagnostics);
    assert!(config.server("s").is_some());

    // Real configs nest a handful of levels; 100 is still fine.
    let dirs = Dirs::new();
    let settings = format!(r#"{{"deep": {}}}"#, nested("[", "]", 100));
    dirs.write("home/.claude/settings.json", &settings);
    let config = dirs.load(&[]);
    assert!(errors(&config).is_empty(), "{:#?}", config.diagnostics);
}

// ---------------------------------------------------------------- item 12

#[test]
fn server_names_with_control_characters_are_refused_escaped() {
    #[track_caller]
    fn check(name: &str, shown: &str) {
        let dirs = Dirs::new();
        dirs.write(
            "home/.claude.json",
            json!({"mcpServers": {name: {"command": "srv"}, "good": {"command": "srv"}}})
                .to_string(),
        );
        let config = dirs.load(&[]);
        let errors = errors(&config);
        assert_eq!(errors.len(), 1, "{name:?}: {:#?}", config.diagnostics);
        let d = errors[0];
        assert!(d.line.is_some() && d.column.is_some(), "{name:?}: {d:?}");
        assert!(d.message.contains(shown), "{name:?}: {}", d.message);
        assert!(
            !d.message.chars().any(|c| c.is_control()),
            "{name:?}: raw control character in {:?}",
            d.message
        );
        assert!(config.server(name).is_none(), "{name:?}");
        assert!(config.server("good").is_some(), "{name:?}");
        assert!(
            mcp_config::edit::validate_name(name).is_err(),
            "{name:?}: the verbs must refuse what the loader refuses"
        );
    }
    check("evil\u{1b}[31mred", "evil\\u{1b}[31mred");
    check("two\nlines", "two\\nlines");
    check("tab\there", "tab\\there");
    check("del\u{7f}", "del\\u{7f}");
    check("csi\u{9b}2J", "csi\\u{9b}2J");
    check("bell\u{7}", "bell\\u{7}");
    check("rtl\u{202e}gnp.exe", "rtl\\u{202e}gnp.exe");
    check("zero\u{200b}width", "zero\\u{200b}width");
    check("tag\u{e0041}", "tag\\u{e0041}");
    check("line\u{2028}sep", "line\\u{2028}sep");
}

#[test]
fn every_name_the_loader_accepts_every_verb_accepts() {
    for name in [
        "my server",
        "my.server",
        "über",
        "a_b-c.d",
        "-dash",
        "with/slash",
        "emoji😀",
        "x",
    ] {
        let dirs = Dirs::new();
        dirs.write(
            "home/.claude.json",
            json!({"mcpServers": {name: {"command": "srv"}}}).to_string(),
        );
        let config = dirs.load(&[]);
        assert!(
            errors(&config).is_empty(),
            "{name:?}: {:#?}",
            config.diagnostics
        );
        assert!(config.server(name).is_some(), "{name:?}");
        assert!(
            mcp_config::edit::validate_name(name).is_ok(),
            "{name:?}: loaded, so every verb must accept it"
        );
    }
}

// ---------------------------------------------------------------- item 13

#[test]
fn duplicate_keys_are_reported_with_both_positions() {
    /// `text` in the user's `.claude.json`; expects one diagnostic at
    /// `level` naming `first` and `second` (line:col), and the servers
    /// that load.
    #[track_caller]
    fn check(text: &str, level: Level, first: &str, second: &str, servers: &[&str]) {
        let dirs = Dirs::new();
        dirs.write("home/.claude.json", text);
        let config = dirs.load(&[]);
        let found: Vec<&Diagnostic> = config
            .diagnostics
            .iter()
            .filter(|d| d.message.contains("repeated"))
            .collect();
        assert_eq!(found.len(), 1, "{text}: {:#?}", config.diagnostics);
        let d = found[0];
        assert_eq!(d.level, level, "{text}: {d:?}");
        assert!(
            d.message.contains(first) && d.message.contains(second),
            "{text}: {} must name {first} and {second}",
            d.message
        );
        let loaded: Vec<&str> = config
            .servers
            .iter()
            .map(|s| s.config.name.as_str())
            .collect();
        assert_eq!(loaded, servers, "{text}");
    }
    // the issue's example: the second server map hides the first
    check(
        "{\"mcpServers\": {\"a\": {\"command\": \"x\"}},\n \"mcpServers\": {\"b\": {\"command\": \"y\"}}}",
        Level::Error,
        "1:2",
        "2:2",
        &["b"],
    );
    // inside an entry: the entry is invalid
    check(
        "{\"mcpServers\": {\"s\": {\"command\": \"safe\",\n  \"command\": \"evil\"}}}",
        Level::Error,
        "1:23",
        "2:3",
        &[],
    );
    check(
        "{\"mcpServers\": {\"s\": {\"command\": \"x\", \"env\": {\"T\": \"1\", \"T\": \"2\"}}, \"t\": {\"command\": \"y\"}}}",
        Level::Error,
        "1:47",
        "1:57",
        &["t"],
    );
    check(
        "{\"mcpServers\": {\"s\": {\"url\": \"https://h/mcp\", \"headers\": {\"X\": \"1\",\n\"X\": \"2\"}}}}",
        Level::Error,
        "1:59",
        "2:1",
        &[],
    );
    check(
        "{\"mcpServers\": {\"s\": {\"command\": \"x\", \"args\": [{\"a\": 1, \"a\": 2}]}}}",
        Level::Error,
        "1:49",
        "1:57",
        &[],
    );
    // a repeated server name: that server is invalid
    check(
        "{\"mcpServers\": {\"s\": {\"command\": \"safe\"},\n \"s\": {\"command\": \"evil\"}, \"t\": {\"command\": \"y\"}}}",
        Level::Error,
        "1:17",
        "2:2",
        &["t"],
    );
    // elsewhere: a warning, the last value wins as in JSON.parse
    check(
        "{\"theme\": \"dark\", \"theme\": \"light\", \"mcpServers\": {\"s\": {\"command\": \"x\"}}}",
        Level::Warning,
        "1:2",
        "1:19",
        &["s"],
    );
    check(
        "{\"projects\": {\"/p\": {\"a\": 1},\n\n   \"/p\": {\"a\": 2}}}",
        Level::Warning,
        "1:15",
        "3:4",
        &[],
    );
}

#[test]
fn duplicate_keys_in_settings_and_plugin_files_are_reported_too() {
    let dirs = Dirs::new();
    dirs.write(
        "home/.claude/settings.json",
        "{\"enabledPlugins\": {}, \"enabledPlugins\": {}}",
    );
    dirs.write(
        "plugin/.mcp.json",
        "{\"p\": {\"command\": \"x\", \"command\": \"y\"}, \"q\": {\"command\": \"z\"}}",
    );
    let config = dirs.load(&[]);
    let repeated: Vec<(Level, PathBuf)> = config
        .diagnostics
        .iter()
        .filter(|d| d.message.contains("repeated"))
        .map(|d| (d.level, d.file.clone().unwrap()))
        .collect();
    assert_eq!(
        repeated,
        [
            (Level::Warning, dirs.path("home/.claude/settings.json")),
            (Level::Error, dirs.path("plugin/.mcp.json")),
        ],
        "{:#?}",
        config.diagnostics
    );
    assert!(config.server("p").is_none());
    assert!(config.server("q").is_some());

    // A repeated key in an earlier file of the plugin, patched by a later
    // one, still makes the merged entry invalid.
    let dirs = Dirs::new();
    dirs.write(
        "plugin/.mcp.json",
        "{\"p\": {\"command\": \"x\", \"command\": \"y\"}, \"q\": {\"command\": \"z\"}}",
    );
    dirs.write(
        "plugin/.claude-plugin/plugin.json",
        r#"{"name": "pl", "mcpServers": {"p": {"args": ["1"]}}}"#,
    );
    let config = dirs.load(&[]);
    let errors = errors(&config);
    assert_eq!(errors.len(), 1, "{:#?}", config.diagnostics);
    assert_eq!(errors[0].file, Some(dirs.path("plugin/.mcp.json")));
    assert!(config.server("p").is_none(), "{:#?}", config.servers);
    assert!(config.server("q").is_some());
}

// ---------------------------------------------------------------- item 14

#[test]
fn surrogate_pairs_and_a_byte_order_mark_are_valid_json() {
    /// `text` as the user's `.claude.json`; server `s` must load with
    /// `args` and no error.
    #[track_caller]
    fn check(text: &[u8], name: &str, args: &[&str]) {
        let dirs = Dirs::new();
        dirs.write("home/.claude.json", text);
        let config = dirs.load(&[]);
        assert!(
            errors(&config).is_empty(),
            "{}: {:#?}",
            String::from_utf8_lossy(text),
            config.diagnostics
        );
        let server = config
            .server(name)
            .unwrap_or_else(|| panic!("{name:?} did not load: {:#?}", config.diagnostics));
        let TransportConfig::Stdio(stdio) = &server.config.transport else {
            panic!("not stdio");
        };
        assert_eq!(stdio.args, args, "{}", String::from_utf8_lossy(text));
    }
    check(
        br#"{"mcpServers": {"s": {"command": "x", "args": ["\ud83d\ude00"]}}}"#,
        "s",
        &["😀"],
    );
    check(
        br#"{"mcpServers": {"s": {"command": "x", "args": ["a\uD83D\uDE00b\ud83d\udc4d", "\u00e9"]}}}"#,
        "s",
        &["a😀b👍", "é"],
    );
    // what Python's json.dump writes for an emoji server name
    check(
        br#"{"mcpServers": {"\ud83d\ude00": {"command": "x", "args": []}}}"#,
        "😀",
        &[],
    );
    // an escaped backslash: the text `\ud83d`, not an escape
    check(
        br#"{"mcpServers": {"s": {"command": "x", "args": ["\\ud83d"]}}}"#,
        "s",
        &["\\ud83d"],
    );
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(br#"{"mcpServers": {"s": {"command": "x", "args": ["1"]}}}"#);
    check(&bom, "s", &["1"]);
    let mut both = b"\xEF\xBB\xBF".to_vec();
    both.extend_from_slice(b"// hand-edited\n{\"mcpServers\": {\"s\": {\"command\": \"x\", \"args\": [\"\\ud83d\\ude00\"]}}}");
    check(&both, "s", &["😀"]);
}

#[test]
fn positions_after_a_surrogate_pair_or_a_bom_count_characters_of_the_file() {
    #[track_caller]
    fn check(text: &[u8], line: u32, column: u32) {
        let dirs = Dirs::new();
        dirs.write("home/.claude.json", text);
        let config = dirs.load(&[]);
        let d = config
            .diagnostics
            .iter()
            .find(|d| d.message.contains("unknown field `bogus`"))
            .unwrap_or_else(|| panic!("{:#?}", config.diagnostics));
        assert_eq!((d.line, d.column), (Some(line), Some(column)), "{d:?}");
    }
    check(
        br#"{"mcpServers": {"s": {"command": "\ud83d\ude00\ud83d\ude00", "bogus": 1}}}"#,
        1,
        62,
    );
    check(
        b"\xEF\xBB\xBF{\"mcpServers\": {\"s\": {\"command\": \"x\", \"bogus\": 1}}}",
        1,
        39,
    );
    check(
        b"{\"mcpServers\": {\"s\": {\"command\": \"\\ud83d\\ude00\",\n  \"bogus\": 1}}}",
        2,
        3,
    );
}

#[test]
fn lone_surrogates_make_an_entry_invalid_and_are_replaced_elsewhere() {
    #[track_caller]
    fn check(escape: &str, per_string: usize) {
        let dirs = Dirs::new();
        let text = format!(
            r#"{{"theme": "a{escape}b", "mcpServers": {{"s": {{"command": "x", "args": ["{escape}"]}}, "t": {{"command": "y"}}}}}}"#
        );
        dirs.write("home/.claude.json", &text);
        let config = dirs.load(&[]);
        let lone = |level: Level| {
            config
                .diagnostics
                .iter()
                .filter(|d| d.message.contains("lone surrogate") && d.level == level)
                .collect::<Vec<_>>()
        };
        let (warnings, errors) = (lone(Level::Warning), lone(Level::Error));
        assert_eq!(
            warnings.len(),
            per_string,
            "{text}: {:#?}",
            config.diagnostics
        );
        assert_eq!(
            errors.len(),
            per_string,
            "{text}: {:#?}",
            config.diagnostics
        );
        assert!(warnings.iter().all(|d| d.server.is_none()), "{text}");
        assert!(
            errors
                .iter()
                .all(|d| d.server.as_deref() == Some("s") && d.line == Some(1)),
            "{text}: {errors:?}"
        );
        assert!(config.server("s").is_none(), "{text}");
        assert!(config.server("t").is_some(), "{text}");
    }
    for (escape, per_string) in [
        ("\\ud800", 1),
        ("\\uDBFF", 1),
        ("\\udc00", 1),
        ("\\ud83d\\u0041", 1),
        ("\\ude00\\ud83d", 2),
        ("\\ud83d\\ud83d", 2),
    ] {
        check(escape, per_string);
    }
    // In a setting the value is kept, read as U+FFFD.
    let dirs = Dirs::new();
    dirs.write(
        "home/.claude/settings.json",
        r#"{"theme": "a\ud800b\ud83d\ude00"}"#,
    );
    let config = dirs.load(&[]);
    assert_eq!(config.settings["theme"], "a\u{fffd}b😀");
    assert!(errors(&config).is_empty(), "{:#?}", config.diagnostics);
}

// ---------------------------------------------------------------- item 15

#[test]
fn headers_urls_and_env_keys_a_check_must_refuse() {
    /// Entry `s` must produce one error on `field`, be invalid (or, for
    /// env keys, keep loading) and fail the check.
    #[track_caller]
    fn check(entry: Value, field: &str, vars: &[(&str, &str)]) {
        let dirs = Dirs::new();
        user_entry(&dirs, &entry);
        let config = dirs.load(vars);
        let errors = errors(&config);
        assert_eq!(errors.len(), 1, "{entry}: {:#?}", config.diagnostics);
        let d = errors[0];
        assert_eq!(d.field.as_deref(), Some(field), "{entry}: {d:?}");
        assert_eq!(d.server.as_deref(), Some("s"), "{entry}: {d:?}");
        assert!(d.line.is_some() && d.column.is_some(), "{entry}: {d:?}");
        for (_, value) in vars {
            assert!(
                !d.message.contains(value),
                "{entry}: value shown in {}",
                d.message
            );
        }
        assert!(
            !d.message.chars().any(char::is_control),
            "{entry}: raw control character in {:?}",
            d.message
        );
        // A key that is not a name is dropped and the entry kept, as a
        // refused key is; any other error makes the entry invalid.
        let key_only = entry["env"]
            .as_object()
            .is_some_and(|env| env.keys().any(|k| !mcp_config::env::is_env_name(k)));
        assert_eq!(config.server("s").is_some(), key_only, "{entry}");
        assert!(CheckReport { config }.failed(false), "{entry}");
    }
    let http = |headers: Value| json!({"type": "http", "url": "https://h/mcp", "headers": headers});
    check(http(json!({"X-A": "a\r\nInjected: 1"})), "headers", &[]);
    check(http(json!({"X-A": "a\nb"})), "headers", &[]);
    check(http(json!({"X-A": "a\rb"})), "headers", &[]);
    check(http(json!({"X-A": "a\u{0}b"})), "headers", &[]);
    check(
        http(json!({"Authorization": "Bearer ${TOKEN}"})),
        "headers",
        &[("TOKEN", "abc\r\nX-Evil: 1")],
    );
    check(http(json!({"X Bad": "1"})), "headers", &[]);
    check(http(json!({"": "1"})), "headers", &[]);
    check(http(json!({"Bad:Name": "1"})), "headers", &[]);
    check(http(json!({"Bad\nName": "1"})), "headers", &[]);
    check(http(json!({"Ünicode": "1"})), "headers", &[]);
    check(
        json!({"type": "sse", "url": "https://h/sse", "headers": {"(x)": "1"}}),
        "headers",
        &[],
    );
    check(
        json!({"type": "ws", "url": "wss://h/ws", "headers": {"X": "a\r\nb"}}),
        "headers",
        &[],
    );
    check(json!({"type": "ws", "url": "https://h/ws"}), "url", &[]);
    check(json!({"type": "ws", "url": "http://h/ws"}), "url", &[]);
    check(json!({"type": "http", "url": "ws://h/mcp"}), "url", &[]);
    check(json!({"type": "http", "url": "wss://h/mcp"}), "url", &[]);
    check(json!({"type": "sse", "url": "ftp://h/sse"}), "url", &[]);
    check(json!({"url": "file:///etc/passwd"}), "url", &[]);
    check(
        json!({"type": "claudeai-proxy", "url": "wss://h/p", "id": "1"}),
        "url",
        &[],
    );
    check(
        json!({"type": "ws", "url": "${WS_URL}"}),
        "url",
        &[("WS_URL", "https://secret-host.example/ws")],
    );
    check(http(json!({"X-A": "a\u{1}b"})), "headers", &[]);
    check(http(json!({"X-A": "a\u{7f}b"})), "headers", &[]);
    check(json!({"command": "x\u{0}y"}), "command", &[]);
    check(
        json!({"command": "x", "args": ["a", "b\u{0}"]}),
        "args",
        &[],
    );
    check(json!({"command": "x", "cwd": "/tmp\u{0}"}), "cwd", &[]);
    check(
        json!({"command": "x", "env": {"TOKEN": "${SECRET}"}}),
        "env",
        &[("SECRET", "a\u{0}b")],
    );
    check(json!({"command": "x", "env": {"A=B": "1"}}), "env", &[]);
    check(json!({"command": "x", "env": {"A B": "1"}}), "env", &[]);

    // and what must pass
    for entry in [
        json!({"type": "ws", "url": "wss://h/ws", "headers": {"X-Api-Key": "k"}}),
        json!({"type": "ws", "url": "ws://127.0.0.1:1/ws"}),
        json!({"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"a!#$%&'*+-.^_`|~9": "v\tw"}}),
        json!({"type": "sse", "url": "https://h/sse"}),
        json!({"type": "claudeai-proxy", "url": "https://h/p", "id": "1"}),
    ] {
        let dirs = Dirs::new();
        user_entry(&dirs, &entry);
        let config = dirs.load(&[]);
        assert!(
            errors(&config).is_empty(),
            "{entry}: {:#?}",
            config.diagnostics
        );
        assert!(config.server("s").is_some(), "{entry}");
    }
}

// ---------------------------------------------------------------- item 16

#[test]
fn credentials_in_urls_never_reach_check_output() {
    /// Server `s` with `url`; neither the check's JSON nor its human lines
    /// may hold `secret`, and the JSON signature must be `shown`.
    #[track_caller]
    fn check(kind: &str, url: &str, vars: &[(&str, &str)], secret: &str, shown: &str) {
        let dirs = Dirs::new();
        let entry = if kind == "claudeai-proxy" {
            json!({"type": kind, "url": url, "id": "1"})
        } else {
            json!({"type": kind, "url": url})
        };
        user_entry(&dirs, &entry);
        let report = CheckReport::run(&dirs.options(vars));
        assert!(
            report.config.server("s").is_some(),
            "{url}: {:#?}",
            report.config.diagnostics
        );
        let json = report.to_json();
        let text = json.to_string();
        assert!(!text.contains(secret), "{url}: {text}");
        let lines = report.human_lines().join("\n");
        assert!(!lines.contains(secret), "{url}: {lines}");
        assert_eq!(json["servers"][0]["signature"], shown, "{url}");
        // The identity used for dedupe does not change.
        let server = &report.config.server("s").unwrap().config;
        assert!(
            mcp_config::signature(server).unwrap().contains(secret),
            "{url}"
        );
    }
    check(
        "http",
        "https://user:hunter2@h.example/mcp",
        &[],
        "hunter2",
        "url:https://user:***@h.example/mcp",
    );
    check(
        "sse",
        "https://ghp_tokentoken@h.example/sse",
        &[],
        "ghp_tokentoken",
        "url:https://***@h.example/sse",
    );
    check(
        "http",
        "https://h.example/mcp?team=core&token=${TOKEN}",
        &[("TOKEN", "s3cr3t-value")],
        "s3cr3t-value",
        "url:https://h.example/mcp?team=core&token=***",
    );
    check(
        "http",
        "https://h.example/mcp?k=${TOKEN}",
        &[("TOKEN", "s3cr3t-value")],
        "s3cr3t-value",
        "url:https://h.example/mcp?k=***",
    );
    check(
        "http",
        "https://h.example/mcp?api_key=literal-key&page=2",
        &[],
        "literal-key",
        "url:https://h.example/mcp?api_key=***&page=2",
    );
    check(
        "ws",
        "wss://h.example/ws?access_token=abc123#frag",
        &[],
        "abc123",
        "url:wss://h.example/ws?access_token=***#frag",
    );
    check(
        "claudeai-proxy",
        "https://api.anthropic.com/v2/ccr-sessions/1?mcp_url=https%3A%2F%2Fu%3Apw-in-proxy%40vendor.example%2Fmcp%3Fsig%3Dabc",
        &[],
        "pw-in-proxy",
        "url:https://u:***@vendor.example/mcp?sig=***",
    );
}

#[test]
fn variables_in_a_stdio_command_line_never_reach_check_output() {
    /// Stdio server `s` written as `entry`; neither the check's JSON nor
    /// its human lines may hold `secret`, the JSON signature must be
    /// `shown`, and the command line shown the same parts.
    #[track_caller]
    fn check(entry: Value, vars: &[(&str, &str)], secret: &str, shown: &str) {
        let dirs = Dirs::new();
        user_entry(&dirs, &entry);
        let report = CheckReport::run(&dirs.options(vars));
        let server = &report.config.server("s").expect("loaded").config;
        let json = report.to_json();
        let text = json.to_string();
        assert!(!text.contains(secret), "{entry}: {text}");
        let lines = report.human_lines().join("\n");
        assert!(!lines.contains(secret), "{entry}: {lines}");
        assert_eq!(json["servers"][0]["signature"], shown, "{entry}");
        let TransportConfig::Stdio(stdio) = &server.transport else {
            panic!("{entry}: not stdio");
        };
        let line =
            mcp_config::redaction::redacted_command_line(stdio, report.config.raw_entries.get("s"));
        assert_eq!(format!("stdio:[{}]", line.join("|")), shown, "{entry}");
        // The identity used for dedupe does not change.
        assert!(
            mcp_config::signature(server).unwrap().contains(secret),
            "{entry}"
        );
    }
    let token = &[("TOKEN", "s3cr3t-value")];
    check(
        json!({"command": "uvx", "args": ["srv", "${TOKEN}"]}),
        token,
        "s3cr3t-value",
        "stdio:[uvx|srv|***]",
    );
    check(
        json!({"command": "srv", "args": ["--api-key=${TOKEN}", "--flag"]}),
        token,
        "s3cr3t-value",
        "stdio:[srv|--api-key=***|--flag]",
    );
    check(
        json!({"command": "${TOKEN}", "args": []}),
        token,
        "s3cr3t-value",
        "stdio:[***]",
    );
    check(
        json!({"command": "srv", "args": ["https://h.example/mcp?team=${TOKEN}"]}),
        token,
        "s3cr3t-value",
        "stdio:[srv|https://h.example/mcp?team=***]",
    );
    // Credentials written in a url argument are hidden as before.
    check(
        json!({"command": "srv", "args": ["https://u:pw-literal@h.example/"]}),
        &[],
        "pw-literal",
        "stdio:[srv|https://u:***@h.example/]",
    );
}

#[test]
fn a_command_line_not_matched_to_its_written_entry_shows_only_written_words() {
    let dirs = Dirs::new();
    user_entry(
        &dirs,
        &json!({"command": "srv", "args": ["--key", "${TOKEN}"]}),
    );
    let config = dirs.load(&[("TOKEN", "s3cr3t-value")]);
    let TransportConfig::Stdio(stdio) = &config.server("s").expect("loaded").config.transport
    else {
        panic!("not stdio");
    };
    // A written entry that no longer lines up (one argument fewer).
    let written = json!({"command": "srv", "args": ["--key"]});
    assert_eq!(
        mcp_config::redaction::redacted_command_line(stdio, Some(&written)),
        ["srv", "--key", "***"]
    );
    // Without a written entry only url credentials are hidden.
    assert_eq!(
        mcp_config::redaction::redacted_command_line(stdio, None),
        ["srv", "--key", "s3cr3t-value"]
    );
}

#[test]
fn redact_url_vectors() {
    let check = |url: &str, written: Option<&str>, expect: &str| {
        assert_eq!(
            mcp_config::redaction::redact_url(url, written),
            expect,
            "{url}"
        );
    };
    check("https://h/mcp", None, "https://h/mcp");
    check("https://a:b@h/x", None, "https://a:***@h/x");
    check("https://a:@h/x", None, "https://a:***@h/x");
    check("https://tok@h/x", None, "https://***@h/x");
    check(
        "https://h/x?password=p&x=1",
        None,
        "https://h/x?password=***&x=1",
    );
    check("https://h/x?Secret=p", None, "https://h/x?Secret=***");
    check(
        "https://h/x?sig=p&code=c",
        None,
        "https://h/x?sig=***&code=***",
    );
    check("https://h/x?page=2&flag", None, "https://h/x?page=2&flag");
    check(
        "https://h/x?q=v",
        Some("https://h/x?q=${V}"),
        "https://h/x?q=***",
    );
    // The literal `a` is what the file spells; the variable's part is not shown.
    check(
        "https://h/x?q=av",
        Some("https://h/x?q=a${V}"),
        "https://h/x?q=a***",
    );
    check(
        "https://sekrit/x",
        Some("https://${HOST}/x"),
        "https://***/x",
    );
    check(
        "https://h/a/b/c",
        Some("https://h/${P}/c"),
        "https://h/***/c",
    );
    check("https://h/mcp?k=1", Some("${URL}"), "***");
    check(
        "https://u:p@h/",
        Some("https://${U}:${P}@h/"),
        "https://***:***@h/",
    );
    check(
        "https://h/x?api_key=1",
        Some("https://h/x?api_key=${K:-1}"),
        "https://h/x?api_key=***",
    );
    check(
        "https://h/x?q=v",
        Some("https://h/x?q=v"),
        "https://h/x?q=v",
    );
    check("not a url", None, "not a url");
    // a `@` in the path is not userinfo
    check("https://h/a@b", None, "https://h/a@b");
    check("https://u:p@h\\x@y/z", None, "https://u:***@y/z");
}

#[test]
fn every_problem_is_one_diagnostic_and_the_other_servers_survive() {
    // Many hostile entries side by side in one file: each is reported,
    // none takes a sibling down.
    let dirs = Dirs::new();
    let text = r#"{"mcpServers": {
        "ok1": {"command": "srv"},
        "bad\u001b": {"command": "srv"},
        "dup": {"command": "a", "command": "b"},
        "hdr": {"url": "https://h/mcp", "headers": {"X": "a\r\nb"}},
        "ws": {"type": "ws", "url": "https://h/ws"},
        "lone": {"command": "\ud800"},
        "emoji\ud83d\ude00": {"command": "srv"},
        "ok2": {"command": "srv", "env": {"A=B": "1"}}
    }}"#;
    dirs.write("home/.claude.json", text);
    let config = dirs.load(&[]);
    let names: Vec<&str> = config
        .servers
        .iter()
        .map(|s| s.config.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["emoji😀", "ok1", "ok2"],
        "{:#?}",
        config.diagnostics
    );
    let servers: Vec<&str> = errors(&config)
        .iter()
        .filter_map(|d| d.server.as_deref())
        .collect();
    assert_eq!(servers.len(), 6, "{:#?}", config.diagnostics);
}

// ------------------------------------------- the edit path reads the same

#[test]
fn the_edit_path_survives_the_same_files_and_never_drops_a_repeated_key() {
    use mcp_config::edit::{self, ServersLocation};

    /// Disables server `s` in `before`; expects the file after, or (on
    /// `Err`) an error containing the text and the file unchanged.
    #[track_caller]
    fn check(before: &[u8], after: Result<&[u8], &str>) {
        let dirs = Dirs::new();
        dirs.write("home/.claude.json", before);
        let location = ServersLocation {
            path: dirs.path("home/.claude.json"),
            key_path: vec!["mcpServers".into()],
        };
        let outcome = edit::edit(location, |doc| doc.set_enabled("s", false));
        let on_disk = std::fs::read(dirs.path("home/.claude.json")).unwrap();
        let shown = String::from_utf8_lossy(before);
        match after {
            Ok(expected) => {
                assert!(outcome.is_ok(), "{shown}: {outcome:?}");
                assert_eq!(
                    String::from_utf8_lossy(&on_disk),
                    String::from_utf8_lossy(expected),
                    "{shown}"
                );
            }
            Err(message) => {
                let err = outcome.expect_err("expected a refusal").to_string();
                assert!(err.contains(message), "{shown}: `{err}` lacks `{message}`");
                assert_eq!(on_disk, before, "{shown}: a refused edit changed the file");
            }
        }
    }
    let deep = format!(
        r#"{{"mcpServers": {{"s": {{"command": "x"}}}}, "x": {}}}"#,
        nested("[", "]", 10_000)
    );
    check(deep.as_bytes(), Err("recursion limit"));
    check(
        b"\xEF\xBB\xBF{\"mcpServers\": {\"s\": {\"command\": \"x\"}}}",
        Ok(b"\xEF\xBB\xBF{\"mcpServers\":{\"s\":{\"command\":\"x\",\"enabled\":false}}}"),
    );
    check(
        br#"{"mcpServers": {"s": {"command": "x", "args": ["\ud83d\ude00"]}}}"#,
        Ok(
            "{\"mcpServers\":{\"s\":{\"command\":\"x\",\"args\":[\"😀\"],\"enabled\":false}}}"
                .as_bytes(),
        ),
    );
    check(
        br#"{"mcpServers": {"a": {"command": "x"}}, "mcpServers": {"s": {"command": "x"}}}"#,
        Err("key `mcpServers` is repeated: 1:2 is ignored, 1:41 is used"),
    );
    check(
        br#"{"mcpServers": {"s": {"command": "x", "command": "y"}}}"#,
        Err("repeated"),
    );
}

// ------------------------------------------------ any text, any nesting

mod soup {
    use mcp_config::json::{Document, MAX_JSON_DEPTH};
    use mcp_config::{Level, Scope};
    use mcp_config::{ParseEnv, parse_file};
    use proptest::prelude::*;

    /// Text built from the pieces the scan before parsing must tell apart:
    /// brackets, both quotes, escapes (surrogates among them), comments,
    /// line breaks, a BOM, keys that repeat.
    fn soup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("[".to_owned()),
            Just("]".to_owned()),
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("{\"a\":".to_owned()),
            Just("\"".to_owned()),
            Just("'".to_owned()),
            Just("\\".to_owned()),
            Just("\\\"".to_owned()),
            Just("\\ud83d".to_owned()),
            Just("\\ude00".to_owned()),
            Just("\\u00e9".to_owned()),
            Just("//".to_owned()),
            Just("/*".to_owned()),
            Just("*/".to_owned()),
            Just("\n".to_owned()),
            Just("\r".to_owned()),
            Just(",".to_owned()),
            Just(":".to_owned()),
            Just("1".to_owned()),
            Just("\u{feff}".to_owned()),
            Just("é".to_owned()),
            "[\\[{]{100,300}",
        ];
        prop::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        #[test]
        fn any_text_parses_or_is_one_positioned_error(text in soup()) {
            match Document::parse(&text, std::path::Path::new("f.json")) {
                Ok(doc) => {
                    for finding in doc.findings() {
                        let d = doc.finding_diagnostic(finding, Level::Warning, String::new(), None, None);
                        prop_assert!(d.line.is_some_and(|l| l as usize <= text.lines().count().max(1) + 1));
                    }
                }
                Err(d) => {
                    prop_assert_eq!(d.level, Level::Error);
                    prop_assert!(d.line.is_some() && d.column.is_some());
                    prop_assert!(d.message.starts_with("invalid JSON"), "{}", d.message);
                }
            }
            let vars = Default::default();
            let env = ParseEnv::new(&vars);
            let file = parse_file(&text, std::path::Path::new("f.json"), Scope::Project, env);
            prop_assert!(file.diagnostics.iter().all(|d| d.file.is_some()));
        }

        #[test]
        fn nesting_is_refused_exactly_past_the_cap(depth in 1usize..400, arrays in any::<bool>()) {
            let (open, close) = if arrays { ("[", "]") } else { ("{\"k\":", "}") };
            let text = format!("{}1{}", open.repeat(depth), close.repeat(depth));
            let parsed = Document::parse(&text, std::path::Path::new("f.json"));
            prop_assert_eq!(parsed.is_ok(), depth <= MAX_JSON_DEPTH, "depth {}", depth);
        }
    }
}
