//! The bounded executor checks run on: a fixed pool of worker threads fed by a bounded queue.
//!
//! Each job has a [`JobCell`] whose phase (queued, running, done, cancelled, abandoned) tells
//! the registry where a timed-out check was. A worker stuck in a hanging authorizer past its
//! deadline is *abandoned*: a spare worker replaces it (up to a fixed number of spares), and
//! the stuck thread exits when the authorizer finally returns.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use mrtr_core::lease::{CheckId, Failure, TimeoutPhase};

use super::authorizer::{
    Authorization, AuthorizationContext, Authorizer, CancellationToken, InvocationFeatures,
};
use super::key::SubscriptionKey;

const QUEUED: u8 = 0;
const RUNNING: u8 = 1;
const DONE: u8 = 2;
const CANCELLED: u8 = 3;
const ABANDONED: u8 = 4;

/// Shared state of one job.
#[derive(Debug)]
pub(crate) struct JobCell {
    phase: AtomicU8,
    token: CancellationToken,
}

impl JobCell {
    pub(crate) fn new() -> Self {
        Self {
            phase: AtomicU8::new(QUEUED),
            token: CancellationToken::new(),
        }
    }

    fn swap_phase(&self, from: u8, to: u8) -> bool {
        self.phase
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Whether the job is still waiting for a worker or running.
    pub(crate) fn is_pending(&self) -> bool {
        matches!(self.phase.load(Ordering::Acquire), QUEUED | RUNNING)
    }

    pub(crate) fn is_running(&self) -> bool {
        self.phase.load(Ordering::Acquire) == RUNNING
    }
}

/// What a worker reports for a job.
pub(crate) struct Completion {
    pub(crate) key: SubscriptionKey,
    pub(crate) check: CheckId,
    pub(crate) outcome: Result<Authorization, Failure>,
}

/// Where workers put results, and how they wake the registry's driver.
pub(crate) struct Completions {
    done: Mutex<Vec<Completion>>,
    ready: Condvar,
    waker: OnceLock<Arc<dyn Fn() + Send + Sync>>,
}

impl Completions {
    pub(crate) fn new() -> Self {
        Self {
            done: Mutex::new(Vec::new()),
            ready: Condvar::new(),
            waker: OnceLock::new(),
        }
    }

    pub(crate) fn set_waker(&self, waker: Arc<dyn Fn() + Send + Sync>) {
        let _ = self.waker.set(waker);
    }

    pub(crate) fn wake(&self) {
        if let Some(w) = self.waker.get() {
            w();
        }
    }

    fn push(&self, c: Completion) {
        lock(&self.done).push(c);
        self.ready.notify_all();
        self.wake();
    }

    pub(crate) fn drain(&self) -> Vec<Completion> {
        std::mem::take(&mut *lock(&self.done))
    }

    /// Blocks until a result is waiting or `timeout` passes (real time).
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        let mut done = lock(&self.done);
        while done.is_empty() {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            done = match self.ready.wait_timeout(done, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        true
    }
}

/// One check to run.
pub(crate) struct Job {
    pub(crate) cell: Arc<JobCell>,
    pub(crate) key: SubscriptionKey,
    pub(crate) check: CheckId,
    pub(crate) ctx: AuthorizationContext,
    pub(crate) authorizer: Arc<dyn Authorizer>,
    pub(crate) completions: Arc<Completions>,
}

impl Job {
    /// Runs the check unless it was cancelled while queued. Returns whether its worker was
    /// abandoned meanwhile (and must exit).
    fn run(self) -> bool {
        if !self.cell.swap_phase(QUEUED, RUNNING) {
            return false;
        }
        let features = InvocationFeatures {
            cancellation: self.cell.token.clone(),
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.authorizer.authorize(&self.ctx, &features)
        }));
        let outcome = match outcome {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(Failure::Error),
            Err(_) => Err(Failure::Panicked),
        };
        // Report before marking done, so "no check pending" implies "its result is waiting".
        // A result that races a cancellation is discarded by the registry's id check.
        if !self.cell.token.is_cancelled() {
            self.completions.push(Completion {
                key: self.key,
                check: self.check,
                outcome,
            });
        }
        !self.cell.swap_phase(RUNNING, DONE)
    }
}

struct Queue {
    jobs: VecDeque<Job>,
    shutdown: bool,
    spares_in_use: usize,
}

struct Pool {
    queue: Mutex<Queue>,
    work: Condvar,
    capacity: usize,
    max_spares: usize,
}

/// The worker pool. Dropping it stops idle workers; busy ones finish their check first.
pub(crate) struct Executor {
    pool: Arc<Pool>,
}

/// The queue is full: the check fails closed.
#[derive(Debug)]
pub(crate) struct Full;

impl Executor {
    /// `workers` threads (at least one), `capacity` queued jobs, `max_spares` replacements
    /// for abandoned workers.
    pub(crate) fn new(workers: usize, capacity: usize, max_spares: usize) -> Self {
        let pool = Arc::new(Pool {
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                shutdown: false,
                spares_in_use: 0,
            }),
            work: Condvar::new(),
            capacity,
            max_spares,
        });
        for _ in 0..workers.max(1) {
            spawn_worker(&pool);
        }
        Self { pool }
    }

    /// Queues a job, or refuses it when the queue is full.
    pub(crate) fn submit(&self, job: Job) -> Result<(), Full> {
        let mut q = lock(&self.pool.queue);
        if q.jobs.len() >= self.pool.capacity || q.shutdown {
            return Err(Full);
        }
        q.jobs.push_back(job);
        drop(q);
        self.pool.work.notify_one();
        Ok(())
    }

    /// Cancels a job and tells where it was: queued (removed now), running (cancelled
    /// cooperatively), or already finished (`None`).
    pub(crate) fn cancel(&self, cell: &Arc<JobCell>) -> Option<TimeoutPhase> {
        cell.token.cancel();
        if cell.swap_phase(QUEUED, CANCELLED) {
            lock(&self.pool.queue)
                .jobs
                .retain(|j| !Arc::ptr_eq(&j.cell, cell));
            return Some(TimeoutPhase::Queued);
        }
        cell.is_running().then_some(TimeoutPhase::Running)
    }

    /// Gives up on a job stuck running: a spare worker takes its place if one is left, and the
    /// stuck worker exits once its authorizer returns. Returns whether a spare was started.
    pub(crate) fn abandon(&self, cell: &Arc<JobCell>) -> bool {
        cell.token.cancel();
        let mut q = lock(&self.pool.queue);
        if q.spares_in_use >= self.pool.max_spares || !cell.swap_phase(RUNNING, ABANDONED) {
            return false;
        }
        q.spares_in_use += 1;
        drop(q);
        if !spawn_worker(&self.pool) {
            lock(&self.pool.queue).spares_in_use -= 1;
            return false;
        }
        true
    }

    /// Jobs waiting for a worker.
    pub(crate) fn queued(&self) -> usize {
        lock(&self.pool.queue).jobs.len()
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        let mut q = lock(&self.pool.queue);
        q.shutdown = true;
        // Queued checks are dropped unrun; their subscriptions are gone with the registry.
        q.jobs.clear();
        drop(q);
        self.pool.work.notify_all();
    }
}

fn spawn_worker(pool: &Arc<Pool>) -> bool {
    let pool = Arc::clone(pool);
    thread::Builder::new()
        .name("mrtr-authorizer".into())
        .spawn(move || worker(&pool))
        .is_ok()
}

fn worker(pool: &Pool) {
    loop {
        let job = {
            let mut q = lock(&pool.queue);
            loop {
                if q.shutdown {
                    return;
                }
                if let Some(job) = q.jobs.pop_front() {
                    break job;
                }
                q = match pool.work.wait(q) {
                    Ok(guard) => guard,
                    Err(poisoned) => poisoned.into_inner(),
                };
            }
        };
        if job.run() {
            // Abandoned: a spare already took this worker's place.
            let mut q = lock(&pool.queue);
            q.spares_in_use = q.spares_in_use.saturating_sub(1);
            return;
        }
    }
}

/// Locks a mutex, recovering from poisoning: every critical section here leaves the data
/// consistent, and authorizer panics are caught before they could poison anything.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
