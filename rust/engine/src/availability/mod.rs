//! Repairable availability simulation over [0, T]: mergeable accumulator and summary.
mod replication;
mod runs;
mod summary;
#[cfg(test)]
mod tests;

pub(crate) use replication::{replicate, replicate_observed};
pub use runs::{
    Precision, run, run_reduced, run_reduced_from, run_to_precision, run_to_precision_with,
    run_with,
};
pub(crate) use runs::{check, to_precision};
pub use summary::{
    AvailabilitySummary, BlockCost, BlockSummary, CostSummary, KindCost, ProductionSummary,
};

use crate::diagram::Compiled;
use crate::error::EngineError;
use crate::parallel::{Control, over_replications};
use crate::plain::Workspace;
use crate::rng::{Draws, Stream};
use crate::sim::{COST_KINDS, K_DOWNTIME, Sim, core_only};
use crate::stats::{Moments, add_vec, fx, unfx, wilson};
use crate::variance::{Estimate, Method, VarianceAcc, VarianceSummary};
use serde::{Deserialize, Serialize};

const Z95: f64 = 1.959_963_984_540_054;

/// What a run is: the same options, seed and replication range give the same numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AvailabilityOptions {
    /// Mission length T (diagram time unit).
    pub horizon: f64,
    /// Points of the A(t) grid over [0, T], both ends included (0 = no curve).
    pub grid: usize,
    /// Repair crews; 0 = as many as needed.
    pub crews: u32,
    pub seed: u64,
}

/// Sums over replications [replication_start, replication_start + replication_count).
/// Times are stored as fractions of the horizon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AvailabilityAcc {
    pub options: AvailabilityOptions,
    pub blocks: Vec<String>,
    pub replication_start: u64,
    pub replication_count: u64,
    pub availability: Moments,
    pub system_failures: Moments,
    pub no_failure: u64,
    pub point_up: Vec<u64>,
    /// Per interval between consecutive curve times: each replication's availability over
    /// it (the interval's uptime fraction), so the curve of interval means averages, over
    /// time, to the mean availability — a PM window between two reading times shows.
    #[serde(default)]
    pub interval_up: Vec<Moments>,
    pub block_failures: Vec<u64>,
    pub block_downtime: Vec<i128>,
    /// Per block: its charge of system downtime (see `attribution`), summed over
    /// replications as fractions of the horizon; sums of its square and of its product
    /// with the replication's total charge, and of that total's square: the shares'
    /// intervals (a ratio of two sums over replications).
    pub block_caused_downtime: Vec<i128>,
    #[serde(default)]
    pub block_charge_sq: Vec<i128>,
    #[serde(default)]
    pub block_charge_cross: Vec<i128>,
    #[serde(default)]
    pub charge_sq: i128,
    /// Redundant blocks whose calendar replacements coincide and stop the system
    /// together (`attribution::coinciding_preventive`), by id.
    #[serde(default)]
    pub coinciding_preventive: Vec<Vec<String>>,
    pub events: u64,
    /// Costs (when the diagram has any), in units of `cost_scale` (a power of two fixed
    /// by the diagram, so values stay small on the fixed-point grid): the total and each
    /// kind per replication, and per block and kind (`COST_KINDS` order), system downtime.
    #[serde(default)]
    pub cost_scale: f64,
    #[serde(default)]
    pub cost_total: Moments,
    #[serde(default)]
    pub cost_kind: Vec<Moments>,
    #[serde(default)]
    pub cost_block: Vec<i128>,
    #[serde(default)]
    pub cost_system: i128,
    /// Planned replacements per block (when any block has a preventive policy).
    #[serde(default)]
    pub block_preventive: Vec<u64>,
    /// Throughput (when any block has a capacity), in units of `cap_scale` (a power of two
    /// above any flow): time-average over the horizon; production over [0, period] as a
    /// fraction of scale * period; the fraction of the period below demand.
    #[serde(default)]
    pub cap_scale: f64,
    #[serde(default)]
    pub throughput: Moments,
    #[serde(default)]
    pub production: Moments,
    #[serde(default)]
    pub below_demand: Moments,
    #[serde(default)]
    pub production_period: f64,
    #[serde(default)]
    pub demand: f64,
    /// System outages that begin planned (the system would work but for replacements or
    /// proof tests off-line), and planned downtime as a fraction of the horizon;
    /// `system_failures` counts turns to failed, from up or from planned-down (with those
    /// of zero length an instantly renewed block causes).
    #[serde(default)]
    pub planned_outages: u64,
    #[serde(default)]
    pub planned_downtime: i128,
    /// Per block: downtime of planned stops (fraction of the horizon); proof tests and
    /// condition inspections made.
    #[serde(default)]
    pub block_planned_downtime: Vec<i128>,
    #[serde(default)]
    pub block_tests: Vec<u64>,
    #[serde(default)]
    pub block_inspections: Vec<u64>,
    /// Proof-test instants in (0, horizon]: the curve is also read just before each (its
    /// saw-tooth peak), merged into the grid (see `sample_times`).
    #[serde(default)]
    pub test_times: Vec<f64>,
    /// Variance reduction's plan and sums (`variance`), when the run asks for it; absent
    /// from a plain run's state, which is then what it always was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variance: Option<VarianceAcc>,
}

pub(crate) fn cap_scale(c: &Compiled) -> f64 {
    let total: f64 = c
        .groups
        .iter()
        .filter_map(|g| {
            g.capacity
                .iter()
                .map(|l| l.0)
                .reduce(f64::max)
                .map(|v| v * g.units as f64)
        })
        .sum();
    2f64.powi(total.max(1.0).log2().ceil() as i32)
}

/// The production period of a run: the diagram's (at most the horizon), else the horizon.
fn period(c: &Compiled, horizon: f64) -> f64 {
    if c.period > 0.0 {
        c.period.min(horizon)
    } else {
        horizon
    }
}

/// Power of two at least as large as any single cost the diagram can charge in one go
/// (or accrue over the horizon at a rate), and at least 1.
fn cost_scale(c: &Compiled, horizon: f64) -> f64 {
    let mut m: f64 = 1.0;
    for g in &c.groups {
        if let Some(k) = g.costs {
            m = m
                .max(k.repair.1)
                .max(k.replace.1)
                .max(k.test.1)
                .max(k.acquisition)
                .max(k.downtime * horizon);
        }
        if let Some(p) = g.pm {
            m = m.max(p.cost.1).max(p.inspection_cost.1);
        }
    }
    m = m.max(c.system_downtime_rate * horizon);
    for g in &c.mgroups {
        m = m.max(g.setup_cost);
    }
    2f64.powi(m.log2().ceil() as i32)
}

impl AvailabilityAcc {
    pub(crate) fn empty(
        c: &Compiled,
        options: &AvailabilityOptions,
        blocks: &[String],
        start: u64,
    ) -> Self {
        let g = blocks.len();
        let tests = test_times(c, options.horizon);
        let costs = c.has_costs;
        let pm = c.groups.iter().any(|g| g.pm.is_some());
        AvailabilityAcc {
            options: options.clone(),
            blocks: blocks.to_vec(),
            replication_start: start,
            replication_count: 0,
            availability: Moments::default(),
            system_failures: Moments::default(),
            no_failure: 0,
            point_up: vec![0; sample_times(options.horizon, options.grid, &tests).len()],
            interval_up: vec![
                Moments::default();
                sample_times(options.horizon, options.grid, &tests)
                    .len()
                    .saturating_sub(1)
            ],
            block_failures: vec![0; g],
            block_downtime: vec![0; g],
            block_caused_downtime: vec![0; g],
            block_charge_sq: vec![0; g],
            block_charge_cross: vec![0; g],
            charge_sq: 0,
            coinciding_preventive: crate::attribution::coinciding_preventive(c)
                .into_iter()
                .map(|set| set.into_iter().map(|g| blocks[g].clone()).collect())
                .collect(),
            events: 0,
            cost_scale: if costs {
                cost_scale(c, options.horizon)
            } else {
                0.0
            },
            cost_total: Moments::default(),
            cost_kind: if costs {
                vec![Moments::default(); COST_KINDS.len()]
            } else {
                vec![]
            },
            cost_block: vec![0; if costs { g * COST_KINDS.len() } else { 0 }],
            cost_system: 0,
            block_preventive: vec![0; if pm { g } else { 0 }],
            cap_scale: if c.has_capacity { cap_scale(c) } else { 0.0 },
            throughput: Moments::default(),
            production: Moments::default(),
            below_demand: Moments::default(),
            production_period: period(c, options.horizon),
            demand: c.demand,
            planned_outages: 0,
            planned_downtime: 0,
            block_planned_downtime: vec![0; g],
            block_tests: vec![0; g],
            block_inspections: vec![0; g],
            test_times: tests,
            variance: None,
        }
    }

    /// Sum in another accumulator (any order; used inside a run).
    pub(crate) fn absorb(&mut self, o: &AvailabilityAcc) {
        self.replication_start = self.replication_start.min(o.replication_start);
        self.replication_count += o.replication_count;
        self.availability.merge(&o.availability);
        self.system_failures.merge(&o.system_failures);
        self.no_failure += o.no_failure;
        add_vec(&mut self.point_up, &o.point_up);
        for (a, b) in self.interval_up.iter_mut().zip(&o.interval_up) {
            a.merge(b);
        }
        add_vec(&mut self.block_failures, &o.block_failures);
        add_vec(&mut self.block_downtime, &o.block_downtime);
        add_vec(&mut self.block_caused_downtime, &o.block_caused_downtime);
        add_vec(&mut self.block_charge_sq, &o.block_charge_sq);
        add_vec(&mut self.block_charge_cross, &o.block_charge_cross);
        self.charge_sq += o.charge_sq;
        self.events += o.events;
        self.cost_total.merge(&o.cost_total);
        for (a, b) in self.cost_kind.iter_mut().zip(&o.cost_kind) {
            a.merge(b);
        }
        add_vec(&mut self.cost_block, &o.cost_block);
        self.cost_system += o.cost_system;
        add_vec(&mut self.block_preventive, &o.block_preventive);
        self.throughput.merge(&o.throughput);
        self.production.merge(&o.production);
        self.below_demand.merge(&o.below_demand);
        self.planned_outages += o.planned_outages;
        self.planned_downtime += o.planned_downtime;
        add_vec(&mut self.block_planned_downtime, &o.block_planned_downtime);
        add_vec(&mut self.block_tests, &o.block_tests);
        add_vec(&mut self.block_inspections, &o.block_inspections);
        if let (Some(a), Some(b)) = (self.variance.as_mut(), o.variance.as_ref()) {
            a.absorb(b);
        }
    }

    /// Two runs of the same model and options over adjacent replication ranges, as one.
    pub fn merge(&self, other: &AvailabilityAcc) -> Result<AvailabilityAcc, EngineError> {
        // The curve's reading times too (a state from before proof-test instants were read
        // has fewer points).
        let same_run = self.options == other.options
            && self.blocks == other.blocks
            && self.test_times == other.test_times
            && self.point_up.len() == other.point_up.len()
            && self.interval_up.len() == other.interval_up.len()
            && match (&self.variance, &other.variance) {
                (None, None) => true,
                (Some(a), Some(b)) => a.same_plan(b) && self.same_turn(a, other, b),
                _ => false,
            };
        crate::parallel::merge_adjacent(
            self,
            other,
            same_run,
            |a| (a.replication_start, a.replication_count),
            Self::absorb,
        )
    }

    /// Whether two pieces of a run in sets agree on where it turned to plain streams:
    /// the same replication when both know it, and a piece drawn before the turn (which
    /// does not know it) lies wholly before it.
    fn same_turn(&self, a: &VarianceAcc, other: &AvailabilityAcc, b: &VarianceAcc) -> bool {
        let before =
            |acc: &AvailabilityAcc, at: u64| acc.replication_start + acc.replication_count <= at;
        match (a.plain_from, b.plain_from) {
            (Some(x), Some(y)) => x == y,
            (None, Some(y)) => before(self, y),
            (Some(x), None) => before(other, x),
            (None, None) => true,
        }
    }

    /// One replication's charges of system downtime per block (diagram time).
    pub(crate) fn book_shares(&mut self, charge: &[f64], horizon: f64) {
        let total = charge.iter().sum::<f64>() / horizon;
        if total == 0.0 {
            return;
        }
        for (g, &x) in charge.iter().enumerate() {
            if x != 0.0 {
                let c = x / horizon;
                self.block_caused_downtime[g] += fx(c);
                self.block_charge_sq[g] += fx(c * c);
                self.block_charge_cross[g] += fx(c * total);
            }
        }
        self.charge_sq += fx(total * total);
    }

    /// One replication's system outages `[(start, end)]` (sorted, disjoint) as its
    /// availability over each interval between consecutive curve times `grid`.
    pub(crate) fn book_intervals(&mut self, grid: &[f64], outages: &[(f64, f64)]) {
        // An interval no outage touches (most of them) is up throughout: its value is 1
        // exactly, booked by `Moments::add_one`, the integers `add(1.0)` adds, without
        // rounding two products per interval onto the fixed-point grid (the curve's main cost).
        let mut i = 0;
        for (k, acc) in self.interval_up.iter_mut().enumerate() {
            let (a, b) = (grid[k], grid[k + 1]);
            while i < outages.len() && outages[i].1 <= a {
                i += 1;
            }
            let mut down = 0.0;
            let mut m = i;
            while m < outages.len() && outages[m].0 < b {
                down += outages[m].1.min(b) - outages[m].0.max(a);
                m += 1;
            }
            if down == 0.0 && b > a {
                acc.add_one();
            } else {
                acc.add((1.0 - down / (b - a)).clamp(0.0, 1.0));
            }
        }
    }

    /// Half-width of the 95% interval of unavailability, relative to it (inf while 0):
    /// the reduced-variance estimator's when the run uses one (so a run to a target
    /// precision stops on it).
    pub fn relative_half_width(&self) -> f64 {
        if let Some((e, _)) = self.reduced() {
            let u = e.unavailability;
            return if u > 0.0 {
                e.t * e.std_error / u
            } else {
                f64::INFINITY
            };
        }
        let u = 1.0 - self.availability.mean();
        if u > 0.0 {
            Z95 * self.availability.std_error() / u
        } else {
            f64::INFINITY
        }
    }

    /// How the run draws replication `rep` (plain, or a member of an antithetic pair or a
    /// stratified set).
    #[inline]
    pub fn draws_at(&self, rep: u64) -> Draws {
        self.variance
            .as_ref()
            .map_or(Draws::Plain, |v| v.draws_at(rep))
    }

    /// Where a run to a target precision turns to plain streams: the replication it turned
    /// at, or (its pilot's sets in and not paying for their CPU) the end of what it has run.
    pub fn plain_from(&self) -> Option<u64> {
        let v = self.variance.as_ref()?;
        v.plain_from.or_else(|| {
            v.plain_switch(
                self.replication_start + self.replication_count,
                &self.availability,
            )
        })
    }

    /// The reduced-variance estimate of unavailability and its factor, when the run asked
    /// for one and it beats the plain estimator (else the plain one stands).
    pub fn reduced(&self) -> Option<(Estimate, f64)> {
        self.variance.as_ref()?.estimate(&self.availability).ok()
    }
}

/// Each proof test's instant in (0, horizon] (the same arithmetic as the simulation's
/// schedule, so the times match exactly), sorted, each once.
fn test_times(c: &Compiled, horizon: f64) -> Vec<f64> {
    let mut out = vec![];
    for &g in &c.tested {
        let t = c.groups[g as usize].test.expect("a tested group");
        let mut j: u64 = if t.offset > 0.0 { 0 } else { 1 };
        loop {
            let x = t.offset + j as f64 * t.interval;
            if x > horizon || out.len() > MAX_POINTS {
                break;
            }
            out.push(x);
            j += 1;
        }
    }
    out.sort_by(f64::total_cmp);
    out.dedup();
    out
}

/// Most points a curve may have (grid and proof-test instants together).
const MAX_POINTS: usize = 100_000;

/// The times the curve is read at: the grid's `n` points and each proof-test instant,
/// sorted, each once.
pub fn sample_times(horizon: f64, n: usize, tests: &[f64]) -> Vec<f64> {
    let mut t = time_grid(horizon, n);
    if !tests.is_empty() {
        t.extend_from_slice(tests);
        t.sort_by(f64::total_cmp);
        t.dedup();
    }
    t
}

/// Grid of `n` times over [0, horizon], both ends included.
pub fn time_grid(horizon: f64, n: usize) -> Vec<f64> {
    match n {
        0 => vec![],
        1 => vec![horizon],
        _ => (0..n)
            .map(|i| horizon * i as f64 / (n - 1) as f64)
            .collect(),
    }
}
