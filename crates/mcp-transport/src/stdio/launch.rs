//! Starting a stdio server: a spawn through `process-wrap`, as the leader
//! of a new process group, from a thread that lives as long as the host
//! (the parent-death signal follows the thread that started the child),
//! and that signal, set in the crate's one `unsafe` block.

use std::collections::BTreeMap;
use std::process::Stdio;

use nix::sys::signal::Signal;
use process_wrap::tokio::{KillOnDrop, ProcessGroup, TokioChildWrapper, TokioCommandWrap};
use tokio::net::unix::pipe;

use super::{child_env, program};

/// A started server and the host's ends of its pipes, registered with the
/// caller's runtime.
pub(super) struct Started {
    /// Dropping it kills the child and reaps it.
    pub(super) process: Box<dyn TokioChildWrapper>,
    /// Its pid, which is also its process group.
    pub(super) pid: Option<i32>,
    pub(super) stdin: pipe::Sender,
    pub(super) stdout: pipe::Receiver,
    pub(super) stderr: pipe::Receiver,
}

type LaunchJob = Box<dyn FnOnce() -> std::io::Result<Box<dyn TokioChildWrapper>> + Send>;

/// The work the spawner thread does for one server: a spawn by the
/// standard library (through `process-wrap`) inside the caller's runtime.
pub(super) fn launch_job(
    config: &mcp_config::StdioConfig,
    base_env: &BTreeMap<String, String>,
) -> std::io::Result<LaunchJob> {
    let env = child_env(base_env, &config.env, &config.env_passthrough);
    let command = config.command.clone();
    let args = config.args.clone();
    let cwd = config.cwd.clone();
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|e| std::io::Error::other(format!("no tokio runtime: {e}")))?;
    Ok(Box::new(move || {
        program::refuse_unknown_format(&command, &env, cwd.as_deref())?;
        let mut wrapped = TokioCommandWrap::with_new(&command, |command| {
            command
                .args(&args)
                .env_clear()
                .envs(&env)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if let Some(cwd) = &cwd {
                command.current_dir(cwd);
            }
            die_with_parent(command);
        });
        wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let _entered = runtime.enter();
        wrapped.spawn()
    }))
}

/// Registers what the spawner thread started with the caller's runtime.
pub(super) fn register(mut child: Box<dyn TokioChildWrapper>) -> std::io::Result<Started> {
    let pid = child.id().and_then(|id| i32::try_from(id).ok());
    let missing = |what: &str| std::io::Error::other(format!("no {what} pipe"));
    let stdin = child.stdin().take().ok_or_else(|| missing("stdin"))?;
    let stdout = child.stdout().take().ok_or_else(|| missing("stdout"))?;
    let stderr = child.stderr().take().ok_or_else(|| missing("stderr"))?;
    Ok(Started {
        pid,
        stdin: stdin
            .into_owned_fd()
            .and_then(pipe::Sender::from_owned_fd)?,
        stdout: stdout
            .into_owned_fd()
            .and_then(pipe::Receiver::from_owned_fd)?,
        stderr: stderr
            .into_owned_fd()
            .and_then(pipe::Receiver::from_owned_fd)?,
        process: child,
    })
}

type SpawnJob = Box<dyn FnOnce() + Send>;

/// The long-lived thread servers are forked from; `None` when it could not
/// be started.
static SPAWNER: std::sync::OnceLock<Option<std::sync::mpsc::Sender<SpawnJob>>> =
    std::sync::OnceLock::new();

/// Queues `job` on the spawner thread, starting the thread on first use.
/// False when the thread is unavailable.
fn send_to_spawner(job: SpawnJob) -> bool {
    let spawner = SPAWNER.get_or_init(|| {
        let (jobs, queue) = std::sync::mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("mcp-stdio-spawner".to_owned())
            .spawn(move || {
                for job in queue {
                    job();
                }
            })
            .ok()
            .map(|_| jobs)
    });
    spawner.as_ref().is_some_and(|jobs| jobs.send(job).is_ok())
}

fn spawner_gone() -> std::io::Error {
    std::io::Error::other("the process spawner thread is gone")
}

/// Queues `job` on the spawner thread and hands its outcome to `reply`:
/// `None` when it panicked (the thread survives that). On the main thread
/// ([`on_main_thread`]) the job runs right here instead. False when the
/// thread is unavailable.
fn launch_on_spawner(
    job: LaunchJob,
    reply: impl FnOnce(Option<std::io::Result<Box<dyn TokioChildWrapper>>>) + Send + 'static,
) -> bool {
    let run = move || reply(std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).ok());
    #[cfg(target_os = "linux")]
    if on_main_thread() {
        run();
        return true;
    }
    send_to_spawner(Box::new(run))
}

/// Whether the caller runs on the process's main thread, which lives as
/// long as the process: a child's parent-death signal, which follows the
/// thread that started it, then means the host's death, as it does from the
/// spawner thread.
#[cfg(target_os = "linux")]
fn on_main_thread() -> bool {
    nix::unistd::gettid() == nix::unistd::getpid()
}

/// Runs `job` on the main thread when called there, else on the spawner
/// thread, and blocks until it is done (well under a millisecond for a
/// clone, a few for a fork).
pub(super) fn on_spawner_thread(job: LaunchJob) -> std::io::Result<Box<dyn TokioChildWrapper>> {
    let (reply, result) = std::sync::mpsc::sync_channel(1);
    if !launch_on_spawner(job, move |outcome| {
        let _ = reply.send(outcome);
    }) {
        return Err(spawner_gone());
    }
    result
        .recv()
        .ok()
        .flatten()
        .unwrap_or_else(|| Err(spawner_gone()))
}

/// [`on_spawner_thread`] that awaits the spawner thread instead of
/// blocking on it.
pub(super) async fn on_spawner_thread_async(
    job: LaunchJob,
) -> std::io::Result<Box<dyn TokioChildWrapper>> {
    let (reply, result) = tokio::sync::oneshot::channel();
    if !launch_on_spawner(job, move |outcome| {
        let _ = reply.send(outcome);
    }) {
        return Err(spawner_gone());
    }
    result
        .await
        .ok()
        .flatten()
        .unwrap_or_else(|| Err(spawner_gone()))
}

/// Asks the kernel to SIGTERM the child when the thread that forked it
/// exits (the spawner thread lives as long as the host, see the module
/// docs), and refuses to start it when the host is already gone.
///
/// The workspace's only `unsafe` block: `Command::pre_exec` is an unsafe
/// fn, and no safe wrapper sets the parent-death signal. It is why this
/// crate denies `unsafe_code` instead of forbidding it (no `allow` can lift
/// a `forbid`), and allows it on this function alone.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(command: &mut tokio::process::Command) {
    let host = nix::unistd::getpid();
    let hook = move || -> std::io::Result<()> {
        nix::sys::prctl::set_pdeathsig(Signal::SIGTERM)?;
        if nix::unistd::getppid() != host {
            // The host died before the prctl: no signal will ever come.
            return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        }
        Ok(())
    };
    // SAFETY: the hook runs in the child between fork and exec, where only
    // async-signal-safe calls are allowed. It makes two system calls,
    // prctl(2) and getppid(2), through nix wrappers that only convert the
    // return value, and builds its errors from an errno or an error kind,
    // which allocates nothing; it takes no lock and touches no state shared
    // with other threads (`host` is a copied integer).
    unsafe {
        command.pre_exec(hook);
    }
}

/// Elsewhere the process group is the only guarantee.
#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut tokio::process::Command) {}
