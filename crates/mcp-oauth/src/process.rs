//! A guard over the process group of a command run on the host's behalf
//! (an assertion source here, a `headersHelper` in the transport): the
//! command runs in its own group, and the whole group is killed when the
//! guard drops armed, at a time limit, on too much output, or when the
//! caller gives up, so no grandchild outlives it.

/// SIGKILLs a command's process group when dropped armed.
#[derive(Debug)]
pub struct GroupGuard {
    #[cfg(unix)]
    pgid: Option<nix::unistd::Pid>,
}

impl GroupGuard {
    /// A guard over the group led by `pid` (a child spawned with
    /// `process_group(0)`); `None` guards nothing.
    #[cfg_attr(not(unix), allow(unused_variables))]
    pub fn new(pid: Option<u32>) -> Self {
        GroupGuard {
            #[cfg(unix)]
            pgid: pid
                .and_then(|pid| i32::try_from(pid).ok())
                .map(nix::unistd::Pid::from_raw),
        }
    }

    /// The command ended on its own: nothing to kill.
    pub fn disarm(&mut self) {
        #[cfg(unix)]
        {
            self.pgid = None;
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            // The group may be gone already; nothing to do then.
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}
