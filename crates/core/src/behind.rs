//! Work a request leaves running after its answer, counted so it can be
//! waited for.
//!
//! Some answers must not depend on what the work finds: `POST /auth/reset`
//! answers `{ok:true}` whether or not the account exists, and any work done
//! before the answer (a lookup, an insert and its commit for a known account
//! only) shows in the answer's timing. Such a route checks its input, hands
//! the rest to [`Behind::spawn`] and answers at once. One counter per
//! database pool ([`crate::db::Db::behind`]); [`Behind::settle`] waits until
//! nothing runs (tests, before reading what the work wrote).
//!
//! What can be lost: work still running when a worker thread stops (the
//! server's graceful shutdown drains requests, not this work). Use it only
//! for work the client can simply ask for again.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

/// The count of running work, and a signal when it drops to zero.
#[derive(Debug, Default)]
pub struct Behind {
    running: AtomicUsize,
    idle: Notify,
}

impl Behind {
    /// Runs `work` on the current worker after the caller returns; the
    /// count includes it until it finishes (or is dropped).
    pub fn spawn<F>(self: &Arc<Self>, work: F)
    where
        F: Future<Output = ()> + 'static,
    {
        self.running.fetch_add(1, Ordering::SeqCst);
        let running = Running(self.clone());
        // The work keeps the row-level security scope of its request.
        let scope = crate::rls::current();
        actix_web::rt::spawn(crate::rls::within(scope, async move {
            let _running = running;
            work.await;
        }));
    }

    /// How much work runs now.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// Returns once no work runs (including work spawned meanwhile).
    pub async fn settle(&self) {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            // Registered before the check, so a finish in between wakes it.
            idle.as_mut().enable();
            if self.running() == 0 {
                return;
            }
            idle.await;
        }
    }
}

/// Counts one piece of work until dropped (finished, or its task dropped).
struct Running(Arc<Behind>);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn settle_waits_for_spawned_work() {
        let behind = Arc::new(Behind::default());
        behind.settle().await;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let done = Arc::new(AtomicUsize::new(0));
        let seen = done.clone();
        behind.spawn(async move {
            let _ = rx.await;
            seen.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(behind.running(), 1);
        let settle = behind.settle();
        tokio::pin!(settle);
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(20), settle.as_mut())
                .await
                .is_err(),
            "settled while work ran"
        );
        let _ = tx.send(());
        settle.await;
        assert_eq!((behind.running(), done.load(Ordering::SeqCst)), (0, 1));
    }
}
