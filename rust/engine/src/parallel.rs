//! Replications spread over rayon: each worker keeps its own workspace and accumulator,
//! and accumulators are exact integer sums, so the thread count never changes a number.
//!
//! A run can be watched and stopped from another thread through a [`Control`]: the run
//! loop reads its cancel flag before each replication (one relaxed load of a line nobody
//! writes while the run goes, nothing per event) and adds the replications it finished to
//! a shared counter once per chunk of [`CHUNK`], so the counter costs no contention.
use crate::error::EngineError;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Replications per rayon task (a workspace is built once per chunk) and per progress report.
pub const CHUNK: u64 = 32;

/// What the message of a run stopped by [`Control::cancel`] says.
pub const CANCELLED: &str = "the run was cancelled";

/// Shared between a run and whoever started it: a cancel flag, the replications finished
/// and the replications planned (which a precision run revises as it learns how many it needs).
#[derive(Debug, Default)]
pub struct Control {
    cancel: AtomicBool,
    done: AtomicU64,
    planned: AtomicU64,
    /// CPU time of the run's threads (nanoseconds), added per piece of work.
    cpu_ns: AtomicU64,
}

/// CPU time of the calling thread so far, in nanoseconds (CLOCK_THREAD_CPUTIME_ID): what a
/// run's own threads spent, unlike the process's clock, which counts every other request too.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given; the clock exists on Linux and
    // the BSDs (on failure the zeroed value reads as no time).
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Control {
    pub fn new() -> Self {
        Self::default()
    }

    /// Ask the run to stop; it returns an error (naming [`CANCELLED`]) within one replication per thread.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Replications finished so far (counted by chunks, so it lags by less than a chunk per thread).
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Replications the run expects to do in all.
    pub fn planned(&self) -> u64 {
        self.planned.load(Ordering::Relaxed)
    }

    pub fn plan(&self, replications: u64) {
        self.planned.store(replications, Ordering::Relaxed);
    }

    /// Progress of a run made of several engine calls elsewhere (chunks on a cluster): the
    /// caller who merges them reports what is done and planned in all.
    pub fn report(&self, done: u64, planned: u64) {
        self.done.store(done, Ordering::Relaxed);
        self.planned.store(planned, Ordering::Relaxed);
    }

    /// CPU seconds the run's threads have spent so far (all its calls through this control).
    pub fn cpu_seconds(&self) -> f64 {
        self.cpu_ns.load(Ordering::Relaxed) as f64 * 1e-9
    }

    fn spent(&self, since: u64) {
        self.cpu_ns
            .fetch_add(thread_cpu_ns().saturating_sub(since), Ordering::Relaxed);
    }

    fn finished(&self, replications: u64) {
        if replications > 0 {
            self.done.fetch_add(replications, Ordering::Relaxed);
        }
    }

    /// Err(CANCELLED) once the flag is up.
    pub fn check(&self) -> Result<(), EngineError> {
        if self.is_cancelled() {
            Err(EngineError::new(CANCELLED))
        } else {
            Ok(())
        }
    }
}

/// Replications [start, start + count): `make` a workspace per chunk, run `body` for each
/// replication, `finish` the workspace into an accumulator and `merge` them. A cancelled
/// run skips its remaining replications and answers Err(CANCELLED) (partial sums are dropped).
#[allow(clippy::too_many_arguments)]
pub fn over_replications<W: Send, A: Send>(
    start: u64,
    count: u64,
    threads: Option<usize>,
    ctl: &Control,
    make: impl Fn() -> W + Sync + Send,
    body: impl Fn(&mut W, u64) + Sync + Send,
    finish: impl Fn(W) -> A + Sync + Send,
    merge: impl Fn(A, A) -> A + Sync + Send,
    empty: impl Fn() -> A + Sync + Send,
) -> Result<A, EngineError> {
    ctl.check()?;
    // Whole chunks of replications per task, so a workspace is built once per chunk; the
    // count of finished replications rides in the fold state and is published per chunk.
    let (lo, hi) = (start as usize, (start + count) as usize);
    let work = || {
        (lo..hi)
            .into_par_iter()
            .with_min_len(CHUNK as usize)
            .fold(
                // A fold piece runs on one thread: its CPU time is that thread's clock
                // from the piece's start to its finish.
                || (make(), 0u64, thread_cpu_ns()),
                |(mut w, mut unreported, cpu), rep| {
                    if !ctl.is_cancelled() {
                        body(&mut w, rep as u64);
                        unreported += 1;
                        if unreported == CHUNK {
                            ctl.finished(CHUNK);
                            unreported = 0;
                        }
                    }
                    (w, unreported, cpu)
                },
            )
            .map(|(w, unreported, cpu)| {
                ctl.finished(unreported);
                let a = finish(w);
                ctl.spent(cpu);
                a
            })
            .reduce(&empty, &merge)
    };
    let acc = match threads {
        None => work(),
        // One thread: run on the caller's, with one workspace. Starting a pool of one
        // costs a thread spawn and a hand-over per run, and rayon's splitting builds a
        // workspace per piece; the sums are exact, so the numbers are the same.
        Some(n) if n <= 1 => {
            let cpu = thread_cpu_ns();
            let (mut w, mut unreported) = (make(), 0u64);
            for rep in lo..hi {
                if ctl.is_cancelled() {
                    break;
                }
                body(&mut w, rep as u64);
                unreported += 1;
                if unreported == CHUNK {
                    ctl.finished(CHUNK);
                    unreported = 0;
                }
            }
            ctl.finished(unreported);
            let a = merge(empty(), finish(w));
            ctl.spent(cpu);
            a
        }
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| EngineError::new(format!("cannot start {n} threads: {e}")))?;
            pool.install(work)
        }
    };
    ctl.check()?;
    Ok(acc)
}

/// The merge both run accumulators share: the same model and options (`same_run`), ranges of
/// replications adjacent in either order, summed exactly (so a merge equals the whole run).
pub fn merge_adjacent<T: Clone>(
    x: &T,
    y: &T,
    same_run: bool,
    range: fn(&T) -> (u64, u64),
    absorb: fn(&mut T, &T),
) -> Result<T, EngineError> {
    if !same_run {
        return Err(EngineError::at(
            "merge",
            "the runs differ in options, seed or blocks",
        ));
    }
    let (a, b) = if range(x).0 <= range(y).0 {
        (x, y)
    } else {
        (y, x)
    };
    let ((sa, na), (sb, nb)) = (range(a), range(b));
    if sa + na != sb {
        return Err(EngineError::at(
            "merge",
            format!(
                "replication ranges [{sa}, {}) and [{sb}, {}) are not adjacent",
                sa + na,
                sb + nb
            ),
        ));
    }
    let mut out = a.clone();
    absorb(&mut out, b);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Sum of replication numbers over [start, start + count), counting the bodies run.
    fn sum(
        start: u64,
        count: u64,
        threads: Option<usize>,
        ctl: &Control,
        ran: &AtomicU64,
    ) -> Result<u64, EngineError> {
        over_replications(
            start,
            count,
            threads,
            ctl,
            || 0u64,
            |w, rep| {
                ran.fetch_add(1, Ordering::Relaxed);
                if rep == 100 && ctl.planned() == u64::MAX {
                    ctl.cancel(); // the marker plan: cancel from inside the run
                }
                *w += rep;
            },
            |w| w,
            |a, b| a + b,
            || 0,
        )
    }

    #[test]
    fn counts_every_replication_it_runs() {
        for threads in [Some(1), Some(3), None] {
            let (ctl, ran) = (Control::new(), AtomicU64::new(0));
            assert_eq!(sum(5, 1000, threads, &ctl, &ran), Ok((5..1005).sum()));
            assert_eq!(ctl.done(), 1000);
            assert_eq!(ran.load(Ordering::Relaxed), 1000);
        }
    }

    #[test]
    fn the_runs_cpu_time_is_its_threads() {
        // Work of known size on 1 and 2 threads: the control's CPU seconds are at least the
        // work's and at most the process's over the same span (both from the kernel's clocks).
        for threads in [Some(1), Some(2)] {
            let ctl = Control::new();
            let (t0, p0) = (std::time::Instant::now(), process_cpu());
            let x = over_replications(
                0,
                64,
                threads,
                &ctl,
                || 0u64,
                |w, rep| {
                    let t = thread_cpu_ns();
                    let mut h = rep;
                    while thread_cpu_ns() - t < 1_000_000 {
                        h = h.wrapping_mul(6364136223846793005).wrapping_add(1);
                    }
                    *w = w.wrapping_add(h);
                },
                |w| w,
                |a, b| a.wrapping_add(b),
                || 0,
            )
            .unwrap();
            assert!(x > 0);
            let (wall, process) = (t0.elapsed().as_secs_f64(), process_cpu() - p0);
            let cpu = ctl.cpu_seconds();
            assert!(cpu >= 0.064, "{cpu}");
            assert!(
                cpu <= process + 1e-3 && cpu <= wall * 2.0 + 1e-3,
                "{cpu} {process} {wall}"
            );
        }
    }

    fn process_cpu() -> f64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: as in thread_cpu_ns.
        unsafe {
            libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts);
        }
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    }

    #[test]
    fn a_cancelled_control_runs_nothing() {
        let (ctl, ran) = (Control::new(), AtomicU64::new(0));
        ctl.cancel();
        assert_eq!(
            sum(0, 1000, Some(2), &ctl, &ran),
            Err(EngineError::new(CANCELLED))
        );
        assert_eq!(ran.load(Ordering::Relaxed), 0);
        assert_eq!(ctl.done(), 0);
    }

    #[test]
    fn cancelling_stops_the_remaining_replications() {
        let (ctl, ran) = (Control::new(), AtomicU64::new(0));
        ctl.plan(u64::MAX);
        assert_eq!(
            sum(0, 100_000, Some(1), &ctl, &ran),
            Err(EngineError::new(CANCELLED))
        );
        // One thread: replications 0..=100 ran, then the flag stopped every later one.
        assert_eq!(ran.load(Ordering::Relaxed), 101);
        assert_eq!(ctl.done(), 101);
    }
}
