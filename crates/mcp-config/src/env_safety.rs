//! Stdio env safety (REFERENCE §1.6).
//!
//! Some variables change how an interpreter starts before the server's first
//! JSON-RPC message (preloaded libraries, startup scripts, module paths).
//! A config entry may not set them: the loader reports an `error`
//! diagnostic and drops the key, so it never reaches a child. The child
//! inherits only an allow-list of the parent's variables plus its entry's
//! own `env`; [`child_env`] computes exactly that for the transport crate.

use std::collections::BTreeMap;

use crate::types::{INHERITED_ENV_ALLOWLIST, INHERITED_ENV_ALLOWLIST_WINDOWS};

/// Refused prefixes (compared case-insensitively).
pub const DANGEROUS_ENV_PREFIXES: &[&str] = &["LD_", "DYLD_", "BASH_FUNC_"];

/// Refused names (compared case-insensitively). REFERENCE's list is the
/// floor; the extra names below it load code or change an interpreter's
/// start-up in the same way.
pub const DANGEROUS_ENV_NAMES: &[&str] = &[
    "NODE_OPTIONS",
    "NODE_PATH",
    "NODE_REPL_EXTERNAL_MODULE",
    "NODE_V8_COVERAGE",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONPATH",
    "PYTHONBREAKPOINT",
    "PERL5LIB",
    "PERL5OPT",
    "RUBYLIB",
    "RUBYOPT",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "PS4",
    "IFS",
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "JAVA_TOOL_OPTIONS",
    "JAVA_OPTS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "DOTNET_STARTUP_HOOKS",
    "CORECLR_PROFILER",
    "LUA_INIT",
    "SSLKEYLOGFILE",
    // beyond the floor
    "PERLLIB",
    "PERL5DB",
    "PYTHONUSERBASE",
    "PYTHONPLATLIBDIR",
    "RUBYGEMS_GEMDEPS",
    "CORECLR_PROFILER_PATH",
    "COR_PROFILER",
    "COR_PROFILER_PATH",
    "LUA_PATH",
    "LUA_CPATH",
    "ZDOTDIR",
    "PROMPT_COMMAND",
    "MALLOC_CONF",
];

/// Whether a stdio entry may not set `key` (trimmed, case-insensitive).
pub fn is_dangerous_env_key(key: &str) -> bool {
    let key = key.trim().to_ascii_uppercase();
    DANGEROUS_ENV_PREFIXES.iter().any(|p| key.starts_with(p))
        || DANGEROUS_ENV_NAMES.contains(&key.as_str())
}

/// The names a stdio child inherits from its parent on this platform.
pub fn inherited_env_names() -> Vec<&'static str> {
    let mut names = INHERITED_ENV_ALLOWLIST.to_vec();
    if cfg!(windows) {
        names.extend_from_slice(INHERITED_ENV_ALLOWLIST_WINDOWS);
    }
    names
}

/// The complete environment of a stdio child: the allow-listed part of
/// `parent` plus the entry's own `env` (which wins). Dangerous keys are
/// removed again here, so a caller that builds `env` by hand is covered too.
pub fn child_env(
    parent: &BTreeMap<String, String>,
    entry_env: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let allowed = inherited_env_names();
    let mut env: BTreeMap<String, String> = parent
        .iter()
        .filter(|(k, _)| {
            allowed.iter().any(|a| {
                if cfg!(windows) {
                    a.eq_ignore_ascii_case(k)
                } else {
                    a == k
                }
            })
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in entry_env {
        if !is_dangerous_env_key(k) {
            env.insert(k.clone(), v.clone());
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dangerous_keys_are_matched_trimmed_and_case_insensitively() {
        for key in [
            "LD_PRELOAD",
            "ld_library_path",
            " NODE_OPTIONS ",
            "DYLD_INSERT_LIBRARIES",
            "BASH_FUNC_x%%",
            "pythonpath",
            "SSLKEYLOGFILE",
        ] {
            assert!(is_dangerous_env_key(key), "{key} must be refused");
        }
        for key in ["PATH", "TOKEN", "NODE_ENV", "PYTHONUNBUFFERED", "LDX"] {
            assert!(!is_dangerous_env_key(key), "{key} must be allowed");
        }
    }

    #[test]
    fn child_env_is_allow_list_plus_entry_env() {
        let parent: BTreeMap<String, String> = [
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("LD_PRELOAD", "x.so"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let entry: BTreeMap<String, String> = [
            ("TOKEN", "t"),
            ("PATH", "/opt/bin"),
            ("NODE_OPTIONS", "-r x"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let env = child_env(&parent, &entry);
        let keys: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(keys, ["HOME", "PATH", "TOKEN"]);
        assert_eq!(env["PATH"], "/opt/bin");
    }
}
