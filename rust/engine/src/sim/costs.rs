//! Costs and production: discounting, charges per failure and per unit time down,
//! system throughput, closing the books at the horizon.
use super::*;

impl<'a> Sim<'a> {
    /// Discount factor of a cost at time t.
    #[inline]
    fn discount(&self, t: f64) -> f64 {
        let d = self.c.discount;
        if d > 0.0 { (-d * t).exp() } else { 1.0 }
    }

    /// Discounted length of [a, b] (for costs per unit time).
    pub fn discounted_span(&self, a: f64, b: f64) -> f64 {
        let d = self.c.discount;
        if d > 0.0 {
            ((-d * a).exp() - (-d * b).exp()) / d
        } else {
            b - a
        }
    }

    /// Charge a cost (min, max) of kind `k` to group g now: a range is drawn uniformly.
    pub(super) fn charge(&mut self, g: usize, k: usize, (lo, hi): (f64, f64), rng: &mut Stream) {
        if hi <= 0.0 {
            return;
        }
        let x = if hi > lo {
            lo + (hi - lo) * rng.uniform()
        } else {
            lo
        };
        self.cost[g * KINDS + k] += x * self.discount(self.now);
    }

    #[cold]
    #[inline(never)]
    pub(super) fn charge_failure(&mut self, g: usize, rng: &mut Stream) {
        if self.costs_on
            && self.repairable
            && let Some(k) = self.c.groups[g].costs
        {
            self.charge(g, K_REPAIR, k.repair, rng);
            self.charge(g, K_REPLACE, k.replace, rng);
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn downtime_cost(&mut self, g: usize, t: f64) {
        if let Some(k) = self.c.groups[g].costs
            && k.downtime > 0.0
        {
            self.cost[g * KINDS + K_DOWNTIME] +=
                k.downtime * self.discounted_span(self.down_since[g], t);
        }
    }

    /// System throughput now: a block carries its capacity times its units up (parallel)
    /// or running (standby), or its capacity while it works (component, series); a node
    /// the least of its blocks and the sum of what flows in; nothing where the signal
    /// does not pass. Compilation refuses a limited flow that splits, so this is exact.
    pub fn throughput(&mut self) -> f64 {
        let c = self.c;
        self.node_cap.iter_mut().for_each(|x| *x = f64::INFINITY);
        self.inflow.iter_mut().for_each(|x| *x = 0.0);
        for (g, grp) in c.groups.iter().enumerate() {
            let per = self.cap_unit[g];
            if per.is_infinite() {
                continue;
            }
            let cap = match grp.kind {
                // Non-identical units with their own capacities: the running ones' sum.
                GroupKind::Standby { .. } if grp.own_units.iter().any(|m| m.capacity.is_some()) => {
                    let first = grp.first_unit as usize;
                    (first..first + grp.units as usize)
                        .zip(&grp.own_units)
                        .filter(|(u, _)| self.status[*u] == Status::Running)
                        .map(|(_, m)| m.capacity.unwrap_or(per))
                        .sum()
                }
                GroupKind::Plain { need: 1 } if grp.units > 1 => per * self.count[g] as f64,
                GroupKind::Standby { k, .. } => per * self.count[g].min(k) as f64,
                GroupKind::Plain { .. } => per,
            };
            let v = grp.node as usize;
            self.node_cap[v] = self.node_cap[v].min(cap);
        }
        let mut out = 0.0;
        for &v in &c.order {
            let v = v as usize;
            let f = if !self.reach[v] {
                0.0
            } else if self.threshold[v] == 0 {
                self.node_cap[v]
            } else {
                self.inflow[v].min(self.node_cap[v])
            };
            if v == c.output as usize {
                out = f;
            }
            for &w in c.successors(v) {
                self.inflow[w as usize] += f;
            }
        }
        out
    }

    /// Close the books at `t`: downtime of blocks still down counts up to `t`.
    pub fn finish(&mut self, t: f64) {
        for g in 0..self.ok.len() {
            if !self.ok[g] {
                self.close_planned(g, t);
                self.downtime[g] += t - self.down_since[g];
                if self.costs_on {
                    self.downtime_cost(g, t);
                }
                self.down_since[g] = t;
            }
        }
    }
}
