//! The fence waiter: one thread per context (started on the first fence
//! that is not signalled at submit) that waits on host fences so `submit`
//! never blocks the producer. It sleeps in `poll` on the sync_file fds of
//! its jobs and a wake-up pipe, checks host fences and Vulkan timelines on a
//! short interval while it holds any, runs a job's continuation once its
//! fence signals (e.g. reads the frame, which releases it) and hands the
//! result on through a channel. A job past its deadline is dropped (its
//! frame with it) and reported as [`Error::FenceTimeout`].

use super::wait::HostWait;
use crate::error::{Error, Result};
use crossbeam_channel::{Receiver, Sender, TryRecvError};
use nix::fcntl::OFlag;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often fences that have no fd (host fences, Vulkan timelines) are
/// checked while some are waited on.
const CHECK_INTERVAL: Duration = Duration::from_millis(1);

/// One fence to wait on and what to do once it signals.
pub(crate) struct Job<R> {
    /// The caller's tag for the result.
    pub ticket: u64,
    pub fence: HostWait,
    /// Names the fence in errors, e.g. "sync_file (acquire of frame 3,
    /// distorted)".
    pub name: String,
    pub timeout: Duration,
    pub deadline: Instant,
    /// Runs on the waiter thread once the fence signals.
    pub then: Box<dyn FnOnce() -> Result<R> + Send>,
}

/// The handle of a waiter thread; dropping it stops the thread and drops
/// the jobs it still holds.
pub(crate) struct Waiter<R> {
    jobs: Option<Sender<Job<R>>>,
    wake: Option<OwnedFd>,
    done: Receiver<(u64, Result<R>)>,
    thread: Option<JoinHandle<()>>,
}

impl<R: Send + 'static> Waiter<R> {
    pub(crate) fn start() -> Result<Self> {
        let (wake_rx, wake_tx) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)
            .map_err(|e| Error::InvalidArgument(format!("cannot create the waiter's pipe: {e}")))?;
        let (jobs, job_rx) = crossbeam_channel::unbounded();
        let (done_tx, done) = crossbeam_channel::unbounded();
        let thread = std::thread::Builder::new()
            .name("vmafx-fences".into())
            .spawn(move || run(job_rx, wake_rx, done_tx))
            .map_err(|e| Error::InvalidArgument(format!("cannot start the fence waiter: {e}")))?;
        Ok(Self {
            jobs: Some(jobs),
            wake: Some(wake_tx),
            done,
            thread: Some(thread),
        })
    }

    pub(crate) fn add(&self, job: Job<R>) -> Result<()> {
        let stopped = || Error::InvalidArgument("the fence waiter thread stopped".into());
        self.jobs
            .as_ref()
            .ok_or_else(stopped)?
            .send(job)
            .map_err(|_| stopped())?;
        if let Some(wake) = &self.wake {
            // A full pipe already wakes the thread: EAGAIN is fine.
            let _ = nix::unistd::write(wake, &[1]);
        }
        Ok(())
    }

    /// Results ready now.
    pub(crate) fn try_next(&self) -> Option<(u64, Result<R>)> {
        self.done.try_recv().ok()
    }

    /// The next result, waiting up to `limit` (every job has a deadline, so
    /// this returns well within it unless the thread died).
    pub(crate) fn next(&self, limit: Duration) -> Result<(u64, Result<R>)> {
        self.done
            .recv_timeout(limit)
            .map_err(|_| Error::InvalidArgument("the fence waiter thread stopped answering".into()))
    }
}

impl<R> Drop for Waiter<R> {
    fn drop(&mut self) {
        // Closing the job channel, then the pipe (which wakes the poll),
        // tells the thread to drop its jobs and exit.
        self.jobs.take();
        self.wake.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run<R>(jobs: Receiver<Job<R>>, wake: OwnedFd, done: Sender<(u64, Result<R>)>) {
    let mut waiting: Vec<Job<R>> = Vec::new();
    loop {
        // The pipe first, then the channel: a job added after the pipe is
        // emptied leaves a byte that wakes the next sleep. (The other order
        // lost a job sent between the channel's last check and the drain:
        // its wake-up was drained, and the thread slept with it unread.)
        drain(&wake);
        loop {
            match jobs.try_recv() {
                Ok(job) => waiting.push(job),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
        settle(&mut waiting, &done);
        sleep(&waiting, &wake);
    }
}

/// Finishes the jobs whose fence signalled, failed or timed out.
fn settle<R>(waiting: &mut Vec<Job<R>>, done: &Sender<(u64, Result<R>)>) {
    let now = Instant::now();
    let mut i = 0;
    while i < waiting.len() {
        let job = &waiting[i];
        let outcome = match job.fence.is_signalled(&job.name) {
            Ok(false) if now < job.deadline => {
                i += 1;
                continue;
            }
            Ok(false) => Err(Error::FenceTimeout {
                fence: job.name.clone(),
                waited_ms: job.timeout.as_millis() as u64,
            }),
            Ok(true) => Ok(()),
            Err(e) => Err(e),
        };
        // `remove`, not `swap_remove`: fences that signal together are
        // finished (and their frames released) in submission order.
        let job = waiting.remove(i);
        let result = outcome.and_then(|()| (job.then)());
        // A closed channel means the context is gone: nothing to tell.
        let _ = done.send((job.ticket, result));
    }
}

/// Sleeps until a sync_file or the wake pipe is readable, the next check of
/// fd-less fences is due, or the nearest deadline.
fn sleep<R>(waiting: &[Job<R>], wake: &OwnedFd) {
    let mut fds: Vec<PollFd> = std::iter::once(wake.as_fd())
        .chain(waiting.iter().filter_map(|j| j.fence.fd()))
        .map(|fd| PollFd::new(fd, PollFlags::POLLIN))
        .collect();
    let now = Instant::now();
    let mut limit = waiting
        .iter()
        .map(|j| j.deadline.saturating_duration_since(now))
        .min();
    if waiting.iter().any(|j| j.fence.fd().is_none()) {
        limit = Some(limit.map_or(CHECK_INTERVAL, |l| l.min(CHECK_INTERVAL)));
    }
    let timeout = match limit {
        // Round up: a deadline 0.4 ms away must not spin at timeout 0.
        Some(l) => PollTimeout::try_from(l.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32)
            .unwrap_or(PollTimeout::MAX),
        None => PollTimeout::NONE,
    };
    // EINTR or a failure only means checking again sooner.
    let _ = poll(&mut fds, timeout);
}

/// Empties the wake-up pipe (non-blocking).
fn drain(wake: &OwnedFd) {
    let mut buf = [0u8; 64];
    while matches!(nix::unistd::read(wake.as_raw_fd(), &mut buf), Ok(n) if n > 0) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::HostFence;

    fn job(ticket: u64, fence: HostWait, timeout: Duration) -> Job<u64> {
        Job {
            ticket,
            fence,
            name: format!("job {ticket}"),
            timeout,
            deadline: Instant::now() + timeout,
            then: Box::new(move || Ok(ticket * 10)),
        }
    }

    /// Jobs added while the thread is between its checks are never lost:
    /// rounds of two jobs added at once from two threads, each round's
    /// results awaited before the next (a lost job has no later one to
    /// wake the thread for it).
    #[test]
    fn no_job_is_lost_between_the_checks() {
        let w = Waiter::<u64>::start().unwrap();
        let rounds = 3_000u64;
        std::thread::scope(|s| {
            let go: Vec<_> = (0..2u64)
                .map(|t| {
                    let (go, round) = crossbeam_channel::bounded::<u64>(1);
                    let w = &w;
                    s.spawn(move || {
                        // Ends when the rounds end (or the test fails).
                        for round in round {
                            let fence = HostFence::new();
                            fence.signal();
                            let job = job(
                                2 * round + t,
                                HostWait::Fence(fence),
                                Duration::from_secs(60),
                            );
                            w.add(job).unwrap();
                        }
                    });
                    go
                })
                .collect();
            for round in 0..rounds {
                go.iter().for_each(|g| g.send(round).unwrap());
                for _ in 0..2 {
                    let (_, r) = w
                        .next(Duration::from_secs(2))
                        .unwrap_or_else(|_| panic!("a job of round {round} was lost"));
                    r.unwrap();
                }
            }
        });
    }

    #[test]
    fn signalled_jobs_finish_and_silent_ones_time_out() {
        let w = Waiter::<u64>::start().unwrap();
        let fence = HostFence::new();
        let (read, write) = nix::unistd::pipe().unwrap();
        w.add(job(
            1,
            HostWait::Fence(fence.clone()),
            Duration::from_secs(10),
        ))
        .unwrap();
        w.add(job(2, HostWait::SyncFile(read), Duration::from_secs(10)))
            .unwrap();
        let (never, _keep) = nix::unistd::pipe().unwrap();
        w.add(job(3, HostWait::SyncFile(never), Duration::from_millis(50)))
            .unwrap();
        let (t, r) = w.next(Duration::from_secs(5)).unwrap();
        assert_eq!(t, 3);
        let e = r.unwrap_err();
        assert!(
            e.to_string().contains("job 3 not signalled within 50 ms"),
            "{e}"
        );
        nix::unistd::write(&write, b"x").unwrap();
        assert_eq!(w.next(Duration::from_secs(5)).unwrap().1.unwrap(), 20);
        fence.signal();
        assert_eq!(w.next(Duration::from_secs(5)).unwrap().1.unwrap(), 10);
        assert!(w.try_next().is_none());
    }
}
