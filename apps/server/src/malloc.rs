//! glibc's allocator, tuned for a server with a few busy threads.
//!
//! By default glibc gives every thread that allocates an arena of its own
//! (up to eight per core) and keeps what is freed in it, and its threshold
//! for serving large blocks with `mmap` rises to 32 MB after the first large
//! block is freed, so later large blocks come from the arenas and stay
//! resident too. For stoa that meant the start-up work of each HTTP worker
//! (two arenas of 13 MB at idle) and the multi-megabyte statements of bulk
//! jobs remained in RSS after they were done: 89 MB idle and 120 MB during a
//! bulk stage update, against 58 and 84 MB with one arena and fixed 128 KiB
//! thresholds (docs/benchmarks.md). Throughput did not change measurably:
//! the hot paths allocate little and mostly on the threads that free.
//!
//! These settings are read by glibc before `main`, from the environment
//! only, and the workspace forbids `unsafe` (no `mallopt`). So the process
//! re-executes itself once with them set, which keeps its pid, arguments and
//! the rest of its environment. An operator who sets any of them chooses
//! for themselves: nothing is re-executed. Elsewhere than glibc on Linux
//! this does nothing.

/// The settings and their values.
const SETTINGS: [(&str, &str); 3] = [
    ("MALLOC_ARENA_MAX", "1"),
    ("MALLOC_TRIM_THRESHOLD_", "131072"),
    ("MALLOC_MMAP_THRESHOLD_", "131072"),
];

/// Set when the tuned process runs, so that it never re-executes again.
const MARKER: &str = "STOA_MALLOC_TUNED";

/// Re-executes the process with [`SETTINGS`] unless they (or the marker) are
/// already in the environment; returns when it cannot, leaving the default
/// allocator settings (the server works the same, with a larger RSS).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn tune() {
    use std::os::unix::process::CommandExt;

    if std::env::var_os(MARKER).is_some()
        || SETTINGS
            .iter()
            .any(|(name, _)| std::env::var_os(name).is_some())
    {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = std::process::Command::new(exe);
    command.args(std::env::args_os().skip(1)).env(MARKER, "1");
    for (name, value) in SETTINGS {
        command.env(name, value);
    }
    // Only returns on failure (the binary was replaced or removed meanwhile).
    let err = command.exec();
    eprintln!("stoa: running with glibc's default allocator settings ({err})");
}

/// Nothing to tune off glibc.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn tune() {}
