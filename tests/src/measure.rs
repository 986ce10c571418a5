//! What the fault and load suites measure about this process and its
//! children: peak memory and whether a process still runs.

/// A line of `/proc/self/status` (`VmHWM`, `VmRSS`, ...) in bytes; 0 when
/// it cannot be read.
fn status_bytes(field: &str) -> usize {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return 0;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<usize>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Peak resident set size of this process so far, in bytes.
pub fn peak_rss() -> usize {
    status_bytes("VmHWM")
}

/// Current resident set size of this process, in bytes.
pub fn current_rss() -> usize {
    status_bytes("VmRSS")
}

/// Whether a process still runs (a zombie waiting to be reaped does not).
pub fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the parenthesised command name.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, Some('Z' | 'X') | None)
        }
        Err(_) => false,
    }
}
