//! Block importance from the simulation: the structure function evaluated on the blocks'
//! states as the simulation holds them, with each block forced up and forced down.
//!
//! Availability runs integrate over time (each state weighted by how long it held, as a
//! fraction of the horizon); mission runs read every block's state at the mission end.
//! Per block i, with phi the structure function and x the block states:
//! A = E[phi(x)], A1_i = E[phi(1_i, x)], A0_i = E[phi(0_i, x)] and
//! C_i = E[(1 - x_i)(phi(1_i, x) - phi(0_i, x))] (down and critical) and F_i the chance the
//! system is down with block i in a failed minimal cut set. Then (Q = 1 - A): Birnbaum
//! A1 - A0 (for independent blocks exactly dA/dp_i), criticality C / Q (block i down and
//! critical given the system is down), Fussell-Vesely F / Q (Vesely's definition: some
//! minimal cut set holding block i has failed, given the system is down), RAW (1 - A0) / Q,
//! RRW Q / (1 - A1).
//!
//! Block i is in a failed minimal cut set of the down set D exactly when, for some T within
//! D without i, the system works with T down and fails with T and i down (then a minimal cut
//! inside T + i must hold i; conversely take T = C - i). Only system-down states are
//! searched, over the subsets of D; a state with more than `MAX_SEARCHED` blocks down is
//! counted, and Fussell-Vesely is then not reported (its search would be exponential).
use crate::diagram::Compiled;
use crate::sim::Sim;
use crate::stats::{Moments, add_vec, fx, unfx};
use serde::{Deserialize, Serialize};

/// Most blocks down at once for which the Fussell-Vesely search runs (2^(n-1) states).
pub const MAX_SEARCHED: usize = 16;

/// Ratio of two means with its delta-method standard error (`cross`: sum of x * y).
fn ratio_se(x: &Moments, y: &Moments, cross: i128) -> (Option<f64>, Option<f64>) {
    let (mx, my) = (x.mean(), y.mean());
    if my.is_nan() || my <= 0.0 {
        return (None, None);
    }
    let r = mx / my;
    let n = x.n as f64;
    if x.n < 2 {
        return (Some(r), None);
    }
    let var = |m: &Moments| ((unfx(m.sum_sq) - n * m.mean() * m.mean()) / (n - 1.0)).max(0.0);
    let cov = (unfx(cross) - n * mx * my) / (n - 1.0);
    let v = (var(x) - 2.0 * r * cov + r * r * var(y)).max(0.0) / (n * my * my);
    (Some(r), Some(v.sqrt()))
}

/// Sums over replications (fixed point).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ImportanceAcc {
    pub blocks: Vec<String>,
    pub up: Moments,
    /// Per replication: the system down (1 - up), for the ratios' standard errors.
    pub down: Moments,
    pub birnbaum: Vec<Moments>,
    pub up_if_up: Vec<i128>,
    pub up_if_down: Vec<i128>,
    pub critical: Vec<Moments>,
    pub critical_x_down: Vec<i128>,
    pub in_failed_cut: Vec<Moments>,
    pub in_failed_cut_x_down: Vec<i128>,
    pub block_down: Vec<i128>,
    /// System-down states seen with more than `MAX_SEARCHED` blocks down.
    pub unsearched: u64,
}

impl ImportanceAcc {
    pub fn empty(c: &Compiled) -> Self {
        let g = c.groups.len();
        ImportanceAcc {
            blocks: c.block_ids(),
            up: Moments::default(),
            down: Moments::default(),
            birnbaum: vec![Moments::default(); g],
            up_if_up: vec![0; g],
            up_if_down: vec![0; g],
            critical: vec![Moments::default(); g],
            critical_x_down: vec![0; g],
            in_failed_cut: vec![Moments::default(); g],
            in_failed_cut_x_down: vec![0; g],
            block_down: vec![0; g],
            unsearched: 0,
        }
    }

    pub fn absorb(&mut self, o: &ImportanceAcc) {
        self.up.merge(&o.up);
        self.down.merge(&o.down);
        for (a, b) in self.birnbaum.iter_mut().zip(&o.birnbaum) {
            a.merge(b);
        }
        for (a, b) in self.critical.iter_mut().zip(&o.critical) {
            a.merge(b);
        }
        for (a, b) in self.in_failed_cut.iter_mut().zip(&o.in_failed_cut) {
            a.merge(b);
        }
        add_vec(&mut self.up_if_up, &o.up_if_up);
        add_vec(&mut self.up_if_down, &o.up_if_down);
        add_vec(&mut self.critical_x_down, &o.critical_x_down);
        add_vec(&mut self.in_failed_cut_x_down, &o.in_failed_cut_x_down);
        add_vec(&mut self.block_down, &o.block_down);
        self.unsearched += o.unsearched;
    }

    pub fn summary(&self) -> ImportanceSummary {
        let n = self.up.n.max(1) as f64;
        let a = self.up.mean();
        let q = 1.0 - a;
        let ratio = |x: f64, y: f64| if y > 0.0 { Some(x / y) } else { None };
        let blocks = (0..self.blocks.len())
            .map(|g| {
                let a1 = unfx(self.up_if_up[g]) / n;
                let a0 = unfx(self.up_if_down[g]) / n;
                let (crit, crit_se) =
                    ratio_se(&self.critical[g], &self.down, self.critical_x_down[g]);
                let (fv, fv_se) = if self.unsearched == 0 {
                    ratio_se(
                        &self.in_failed_cut[g],
                        &self.down,
                        self.in_failed_cut_x_down[g],
                    )
                } else {
                    (None, None)
                };
                BlockImportance {
                    id: self.blocks[g].clone(),
                    birnbaum: self.birnbaum[g].mean(),
                    birnbaum_std_error: self.birnbaum[g].std_error(),
                    criticality: crit,
                    criticality_std_error: crit_se,
                    fussell_vesely: fv,
                    fussell_vesely_std_error: fv_se,
                    risk_achievement_worth: ratio(1.0 - a0, q),
                    risk_reduction_worth: ratio(q, 1.0 - a1),
                    system_up_if_block_up: a1,
                    system_up_if_block_down: a0,
                    block_unavailability: unfx(self.block_down[g]) / n,
                }
            })
            .collect();
        ImportanceSummary {
            system_up: a,
            system_up_std_error: self.up.std_error(),
            unsearched_states: self.unsearched,
            blocks,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BlockImportance {
    pub id: String,
    pub birnbaum: f64,
    pub birnbaum_std_error: f64,
    /// None where the system never went down (the ratios have no denominator).
    pub criticality: Option<f64>,
    pub criticality_std_error: Option<f64>,
    /// None also when some system-down state had more than `MAX_SEARCHED` blocks down.
    pub fussell_vesely: Option<f64>,
    pub fussell_vesely_std_error: Option<f64>,
    pub risk_achievement_worth: Option<f64>,
    pub risk_reduction_worth: Option<f64>,
    pub system_up_if_block_up: f64,
    pub system_up_if_block_down: f64,
    pub block_unavailability: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ImportanceSummary {
    /// Availability (time average) or reliability at the mission end, as measured here.
    pub system_up: f64,
    pub system_up_std_error: f64,
    pub unsearched_states: u64,
    pub blocks: Vec<BlockImportance>,
}

/// One worker's scratch: structure-evaluation buffers and this replication's integrals.
pub struct ImportanceWork {
    horizon: f64,
    last: f64,
    bad: Vec<u32>,
    live: Vec<u32>,
    reach: Vec<bool>,
    seen: Vec<bool>,
    stack: Vec<u32>,
    up: f64,
    up_if_up: Vec<f64>,
    up_if_down: Vec<f64>,
    critical_down: Vec<f64>,
    in_failed_cut: Vec<f64>,
    block_down: Vec<f64>,
    unsearched: u64,
    /// Scratch: the blocks down in the present state.
    down_set: Vec<u32>,
}

impl ImportanceWork {
    pub fn new(c: &Compiled, horizon: f64) -> Self {
        let (n, g) = (c.threshold.len(), c.groups.len());
        ImportanceWork {
            horizon,
            last: 0.0,
            bad: vec![0; n],
            live: vec![0; n],
            reach: vec![false; n],
            seen: vec![false; n],
            stack: vec![],
            up: 0.0,
            up_if_up: vec![0.0; g],
            up_if_down: vec![0.0; g],
            critical_down: vec![0.0; g],
            in_failed_cut: vec![0.0; g],
            block_down: vec![0.0; g],
            unsearched: 0,
            down_set: vec![],
        }
    }

    /// Is block `i` (in `down_set`) in a minimal cut set within the down set? Some T among
    /// the other down blocks with the system working with T down and failing with T + i.
    fn in_failed_cut(&mut self, c: &Compiled, i: usize) -> bool {
        let others: Vec<u32> = self
            .down_set
            .iter()
            .copied()
            .filter(|&g| g as usize != i)
            .collect();
        let node_i = c.groups[i].node as usize;
        for mask in 0u32..(1u32 << others.len()) {
            self.bad.fill(0);
            for (k, &g) in others.iter().enumerate() {
                if mask >> k & 1 == 1 {
                    self.bad[c.groups[g as usize].node as usize] += 1;
                }
            }
            if !self.works(c) {
                continue; // T alone fails the system: i is not needed with this T
            }
            self.bad[node_i] += 1;
            let fails = !self.works(c);
            if fails {
                return true;
            }
        }
        false
    }

    /// The structure function on `bad` (blocks down per graph node), as
    /// `Compiled::evaluate` computes it, without allocating.
    fn works(&mut self, c: &Compiled) -> bool {
        if let Some(src) = c.network_source {
            self.seen.fill(false);
            return c.connected(src, &self.bad, &mut self.seen, &mut self.stack);
        }
        self.live.fill(0);
        for &v in &c.order {
            let v = v as usize;
            let r = self.bad[v] == 0 && self.live[v] >= c.threshold[v];
            self.reach[v] = r;
            if r {
                for &w in c.successors(v) {
                    self.live[w as usize] += 1;
                }
            }
        }
        self.reach[c.output as usize]
    }

    /// Add the blocks' present states with weight `dt`.
    fn add(&mut self, sim: &Sim, dt: f64) {
        if dt <= 0.0 {
            return;
        }
        let c = sim.c;
        self.bad.fill(0);
        for (g, grp) in c.groups.iter().enumerate() {
            self.bad[grp.node as usize] += !sim.ok[g] as u32;
        }
        let phi = self.works(c);
        self.up += dt * phi as u8 as f64;
        for (g, grp) in c.groups.iter().enumerate() {
            let node = grp.node as usize;
            if sim.ok[g] {
                self.bad[node] += 1;
                let down = self.works(c);
                self.bad[node] -= 1;
                self.up_if_up[g] += dt * phi as u8 as f64;
                self.up_if_down[g] += dt * down as u8 as f64;
            } else {
                self.bad[node] -= 1;
                let up = self.works(c);
                self.bad[node] += 1;
                self.up_if_up[g] += dt * up as u8 as f64;
                self.up_if_down[g] += dt * phi as u8 as f64;
                self.critical_down[g] += dt * (up && !phi) as u8 as f64;
                self.block_down[g] += dt;
            }
        }
        if !phi {
            self.down_set.clear();
            self.down_set
                .extend((0..c.groups.len() as u32).filter(|&g| !sim.ok[g as usize]));
            if self.down_set.len() > MAX_SEARCHED {
                self.unsearched += 1;
                return;
            }
            for k in 0..self.down_set.len() {
                let g = self.down_set[k] as usize;
                if self.in_failed_cut(c, g) {
                    self.in_failed_cut[g] += dt;
                }
            }
        }
    }

    /// Availability runs: the states `sim` holds have held since the last call, until `t`.
    pub fn observe(&mut self, sim: &Sim, t: f64) {
        let t = t.min(self.horizon);
        let dt = (t - self.last) / self.horizon;
        self.add(sim, dt);
        self.last = t;
    }

    /// Mission runs: the states at the mission end, weight 1.
    pub fn observe_at_end(&mut self, sim: &Sim) {
        self.add(sim, 1.0);
    }

    /// Move this replication's integrals into `acc` and start afresh.
    pub fn end_replication(&mut self, acc: &mut ImportanceAcc) {
        let down = 1.0 - self.up;
        acc.up.add(self.up);
        acc.down.add(down);
        for g in 0..self.up_if_up.len() {
            acc.birnbaum[g].add(self.up_if_up[g] - self.up_if_down[g]);
            acc.up_if_up[g] += fx(self.up_if_up[g]);
            acc.up_if_down[g] += fx(self.up_if_down[g]);
            acc.critical[g].add(self.critical_down[g]);
            acc.critical_x_down[g] += fx(self.critical_down[g] * down);
            acc.in_failed_cut[g].add(self.in_failed_cut[g]);
            acc.in_failed_cut_x_down[g] += fx(self.in_failed_cut[g] * down);
            acc.block_down[g] += fx(self.block_down[g]);
        }
        acc.unsearched += self.unsearched;
        self.up = 0.0;
        self.last = 0.0;
        self.unsearched = 0;
        self.up_if_up.fill(0.0);
        self.up_if_down.fill(0.0);
        self.critical_down.fill(0.0);
        self.in_failed_cut.fill(0.0);
        self.block_down.fill(0.0);
    }
}
