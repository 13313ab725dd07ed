//! Rare events: the steady-state unavailability of a highly available Markovian diagram by
//! regenerative simulation with balanced failure biasing (importance sampling).
//!
//! With every life and repair exponential the diagram is a continuous-time Markov chain
//! (`chain`), and each return to the all-up state starts an independent, identically
//! distributed cycle. The renewal-reward theorem gives the long-run unavailability as
//! U = E[D] / E[τ], D the downtime of a cycle and τ its length (Crane and Iglehart's
//! regenerative method). Both are estimated on the embedded jump chain with each state's
//! mean holding time 1/q(x) in place of a drawn one (conditional Monte Carlo: same mean,
//! less variance).
//!
//! A plain cycle almost never reaches a system failure when U is small, so E[D] is
//! estimated on cycles drawn under balanced failure biasing (Shahabuddin 1994, "Importance
//! sampling for the simulation of highly reliable Markovian systems", Management Science
//! 40(3); Goyal, Shahabuddin, Heidelberger, Nicola and Glynn 1992): in a working state with
//! a repair under way a failure is taken with probability [`BIAS`], the failing unit chosen
//! uniformly among those that can fail, a repair otherwise in proportion to its rate; in the
//! all-up state the failing unit is chosen uniformly. Once the system is down the biasing
//! stops and the cycle runs on naturally back to all-up. Each cycle's downtime is weighted
//! by the likelihood ratio of its path (natural over biased transition probabilities), so
//! its mean is E[D] exactly: the estimator is unbiased. E[τ] comes from as many plain
//! cycles on their own streams (its relative variance is small), and the interval is the
//! ratio's delta-method one: Var(U) ≈ (Var(Z) + U² Var(τ)) / (n E[τ]²) for independent
//! numerator Z and denominator τ samples.
//!
//! Replication i is one biased and one plain cycle, each on its own stream of (seed, i), and
//! every sum is exact in any order ([`sum::ExactSum`]), so the same seed gives the same
//! numbers at any thread count.
pub mod chain;
pub mod sum;

use crate::diagram::Compiled;
use crate::error::EngineError;
use crate::parallel::{Control, over_replications};
use crate::rng::{Stream, substream_seed};
use chain::{Chain, Move, State};
use serde::{Deserialize, Serialize};
use sum::ExactMoments;

const Z95: f64 = 1.959_963_984_540_054;

/// Probability of taking a failure in a biased working state (other than all-up).
pub const BIAS: f64 = 0.5;

/// Transitions one cycle may take before the run is refused: a highly available system
/// returns to all-up in a handful.
pub const MAX_CYCLE_STEPS: u64 = 1_000_000;

/// What a run is: the same options, seed and replication range give the same numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RareOptions {
    /// Repair crews; 0 = as many as needed.
    pub crews: u32,
    pub seed: u64,
}

/// Sums over replications [replication_start, replication_start + replication_count).
#[derive(Debug, Clone, PartialEq)]
pub struct RareAcc {
    pub options: RareOptions,
    pub replication_start: u64,
    pub replication_count: u64,
    /// Biased cycles: downtime and system failures, each times the path's likelihood ratio.
    pub downtime: ExactMoments,
    pub failures: ExactMoments,
    /// Plain cycles: length.
    pub cycle: ExactMoments,
    /// Biased cycles that reached a system failure.
    pub reached: u64,
    /// Transitions taken (both kinds of cycle).
    pub events: u64,
    /// Cycles cut at [`MAX_CYCLE_STEPS`] (any makes the run an error).
    pub overlong: u64,
}

impl RareAcc {
    fn empty(o: &RareOptions, start: u64) -> Self {
        RareAcc {
            options: o.clone(),
            replication_start: start,
            replication_count: 0,
            downtime: ExactMoments::default(),
            failures: ExactMoments::default(),
            cycle: ExactMoments::default(),
            reached: 0,
            events: 0,
            overlong: 0,
        }
    }

    fn absorb(&mut self, o: &RareAcc) {
        self.replication_start = self.replication_start.min(o.replication_start);
        self.replication_count += o.replication_count;
        self.downtime.merge(&o.downtime);
        self.failures.merge(&o.failures);
        self.cycle.merge(&o.cycle);
        self.reached += o.reached;
        self.events += o.events;
        self.overlong += o.overlong;
    }

    /// Two runs of the same diagram and options over adjacent replication ranges, as one.
    pub fn merge(&self, other: &RareAcc) -> Result<RareAcc, EngineError> {
        crate::parallel::merge_adjacent(
            self,
            other,
            self.options == other.options,
            |a| (a.replication_start, a.replication_count),
            Self::absorb,
        )
    }

    /// A ratio E[numerator] / E[cycle] with its delta-method standard error.
    fn ratio(&self, num: &ExactMoments) -> (f64, f64) {
        let (mz, mt) = (num.mean(), self.cycle.mean());
        let r = mz / mt;
        let n = self.replication_count as f64;
        let var = (num.variance() + r * r * self.cycle.variance()) / (n * mt * mt);
        (r, var.sqrt())
    }

    /// Half-width of the 95% interval of unavailability, relative to it (inf while 0).
    pub fn relative_half_width(&self) -> f64 {
        let (u, se) = self.ratio(&self.downtime);
        if u > 0.0 && self.replication_count >= 2 {
            Z95 * se / u
        } else {
            f64::INFINITY
        }
    }

    pub fn summary(&self) -> RareSummary {
        let (u, se) = self.ratio(&self.downtime);
        let (w, wse) = self.ratio(&self.failures);
        let rel = self.relative_half_width();
        let (lo, hi) = ((u - Z95 * se).max(0.0), (u + Z95 * se).min(1.0));
        let positive = |x: f64| (x.is_finite() && x > 0.0).then_some(x);
        RareSummary {
            unavailability: u,
            unavailability_std_error: se,
            unavailability_lower: lo,
            unavailability_upper: hi,
            availability: 1.0 - u,
            availability_lower: 1.0 - hi,
            availability_upper: 1.0 - lo,
            relative_half_width: rel.is_finite().then_some(rel),
            failure_frequency: w,
            failure_frequency_std_error: wse,
            failure_frequency_lower: (w - Z95 * wse).max(0.0),
            failure_frequency_upper: w + Z95 * wse,
            mtbf: positive(w).map(|w| 1.0 / w),
            mean_down_time: positive(w).map(|w| u / w),
            mean_cycle: self.cycle.mean(),
            mean_cycle_std_error: (self.cycle.variance() / self.replication_count as f64).sqrt(),
            cycles: self.replication_count,
            cycles_reaching_failure: self.reached,
            events: self.events,
            replication_start: self.replication_start,
            bias: BIAS,
            seed: self.options.seed,
            crews: self.options.crews,
        }
    }
}

/// The figures a caller reads (times in the diagram unit; intervals 95%).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RareSummary {
    /// Long-run (steady-state) unavailability and availability.
    pub unavailability: f64,
    pub unavailability_std_error: f64,
    pub unavailability_lower: f64,
    pub unavailability_upper: f64,
    pub availability: f64,
    pub availability_lower: f64,
    pub availability_upper: f64,
    pub relative_half_width: Option<f64>,
    /// System failures per unit time in the long run; MTBF = 1 / that (mean time between
    /// system failures); mean down time per system failure = U / frequency.
    pub failure_frequency: f64,
    pub failure_frequency_std_error: f64,
    pub failure_frequency_lower: f64,
    pub failure_frequency_upper: f64,
    pub mtbf: Option<f64>,
    pub mean_down_time: Option<f64>,
    /// Mean regenerative cycle (all-up to all-up).
    pub mean_cycle: f64,
    pub mean_cycle_std_error: f64,
    pub cycles: u64,
    pub cycles_reaching_failure: u64,
    pub events: u64,
    pub replication_start: u64,
    pub bias: f64,
    pub seed: u64,
    pub crews: u32,
}

/// Whether the method can run this diagram with `crews`: Ok, or the rule it breaks.
pub fn check(c: &Compiled, crews: u32) -> Result<(), EngineError> {
    Chain::new(c, crews).map(|_| ())
}

/// Pick a transition with probability rate / total from `u` in (0, 1).
fn natural(s: &State, u: f64) -> Move {
    let mut x = u * s.rate();
    for m in s.failures.iter().chain(&s.repairs) {
        if x < m.rate {
            return *m;
        }
        x -= m.rate;
    }
    // Rounding left x past the last rate: the last transition.
    *s.repairs
        .last()
        .or(s.failures.last())
        .expect("a state has a way out")
}

/// Balanced failure biasing: the transition and its probability under the biased law.
fn biased(s: &State, u: f64) -> (Move, f64) {
    let nf = s.failures.len();
    let pick_failure = |x: f64| s.failures[((x * nf as f64) as usize).min(nf - 1)];
    if s.repairs.is_empty() {
        return (pick_failure(u), 1.0 / nf as f64);
    }
    if nf == 0 {
        let m = natural(s, u);
        return (m, m.rate / s.repair_rate);
    }
    if u < BIAS {
        (pick_failure(u / BIAS), BIAS / nf as f64)
    } else {
        let mut x = (u - BIAS) / (1.0 - BIAS) * s.repair_rate;
        let mut pick = *s.repairs.last().expect("repairs");
        for m in &s.repairs {
            if x < m.rate {
                pick = *m;
                break;
            }
            x -= m.rate;
        }
        (pick, (1.0 - BIAS) * pick.rate / s.repair_rate)
    }
}

/// One biased cycle from all-up: (downtime x LR, system failures x LR, reached, steps, cut).
fn biased_cycle(s: &mut State, rng: &mut Stream) -> (f64, f64, bool, u64, bool) {
    s.reset();
    let (mut lr, mut down, mut fails) = (1.0f64, 0.0f64, 0.0f64);
    let mut biasing = true;
    let mut steps = 0u64;
    loop {
        let q = s.rate();
        let was_up = s.up();
        if !was_up {
            down += lr / q;
        }
        let u = rng.uniform();
        let m = if biasing && was_up {
            let (m, p) = biased(s, u);
            lr *= (m.rate / q) / p;
            m
        } else {
            natural(s, u)
        };
        s.apply(m.unit);
        steps += 1;
        if was_up && !s.up() {
            fails += lr;
            biasing = false;
        }
        if s.down_units == 0 {
            return (down, fails, !biasing, steps, false);
        }
        if steps >= MAX_CYCLE_STEPS {
            return (down, fails, !biasing, steps, true);
        }
    }
}

/// One plain cycle from all-up: (length, steps, cut).
fn plain_cycle(s: &mut State, rng: &mut Stream) -> (f64, u64, bool) {
    s.reset();
    let (mut tau, mut steps) = (0.0f64, 0u64);
    loop {
        tau += 1.0 / s.rate();
        let m = natural(s, rng.uniform());
        s.apply(m.unit);
        steps += 1;
        if s.down_units == 0 {
            return (tau, steps, false);
        }
        if steps >= MAX_CYCLE_STEPS {
            return (tau, steps, true);
        }
    }
}

fn replicate(s: &mut State, acc: &mut RareAcc, biased_seed: u64, plain_seed: u64, rep: u64) {
    let (d, f, reached, n1, cut1) = biased_cycle(s, &mut Stream::new(biased_seed, rep));
    let (tau, n2, cut2) = plain_cycle(s, &mut Stream::new(plain_seed, rep));
    acc.downtime.add(d);
    acc.failures.add(f);
    acc.cycle.add(tau);
    acc.reached += reached as u64;
    acc.events += n1 + n2;
    acc.overlong += (cut1 || cut2) as u64;
    acc.replication_count += 1;
}

/// Replications [start, start + count), spread over `threads` (None = rayon's global pool).
pub fn run_with(
    c: &Compiled,
    o: &RareOptions,
    start: u64,
    count: u64,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<RareAcc, EngineError> {
    let ch = Chain::new(c, o.crews)?;
    let (bs, ps) = (substream_seed(o.seed, 0), substream_seed(o.seed, 1));
    let acc = over_replications(
        start,
        count,
        threads,
        ctl,
        || (State::new(&ch), RareAcc::empty(o, start)),
        |(s, acc), rep| replicate(s, acc, bs, ps, rep),
        |(_, acc)| acc,
        |mut a, b| {
            a.absorb(&b);
            a
        },
        || RareAcc::empty(o, start),
    )?;
    if acc.overlong > 0 {
        return Err(EngineError::at(
            "failure_biasing",
            format!(
                "a regenerative cycle ran past {MAX_CYCLE_STEPS} transitions without \
             every block coming back up: the system is not highly available; use plain simulation"
            ),
        ));
    }
    Ok(acc)
}

pub use crate::availability::Precision;

/// A fixed number of replications, or enough for a target relative half-width on
/// unavailability (capped), in growing batches from replication `start`.
pub fn run_to_precision_with(
    c: &Compiled,
    o: &RareOptions,
    start: u64,
    p: Precision,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<RareAcc, EngineError> {
    crate::availability::to_precision(
        p,
        500,
        ctl,
        |from, n| run_with(c, o, start + from, n, threads, ctl),
        |a| (a.replication_count, a.relative_half_width()),
        |a, b| a.merge(b),
    )
}

#[cfg(test)]
mod tests;
