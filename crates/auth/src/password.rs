//! Password hashing (argon2id) and the password policy.
//!
//! Hashing runs on a small dedicated pool (one thread per core, at most four),
//! not on tokio's blocking pool: each worker keeps one 7 MiB argon2 memory
//! buffer and reuses it, so memory stays bounded (cores × 7 MiB) however many
//! logins arrive at once, and the async executor is never blocked. Requests
//! beyond the pool's capacity wait in its queue.
//!
//! A worker that has had no job for [`idle_release`] (2 s by default) frees
//! its buffer, so an idle server does not hold cores × 7 MiB; a burst of
//! logins allocates once per worker and then reuses, so logins under load
//! are not slower. The buffer is reserved with more capacity than glibc's
//! largest dynamic mmap threshold (32 MiB; only the 7 MiB used are ever
//! touched), so it is always its own mapping and freeing it returns the
//! memory to the system at once instead of leaving it in a malloc arena.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use argon2::password_hash::phc::{Output, ParamsString, PasswordHash, Salt};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use stoa_core::AppError;
use stoa_core::config::{ConfigError, Env};
use subtle::ConstantTimeEq;

/// argon2id, 7 MiB, 5 passes, 1 lane: one of OWASP's equivalent minimum
/// settings (with 19 MiB/t=2, 12/3, 9/4). Same CPU per hash as 19 MiB/t=2, a
/// third of the memory per concurrent login (the 60 MB budget). Older hashes
/// verify with their own parameters until the password changes.
fn params() -> Params {
    Params::new(MEMORY_KIB, PASSES, 1, Some(32)).unwrap_or_default()
}

const MEMORY_KIB: u32 = 7 * 1024;
const PASSES: u32 = 5;

fn argon2_with(params: Params) -> Argon2<'static> {
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// A salt for the dummy verification of unknown accounts (its result is discarded).
const DUMMY_SALT: &[u8; 16] = b"stoa-dummy-salt!";

type Job = Box<dyn FnOnce(&mut Vec<Block>) + Send>;

struct Pool {
    jobs: Mutex<Sender<Job>>,
}

static POOL: LazyLock<Pool> = LazyLock::new(|| {
    let (tx, rx) = channel::<Job>();
    let rx = Arc::new(Mutex::new(rx));
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    for i in 0..workers {
        let rx = rx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("stoa-argon2-{i}"))
            .spawn(move || worker(&rx));
        if let Err(err) = spawned {
            tracing::error!(error = %err, "cannot start a password hashing thread");
        }
    }
    Pool {
        jobs: Mutex::new(tx),
    }
});

/// How long a worker keeps its buffer without a job, in milliseconds.
static IDLE_RELEASE_MS: AtomicU64 = AtomicU64::new(2_000);
/// Bytes of argon2 buffers the workers hold right now.
static HELD_BYTES: AtomicUsize = AtomicUsize::new(0);

/// How long an idle hashing worker keeps its 7 MiB buffer.
pub fn idle_release() -> Duration {
    Duration::from_millis(IDLE_RELEASE_MS.load(Ordering::Relaxed))
}

/// Changes [`idle_release`] (tests use a few milliseconds).
pub fn set_idle_release(after: Duration) {
    IDLE_RELEASE_MS.store(
        u64::try_from(after.as_millis()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
}

/// Bytes of argon2 memory the hashing workers use (0 when all are idle).
pub fn held_bytes() -> usize {
    HELD_BYTES.load(Ordering::Relaxed)
}

fn bytes(memory: &[Block]) -> usize {
    std::mem::size_of_val(memory)
}

fn account(before: usize, after: usize) {
    HELD_BYTES.fetch_sub(before, Ordering::Relaxed);
    HELD_BYTES.fetch_add(after, Ordering::Relaxed);
}

fn worker(rx: &Mutex<Receiver<Job>>) {
    let mut memory: Vec<Block> = Vec::new();
    let mut last_job = Instant::now();
    loop {
        let idle = idle_release();
        if !memory.is_empty() && last_job.elapsed() >= idle {
            // Unmap first, then account: whoever reads 0 held bytes sees
            // the memory already given back.
            let held = bytes(&memory);
            memory = Vec::new();
            account(held, 0);
        }
        // Every worker waits with a timeout, even without a buffer: the
        // receiver is shared under a lock, and a worker holding a buffer
        // must get its turn to notice that it is idle.
        let wait = if memory.is_empty() {
            idle
        } else {
            idle.saturating_sub(last_job.elapsed())
        }
        .max(Duration::from_millis(1));
        let job = {
            let guard = rx.lock().unwrap_or_else(|e| e.into_inner());
            guard.recv_timeout(wait)
        };
        match job {
            Ok(job) => {
                job(&mut memory);
                last_job = Instant::now();
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Capacity (in blocks) of a worker's buffer: above glibc's largest dynamic
/// mmap threshold (32 MiB), so the buffer is always a separate mapping that
/// `free` unmaps. Pages past the blocks in use are never touched, so they
/// cost address space, not memory.
const MAPPED_BLOCKS: usize = 33 * 1024;

/// Runs `f` on the hashing pool with that worker's reusable memory.
async fn on_pool<R: Send + 'static>(
    f: impl FnOnce(&mut Vec<Block>) -> R + Send + 'static,
) -> Result<R, AppError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move |memory| {
        let held = bytes(memory);
        let result = f(memory);
        account(held, bytes(memory));
        let _ = tx.send(result);
    });
    POOL.jobs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job)
        .map_err(|_| AppError::internal("password hashing pool is gone"))?;
    rx.await
        .map_err(|_| AppError::internal("password hashing job was dropped"))
}

/// Computes argon2id of `password` with `salt` and `params` into `out`, using
/// `memory` when it fits the parameters (it is grown once, then reused).
fn compute(
    password: &[u8],
    salt: &[u8],
    params: Params,
    out: &mut [u8],
    memory: &mut Vec<Block>,
) -> Result<(), String> {
    let blocks = params.block_count();
    if memory.len() != blocks {
        *memory = Vec::new();
        let mut fresh = Vec::with_capacity(blocks.max(MAPPED_BLOCKS));
        fresh.resize(blocks, Block::default());
        *memory = fresh;
    }
    argon2_with(params)
        .hash_password_into_with_memory(password, salt, out, &mut memory[..])
        .map_err(|e| e.to_string())
}

fn hash_with(password: &str, memory: &mut Vec<Block>) -> Result<String, String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| e.to_string())?;
    let params = params();
    let mut out = [0u8; 32];
    compute(password.as_bytes(), &salt, params.clone(), &mut out, memory)?;
    let phc = PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(&params).map_err(|e| e.to_string())?,
        salt: Some(Salt::new(&salt).map_err(|e| e.to_string())?),
        hash: Some(Output::new(&out).map_err(|e| e.to_string())?),
    };
    Ok(phc.to_string())
}

fn verify_with(password: &str, hash: Option<&str>, memory: &mut Vec<Block>) -> bool {
    let parsed = hash.and_then(|h| PasswordHash::new(h).ok());
    let Some(parsed) = parsed.filter(|p| p.algorithm == Algorithm::Argon2id.ident()) else {
        // Unknown account (or unusable hash): same cost, always false.
        let mut out = [0u8; 32];
        let _ = compute(password.as_bytes(), DUMMY_SALT, params(), &mut out, memory);
        return false;
    };
    let (Some(salt), Some(expected)) = (parsed.salt.as_ref(), parsed.hash.as_ref()) else {
        return false;
    };
    let Ok(stored_params) = Params::try_from(&parsed) else {
        return false;
    };
    let mut out = vec![0u8; expected.as_bytes().len()];
    compute(password.as_bytes(), salt, stored_params, &mut out, memory).is_ok()
        && bool::from(out.ct_eq(expected.as_bytes()))
}

/// Hashes a password (PHC string, `$argon2id$v=19$m=7168,t=5,p=1$...`).
pub async fn hash_password(password: String) -> Result<String, AppError> {
    on_pool(move |memory| hash_with(&password, memory))
        .await?
        .map_err(AppError::internal)
}

/// Verifies `password` against `hash`; with no hash, spends one hash's worth of
/// work anyway and answers false, so unknown accounts are not revealed by timing.
pub async fn verify_password(password: String, hash: Option<String>) -> Result<bool, AppError> {
    on_pool(move |memory| verify_with(&password, hash.as_deref(), memory)).await
}

/// The password rules (`OM_PASSWORD_*`), as the reference has them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasswordPolicy {
    pub min_length: usize,
    pub require_digit: bool,
    pub require_uppercase: bool,
    pub require_special: bool,
}

impl Default for PasswordPolicy {
    fn default() -> Self {
        Self {
            min_length: 6,
            require_digit: true,
            require_uppercase: true,
            require_special: true,
        }
    }
}

/// Longest accepted password (argon2 is fine with more, but nobody needs it).
pub const MAX_PASSWORD_LEN: usize = 256;

impl PasswordPolicy {
    pub fn from_env(env: &Env<'_>) -> Result<Self, ConfigError> {
        let d = Self::default();
        Ok(Self {
            min_length: env.parse_or("OM_PASSWORD_MIN_LENGTH", d.min_length)?,
            require_digit: env.flag("OM_PASSWORD_REQUIRE_DIGIT", d.require_digit)?,
            require_uppercase: env.flag("OM_PASSWORD_REQUIRE_UPPERCASE", d.require_uppercase)?,
            require_special: env.flag("OM_PASSWORD_REQUIRE_SPECIAL", d.require_special)?,
        })
    }

    /// The rules `password` breaks (empty = acceptable).
    pub fn violations(&self, password: &str) -> Vec<String> {
        let mut out = Vec::new();
        let len = password.chars().count();
        if len < self.min_length {
            out.push(format!("at least {} characters", self.min_length));
        }
        if len > MAX_PASSWORD_LEN {
            out.push(format!("at most {MAX_PASSWORD_LEN} characters"));
        }
        if self.require_digit && !password.chars().any(|c| c.is_ascii_digit()) {
            out.push("a digit".into());
        }
        if self.require_uppercase && !password.chars().any(|c| c.is_uppercase()) {
            out.push("an uppercase letter".into());
        }
        if self.require_special && !password.chars().any(|c| !c.is_alphanumeric()) {
            out.push("a special character".into());
        }
        out
    }

    /// `Err` with a message naming what is missing.
    pub fn check(&self, password: &str) -> Result<(), String> {
        let v = self.violations(password);
        if v.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "Password does not meet the requirements: needs {}.",
                v.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy() {
        let p = PasswordPolicy::default();
        assert!(p.check("Secret1!").is_ok());
        assert_eq!(p.violations("secret").len(), 3);
        assert!(p.check("S1!").is_err());
        let lax = PasswordPolicy {
            min_length: 3,
            require_digit: false,
            require_uppercase: false,
            require_special: false,
        };
        assert!(lax.check("abc").is_ok());
    }

    #[test]
    fn hashes_verify_and_interoperate_with_the_argon2_crate() {
        use argon2::password_hash::{PasswordHasher, PasswordVerifier};
        let mut memory = Vec::new();
        let hash = hash_with("Secret1!", &mut memory).unwrap_or_default();
        assert!(hash.starts_with("$argon2id$v=19$m=7168,t=5,p=1$"), "{hash}");
        assert!(verify_with("Secret1!", Some(&hash), &mut memory));
        assert!(!verify_with("secret1!", Some(&hash), &mut memory));
        assert!(!verify_with("x", Some("not a hash"), &mut memory));
        assert!(!verify_with("x", None, &mut memory));
        // Our hashes verify with the crate's own verifier, and its hashes (other
        // parameters too) with ours.
        let a2 = argon2_with(params());
        let parsed = PasswordHash::new(&hash).unwrap_or_else(|e| panic!("{e}"));
        assert!(a2.verify_password(b"Secret1!", &parsed).is_ok());
        let light = argon2_with(Params::new(4096, 1, 1, None).unwrap_or_default());
        let theirs = light
            .hash_password(b"Other#2")
            .map(|h| h.to_string())
            .unwrap_or_default();
        assert!(verify_with("Other#2", Some(&theirs), &mut memory));
        assert!(!verify_with("Other#3", Some(&theirs), &mut memory));
    }

    /// Resident memory of this process, from `/proc/self/statm`.
    fn rss_bytes() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
        let pages: usize = statm
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        pages * 4096
    }

    #[tokio::test]
    async fn idle_workers_give_their_buffers_back() {
        const MIB: usize = 1024 * 1024;
        set_idle_release(Duration::from_millis(100));
        let before = rss_bytes();
        let hash = hash_password("Secret1!".into()).await.unwrap_or_default();
        assert!(held_bytes() >= 7 * MIB, "{}", held_bytes());
        let busy = rss_bytes();
        // Back to back, the buffer is reused: nothing is allocated again.
        assert!(
            verify_password("Secret1!".into(), Some(hash.clone()))
                .await
                .unwrap_or(false)
        );
        assert!(held_bytes() < 2 * 8 * MIB);
        let mut waited = 0;
        while held_bytes() > 0 && waited < 50 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            waited += 1;
        }
        assert_eq!(held_bytes(), 0, "idle workers keep nothing");
        // What hashing touched went back to the system: the process is
        // back near where it started (how much of the 7 MiB a hash touches
        // depends on the parameters, so compare with the start, not a size).
        if cfg!(target_os = "linux") && busy > before {
            assert!(
                rss_bytes() <= before + 2 * MIB,
                "the memory went back to the system: {} -> {} -> {} MiB",
                before / MIB,
                busy / MIB,
                rss_bytes() / MIB
            );
        }
        // And the next login allocates again and works.
        assert!(
            verify_password("Secret1!".into(), Some(hash))
                .await
                .unwrap_or(false)
        );
    }
}
