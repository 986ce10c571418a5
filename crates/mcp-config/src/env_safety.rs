//! Stdio env safety (REFERENCE §1.6).
//!
//! An entry's env key must be a name ([`is_env_name`]): `A=B` would reach
//! the child as the variable `A` (the way `PYTHONPATH=/srv/hook:` smuggled
//! a module path past the refused list), NUL would stop the spawn. Such a
//! key is an error diagnostic and never reaches a child.
//!
//! Some variables change how an interpreter starts before the server's first
//! JSON-RPC message (preloaded libraries, startup scripts, module paths).
//! A config entry may not set them: the loader reports an `error`
//! diagnostic and drops the key, so it never reaches a child. The list
//! covers every variable known to make a common interpreter, package
//! runner or launcher load code it would not otherwise run, one justified
//! group per program; a name on it may still reach a child as the host's
//! own value when it is on the inherited allow-list (`HOME`, `SHELL`). The child
//! inherits only an allow-list of the parent's variables (with the proxy
//! and trust-store variables and `XDG_*`), the further names its entry
//! lists in `envPassthrough`, plus its entry's own `env`; [`child_env`]
//! computes exactly that for the transport crate. A refused name is never
//! inherited through a prefix or `envPassthrough`: only the fixed names of
//! the allow-list carry the host's own value of a refused name.

use std::collections::BTreeMap;

use crate::types::{
    INHERITED_ENV_ALLOWLIST, INHERITED_ENV_ALLOWLIST_WINDOWS, INHERITED_ENV_PREFIXES,
    INHERITED_NETWORK_ENV,
};

/// Refused prefixes (compared case-insensitively).
pub const DANGEROUS_ENV_PREFIXES: &[&str] = &[
    // the dynamic loader: preloaded libraries, library search paths, audit
    // modules (glibc and musl `LD_*`, macOS `DYLD_*`)
    "LD_",
    "DYLD_",
    // bash imports exported functions from these, under any command name
    "BASH_FUNC_",
    // npm (and pnpm, npx) read every `npm_config_*` as a setting:
    // `node-options`, `script-shell`, `userconfig`, `globalconfig`,
    // `registry`, `git`, `shell`, `onload-script` all run other code
    "NPM_CONFIG_",
    // yarn 2+ reads every `YARN_*` as an `.yarnrc.yml` setting: plugins,
    // `yarnPath` (the yarn release it runs), registries
    "YARN_",
    // `GIT_CONFIG`, `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM` and
    // `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>` set any
    // git option, including `core.sshCommand`, `core.fsmonitor`, hooks
    "GIT_CONFIG",
    // Lua runs `LUA_INIT` (and `LUA_INIT_5_x`) as code and searches
    // modules on `LUA_PATH`/`LUA_CPATH` (and their `_5_x` forms)
    "LUA_INIT",
    "LUA_PATH",
    "LUA_CPATH",
    // .NET profilers are native libraries loaded into the runtime
    // (`CORECLR_PROFILER`, `_PATH`, `_PATH_32`/`_64`, `COR_PROFILER...`)
    "CORECLR_PROFILER",
    "COR_PROFILER",
];

/// Refused names (compared case-insensitively). REFERENCE §1.6 lists the
/// floor; each group below names what the variables make a program load
/// or run before (or instead of) the server the entry names.
pub const DANGEROUS_ENV_NAMES: &[&str] = &[
    // Node: options and `--require` preloads, module search path, the REPL
    // module, coverage output written where it points
    "NODE_OPTIONS",
    "NODE_PATH",
    "NODE_REPL_EXTERNAL_MODULE",
    "NODE_V8_COVERAGE",
    // Electron apps then run as plain Node, honouring NODE_OPTIONS
    "ELECTRON_RUN_AS_NODE",
    // corepack downloads the package manager it runs from this registry
    "COREPACK_NPM_REGISTRY",
    // Python: start-up file, stdlib home, module path, breakpoint hook
    // (imports a module), user site (runs its `.pth` files), platform lib
    // dir, `-W` warning categories (imports the named module), interactive
    // mode after the script (reads code from stdin), bytecode cache
    // location, the interpreter path macOS launchers re-exec
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONPATH",
    "PYTHONBREAKPOINT",
    "PYTHONUSERBASE",
    "PYTHONPLATLIBDIR",
    "PYTHONWARNINGS",
    "PYTHONINSPECT",
    "PYTHONPYCACHEPREFIX",
    "PYTHONEXECUTABLE",
    // pip and uv (`uvx`): where packages (code) are fetched from, their
    // config files, and which interpreter uv runs
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "PIP_CONFIG_FILE",
    "UV_INDEX",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_FIND_LINKS",
    "UV_CONFIG_FILE",
    "UV_PYTHON",
    // Perl: module paths, `-M` options, the debugger (code), PerlIO
    // layers (load modules), the shell it runs on Windows
    "PERL5LIB",
    "PERLLIB",
    "PERL5OPT",
    "PERL5DB",
    "PERLIO",
    "PERL5SHELL",
    // Ruby: load path, `-r` options, the shell `system` uses, Bundler and
    // RubyGems paths and Gemfiles (which gems, that is which code, load)
    "RUBYLIB",
    "RUBYOPT",
    "RUBYSHELL",
    "RUBYGEMS_GEMDEPS",
    "GEM_HOME",
    "GEM_PATH",
    "BUNDLE_GEMFILE",
    // JVM: agents and options (`-javaagent`), class path, the JDK launcher
    // scripts run, build tool options that reach the JVM
    "JAVA_TOOL_OPTIONS",
    "JAVA_OPTS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "CLASSPATH",
    "JAVA_HOME",
    "MAVEN_OPTS",
    "GRADLE_OPTS",
    "SBT_OPTS",
    // .NET: startup hooks (assemblies run before `Main`), profiling on,
    // extra dependency manifests, the runtime a host starts
    "DOTNET_STARTUP_HOOKS",
    "CORECLR_ENABLE_PROFILING",
    "COR_ENABLE_PROFILING",
    "DOTNET_ADDITIONAL_DEPS",
    "DOTNET_SHARED_STORE",
    "DOTNET_ROOT",
    // PHP: the php.ini (auto_prepend_file, extensions) and its scan dir
    "PHPRC",
    "PHP_INI_SCAN_DIR",
    // R: profile scripts and environ files it sources, library paths
    "R_PROFILE",
    "R_PROFILE_USER",
    "R_ENVIRON",
    "R_ENVIRON_USER",
    "R_LIBS",
    "R_LIBS_USER",
    "R_LIBS_SITE",
    // Tcl/Tk: package search path and the init scripts' library
    "TCLLIBPATH",
    "TCL_LIBRARY",
    "TK_LIBRARY",
    // Deno's module cache (code it runs without fetching), Bun's registry
    "DENO_DIR",
    "BUN_CONFIG_REGISTRY",
    // shells: start-up files (`ENV`, `BASH_ENV`, zsh's dot dir), options
    // (`xtrace` with PS4 runs command substitutions), prompt hooks, word
    // splitting, the shell other programs start for commands
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "IFS",
    "PROMPT_COMMAND",
    "ZDOTDIR",
    "SHELL",
    "COMSPEC",
    // programs that tools such as git and npm start on their own
    "EDITOR",
    "VISUAL",
    "PAGER",
    "BROWSER",
    // glibc: iconv modules (shared objects), tunables, locale and message
    // catalog data it parses; jemalloc's config
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "LOCPATH",
    "NLSPATH",
    "MALLOC_CONF",
    // git: ssh and askpass programs, its exec path, the repository (whose
    // config and hooks run), editors and pagers, proxy and diff commands,
    // templates (hooks copied into new repositories)
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_PROXY_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_TEMPLATE_DIR",
    // OpenSSL: its config loads engines and providers (shared objects)
    "OPENSSL_CONF",
    "OPENSSL_ENGINES",
    "OPENSSL_MODULES",
    // TLS session keys written to a file: a secret, not code
    "SSLKEYLOGFILE",
    // where npm, pip, git and shells read their own config files, each of
    // which can name programs to run (`.npmrc` node-options, git hooks)
    "HOME",
    "XDG_CONFIG_HOME",
];

/// Whether `key` is a variable name: `[A-Za-z_][A-Za-z0-9_]*`
/// (REFERENCE §1.6, Decision 2026-12). Anything else (`=`, which would
/// smuggle `NAME=value` into the child's environment block, NUL, spaces,
/// a leading digit) is refused.
pub fn is_env_name(key: &str) -> bool {
    let mut bytes = key.bytes();
    matches!(bytes.next(), Some(b) if b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// Whether a stdio entry may not set `key` (trimmed, case-insensitive).
pub fn is_dangerous_env_key(key: &str) -> bool {
    let key = key.trim().to_ascii_uppercase();
    DANGEROUS_ENV_PREFIXES.iter().any(|p| key.starts_with(p))
        || DANGEROUS_ENV_NAMES.contains(&key.as_str())
}

/// The names a stdio child inherits from its parent on this platform: the
/// allow-list and the network variables. Variables inherited by prefix
/// (`XDG_*`) are not listed; [`is_inherited_env_name`] says yes to them.
pub fn inherited_env_names() -> Vec<&'static str> {
    let mut names = INHERITED_ENV_ALLOWLIST.to_vec();
    names.extend_from_slice(INHERITED_NETWORK_ENV);
    if cfg!(windows) {
        names.extend_from_slice(INHERITED_ENV_ALLOWLIST_WINDOWS);
    }
    names
}

/// Whether a stdio child inherits the host's `key` without its entry
/// naming it: a name of [`inherited_env_names`], or a name under an
/// inherited prefix (`XDG_*`) that env safety does not refuse.
pub fn is_inherited_env_name(key: &str) -> bool {
    // Windows spells its variables in any case; elsewhere `Path` is not `PATH`.
    let same = |a: &str| {
        if cfg!(windows) {
            a.eq_ignore_ascii_case(key)
        } else {
            a == key
        }
    };
    inherited_env_names().into_iter().any(same)
        || (INHERITED_ENV_PREFIXES.iter().any(|p| key.starts_with(p))
            && is_env_name(key)
            && !is_dangerous_env_key(key))
}

/// Whether an `envPassthrough` entry may name `key`: a variable name that
/// env safety does not refuse. A refused key stays refused whatever list
/// names it.
pub fn is_passthrough_name(key: &str) -> bool {
    is_env_name(key) && !is_dangerous_env_key(key)
}

/// The complete environment of a stdio child: the inherited part of
/// `parent` ([`is_inherited_env_name`]), the variables of `parent` named by
/// `passthrough` (names refused by env safety skipped), then the entry's
/// own `env` on top (which wins). Keys that are not names and dangerous
/// keys are removed again here, so a caller that builds `env` or
/// `passthrough` by hand is covered too.
pub fn child_env(
    parent: &BTreeMap<String, String>,
    entry_env: &BTreeMap<String, String>,
    passthrough: &[String],
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = parent
        .iter()
        .filter(|(k, _)| {
            is_inherited_env_name(k) || (is_passthrough_name(k) && passthrough.contains(k))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in entry_env {
        if is_env_name(k) && !is_dangerous_env_key(k) {
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
        let env = child_env(&parent, &entry, &[]);
        let keys: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(keys, ["HOME", "PATH", "TOKEN"]);
        assert_eq!(env["PATH"], "/opt/bin");
    }

    /// One host variable: whether a child with `passthrough` inherits it.
    #[track_caller]
    fn check(key: &str, passthrough: &[&str], inherited: bool) {
        let parent = BTreeMap::from([(key.to_owned(), "host-value".to_owned())]);
        let passthrough: Vec<String> = passthrough.iter().map(|n| (*n).to_owned()).collect();
        let env = child_env(&parent, &BTreeMap::new(), &passthrough);
        assert_eq!(
            env.contains_key(key),
            inherited,
            "{key} with envPassthrough {passthrough:?}"
        );
    }

    #[test]
    fn proxy_ca_and_xdg_variables_pass_and_refused_keys_never_do() {
        // the allow-list, as before
        check("PATH", &[], true);
        check("HOME", &[], true);
        // proxy and trust-store variables, both cases of the proxy ones
        for key in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "NO_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "no_proxy",
            "all_proxy",
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
            "NODE_EXTRA_CA_CERTS",
            "REQUESTS_CA_BUNDLE",
        ] {
            check(key, &[], true);
        }
        // `XDG_*`, except a name env safety refuses
        check("XDG_RUNTIME_DIR", &[], true);
        check("XDG_CACHE_HOME", &[], true);
        check("XDG_DATA_HOME", &[], true);
        check("XDG_CONFIG_HOME", &[], false);
        check("XDG_CONFIG_HOME", &["XDG_CONFIG_HOME"], false);
        check("xdg_runtime_dir", &[], false);
        // other host variables only when named
        check("AWS_PROFILE", &[], false);
        check("AWS_PROFILE", &["AWS_PROFILE"], true);
        check("AWS_PROFILE", &["aws_profile"], false);
        // names are compared exactly, except on Windows
        check("Https_Proxy", &[], cfg!(windows));
        // a refused key is refused whatever list names it
        for key in [
            "LD_PRELOAD",
            "NODE_OPTIONS",
            "PYTHONPATH",
            "NPM_CONFIG_USERCONFIG",
        ] {
            check(key, &[key], false);
        }
        // a passthrough item that is not a name matches nothing
        check("A B", &["A B"], false);
    }
}
