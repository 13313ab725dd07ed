//! Several designs ("lanes") simulated on common random numbers: replication `r` of every
//! lane draws from the same streams: each unit's lives and repairs from the unit's own
//! stream (`Sim::unit_streams`), everything else from `Stream::new(seed, r)`; so a change
//! to one block leaves every other unit's draws as they were, and a difference between two
//! lanes is a mean of paired per-replication differences, whose variance is
//! var(x) + var(y) - 2 cov(x, y) instead of var(x) + var(y). Sums are fixed point as
//! everywhere in the engine (exactly mergeable, independent of the thread count).
use super::importance::{ImportanceAcc, ImportanceWork};
use crate::availability::{self, AvailabilityAcc, AvailabilityOptions};
use crate::diagram::Compiled;
use crate::error::EngineError;
use crate::mission::{self, MissionAcc, MissionOptions};
use crate::parallel::{Control, over_replications};
use crate::rng::Stream;
use crate::sim::Sim;
use crate::stats::{Moments, add_vec, fx, unfx};
use serde::{Deserialize, Serialize};

/// The run every lane makes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum RunKind {
    /// Repairable over [0, horizon] with `crews` repair crews (0 = unlimited).
    Availability { horizon: f64, crews: u32 },
    /// Non-repairable to system failure, read at `mission_time`.
    Mission { mission_time: f64 },
}

/// The per-replication value lanes are paired on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compared {
    /// Time-average availability (availability runs) or survival to the mission end.
    Up,
    /// Total cost over the horizon, in units of the lanes' common cost scale.
    Cost,
}

/// Most lanes in one run (the cross-product table is lanes squared).
pub const MAX_LANES: usize = 200;

/// Sums over replications of every lane. `up` and `cost` per lane; `cross[i * lanes + j]`
/// the sum of y_i * y_j of the compared values (upper triangle, i <= j).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrnAcc {
    pub lanes: usize,
    pub compared: Compared,
    pub cost_scale: f64,
    pub up: Vec<Moments>,
    pub cost: Vec<Moments>,
    pub cross: Vec<i128>,
    pub events: u64,
    /// Importance measures of lane 0 (when asked).
    pub importance: Option<ImportanceAcc>,
    /// Lane 0's own accumulator (its blocks' shares of downtime and cost, failures caused).
    pub base_availability: Option<AvailabilityAcc>,
    pub base_mission: Option<MissionAcc>,
}

impl CrnAcc {
    fn absorb(&mut self, o: &CrnAcc) {
        for (a, b) in self.up.iter_mut().zip(&o.up) {
            a.merge(b);
        }
        for (a, b) in self.cost.iter_mut().zip(&o.cost) {
            a.merge(b);
        }
        add_vec(&mut self.cross, &o.cross);
        self.events += o.events;
        if let (Some(a), Some(b)) = (self.importance.as_mut(), o.importance.as_ref()) {
            a.absorb(b);
        }
        if let (Some(a), Some(b)) = (
            self.base_availability.as_mut(),
            o.base_availability.as_ref(),
        ) {
            a.absorb(b);
        }
        if let (Some(a), Some(b)) = (self.base_mission.as_mut(), o.base_mission.as_ref()) {
            a.absorb(b);
        }
    }

    pub fn replications(&self) -> u64 {
        self.up.first().map_or(0, |m| m.n)
    }

    fn compared(&self, l: usize) -> &Moments {
        match self.compared {
            Compared::Up => &self.up[l],
            Compared::Cost => &self.cost[l],
        }
    }

    /// Sample covariance of the compared values of lanes i and j.
    pub fn covariance(&self, i: usize, j: usize) -> f64 {
        let n = self.replications();
        if n < 2 {
            return 0.0;
        }
        let (a, b) = (i.min(j), i.max(j));
        let (mi, mj) = (self.compared(a).mean(), self.compared(b).mean());
        let nf = n as f64;
        (unfx(self.cross[a * self.lanes + b]) - nf * mi * mj) / (nf - 1.0)
    }

    pub fn summary(&self) -> CrnSummary {
        let k = self.lanes;
        let lanes = (0..k)
            .map(|l| LaneSummary {
                up: self.up[l].mean(),
                up_std_error: self.up[l].std_error(),
                cost: self.cost.get(l).map(|m| m.mean() * self.cost_scale),
                cost_std_error: self.cost.get(l).map(|m| m.std_error() * self.cost_scale),
            })
            .collect();
        let scale = match self.compared {
            Compared::Up => 1.0,
            Compared::Cost => self.cost_scale,
        };
        let covariance = (0..k)
            .map(|i| {
                (0..k)
                    .map(|j| self.covariance(i, j) * scale * scale)
                    .collect()
            })
            .collect();
        CrnSummary {
            replications: self.replications(),
            compared: self.compared,
            lanes,
            covariance,
            events: self.events,
            importance: self.importance.as_ref().map(|i| i.summary()),
            base_availability: self.base_availability.as_ref().map(|a| a.summary()),
            base_mission: self.base_mission.as_ref().map(|m| m.summary()),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneSummary {
    /// Mean availability (or survival to the mission end) and its standard error.
    pub up: f64,
    pub up_std_error: f64,
    /// Mean total cost over the horizon (diagrams with costs).
    pub cost: Option<f64>,
    pub cost_std_error: Option<f64>,
}

/// What a caller reads: each lane's means, the covariance matrix of the compared values
/// (per replication; a paired difference of lanes i and j has variance
/// (C_ii + C_jj - 2 C_ij) / n, two independent runs (C_ii + C_jj) / n).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrnSummary {
    pub replications: u64,
    pub compared: Compared,
    pub lanes: Vec<LaneSummary>,
    pub covariance: Vec<Vec<f64>>,
    pub events: u64,
    pub importance: Option<super::importance::ImportanceSummary>,
    pub base_availability: Option<availability::AvailabilitySummary>,
    pub base_mission: Option<mission::MissionSummary>,
}

enum LaneAcc {
    A(Box<AvailabilityAcc>),
    M(Box<MissionAcc>),
}

struct Work<'a> {
    sims: Vec<Sim<'a>>,
    accs: Vec<LaneAcc>,
    /// Importance of lane 0: its observer and, for missions, a second simulator that runs
    /// on past system failure to read every block's state at the mission end.
    imp: Option<ImportanceWork>,
    reader: Option<Sim<'a>>,
    ys: Vec<f64>,
    out: CrnAcc,
}

fn lane_acc(c: &Compiled, kind: RunKind, seed: u64, start: u64) -> LaneAcc {
    let blocks = c.block_ids();
    match kind {
        RunKind::Availability { horizon, crews } => LaneAcc::A(Box::new(AvailabilityAcc::empty(
            c,
            &AvailabilityOptions {
                horizon,
                grid: 0,
                crews,
                seed,
            },
            &blocks,
            start,
        ))),
        RunKind::Mission { mission_time } => LaneAcc::M(Box::new(MissionAcc::empty(
            c,
            &MissionOptions {
                mission_time,
                grid: 0,
                seed,
            },
            &blocks,
            start,
        ))),
    }
}

/// Check every lane can make the run; the lanes' common cost scale (costs compared only
/// when every lane has costs on one scale).
fn check(
    lanes: &[Compiled],
    kind: RunKind,
    compared: Compared,
    seed: u64,
) -> Result<f64, EngineError> {
    if lanes.is_empty() || lanes.len() > MAX_LANES {
        return Err(EngineError::at(
            "designs",
            format!("1 to {MAX_LANES} per run (got {})", lanes.len()),
        ));
    }
    let mut scale = None;
    for c in lanes {
        match kind {
            RunKind::Availability { horizon, crews } => {
                let o = AvailabilityOptions {
                    horizon,
                    grid: 0,
                    crews,
                    seed,
                };
                availability::check(c, &o)?;
                let s = AvailabilityAcc::empty(c, &o, &[], 0).cost_scale;
                if scale.is_some_and(|x| x != s) {
                    return Err(EngineError::at("designs", "costs on different scales"));
                }
                scale = Some(s);
            }
            RunKind::Mission { mission_time } => {
                mission::check(
                    c,
                    &MissionOptions {
                        mission_time,
                        grid: 0,
                        seed,
                    },
                )?;
                scale = Some(0.0);
            }
        }
    }
    let scale = scale.unwrap_or(0.0);
    if compared == Compared::Cost && scale == 0.0 {
        return Err(EngineError::at(
            "objective",
            "cost_rate: the diagram has no costs (set block or diagram costs)",
        ));
    }
    Ok(scale)
}

/// Replications [start, start + count) of every lane on common random numbers;
/// `importance` also measures lane 0's block importance.
#[allow(clippy::too_many_arguments)]
pub fn run(
    lanes: &[Compiled],
    kind: RunKind,
    compared: Compared,
    importance: bool,
    seed: u64,
    start: u64,
    count: u64,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<CrnAcc, EngineError> {
    let scale = check(lanes, kind, compared, seed)?;
    if importance && !lanes[0].phases.is_empty() {
        return Err(EngineError::at(
            "phases",
            "importance measures are for one-phase missions",
        ));
    }
    let k = lanes.len();
    let empty = || CrnAcc {
        lanes: k,
        compared,
        cost_scale: scale,
        up: vec![Moments::default(); k],
        cost: if scale > 0.0 {
            vec![Moments::default(); k]
        } else {
            vec![]
        },
        cross: vec![0; k * k],
        events: 0,
        importance: importance.then(|| ImportanceAcc::empty(&lanes[0])),
        base_availability: None,
        base_mission: None,
    };
    let (repairable, crews) = match kind {
        RunKind::Availability { crews, .. } => (true, crews),
        RunKind::Mission { .. } => (false, 0),
    };
    let horizon = match kind {
        RunKind::Availability { horizon, .. } => horizon,
        RunKind::Mission { mission_time } => mission_time,
    };
    ctl.plan(count);
    over_replications(
        start,
        count,
        threads,
        ctl,
        || Work {
            sims: lanes
                .iter()
                .map(|c| Sim::new(c, repairable, crews))
                .collect(),
            accs: lanes
                .iter()
                .map(|c| lane_acc(c, kind, seed, start))
                .collect(),
            imp: importance.then(|| ImportanceWork::new(&lanes[0], horizon)),
            reader: (importance && !repairable).then(|| Sim::new(&lanes[0], false, 0)),
            ys: vec![0.0; k],
            out: empty(),
        },
        |w, rep| replicate(w, rep, seed, horizon),
        |mut w| {
            match w.accs.swap_remove(0) {
                LaneAcc::A(a) => w.out.base_availability = Some(*a),
                LaneAcc::M(m) => w.out.base_mission = Some(*m),
            }
            w.out
        },
        |mut a, b| {
            if a.base_availability.is_none() && a.base_mission.is_none() {
                // The empty accumulator of the reduction: take the other side's whole.
                return b;
            }
            a.absorb(&b);
            a
        },
        empty,
    )
}

fn replicate(w: &mut Work, rep: u64, seed: u64, horizon: f64) {
    let Work {
        sims,
        accs,
        imp,
        reader,
        ys,
        out,
    } = w;
    for (l, (sim, acc)) in sims.iter_mut().zip(accs.iter_mut()).enumerate() {
        sim.unit_streams(seed, rep);
        let (up, cost) = match acc {
            LaneAcc::A(acc) => {
                let (a0, c0, e0) = (acc.availability.sum, acc.cost_total.sum, acc.events);
                match imp.as_mut() {
                    Some(i) if l == 0 => {
                        availability::replicate_observed(sim, acc, &[], rep, |s, t| {
                            i.observe(s, t)
                        });
                        i.end_replication(out.importance.as_mut().expect("importance asked"));
                    }
                    _ => availability::replicate_observed(sim, acc, &[], rep, |_, _| {}),
                }
                out.events += acc.events - e0;
                (
                    unfx(acc.availability.sum - a0),
                    unfx(acc.cost_total.sum - c0),
                )
            }
            LaneAcc::M(acc) => {
                let (f0, e0) = (acc.failed_by_mission, acc.events);
                mission::replicate(sim, acc, &[], rep);
                out.events += acc.events - e0;
                (1.0 - (acc.failed_by_mission - f0) as f64, 0.0)
            }
        };
        out.up[l].add(up);
        if let Some(m) = out.cost.get_mut(l) {
            m.add(cost);
        }
        ys[l] = match out.compared {
            Compared::Up => up,
            Compared::Cost => cost,
        };
    }
    let k = ys.len();
    for i in 0..k {
        for j in i..k {
            out.cross[i * k + j] += fx(ys[i] * ys[j]);
        }
    }
    if let (Some(sim), Some(i)) = (reader.as_mut(), imp.as_mut()) {
        // Every block's state at the mission end, on the base lane's stream.
        let mut rng = Stream::new(seed, rep);
        sim.unit_streams(seed, rep);
        sim.reset(&mut rng);
        while sim.next_time() <= horizon {
            if sim.step(&mut rng).is_none() {
                break;
            }
        }
        i.observe_at_end(sim);
        i.end_replication(out.importance.as_mut().expect("importance asked"));
    }
}
