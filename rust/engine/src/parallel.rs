//! Replications spread over rayon: each worker keeps its own workspace and accumulator,
//! and accumulators are exact integer sums, so the thread count never changes a number.
use crate::error::EngineError;
use rayon::prelude::*;

#[allow(clippy::too_many_arguments)]
pub fn over_replications<W: Send, A: Send>(
    start: u64,
    count: u64,
    threads: Option<usize>,
    make: impl Fn() -> W + Sync + Send,
    body: impl Fn(&mut W, u64) + Sync + Send,
    finish: impl Fn(W) -> A + Sync + Send,
    merge: impl Fn(A, A) -> A + Sync + Send,
    empty: impl Fn() -> A + Sync + Send,
) -> Result<A, EngineError> {
    // Whole chunks of replications per task, so a workspace is built once per chunk.
    let (lo, hi) = (start as usize, (start + count) as usize);
    let work = || {
        (lo..hi)
            .into_par_iter()
            .with_min_len(32)
            .fold(&make, |mut w, rep| {
                body(&mut w, rep as u64);
                w
            })
            .map(&finish)
            .reduce(&empty, &merge)
    };
    match threads {
        None => Ok(work()),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| EngineError(format!("cannot start {n} threads: {e}")))?;
            Ok(pool.install(work))
        }
    }
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
        return Err(EngineError(
            "merge: the runs differ in options, seed or blocks".into(),
        ));
    }
    let (a, b) = if range(x).0 <= range(y).0 {
        (x, y)
    } else {
        (y, x)
    };
    let ((sa, na), (sb, nb)) = (range(a), range(b));
    if sa + na != sb {
        return Err(EngineError(format!(
            "merge: replication ranges [{sa}, {}) and [{sb}, {}) are not adjacent",
            sa + na,
            sb + nb
        )));
    }
    let mut out = a.clone();
    absorb(&mut out, b);
    Ok(out)
}
