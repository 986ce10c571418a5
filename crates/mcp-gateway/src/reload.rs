//! Live reload: the configuration files a runtime's servers came from
//! are watched (the `notify` crate), and a change is applied with
//! [`SessionRuntime::reconcile`]: unchanged servers are not touched, new
//! ones start lazily, removed ones close once their calls end (or after
//! the runtime's retire grace), changed ones are replaced, and every
//! client hears of it through the catalog's change notices.
//!
//! An edit is applied only when the whole configuration loads cleanly:
//! one with an error (a file that no longer parses, an invalid entry)
//! keeps the last good configuration and is reported, because applying
//! it would remove every server of the broken file.
//!
//! Editors save by writing a new file and renaming it over the old one,
//! so the folders holding the files are watched, and events are filtered
//! by file name. Events that come in a burst (one save is several) are
//! taken as one change after a short quiet time.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::{Reconciled, ServerSet, SessionRuntime};
use notify::event::ModifyKind;
use notify::{EventKind, RecursiveMode, Watcher as _};
use tokio::sync::mpsc;

use crate::error::GatewayError;

/// How long after the last event of a burst the change is loaded.
pub const RELOAD_QUIET_TIME: Duration = Duration::from_millis(150);

/// What one change of the watched files did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reload {
    /// The new configuration was applied.
    Applied(Reconciled),
    /// The new configuration has errors; the last good one stays. The
    /// problems, as the loader wrote them.
    Kept(Vec<String>),
}

/// Watches files for as long as it lives.
pub struct ConfigWatch {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for ConfigWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigWatch").finish_non_exhaustive()
    }
}

impl Drop for ConfigWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Watches `files` (the configuration's files; those that do not exist
/// yet are watched for too) and, on a change, loads the configuration
/// with `load` (on a blocking thread) and reconciles `runtime` with it.
/// `load` answers the servers, or the problems that keep the last good
/// configuration; `report` hears what each change did.
pub fn watch_config<L, R>(
    runtime: Arc<SessionRuntime>,
    files: &[PathBuf],
    load: L,
    report: R,
) -> Result<ConfigWatch, GatewayError>
where
    L: Fn() -> Result<ServerSet, Vec<String>> + Send + Sync + 'static,
    R: Fn(Reload) + Send + Sync + 'static,
{
    let names: BTreeSet<OsString> = files
        .iter()
        .filter_map(|file| file.file_name().map(OsString::from))
        .collect();
    let folders: BTreeSet<PathBuf> = files
        .iter()
        .filter_map(|file| file.parent().map(Path::to_path_buf))
        .filter(|folder| folder.is_dir())
        .collect();
    let (changed, mut changes) = mpsc::unbounded_channel::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        // Reading the files (as each reload does) is no change, nor is a
        // change of their metadata.
        let writes = matches!(
            event.kind,
            EventKind::Create(_)
                | EventKind::Remove(_)
                | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any)
        );
        let relevant = writes
            && event.paths.iter().any(|path| {
                path.file_name()
                    .is_some_and(|name| names.contains(&OsString::from(name)))
            });
        if relevant {
            let _ = changed.send(());
        }
    })
    .map_err(watch_error)?;
    for folder in &folders {
        watcher
            .watch(folder, RecursiveMode::NonRecursive)
            .map_err(watch_error)?;
    }
    let load = Arc::new(load);
    let task = tokio::spawn(async move {
        while changes.recv().await.is_some() {
            // One save is several events: wait for the burst to end.
            loop {
                match tokio::time::timeout(RELOAD_QUIET_TIME, changes.recv()).await {
                    Ok(Some(())) => continue,
                    Ok(None) => return,
                    Err(_) => break,
                }
            }
            let load = Arc::clone(&load);
            let loaded = tokio::task::spawn_blocking(move || load()).await;
            let outcome = match loaded {
                Ok(Ok(servers)) => Reload::Applied(runtime.reconcile(servers).await),
                Ok(Err(problems)) => Reload::Kept(problems),
                Err(_) => Reload::Kept(vec!["loading the configuration failed".to_owned()]),
            };
            report(outcome);
        }
    });
    Ok(ConfigWatch {
        _watcher: watcher,
        task,
    })
}

fn watch_error(error: notify::Error) -> GatewayError {
    GatewayError::watch(error)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use mcp_catalog::McpConnector;
    use mcp_transport::ConnectOptions;

    use super::*;

    /// The servers of the configuration under `home`, loaded as a host
    /// loads them (errors keep the last good configuration).
    fn load_from(home: PathBuf) -> impl Fn() -> Result<ServerSet, Vec<String>> {
        move || {
            let options = mcp_config::LoadOptions::default()
                .with_home(&home)
                .with_project(home.join("project"))
                .with_openclaw_home(home.join(".openclaw"));
            let config = mcp_config::load(&options);
            let errors: Vec<String> = config
                .diagnostics
                .iter()
                .filter(|diagnostic| diagnostic.level == mcp_config::Level::Error)
                .map(mcp_config::diagnostic_line)
                .collect();
            match errors.is_empty() {
                true => Ok(ServerSet::all(config.servers.into_iter().map(|s| s.config))),
                false => Err(errors),
            }
        }
    }

    fn servers(names: &[(&str, &str)]) -> String {
        let entries: Vec<String> = names
            .iter()
            .map(|(name, program)| format!("{name:?}: {{\"command\": {program:?}}}"))
            .collect();
        format!("{{\"mcpServers\": {{{}}}}}", entries.join(", "))
    }

    async fn next(reports: &mut mpsc::UnboundedReceiver<Reload>) -> Reload {
        tokio::time::timeout(Duration::from_secs(10), reports.recv())
            .await
            .ok()
            .flatten()
            .unwrap_or(Reload::Kept(vec!["no report within 10 s".into()]))
    }

    #[tokio::test]
    async fn an_edit_is_reconciled_and_a_broken_one_keeps_the_last_good() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("project")).unwrap();
        let file = dir.path().join(".claude.json");
        std::fs::write(&file, servers(&[("a", "/bin/a"), ("b", "/bin/b")])).unwrap();
        let load = load_from(dir.path().to_path_buf());
        let connector = Arc::new(McpConnector::new(ConnectOptions::default()));
        let runtime =
            Arc::new(SessionRuntime::builder("reload", load().unwrap(), connector).build());
        let (sender, mut reports) = mpsc::unbounded_channel();
        let sender = Mutex::new(sender);
        let _watch = watch_config(
            Arc::clone(&runtime),
            std::slice::from_ref(&file),
            load,
            move |reload| {
                let _ = sender.lock().unwrap().send(reload);
            },
        )
        .unwrap();

        // An editor's save: a new file renamed over the old one.
        let saved = dir.path().join(".claude.json.tmp");
        std::fs::write(
            &saved,
            servers(&[("a", "/bin/a"), ("b", "/bin/b2"), ("c", "/bin/c")]),
        )
        .unwrap();
        std::fs::rename(&saved, &file).unwrap();
        let Reload::Applied(applied) = next(&mut reports).await else {
            panic!("the edit was not applied");
        };
        assert_eq!(
            (applied.added, applied.changed, applied.unchanged),
            (
                vec!["c".to_owned()],
                vec!["b".to_owned()],
                vec!["a".to_owned()]
            )
        );
        assert_eq!(runtime.servers(), ["a", "b", "c"]);

        // A broken edit changes nothing and is reported.
        std::fs::write(&file, "{\"mcpServers\": ").unwrap();
        assert!(
            matches!(next(&mut reports).await, Reload::Kept(problems) if problems[0].contains("invalid JSON"))
        );
        assert_eq!(runtime.servers(), ["a", "b", "c"]);

        // A file of another name in the folder is no change.
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        std::fs::write(&file, servers(&[("a", "/bin/a")])).unwrap();
        let Reload::Applied(applied) = next(&mut reports).await else {
            panic!("the edit was not applied");
        };
        assert_eq!(applied.removed, ["b", "c"]);
        assert_eq!(runtime.servers(), ["a"]);
        // Reading the file to reload it is not a change of its own.
        let quiet = tokio::time::timeout(Duration::from_secs(1), reports.recv()).await;
        assert!(quiet.is_err(), "a reload without an edit: {quiet:?}");
        runtime.shutdown().await;
    }
}
