//! What the client learned about each server configuration's protocol era,
//! kept across connects and, with a file, across host restarts.
//!
//! A session that speaks both eras probes a server with `server/discover`
//! before anything else, and an older server spends a round trip refusing
//! it before the `initialize` handshake can start (for a Node server just
//! started, about 20 ms of its first, cold code paths). The versioning page
//! of 2026-07-28 says a client should keep the era it found for the life of
//! the server process and may keep it across restarts of the same server
//! configuration, probing again once the assumption fails. [`EraMemory`] is
//! that record: [`crate::connect`] asks it (through
//! [`crate::ConnectOptions::eras`]) before negotiating, and a configuration
//! whose server answered `initialize` last time starts with `initialize`
//! ([`crate::SessionOptions::assume_legacy`]). Any refusal of that
//! `initialize` runs the probe as if nothing were known, and a server found
//! modern is forgotten.
//!
//! Only legacy findings are kept: a modern server's probe is the
//! `server/discover` the session needs anyway. A finding is trusted for
//! [`EraMemory::DEFAULT_MAX_AGE`] (a server updated in place to speak both eras is
//! probed again within that time).
//!
//! The file is the host's own state, but it is read as untrusted input: at
//! most [`EraMemory::MAX_FILE_BYTES`], only keys shaped like a config hash, at most
//! [`EraMemory::MAX_ENTRIES`] of them, no time in the future. A file that cannot be
//! read is treated as empty and named by [`EraMemory::problem`]. It is
//! written whole to a temporary file with mode 0600 and renamed over the
//! old one, so a reader never sees half of it. It holds config hashes
//! ([`mcp_config::config_hash`]) and times, nothing of the configuration.

use std::collections::HashMap;
use std::fs;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_config::{ServerConfig, TransportConfig};
use serde::{Deserialize, Serialize};

/// The era file's format version.
const FORMAT: u32 = 1;

/// The findings of one host: in memory, or backed by a file.
#[derive(Debug)]
pub struct EraMemory {
    file: Option<PathBuf>,
    max_age: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Config hash → when its server was last found legacy (Unix seconds).
    legacy: HashMap<String, u64>,
    /// Why the file was last not read or not written.
    problem: Option<String>,
}

/// The file's shape.
#[derive(Serialize, Deserialize)]
struct EraFile {
    version: u32,
    #[serde(default)]
    legacy: HashMap<String, u64>,
}

impl Default for EraMemory {
    fn default() -> Self {
        EraMemory::in_memory()
    }
}

impl EraMemory {
    /// How long a legacy finding is trusted before the server is probed
    /// again.
    pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 60 * 60);

    /// The largest era file read; a larger one is ignored.
    pub const MAX_FILE_BYTES: u64 = 256 * 1024;

    /// The most findings kept; the oldest go first.
    pub const MAX_ENTRIES: usize = 4096;

    /// A memory that lasts as long as the host process.
    pub fn in_memory() -> Self {
        EraMemory {
            file: None,
            max_age: EraMemory::DEFAULT_MAX_AGE,
            state: Mutex::new(State::default()),
        }
    }

    /// A memory kept in `file` (created on the first finding). A missing
    /// file is an empty memory; one that cannot be read is too, and
    /// [`EraMemory::problem`] says why.
    pub fn open(file: impl Into<PathBuf>) -> Self {
        let file = file.into();
        let mut state = State::default();
        match read_file(&file) {
            Ok(legacy) => state.legacy = legacy,
            Err(problem) => state.problem = problem,
        }
        EraMemory {
            file: Some(file),
            max_age: EraMemory::DEFAULT_MAX_AGE,
            state: Mutex::new(state),
        }
    }

    /// Trusts a finding for `max_age` instead of [`EraMemory::DEFAULT_MAX_AGE`].
    #[must_use]
    pub fn with_max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// The key of a server configuration, or `None` for a kind that is
    /// never probed over a wire (in-process servers).
    pub fn key(config: &ServerConfig) -> Option<String> {
        match config.transport {
            TransportConfig::Sdk { .. } => None,
            _ => Some(mcp_config::config_hash(config)),
        }
    }

    /// Whether the server of `key` was found legacy within the max age.
    pub fn assumes_legacy(&self, key: &str) -> bool {
        let now = unix_now();
        self.lock()
            .legacy
            .get(key)
            .is_some_and(|&learned| fresh(learned, now, self.max_age))
    }

    /// Records what a connect found: `legacy` when the session
    /// negotiated an `initialize`-based revision. Writes the file when the
    /// memory changed (a new finding, one forgotten, or one past half its
    /// age renewed), so a host that reconnects a server writes nothing.
    pub fn record(&self, key: &str, legacy: bool) {
        let now = unix_now();
        let mut state = self.lock();
        let changed = if legacy {
            let renew = state
                .legacy
                .get(key)
                .is_none_or(|&learned| !fresh(learned, now, self.max_age / 2));
            if renew {
                state.legacy.insert(key.to_owned(), now);
            }
            renew
        } else {
            state.legacy.remove(key).is_some()
        };
        if !changed {
            return;
        }
        if state.legacy.len() > EraMemory::MAX_ENTRIES {
            let mut by_age: Vec<(u64, String)> =
                state.legacy.drain().map(|(key, at)| (at, key)).collect();
            by_age.sort_unstable_by(|a, b| b.cmp(a));
            by_age.truncate(EraMemory::MAX_ENTRIES);
            state.legacy = by_age.into_iter().map(|(at, key)| (key, at)).collect();
        }
        if let Some(file) = &self.file {
            state.problem = write_file(file, &state.legacy).err();
        }
    }

    /// Why the era file was last not read or not written, naming it.
    pub fn problem(&self) -> Option<String> {
        self.lock().problem.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// A finding from `learned` still holds at `now`; one dated in the future
/// (a clock set back, or a forged file) does not.
fn fresh(learned: u64, now: u64, max_age: Duration) -> bool {
    learned <= now && now - learned < max_age.as_secs()
}

/// A config hash: 16 lowercase hex digits.
fn is_key(key: &str) -> bool {
    key.len() == 16 && key.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The findings in `file`; `Err(None)` when there is no file.
fn read_file(file: &Path) -> Result<HashMap<String, u64>, Option<String>> {
    let problem = |what: String| Some(format!("era file {}: {what}", file.display()));
    let opened = match fs::File::open(file) {
        Ok(opened) => opened,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
        Err(e) => return Err(problem(format!("cannot be read: {e}"))),
    };
    let mut text = Vec::new();
    if let Err(e) = opened
        .take(EraMemory::MAX_FILE_BYTES + 1)
        .read_to_end(&mut text)
    {
        return Err(problem(format!("cannot be read: {e}")));
    }
    if text.len() as u64 > EraMemory::MAX_FILE_BYTES {
        return Err(problem(format!(
            "larger than {} bytes; ignored",
            EraMemory::MAX_FILE_BYTES
        )));
    }
    let parsed: EraFile = serde_json::from_slice(&text)
        .map_err(|e| problem(format!("not an era file ({e}); ignored")))?;
    if parsed.version != FORMAT {
        return Err(problem(format!(
            "format {} is not {FORMAT}; ignored",
            parsed.version
        )));
    }
    let mut legacy: Vec<(u64, String)> = parsed
        .legacy
        .into_iter()
        .filter(|(key, _)| is_key(key))
        .map(|(key, at)| (at, key))
        .collect();
    legacy.sort_unstable_by(|a, b| b.cmp(a));
    legacy.truncate(EraMemory::MAX_ENTRIES);
    Ok(legacy.into_iter().map(|(at, key)| (key, at)).collect())
}

fn write_file(file: &Path, legacy: &HashMap<String, u64>) -> Result<(), String> {
    let problem =
        |e: std::io::Error| format!("era file {}: cannot be written: {e}", file.display());
    let text = serde_json::to_vec(&EraFile {
        version: FORMAT,
        legacy: legacy.clone(),
    })
    .map_err(|e| format!("era file {}: {e}", file.display()))?;
    if let Some(dir) = file.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(problem)?;
    }
    let name = file
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = file.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut options = fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut out = options.open(&temporary)?;
        out.write_all(&text)?;
        out.sync_all()?;
        fs::rename(&temporary, file)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&temporary);
        problem(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "0123456789abcdef";

    fn check(contents: &[u8], expect_legacy: bool, expect_problem: Option<&str>) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("eras.json");
        fs::write(&file, contents).unwrap();
        let memory = EraMemory::open(&file);
        let shown = String::from_utf8_lossy(&contents[..contents.len().min(60)]).into_owned();
        assert_eq!(memory.assumes_legacy(KEY), expect_legacy, "{shown}");
        match (memory.problem(), expect_problem) {
            (None, None) => {}
            (Some(problem), Some(part)) => {
                assert!(problem.contains(part), "{shown}: {problem}");
                assert!(problem.contains("eras.json"), "{problem}");
            }
            (got, want) => panic!("{shown}: problem {got:?}, expected {want:?}"),
        }
    }

    #[test]
    fn a_file_is_read_as_untrusted_input() {
        let now = unix_now();
        let good = format!(r#"{{"version":1,"legacy":{{"{KEY}":{now}}}}}"#);
        check(good.as_bytes(), true, None);
        // every hostile shape is an empty memory, with the file named
        check(b"", false, Some("not an era file"));
        check(b"not json", false, Some("not an era file"));
        check(b"[1,2,3]", false, Some("not an era file"));
        check(br#"{"version":2,"legacy":{}}"#, false, Some("format 2"));
        check(
            format!(r#"{{"version":1,"legacy":{{"{KEY}":"soon"}}}}"#).as_bytes(),
            false,
            Some("not an era file"),
        );
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        check(deep.as_bytes(), false, Some("not an era file"));
        let huge = format!(
            r#"{{"version":1,"legacy":{{"{KEY}":{now}}},"pad":"{}"}}"#,
            "x".repeat(EraMemory::MAX_FILE_BYTES as usize)
        );
        check(huge.as_bytes(), false, Some("larger than"));
        // keys that are no config hash are dropped; times in the future and
        // past the max age are not trusted
        check(
            format!(
                r#"{{"version":1,"legacy":{{"../../etc":{now},"{}":{now}}}}}"#,
                KEY.to_uppercase()
            )
            .as_bytes(),
            false,
            None,
        );
        check(
            format!(r#"{{"version":1,"legacy":{{"{KEY}":{}}}}}"#, now + 3600).as_bytes(),
            false,
            None,
        );
        check(
            format!(
                r#"{{"version":1,"legacy":{{"{KEY}":{}}}}}"#,
                now - EraMemory::DEFAULT_MAX_AGE.as_secs()
            )
            .as_bytes(),
            false,
            None,
        );
        check(
            br#"{"version":1,"legacy":{"x":18446744073709551615}}"#,
            false,
            None,
        );
    }

    #[test]
    fn findings_survive_a_restart_and_a_modern_server_is_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state").join("eras.json");
        let memory = EraMemory::open(&file);
        assert_eq!(memory.problem(), None);
        assert!(!memory.assumes_legacy(KEY));
        memory.record(KEY, true);
        assert!(memory.assumes_legacy(KEY));
        assert_eq!(memory.problem(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let text = fs::read_to_string(&file).unwrap();
        assert!(text.contains(KEY) && !text.contains("command"), "{text}");

        let restarted = EraMemory::open(&file);
        assert!(restarted.assumes_legacy(KEY));
        restarted.record(KEY, false);
        assert!(!restarted.assumes_legacy(KEY));
        assert!(!EraMemory::open(&file).assumes_legacy(KEY));
    }

    #[test]
    fn a_reconnect_writes_nothing_and_the_oldest_findings_go_first() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("eras.json");
        let memory = EraMemory::open(&file);
        memory.record(KEY, true);
        let written = fs::metadata(&file).unwrap().modified().unwrap();
        fs::remove_file(&file).unwrap();
        memory.record(KEY, true);
        memory.record("fedcba9876543210", false);
        assert!(!file.exists(), "nothing changed, nothing written");
        let _ = written;

        let now = unix_now();
        let mut many = HashMap::new();
        for i in 0..EraMemory::MAX_ENTRIES as u64 + 10 {
            many.insert(format!("{i:016x}"), now - 10_000 + i);
        }
        write_file(&file, &many).unwrap();
        let memory = EraMemory::open(&file);
        assert!(
            !memory.assumes_legacy(&format!("{:016x}", 0)),
            "oldest dropped"
        );
        assert!(memory.assumes_legacy(&format!("{:016x}", EraMemory::MAX_ENTRIES as u64 + 9)));
        memory.record(KEY, true);
        let kept: EraFile = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
        assert_eq!(kept.legacy.len(), EraMemory::MAX_ENTRIES);
        assert!(kept.legacy.contains_key(KEY));
    }

    #[test]
    fn an_unwritable_file_is_named_and_the_memory_still_works() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("not-a-dir");
        fs::write(&blocker, b"").unwrap();
        let memory = EraMemory::open(blocker.join("eras.json"));
        memory.record(KEY, true);
        assert!(memory.assumes_legacy(KEY));
        let problem = memory.problem().unwrap();
        assert!(problem.contains("cannot be written"), "{problem}");
    }

    #[test]
    fn in_process_servers_have_no_key() {
        let stdio = ServerConfig::new(
            "s",
            TransportConfig::Stdio(mcp_config::StdioConfig::new("server")),
        );
        assert_eq!(EraMemory::key(&stdio).map(|k| k.len()), Some(16));
        let sdk = ServerConfig::new("s", TransportConfig::Sdk { name: "x".into() });
        assert_eq!(EraMemory::key(&sdk), None);
    }
}
