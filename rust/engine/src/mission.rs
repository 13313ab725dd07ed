//! Non-repairable mission simulation: each replication runs to system failure.
use crate::availability::time_grid;
use crate::diagram::Compiled;
use crate::error::EngineError;
use crate::parallel::{Control, over_replications};
use crate::rng::Stream;
use crate::sim::Sim;
use crate::stats::{Moments, add_vec, wilson};
use serde::{Deserialize, Serialize};

const Z95: f64 = 1.959_963_984_540_054;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissionOptions {
    /// Mission length (diagram time unit); R(t) is reported over [0, mission_time].
    pub mission_time: f64,
    pub grid: usize,
    pub seed: u64,
}

/// Sums over replications; times to failure are stored in units of the mission time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissionAcc {
    pub options: MissionOptions,
    pub blocks: Vec<String>,
    pub replication_start: u64,
    pub replication_count: u64,
    pub time_to_failure: Moments,
    /// Replications whose system never fails (an infinite time to failure).
    #[serde(default)]
    pub never_failed: u64,
    pub failed_by_mission: u64,
    pub survivors: Vec<u64>,
    /// System failures by mission end, by the block whose failure brought the system down.
    pub caused: Vec<u64>,
    pub events: u64,
    /// Phased missions: phase names and ends, and system failures in each phase.
    #[serde(default)]
    pub phase_names: Vec<String>,
    #[serde(default)]
    pub phase_ends: Vec<f64>,
    #[serde(default)]
    pub phase_failures: Vec<u64>,
    /// Capacity read at `read_at` (production period, else the mission time), in units of
    /// `cap_scale` (0 without capacities); replications below demand then.
    #[serde(default)]
    pub cap_scale: f64,
    #[serde(default)]
    pub read_at: f64,
    #[serde(default)]
    pub demand: f64,
    #[serde(default)]
    pub capacity: Moments,
    #[serde(default)]
    pub below_demand: u64,
}

impl MissionAcc {
    pub(crate) fn empty(c: &Compiled, o: &MissionOptions, blocks: &[String], start: u64) -> Self {
        MissionAcc {
            options: o.clone(),
            blocks: blocks.to_vec(),
            replication_start: start,
            replication_count: 0,
            time_to_failure: Moments::default(),
            never_failed: 0,
            failed_by_mission: 0,
            survivors: vec![0; o.grid],
            caused: vec![0; blocks.len()],
            events: 0,
            phase_names: c.phases.iter().map(|p| p.name.clone()).collect(),
            phase_ends: c.phases.iter().map(|p| p.end).collect(),
            phase_failures: vec![0; c.phases.len()],
            cap_scale: if c.has_capacity {
                crate::availability::cap_scale(c)
            } else {
                0.0
            },
            read_at: if c.period > 0.0 {
                c.period
            } else {
                o.mission_time
            },
            demand: c.demand,
            capacity: Moments::default(),
            below_demand: 0,
        }
    }

    pub(crate) fn absorb(&mut self, o: &MissionAcc) {
        self.replication_start = self.replication_start.min(o.replication_start);
        self.replication_count += o.replication_count;
        self.time_to_failure.merge(&o.time_to_failure);
        self.never_failed += o.never_failed;
        self.failed_by_mission += o.failed_by_mission;
        add_vec(&mut self.survivors, &o.survivors);
        add_vec(&mut self.caused, &o.caused);
        add_vec(&mut self.phase_failures, &o.phase_failures);
        self.capacity.merge(&o.capacity);
        self.below_demand += o.below_demand;
        self.events += o.events;
    }

    /// Two runs over adjacent replication ranges, as one.
    pub fn merge(&self, other: &MissionAcc) -> Result<MissionAcc, EngineError> {
        let same_run = self.options == other.options && self.blocks == other.blocks;
        crate::parallel::merge_adjacent(
            self,
            other,
            same_run,
            |a| (a.replication_start, a.replication_count),
            Self::absorb,
        )
    }
}

pub(crate) fn replicate(sim: &mut Sim, acc: &mut MissionAcc, grid: &[f64], rep: u64) {
    let mut rng = Stream::new(acc.options.seed, rep);
    sim.reset(&mut rng);
    let (mut ttf, mut cause) = (f64::INFINITY, usize::MAX);
    if !sim.system_up() {
        // Down from the start: blocks failed at time 0, or a first phase that needs them.
        ttf = 0.0;
    }
    let cap = acc.cap_scale > 0.0;
    let mut read = None;
    while ttf.is_infinite() {
        if cap && read.is_none() && sim.next_time() > acc.read_at {
            read = Some(sim.throughput());
        }
        let Some(s) = sim.step(&mut rng) else { break };
        acc.events += 1;
        if !sim.system_up() {
            ttf = s.time;
            cause = s.group as usize;
            break;
        }
    }
    if let Some(&end) = acc.phase_ends.get(sim.phase)
        && ttf <= end
    {
        acc.phase_failures[sim.phase] += 1;
    }
    if cap {
        // Failed before the reading: nothing flows.
        let x = read.unwrap_or(0.0);
        acc.capacity.add(x / acc.cap_scale);
        acc.below_demand += (x < acc.demand) as u64;
    }
    let m = acc.options.mission_time;
    // A system that never fails (a block whose life has mass at infinity, e.g. a tabulated
    // conditional life where some paths never cross) has an infinite time to failure: it is
    // counted, and any such replication makes the MTTF infinite (the fixed-point moments
    // take the last event's time so they stay finite).
    if !ttf.is_finite() {
        acc.never_failed += 1;
    }
    let ttf_moment = if ttf.is_finite() { ttf } else { sim.now };
    acc.time_to_failure.add(ttf_moment / m);
    if ttf <= m {
        acc.failed_by_mission += 1;
        if cause != usize::MAX {
            acc.caused[cause] += 1;
        }
    }
    for (j, &t) in grid.iter().enumerate() {
        if ttf <= t {
            break;
        }
        acc.survivors[j] += 1;
    }
    acc.replication_count += 1;
}

/// What a mission run refuses, whatever its replications.
pub(crate) fn check(c: &Compiled, o: &MissionOptions) -> Result<(), EngineError> {
    if !(o.mission_time.is_finite() && o.mission_time > 0.0) {
        return Err(EngineError::new(format!(
            "mission_time must be a finite number > 0 (got {})",
            o.mission_time
        )));
    }
    if o.grid > 100_000 {
        return Err(EngineError::new("grid must be at most 100000 points"));
    }
    if let Some(last) = c.phases.last()
        && o.mission_time != last.end
    {
        // The per-phase table and the mission's reliability must be about one mission.
        return Err(EngineError::new(format!(
            "mission_time must equal the phases' total duration {} (got {})",
            last.end, o.mission_time
        )));
    }
    if let Some(g) = c
        .groups
        .iter()
        .find(|g| g.pm.is_some() || g.costs.is_some())
    {
        return Err(EngineError::node(
            &g.id,
            "planned replacement and costs need a repairable (availability) run",
        ));
    }
    if let Some(g) = c
        .groups
        .iter()
        .find(|g| matches!(g.start, Some(crate::diagram::Start::Down { .. })))
    {
        return Err(EngineError::node(
            &g.id,
            "state: down (in repair) is for repairable runs; a non-repairable block is failed",
        ));
    }
    if let Some(g) = c.groups.iter().find(|g| g.test.is_some()) {
        return Err(EngineError::node(
            &g.id,
            "proof tests (inspection) need a repairable run: failures are found and repaired",
        ));
    }
    Ok(())
}

pub fn run(
    c: &Compiled,
    o: &MissionOptions,
    start: u64,
    count: u64,
    threads: Option<usize>,
) -> Result<MissionAcc, EngineError> {
    run_with(c, o, start, count, threads, &Control::new())
}

/// [`run`] under a [`Control`]: stoppable between replications, progress counted as it goes.
pub fn run_with(
    c: &Compiled,
    o: &MissionOptions,
    start: u64,
    count: u64,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<MissionAcc, EngineError> {
    check(c, o)?;
    let blocks = c.block_ids();
    let grid = time_grid(o.mission_time, o.grid);
    let empty = || MissionAcc::empty(c, o, &blocks, start);
    ctl.plan(count);
    over_replications(
        start,
        count,
        threads,
        ctl,
        || (Sim::new(c, false, 0), empty()),
        |(sim, acc), rep| replicate(sim, acc, &grid, rep),
        |(_, acc)| acc,
        |mut a, b| {
            a.absorb(&b);
            a
        },
        empty,
    )
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MissionSummary {
    pub t: Vec<f64>,
    pub reliability: Vec<f64>,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    pub mttf: f64,
    pub mttf_std_error: f64,
    pub probability_of_failure: f64,
    pub probability_of_failure_lower: f64,
    pub probability_of_failure_upper: f64,
    /// Per block: share of system failures by mission end that this block's failure caused.
    pub blocks: Vec<(String, f64)>,
    pub events: u64,
    pub replications: u64,
    pub replication_start: u64,
    pub phases: Option<Vec<PhaseSummary>>,
    pub production: Option<MissionProduction>,
}

/// Capacity of a non-repairable system read at a time (0 once it has failed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MissionProduction {
    pub read_at: f64,
    pub expected_capacity: f64,
    pub expected_capacity_std_error: f64,
    pub demand: f64,
    pub probability_below_demand: f64,
    pub probability_below_demand_lower: f64,
    pub probability_below_demand_upper: f64,
}

/// One phase: reliability through its end (with a 95% Wilson band) and given that the
/// mission reached its start.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseSummary {
    pub name: String,
    pub end: f64,
    pub reliability: f64,
    pub lower: f64,
    pub upper: f64,
    pub conditional: Option<f64>,
}

impl MissionAcc {
    pub fn summary(&self) -> MissionSummary {
        let n = self.replication_count;
        let nf = n.max(1) as f64;
        let m = self.options.mission_time;
        let bands: Vec<(f64, f64)> = self.survivors.iter().map(|&k| wilson(k, n, Z95)).collect();
        let (fl, fu) = wilson(self.failed_by_mission, n, Z95);
        let caused: u64 = self.caused.iter().sum();
        MissionSummary {
            t: time_grid(m, self.options.grid),
            reliability: self.survivors.iter().map(|&k| k as f64 / nf).collect(),
            lower: bands.iter().map(|b| b.0).collect(),
            upper: bands.iter().map(|b| b.1).collect(),
            mttf: if self.never_failed > 0 {
                f64::INFINITY
            } else {
                self.time_to_failure.mean() * m
            },
            mttf_std_error: if self.never_failed > 0 {
                f64::NAN
            } else {
                self.time_to_failure.std_error() * m
            },
            probability_of_failure: self.failed_by_mission as f64 / nf,
            probability_of_failure_lower: fl,
            probability_of_failure_upper: fu,
            blocks: self
                .blocks
                .iter()
                .zip(&self.caused)
                .map(|(id, &k)| {
                    (
                        id.clone(),
                        if caused > 0 {
                            k as f64 / caused as f64
                        } else {
                            0.0
                        },
                    )
                })
                .collect(),
            events: self.events,
            replications: n,
            replication_start: self.replication_start,
            production: (self.cap_scale > 0.0).then(|| {
                let (lo, hi) = wilson(self.below_demand, n, Z95);
                MissionProduction {
                    read_at: self.read_at,
                    expected_capacity: self.capacity.mean() * self.cap_scale,
                    expected_capacity_std_error: self.capacity.std_error() * self.cap_scale,
                    demand: self.demand,
                    probability_below_demand: self.below_demand as f64 / nf,
                    probability_below_demand_lower: lo,
                    probability_below_demand_upper: hi,
                }
            }),
            phases: (!self.phase_ends.is_empty()).then(|| {
                let mut alive = n;
                let mut out = vec![];
                for (i, name) in self.phase_names.iter().enumerate() {
                    let before = alive;
                    alive -= self.phase_failures[i];
                    let (lo, hi) = wilson(alive, n, Z95);
                    out.push(PhaseSummary {
                        name: name.clone(),
                        end: self.phase_ends[i],
                        reliability: alive as f64 / nf,
                        lower: lo,
                        upper: hi,
                        conditional: (before > 0).then(|| alive as f64 / before as f64),
                    });
                }
                out
            }),
        }
    }
}
