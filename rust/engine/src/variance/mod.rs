//! Variance reduction of a repairable run's mean unavailability, chosen per run.
//!
//! Two tools, both exact in expectation wherever they are used:
//! - **Conditional Monte Carlo** (`Condition`): where one input of the output node is a
//!   subsystem S of independent exponential blocks joined as a tree (nothing else feeds
//!   from it), the system's downtime given the rest's history is integrated exactly:
//!   z = (time the system is down whatever S does + ∫ over the time S decides of
//!   P(S down at t)) / T, with P(S down at t) a sum of exponentials (`expo`). E[z] is the
//!   mean unavailability, and z drops S's own noise.
//! - **Control variates** (`Control`): per replication, quantities whose expectation is
//!   known exactly: a plain exponential block's downtime fraction (its alternating-renewal
//!   closed form integrated over [0, T]) and, where the blocks are independent and joined
//!   as a tree, the system's unavailability under independence evaluated at the blocks'
//!   own downtime fractions, 1 - h(1 - D) (h multilinear in independent blocks, so
//!   E = 1 - h(1 - E D)). Combined by least squares with the coefficients estimated from
//!   the same run (`estimate`): the regression-adjusted mean with its standard error and
//!   n - k - 1 degrees of freedom.
//!
//! - **Antithetic pairs** (`Method::Antithetic`): replications 2k and 2k + 1 draw from one
//!   stream, the second reading every uniform as 1 - U, every life by inversion (see
//!   `Stream::for_replication`); the estimate is the mean of the pairs' means, its interval
//!   from their spread on Student t with pairs - 1 degrees of freedom (`pairs`).
//!
//! A single-unit block of other life or repair families, or replaced at age, has its mean
//! downtime from a numeric renewal solution (`renewal`), used only when its estimated
//! error is negligible. Blocks whose mean is not known (block or condition replacement,
//! proof tests, standby, shared crews, common cause, maintenance groups) are not used.
//! The run's other figures (curve, per-block, failures) stay the plain estimates.
mod condition;
mod estimate;
pub mod expo;
mod pairs;
pub mod renewal;

use crate::availability::AvailabilityOptions;
use crate::diagram::{Compiled, GroupKind, NO_GROUP};
use crate::dist::Dist;
use crate::error::EngineError;
use crate::rng::Draws;
use crate::stats::{Moments, fx};
use expo::{ExpSum, Ring, at_least, k_of_n, unit_availability};
use serde::{Deserialize, Serialize};

pub use estimate::{Estimate, VarianceSummary};

/// Most block controls a run carries (the largest known mean downtimes first): each costs
/// a degree of freedom and a row of the cross sums.
pub const MAX_CONTROLS: usize = 16;

/// What a run asks for. `None` (the default) is the plain estimator, whose numbers for a
/// seed every earlier run and stored record pins; `control` uses control variates alone;
/// `auto` adds conditioning where the structure allows it; `antithetic` draws replications
/// in antithetic pairs (its own sampling path: other numbers than a plain run's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    #[default]
    None,
    Control,
    Auto,
    Antithetic,
    Stratified,
}

impl Method {
    pub fn parse(s: &str) -> Result<Method, EngineError> {
        match s {
            "none" => Ok(Method::None),
            "control" => Ok(Method::Control),
            "auto" => Ok(Method::Auto),
            "antithetic" => Ok(Method::Antithetic),
            "stratified" => Ok(Method::Stratified),
            other => Err(EngineError::at(
                "variance_reduction",
                format!(
                    "must be one of none, control, auto, antithetic, stratified (got {other:?})"
                ),
            )),
        }
    }
}

/// One control variate: its name and known mean; `group` for a block's downtime, None for
/// the system under independence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlVariate {
    pub name: String,
    pub group: Option<u32>,
    #[serde(with = "expo::bits::one")]
    pub mean: f64,
}

/// A tree of independent blocks feeding `top`: per node in topological order its
/// predecessors (inside the tree), its groups and its threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    nodes: Vec<u32>,
    preds: Vec<Vec<u32>>,
    groups: Vec<Vec<u32>>,
    threshold: Vec<u32>,
}

impl Tree {
    /// The nodes upstream of `top` (and `top`), if they form a tree: every one but the
    /// input feeds exactly one node of it (or `top` feeds only `only_succ` when given).
    fn new(c: &Compiled, top: u32, only_succ: Option<u32>) -> Option<Tree> {
        let n = c.threshold.len();
        let mut preds = vec![vec![]; n];
        for v in 0..n {
            for &w in c.successors(v) {
                preds[w as usize].push(v as u32);
            }
        }
        let mut inside = vec![false; n];
        let mut stack = vec![top];
        inside[top as usize] = true;
        while let Some(v) = stack.pop() {
            for &p in &preds[v as usize] {
                if !inside[p as usize] {
                    inside[p as usize] = true;
                    stack.push(p);
                }
            }
        }
        let input = *c.order.first()?;
        let mut groups = vec![vec![]; n];
        for (g, grp) in c.groups.iter().enumerate() {
            groups[grp.node as usize].push(g as u32);
        }
        if !groups[input as usize].is_empty() {
            return None;
        }
        for v in 0..n as u32 {
            if !inside[v as usize] || v == input {
                continue;
            }
            let succ = c.successors(v as usize);
            let ok = if v == top {
                only_succ.is_none_or(|o| succ == [o])
            } else {
                succ.iter().filter(|&&w| inside[w as usize]).count() == 1 && succ.len() == 1
            };
            if !ok {
                return None;
            }
        }
        let nodes: Vec<u32> = c
            .order
            .iter()
            .copied()
            .filter(|&v| inside[v as usize])
            .collect();
        Some(Tree {
            preds: nodes.iter().map(|&v| preds[v as usize].clone()).collect(),
            groups: nodes.iter().map(|&v| groups[v as usize].clone()).collect(),
            threshold: nodes.iter().map(|&v| c.threshold[v as usize]).collect(),
            nodes,
        })
    }

    fn blocks(&self) -> impl Iterator<Item = u32> + '_ {
        self.groups.iter().flatten().copied()
    }

    /// P(the top node passes) from each block's probability of working.
    fn works<T: Ring>(&self, block: impl Fn(u32) -> Option<T>, n: usize) -> Option<T> {
        let mut p: Vec<Option<T>> = vec![None; n];
        for (i, &v) in self.nodes.iter().enumerate() {
            let ins: Vec<T> = self.preds[i]
                .iter()
                .map(|&w| p[w as usize].clone())
                .collect::<Option<_>>()?;
            let mut x = at_least(&ins, self.threshold[i])?;
            for &g in &self.groups[i] {
                x = x.mul(&block(g)?)?;
            }
            p[v as usize] = Some(x);
        }
        p[*self.nodes.last()? as usize].clone()
    }

    /// `works` on one replication's numbers without allocating (it runs per replication):
    /// node ids and thresholds below `SMALL` on the stack, else the general path.
    fn works_now(&self, block: impl Fn(u32) -> f64) -> f64 {
        const SMALL: usize = 128;
        let n = self.nodes.iter().max().map_or(0, |&v| v as usize + 1);
        if n > SMALL || self.threshold.iter().any(|&t| t as usize >= SMALL) {
            return self.works(|g| Some(block(g)), n).unwrap_or(0.0);
        }
        let mut p = [0.0f64; SMALL];
        let mut dist = [0.0f64; SMALL + 1];
        for (i, &v) in self.nodes.iter().enumerate() {
            // Poisson-binomial tail as `at_least`: dist[j] = P(exactly j so far), j < k;
            // dist[k] = P(at least k).
            let k = self.threshold[i] as usize;
            dist[..=k].iter_mut().for_each(|d| *d = 0.0);
            dist[0] = 1.0;
            for &w in &self.preds[i] {
                let q = p[w as usize];
                if k > 0 {
                    dist[k] += dist[k - 1] * q;
                    for j in (1..k).rev() {
                        dist[j] = dist[j] * (1.0 - q) + dist[j - 1] * q;
                    }
                    dist[0] *= 1.0 - q;
                }
            }
            let mut x = dist[k];
            for &g in &self.groups[i] {
                x *= block(g);
            }
            p[v as usize] = x;
        }
        self.nodes.last().map_or(0.0, |&v| p[v as usize])
    }
}

/// Conditioning on subsystem S at `root`, one input of the output node: either the whole
/// tree feeding `root` (`local` empty), or the blocks `local` held at `root` itself (the
/// known ones of a train whose other blocks are not: `root` then passes when its other
/// blocks and inputs do and S works). `down` is P(S down at t).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    pub root: u32,
    pub output: u32,
    /// The output's threshold: with `others` of its other inputs passing, the system works
    /// whatever `root` does from `threshold`, `root` decides at `threshold - 1`.
    pub threshold: u32,
    #[serde(default)]
    pub local: Vec<u32>,
    pub down: ExpSum,
    pub blocks: Vec<String>,
}

/// A replication's conditional downtime, followed through its events.
pub(crate) struct Track<'p> {
    plan: &'p Condition,
    class: u8,
    since: f64,
    sure: f64,
    decided: f64,
}

impl<'p> Track<'p> {
    /// 0: up whatever S does; 1: S decides; 2: down whatever S does. `rest` is whether
    /// `root` would pass were S working (always, for a whole tree).
    #[inline(always)]
    fn class(&self, others: u32, rest: bool) -> u8 {
        let t = self.plan.threshold;
        if others >= t {
            0
        } else if others + 1 == t && rest {
            1
        } else {
            2
        }
    }

    /// The blocks of S held at `root` (empty for a whole tree: `rest` is then true).
    pub(crate) fn local(&self) -> &'p [u32] {
        &self.plan.local
    }

    pub(crate) fn new(plan: &'p Condition, others: u32, rest: bool) -> Self {
        let mut k = Track {
            plan,
            class: 0,
            since: 0.0,
            sure: 0.0,
            decided: 0.0,
        };
        k.class = k.class(others, rest);
        k
    }

    /// The node whose subsystem is integrated out.
    pub(crate) fn root(&self) -> u32 {
        self.plan.root
    }

    /// From `t` on, `others` of the output's other inputs pass and `root` would pass were S
    /// working (`rest`).
    #[inline(always)]
    pub(crate) fn at(&mut self, t: f64, others: u32, rest: bool) {
        let class = self.class(others, rest);
        if class != self.class {
            self.close(t);
            self.class = class;
        }
    }

    fn close(&mut self, t: f64) {
        match self.class {
            1 => self.decided += self.plan.down.integral(self.since, t),
            2 => self.sure += t - self.since,
            _ => {}
        }
        self.since = t;
    }

    /// The replication's conditional unavailability over [0, horizon].
    pub(crate) fn finish(mut self, horizon: f64) -> f64 {
        self.close(horizon);
        (self.sure + self.decided) / horizon
    }
}

/// The variance reduction of a run: its plan (what is conditioned on, the controls with
/// their known means) and exact fixed-point sums over replications of the response z (the
/// conditional or plain unavailability) and the controls x: Σz, Σz², Σx, Σxz, Σxxᵀ (upper
/// triangle, row by row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VarianceAcc {
    pub requested: Method,
    /// Why a tool was not used (shown on the record).
    pub notes: Vec<String>,
    pub condition: Option<Condition>,
    pub controls: Vec<ControlVariate>,
    pub system: Option<Tree>,
    pub n: u64,
    pub sum_z: i128,
    pub sum_zz: i128,
    pub sum_x: Vec<i128>,
    pub sum_xz: Vec<i128>,
    pub sum_xx: Vec<i128>,
    /// Antithetic runs: complete pairs, exact sums of each pair's y_2k + y_2k+1 and of its
    /// square, and the replications whose partner is outside the range summed so far
    /// (index, bits of y), so ranges split anywhere add up to the whole run's sums.
    /// Stratified runs keep their sets here alike (`pairs` counts complete sets).
    #[serde(default)]
    pub pairs: u64,
    #[serde(default)]
    pub sum_pair: i128,
    #[serde(default)]
    pub sum_pair_sq: i128,
    #[serde(default)]
    pub ends: Vec<(u64, u64)>,
    /// Antithetic or stratified runs to a target precision whose pilot sets did not pay for
    /// their CPU: the replication from which the run draws plain streams
    /// (`pairs::PILOT_SETS`), and those replications' unavailability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plain_from: Option<u64>,
    #[serde(default, skip_serializing_if = "Moments::is_empty")]
    pub after: Moments,
    /// Stratified runs: the uniforms of a replication drawn from its set's Latin hypercube
    /// (the diagram's units, at most `rng::STRATIFIED_DRAWS`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub strata: u32,
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

/// P(block g works at t) when it is known exactly: a plain block of exponential units
/// (life and repair, no location), repaired at once by its own crew, touched by nothing
/// else (no planned replacement, proof test, common cause, maintenance group, costs,
/// repair quality, start state), in a run where no crew is shared.
fn known(c: &Compiled, crews: u32, g: usize) -> Option<ExpSum> {
    if crews != 0 || !c.mgroups.is_empty() || crate::sim::special(c, g) {
        return None;
    }
    let grp = &c.groups[g];
    let GroupKind::Plain { need } = grp.kind else {
        return None;
    };
    if grp.instant_repair
        || grp.start.is_some()
        || grp.uncovered.is_some()
        || c.group_ccf[g] != NO_GROUP
    {
        return None;
    }
    let rate = |d: u32| match &c.dists[d as usize] {
        Dist::Exponential(e) if e.location() == 0.0 => Some(e.rate()),
        _ => None,
    };
    let (lam, mu) = (rate(grp.life)?, rate(grp.repair?)?);
    k_of_n(&unit_availability(lam, mu), grp.units, need)
}

impl VarianceAcc {
    /// The plan of a run asking `method` (None for `Method::None`).
    pub fn plan(c: &Compiled, o: &AvailabilityOptions, method: Method) -> Option<VarianceAcc> {
        if method == Method::None {
            return None;
        }
        if method == Method::Antithetic {
            return Some(VarianceAcc::antithetic());
        }
        if method == Method::Stratified {
            return Some(VarianceAcc::stratified(
                c.groups.iter().map(|g| g.units).sum(),
            ));
        }
        let horizon = o.horizon;
        let mut notes = vec![];
        let works: Vec<Option<ExpSum>> =
            (0..c.groups.len()).map(|g| known(c, o.crews, g)).collect();
        let mean_down = |p: &ExpSum| p.complement().map(|q| q.integral(0.0, horizon) / horizon);
        let output = c.output;
        let directed = c.network_source.is_none();
        let mut condition = None;
        if method == Method::Auto && directed {
            condition = condition::best(c, &works, horizon);
            if condition.is_none() {
                notes.push(
                    "conditional: no input of the output node is a tree of exponential blocks \
                     independent of the rest with another block beside it"
                        .to_string(),
                );
            }
        }
        let in_s = |g: usize| {
            condition
                .as_ref()
                .is_some_and(|k: &Condition| k.blocks.contains(&c.groups[g].id))
        };
        let mut controls: Vec<ControlVariate> = works
            .iter()
            .enumerate()
            .filter(|&(g, _)| !in_s(g))
            .filter_map(|(g, w)| {
                let m = mean_down(w.as_ref()?)?;
                (m > 0.0).then(|| ControlVariate {
                    name: format!("downtime of {}", c.groups[g].id),
                    group: Some(g as u32),
                    mean: m,
                })
            })
            .collect();
        let numeric = renewal::means(c, o.crews, horizon, &works, &mut notes);
        controls.extend(numeric.iter().enumerate().filter_map(|(g, s)| {
            let m = s.as_ref()?.down;
            (m > 0.0).then(|| ControlVariate {
                name: format!("downtime of {}", c.groups[g].id),
                group: Some(g as u32),
                mean: m,
            })
        }));
        controls.sort_by(|a, b| b.mean.total_cmp(&a.mean).then(a.group.cmp(&b.group)));
        if controls.len() > MAX_CONTROLS {
            notes.push(format!(
                "control: the {MAX_CONTROLS} blocks of largest known mean downtime are controls"
            ));
            controls.truncate(MAX_CONTROLS);
        }
        let mut system = None;
        if directed {
            if let Some(tree) = Tree::new(c, output, None) {
                let blocks: Vec<u32> = tree.blocks().collect();
                // A block's mean downtime, closed form or numeric: the system's unavailability
                // under independence is multilinear in the blocks' independent downtimes, so
                // its mean is the same function of their means (each partial derivative in
                // [-1, 1]: the numeric means' errors add at most their sum, kept within the
                // same bound).
                let block_mean = |g: u32| match &works[g as usize] {
                    Some(w) => mean_down(w),
                    None => numeric[g as usize].map(|s| s.down),
                };
                let error: f64 = blocks
                    .iter()
                    .filter_map(|&g| numeric[g as usize].map(|s| s.error))
                    .sum();
                let all =
                    blocks.iter().all(|&g| block_mean(g).is_some()) && error <= renewal::MAX_ERROR;
                let n = c.threshold.len();
                let mean = all
                    .then(|| tree.works(|g| Some(1.0 - block_mean(g)?), n))
                    .flatten();
                if let Some(m) = mean {
                    controls.push(ControlVariate {
                        name: "system unavailability under independence".into(),
                        group: None,
                        mean: 1.0 - m,
                    });
                    system = Some(tree);
                }
            }
        }
        if system.is_none() {
            notes.push(
                "control: the system under independence needs every block's mean known and \
                 the blocks joined as a tree"
                    .to_string(),
            );
        }
        if controls.is_empty() {
            notes.push("control: no block's mean downtime is known exactly".to_string());
        }
        let k = controls.len();
        Some(VarianceAcc {
            condition,
            controls,
            system,
            sum_x: vec![0; k],
            sum_xz: vec![0; k],
            sum_xx: vec![0; k * (k + 1) / 2],
            ..VarianceAcc::empty(method, notes)
        })
    }

    /// Whether anything is collected per replication.
    pub(crate) fn active(&self) -> bool {
        self.condition.is_some() || !self.controls.is_empty() || self.in_sets()
    }

    /// Replication `rep`: its plain unavailability `y`, its conditional one when
    /// conditioning, and each block's downtime fraction.
    pub(crate) fn book(
        &mut self,
        rep: u64,
        y: f64,
        conditional: Option<f64>,
        down: impl Fn(usize) -> f64,
    ) {
        if !self.active() {
            return;
        }
        if self.in_sets() {
            if self.draws_at(rep) == Draws::Plain {
                self.after.add(y);
                return;
            }
            self.n += 1;
            self.sum_z += fx(y);
            self.sum_zz += fx(y * y);
            self.pair_end(rep, y.to_bits());
            return;
        }
        let z = conditional.unwrap_or(y);
        let mut x = [0.0; MAX_CONTROLS + 1];
        let k = self.controls.len();
        for (j, ctl) in self.controls.iter().enumerate() {
            x[j] = match ctl.group {
                Some(g) => down(g as usize),
                None => {
                    let tree = self.system.as_ref().expect("a system control has its tree");
                    1.0 - tree.works_now(|g| 1.0 - down(g as usize))
                }
            };
        }
        self.n += 1;
        self.sum_z += fx(z);
        self.sum_zz += fx(z * z);
        let mut at = 0;
        for i in 0..k {
            self.sum_x[i] += fx(x[i]);
            self.sum_xz[i] += fx(x[i] * z);
            for j in i..k {
                self.sum_xx[at] += fx(x[i] * x[j]);
                at += 1;
            }
        }
    }

    /// Whether two runs' plans are the same (their sums then add). Where an antithetic run
    /// turned to plain streams is the caller's to check (it knows the ranges).
    pub(crate) fn same_plan(&self, o: &VarianceAcc) -> bool {
        self.requested == o.requested
            && self.strata == o.strata
            && self.condition == o.condition
            && self.controls == o.controls
            && self.system == o.system
    }

    pub(crate) fn absorb(&mut self, o: &VarianceAcc) {
        self.n += o.n;
        self.sum_z += o.sum_z;
        self.sum_zz += o.sum_zz;
        crate::stats::add_vec(&mut self.sum_x, &o.sum_x);
        crate::stats::add_vec(&mut self.sum_xz, &o.sum_xz);
        crate::stats::add_vec(&mut self.sum_xx, &o.sum_xx);
        self.pairs += o.pairs;
        self.sum_pair += o.sum_pair;
        self.sum_pair_sq += o.sum_pair_sq;
        for &(rep, y) in &o.ends {
            self.pair_end(rep, y);
        }
        self.plain_from = self.plain_from.or(o.plain_from);
        self.after.merge(&o.after);
    }
}

#[cfg(test)]
mod pair_tests;
#[cfg(test)]
mod renewal_tests;
#[cfg(test)]
mod strat_tests;
#[cfg(test)]
mod strat_turn_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod turn_tests;
