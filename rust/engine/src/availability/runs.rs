//! Running replications: options checked, a fixed count or until a precision target,
//! over threads with mergeable accumulators.
use super::*;

pub(crate) fn check(c: &Compiled, o: &AvailabilityOptions) -> Result<(), EngineError> {
    if !(o.horizon.is_finite() && o.horizon > 0.0) {
        return Err(EngineError::new(format!(
            "horizon must be a finite number > 0 (got {})",
            o.horizon
        )));
    }
    if o.grid > MAX_POINTS {
        return Err(EngineError::new("grid must be at most 100000 points"));
    }
    let tests = test_times(c, o.horizon);
    if tests.len() + o.grid > MAX_POINTS {
        return Err(EngineError::at(
            "horizon",
            format!(
                "the curve is read at each proof test and the grid's points, at most \
             {MAX_POINTS} in all ({} tests over the horizon, grid {}); shorten the horizon",
                tests.len(),
                o.grid
            ),
        ));
    }
    if !c.phases.is_empty() {
        return Err(EngineError::new(
            "phases are simulated in mission (non-repairable) runs",
        ));
    }
    for g in &c.groups {
        if g.start == Some(crate::diagram::Start::Failed) {
            return Err(EngineError::node(
                &g.id,
                "state: failed is for non-repairable runs; a repairable block is down",
            ));
        }
        if g.repair.is_none() && !g.instant_repair {
            return Err(EngineError::node(
                &g.id,
                "a repair model (or instant_repair) is required for an availability simulation",
            ));
        }
    }
    Ok(())
}

/// Replications [start, start + count) of a repairable run, spread over `threads`
/// (None = rayon's global pool).
pub fn run(
    c: &Compiled,
    o: &AvailabilityOptions,
    start: u64,
    count: u64,
    threads: Option<usize>,
) -> Result<AvailabilityAcc, EngineError> {
    run_with(c, o, start, count, threads, &Control::new())
}

/// [`run`] under a [`Control`]: stoppable between replications, progress counted as it goes.
pub fn run_with(
    c: &Compiled,
    o: &AvailabilityOptions,
    start: u64,
    count: u64,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<AvailabilityAcc, EngineError> {
    check(c, o)?;
    replications(c, o, start, count, threads, ctl, &None)
}

/// [`run_to_precision_with`] with variance reduction `method` (`variance`): the same
/// replications (and the same plain figures) as a plain run of that seed, the mean
/// availability from the reduced-variance estimator when it helps, and a target precision
/// reached on that estimator.
pub fn run_reduced(
    c: &Compiled,
    o: &AvailabilityOptions,
    method: Method,
    start: u64,
    p: Precision,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<AvailabilityAcc, EngineError> {
    run_reduced_from(c, o, method, None, start, p, threads, ctl)
}

/// [`run_reduced`] of an antithetic or stratified run that turned to plain streams at
/// replication `plain_from` (a cluster's chunk past the turn; see
/// `AvailabilityAcc::plain_from`). A run to a target precision takes the turn itself after
/// its pilot, at a batch's end, so a cluster running the same batches turns at the same
/// replication.
#[allow(clippy::too_many_arguments)]
pub fn run_reduced_from(
    c: &Compiled,
    o: &AvailabilityOptions,
    method: Method,
    plain_from: Option<u64>,
    start: u64,
    p: Precision,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<AvailabilityAcc, EngineError> {
    check(c, o)?;
    let mut plan = VarianceAcc::plan(c, o, method);
    if let (Some(v), Some(at)) = (plan.as_mut(), plain_from) {
        if !v.in_sets() {
            return Err(EngineError::at(
                "plain_from",
                "only an antithetic or stratified run turns to plain streams",
            ));
        }
        v.plain_from = Some(at);
    }
    let plan = std::cell::RefCell::new(plan);
    to_precision_turning(
        p,
        200,
        ctl,
        |from, n| replications(c, o, start + from, n, threads, ctl, &plan.borrow()),
        |a| (a.replication_count, a.relative_half_width()),
        |a, b| a.merge(b),
        |a| {
            // The pilot's sets (pairs) do not pay: the next batches draw plain streams.
            if let Some(at) = a.plain_from() {
                if let Some(v) = a.variance.as_mut() {
                    v.plain_from = Some(at);
                }
                if let Some(v) = plan.borrow_mut().as_mut() {
                    v.plain_from = Some(at);
                }
            }
        },
    )
}

/// Replications [start, start + count) of a checked run, with the variance reduction
/// `plan` (None: plain).
fn replications(
    c: &Compiled,
    o: &AvailabilityOptions,
    start: u64,
    count: u64,
    threads: Option<usize>,
    ctl: &Control,
    plan: &Option<VarianceAcc>,
) -> Result<AvailabilityAcc, EngineError> {
    let blocks = c.block_ids();
    let grid = sample_times(o.horizon, o.grid, &test_times(c, o.horizon));
    let empty = || {
        let mut a = AvailabilityAcc::empty(c, o, &blocks, start);
        a.variance = plan.clone();
        a
    };
    let merge = |mut a: AvailabilityAcc, b: AvailabilityAcc| {
        a.absorb(&b);
        a
    };
    if core_only(c, o.crews) {
        // The core path alone: the same numbers from a loop without `Sim`'s generality.
        return over_replications(
            start,
            count,
            threads,
            ctl,
            || (Workspace::new(c), empty()),
            |(plain, acc), rep| plain.replicate(acc, &grid, rep),
            |(_, acc)| acc,
            merge,
            empty,
        );
    }
    let acc = over_replications(
        start,
        count,
        threads,
        ctl,
        || (Sim::new(c, true, o.crews), empty()),
        |(sim, acc), rep| replicate(sim, acc, &grid, rep),
        |(_, acc)| acc,
        merge,
        empty,
    )?;
    Ok(acc)
}

/// How many replications: a fixed number, or enough for a target relative half-width on
/// unavailability (capped), run in growing batches from replication `start`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Precision {
    Replications(u64),
    Target {
        relative_half_width: f64,
        max_replications: u64,
    },
}

impl Precision {
    /// From a caller's optional settings: a fixed number of replications, or a target
    /// relative half-width with its cap; exactly one of the two.
    pub fn new(
        replications: Option<u64>,
        target_half_width: Option<f64>,
        max_replications: u64,
    ) -> Result<Precision, EngineError> {
        match (replications, target_half_width) {
            (Some(n), None) => Ok(Precision::Replications(n)),
            (None, Some(t)) => Ok(Precision::Target {
                relative_half_width: t,
                max_replications,
            }),
            _ => Err(EngineError::new(
                "give replications or target_half_width, not both",
            )),
        }
    }
}

pub fn run_to_precision(
    c: &Compiled,
    o: &AvailabilityOptions,
    start: u64,
    p: Precision,
    threads: Option<usize>,
) -> Result<AvailabilityAcc, EngineError> {
    run_to_precision_with(c, o, start, p, threads, &Control::new())
}

/// [`run_to_precision`] under a [`Control`]; `planned` is revised before each batch.
pub fn run_to_precision_with(
    c: &Compiled,
    o: &AvailabilityOptions,
    start: u64,
    p: Precision,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<AvailabilityAcc, EngineError> {
    to_precision(
        p,
        200,
        ctl,
        |from, n| run_with(c, o, start + from, n, threads, ctl),
        |a| (a.replication_count, a.relative_half_width()),
        |a, b| a.merge(b),
    )
}

/// The one batch driver of every run kind with a [`Precision`]: `run(from, n)` runs
/// replications `from..from + n` past the run's start, `status` gives an accumulator's
/// replications and relative half-width, `merge` joins two. A target runs a first batch of
/// `first` (capped), then batches sized from the half-width reached.
pub(crate) fn to_precision<A>(
    p: Precision,
    first: u64,
    ctl: &Control,
    run: impl Fn(u64, u64) -> Result<A, EngineError>,
    status: impl Fn(&A) -> (u64, f64),
    merge: impl Fn(&A, &A) -> Result<A, EngineError>,
) -> Result<A, EngineError> {
    to_precision_turning(p, first, ctl, run, status, merge, |_| {})
}

/// [`to_precision`] with `turn` called on the accumulator after each batch of a target
/// run that needs another (where an antithetic run turns to plain streams; a cluster's
/// driver does the same between its batches).
pub(crate) fn to_precision_turning<A>(
    p: Precision,
    first: u64,
    ctl: &Control,
    run: impl Fn(u64, u64) -> Result<A, EngineError>,
    status: impl Fn(&A) -> (u64, f64),
    merge: impl Fn(&A, &A) -> Result<A, EngineError>,
    turn: impl Fn(&mut A),
) -> Result<A, EngineError> {
    match p {
        Precision::Replications(n) => {
            ctl.plan(n);
            run(0, n)
        }
        Precision::Target {
            relative_half_width: target,
            max_replications: cap,
        } => {
            if !(target.is_finite() && target > 0.0) {
                return Err(EngineError::new("target_half_width must be a number > 0"));
            }
            if cap < 2 {
                return Err(EngineError::new("max_replications must be at least 2"));
            }
            ctl.plan(cap.min(first));
            let mut acc = run(0, cap.min(first))?;
            loop {
                let (done, rel) = status(&acc);
                if rel <= target || done >= cap {
                    return Ok(acc);
                }
                turn(&mut acc);
                // Half-width falls as 1/sqrt(n): aim 10% past the estimate, at most 4x per batch.
                let need = if rel.is_finite() {
                    (done as f64 * (rel / target).powi(2) * 1.1).ceil() as u64
                } else {
                    done * 4
                };
                let next = need.clamp(done + done / 4, done * 4).min(cap) - done;
                ctl.plan(done + next);
                let more = run(done, next)?;
                acc = merge(&acc, &more)?;
            }
        }
    }
}
