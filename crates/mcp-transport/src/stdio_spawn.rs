//! Starting a stdio server on Linux without copying the host.
//!
//! The parent-death signal has to be set in the child between its creation
//! and `exec`, and the standard library's only way to run code there
//! (`Command::pre_exec`) makes it `fork` the whole host: the kernel copies
//! every page table, write-protects every page of the host, and the child's
//! `exec` then tears the copy down, while the host takes a fault on the
//! first write to each page it touches afterwards. That cost grows with
//! the host's memory and is paid once per server.
//!
//! Here the child is created the way `posix_spawn` creates it:
//! `clone(CLONE_VM | CLONE_VFORK)`, sharing the host's memory, on a small
//! stack of its own, with the spawning thread suspended until the child has
//! called `exec` (or failed and exited). The child makes only system calls:
//! signal dispositions back to their defaults, its three pipe ends onto
//! 0, 1 and 2, `chdir`, a new process group, the parent-death signal and
//! the check that the host is still its parent, an empty signal mask, then
//! `execve` of each candidate path in turn. Everything it reads (paths,
//! argv, envp) is built before the clone; a failure leaves its errno where
//! the parent reads it. `CLONE_PIDFD` gives the parent a pidfd for the
//! child's exit, so no pid is ever reused under it.
//!
//! A kernel without `CLONE_PIDFD` (before 5.2) gets [`Launch::Unsupported`]
//! and the caller falls back to the standard library's `fork`.
//!
//! This module and the fallback's `pre_exec` hook in `stdio.rs` are the
//! workspace's `unsafe` code: nothing safe creates a process with shared
//! memory or sets the parent-death signal.

#![allow(unsafe_code)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{CString, c_char, c_int, c_void};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

/// Everything the child reads, as owned C strings, built before the clone
/// so the child allocates nothing.
#[derive(Debug)]
pub(crate) struct SpawnPlan {
    /// The paths `execve` tries in order: the program itself when it names
    /// a path, else the program under each `PATH` directory of the child's
    /// environment (`execvp`'s order and default, never a shell).
    candidates: Vec<CString>,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: Option<CString>,
}

impl SpawnPlan {
    /// Fails with `InvalidInput` when the program, an argument, a variable
    /// or the directory holds a NUL byte (as `std::process::Command` does).
    pub(crate) fn new(
        program: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: Option<&Path>,
    ) -> io::Result<SpawnPlan> {
        let c = |bytes: &[u8]| {
            CString::new(bytes).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "nul byte found in provided data",
                )
            })
        };
        let candidates = if program.contains('/') {
            vec![c(program.as_bytes())?]
        } else {
            let path = env.get("PATH").map_or("/bin:/usr/bin", String::as_str);
            path.split(':')
                .map(|dir| match dir {
                    // An empty entry is the current directory, as for execvp.
                    "" => c(program.as_bytes()),
                    dir => c(format!("{}/{program}", dir.trim_end_matches('/')).as_bytes()),
                })
                .collect::<io::Result<_>>()?
        };
        let argv = std::iter::once(program)
            .chain(args.iter().map(String::as_str))
            .map(|arg| c(arg.as_bytes()))
            .collect::<io::Result<_>>()?;
        let envp = env
            .iter()
            .map(|(key, value)| c(format!("{key}={value}").as_bytes()))
            .collect::<io::Result<_>>()?;
        let cwd = cwd.map(|dir| c(dir.as_os_str().as_bytes())).transpose()?;
        Ok(SpawnPlan {
            candidates,
            argv,
            envp,
            cwd,
        })
    }
}

/// A started child: its pid (also its process group), a pidfd for its
/// exit, and the host's ends of its stdin, stdout and stderr pipes.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) pid: i32,
    pub(crate) pidfd: OwnedFd,
    pub(crate) stdin: OwnedFd,
    pub(crate) stdout: OwnedFd,
    pub(crate) stderr: OwnedFd,
}

/// How a launch ended.
#[derive(Debug)]
pub(crate) enum Launch {
    Started(Spawned),
    /// The kernel refused the clone (`CLONE_PIDFD` is from Linux 5.2, and a
    /// sandbox may refuse `CLONE_VM`): nothing was started, and the caller
    /// should use the standard library instead.
    Unsupported,
}

/// What the child reads; lives on the parent's stack for the duration of
/// the clone (the parent is suspended until the child execs or exits).
struct ChildArgs {
    candidates: *const *const c_char,
    candidate_count: usize,
    argv: *const *const c_char,
    envp: *const *const c_char,
    cwd: *const c_char,
    fds: [c_int; 3],
    host: libc::pid_t,
    /// The errno of the step that failed; 0 when `execve` succeeded.
    error: AtomicI32,
}

/// Bytes of the child's stack. It runs one frame of system calls.
const CHILD_STACK_BYTES: usize = 64 * 1024;

/// A stack for the child with a guard page below it, mapped once per
/// spawning thread (only the spawner thread launches) and reused.
struct ChildStack {
    base: *mut c_void,
    len: usize,
}

impl ChildStack {
    fn map() -> io::Result<ChildStack> {
        let page = page_size();
        let len = CHILD_STACK_BYTES + page;
        // SAFETY: a fresh anonymous private mapping; no existing memory is
        // touched, and the result is checked before use.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = ChildStack { base, len };
        // SAFETY: the lowest page of the mapping made above: an overflow of
        // the child's stack faults instead of writing over the host.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// The highest address, 16-byte aligned (stacks grow down).
    fn top(&self) -> *mut c_void {
        let end = self.base as usize + self.len;
        (end & !15) as *mut c_void
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `map` made; no child runs on it
        // (launch returns only after the child has exec'd or exited).
        unsafe {
            libc::munmap(self.base, self.len);
        }
    }
}

thread_local! {
    static STACK: RefCell<Option<ChildStack>> = const { RefCell::new(None) };
}

fn page_size() -> usize {
    // SAFETY: sysconf reads a constant of the system.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .unwrap_or(4096)
}

/// Moves `fd` to a number above 2, so the child's `dup2` onto 0, 1 and 2
/// never overwrites another of its pipe ends (a host started with its own
/// stdio closed gets pipes numbered from 0).
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC duplicates a descriptor we own; the new one is
    // owned by the returned OwnedFd and the old one is closed by `fd`'s drop.
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if moved < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `moved` is a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (reader, writer) = io::pipe()?;
    Ok((OwnedFd::from(reader), OwnedFd::from(writer)))
}

/// Starts the child described by `plan`. Must run on a thread whose exit
/// should signal the child: the spawner thread, or the main thread (see
/// `stdio.rs`).
pub(crate) fn launch(plan: &SpawnPlan) -> io::Result<Launch> {
    let (stdin_child, stdin) = pipe()?;
    let (stdout, stdout_child) = pipe()?;
    let (stderr, stderr_child) = pipe()?;
    let child_ends = [
        above_stdio(stdin_child)?,
        above_stdio(stdout_child)?,
        above_stdio(stderr_child)?,
    ];
    let pointers = |strings: &[CString]| -> Vec<*const c_char> {
        strings
            .iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect()
    };
    let candidates = pointers(&plan.candidates);
    let argv = pointers(&plan.argv);
    let envp = pointers(&plan.envp);
    let args = ChildArgs {
        candidates: candidates.as_ptr(),
        candidate_count: plan.candidates.len(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: plan.cwd.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        fds: child_ends.each_ref().map(AsRawFd::as_raw_fd),
        // SAFETY: getpid has no preconditions.
        host: unsafe { libc::getpid() },
        error: AtomicI32::new(0),
    };

    let (pid, clone_errno, pidfd) = STACK.with(|cell| -> io::Result<_> {
        let mut slot = cell.borrow_mut();
        let stack = match &mut *slot {
            Some(stack) => stack,
            empty => empty.insert(ChildStack::map()?),
        };
        let mut pidfd: c_int = -1;
        // SAFETY: signals are blocked on this thread for the clone so no
        // handler of the host can run in the child, which shares the host's
        // memory; the old mask is restored right after. The child runs
        // `child_main` on its own mapped stack and only reads `args`,
        // `candidates`, `argv`, `envp` and the plan's strings, all alive on
        // this frame, which CLONE_VFORK keeps suspended until the child has
        // exec'd or exited. The child writes only `args.error` (an atomic).
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            let pid = libc::clone(
                child_main,
                stack.top(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD,
                std::ptr::from_ref(&args).cast_mut().cast::<c_void>(),
                &mut pidfd as *mut c_int,
            );
            let clone_errno = (pid < 0).then(io::Error::last_os_error);
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            Ok((pid, clone_errno, pidfd))
        }
    })?;
    drop(child_ends);
    if let Some(error) = clone_errno {
        return match error.raw_os_error() {
            // An old kernel or a sandbox that refuses these flags.
            Some(libc::EINVAL | libc::ENOSYS | libc::EPERM) => Ok(Launch::Unsupported),
            _ => Err(error),
        };
    }
    // SAFETY: CLONE_PIDFD stored a fresh descriptor for the child here.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    let errno = args.error.load(Ordering::Acquire);
    if errno != 0 {
        // The child exited with 127 before exec: reap it now.
        let mut status = 0;
        // SAFETY: waits for our own child, which has exited already.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        return Err(io::Error::from_raw_os_error(errno));
    }
    Ok(Launch::Started(Spawned {
        pid,
        pidfd,
        stdin,
        stdout,
        stderr,
    }))
}

/// The child, between the clone and `exec`. It shares the host's memory and
/// runs on its own stack with every signal blocked, so it makes system
/// calls only: no allocation, no lock, nothing the host's threads touch.
extern "C" fn child_main(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `ChildArgs` on the suspended parent's frame, and
    // every pointer in it is valid for the child's life (see `launch`).
    unsafe {
        let args = &*(arg as *const ChildArgs);
        let fail = |errno: c_int| -> c_int {
            args.error.store(errno.max(1), Ordering::Release);
            libc::_exit(127)
        };
        let errno = || *libc::__errno_location();

        // Handlers of the host must not run here, and exec keeps ignored
        // signals ignored: put every caught signal back to its default, and
        // SIGPIPE too (Rust ignores it; servers expect the default), as the
        // standard library does for its children.
        for signal in 1..libc::SIGRTMAX() + 1 {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut current) != 0 {
                continue;
            }
            let caught =
                current.sa_sigaction != libc::SIG_DFL && current.sa_sigaction != libc::SIG_IGN;
            if caught || signal == libc::SIGPIPE {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        for (fd, target) in args.fds.iter().zip(0..) {
            if libc::dup2(*fd, target) < 0 {
                return fail(errno());
            }
        }
        if !args.cwd.is_null() && libc::chdir(args.cwd) != 0 {
            return fail(errno());
        }
        if libc::setpgid(0, 0) != 0 {
            return fail(errno());
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) != 0 {
            return fail(errno());
        }
        if libc::getppid() != args.host {
            // The host died before the prctl: no signal will ever come.
            return fail(libc::EPIPE);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());

        // execvp's search: go on past a missing or unreadable candidate,
        // report EACCES if one was seen, stop at any other error.
        let mut denied = false;
        for index in 0..args.candidate_count {
            libc::execve(*args.candidates.add(index), args.argv, args.envp);
            match errno() {
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
                other => return fail(other),
            }
        }
        fail(if denied { libc::EACCES } else { libc::ENOENT })
    }
}

/// A child started by [`launch`], registered with the caller's runtime:
/// waits on its pidfd, and on drop kills it and reaps it (at once when it
/// is already gone, else from a task, or a thread outside a runtime), so
/// no zombie is left behind.
#[derive(Debug)]
pub(crate) struct ChildProcess {
    pid: i32,
    pidfd: Option<tokio::io::unix::AsyncFd<OwnedFd>>,
    status: Option<std::process::ExitStatus>,
}

impl ChildProcess {
    /// Registers the pidfd with the current tokio runtime (the caller is
    /// inside one). When that fails the child is killed and reaped.
    pub(crate) fn new(pid: i32, pidfd: OwnedFd) -> io::Result<ChildProcess> {
        // SAFETY: the AsyncFd owns the OwnedFd, so the descriptor stays open
        // and the same for the AsyncFd's whole life.
        let registered = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE)
        };
        let mut child = ChildProcess {
            pid,
            pidfd: None,
            status: None,
        };
        match registered {
            Ok(pidfd) => {
                child.pidfd = Some(pidfd);
                Ok(child)
            }
            // Dropping `child` kills it and reaps it from a thread.
            Err(error) => Err(io::Error::from(error)),
        }
    }

    /// Its exit status, once it has exited (cancel-safe).
    pub(crate) async fn wait(&mut self) -> io::Result<std::process::ExitStatus> {
        loop {
            if let Some(status) = self.status {
                return Ok(status);
            }
            if let Some(status) = try_reap(self.pid)? {
                self.status = Some(status);
                self.pidfd = None;
                continue;
            }
            let Some(pidfd) = &self.pidfd else {
                return Err(io::Error::other("the child's pidfd is gone"));
            };
            // A pidfd turns readable when its process exits.
            let mut ready = pidfd.readable().await?;
            ready.clear_ready();
        }
    }
}

/// `waitpid(WNOHANG)` of our own child: its status once it has exited.
fn try_reap(pid: i32) -> io::Result<Option<std::process::ExitStatus>> {
    use std::os::unix::process::ExitStatusExt;
    let mut status = 0;
    // SAFETY: waits without blocking for a child this module started and
    // nothing else reaps; writes only `status`.
    let reaped = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    match reaped {
        0 => Ok(None),
        r if r == pid => Ok(Some(std::process::ExitStatus::from_raw(status))),
        _ => Err(io::Error::last_os_error()),
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        // SAFETY: the pid is our unreaped child, so it cannot have been
        // reused; SIGKILL to it has no other effect.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        if matches!(try_reap(self.pid), Ok(Some(_)) | Err(_)) {
            return;
        }
        let reaper = Reaper { pid: self.pid };
        match (tokio::runtime::Handle::try_current(), self.pidfd.take()) {
            (Ok(runtime), Some(pidfd)) => {
                // A runtime that shuts down first drops the task, and the
                // reaper's drop then waits from a thread instead.
                runtime.spawn(async move {
                    loop {
                        match try_reap(reaper.pid) {
                            Ok(None) => {}
                            _ => return reaper.done(),
                        }
                        match pidfd.readable().await {
                            Ok(mut ready) => ready.clear_ready(),
                            Err(_) => return,
                        }
                    }
                });
            }
            _ => drop(reaper),
        }
    }
}

/// Reaps a killed child: by its task, or when dropped unfinished, with a
/// blocking wait on a thread of its own.
struct Reaper {
    pid: i32,
}

impl Reaper {
    fn done(self) {
        std::mem::forget(self);
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        let pid = self.pid;
        let _ = std::thread::Builder::new()
            .name("mcp-stdio-reaper".to_owned())
            .spawn(move || {
                let mut status = 0;
                // SAFETY: a blocking wait for our own killed child.
                unsafe { libc::waitpid(pid, &mut status, 0) };
            });
    }
}
