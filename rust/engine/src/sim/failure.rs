//! Failures: the core path and the special one (proof-tested, common-cause, imperfectly
//! repaired blocks), instant renewal, common-cause batches, hidden failure modes.
use super::*;

impl<'a> Sim<'a> {
    pub(super) fn fail(&mut self, u: usize, g: usize, rng: &mut Stream) {
        self.failures[g] += 1;
        if self.special[g] {
            self.fail_special(u, g, rng, true);
        } else {
            self.fail_plain::<false>(u, g, rng);
        }
    }

    /// A unit fails and is repaired (or renewed in place). `SPECIAL`: a group with its own
    /// repairer may be involved (known at compile time, so the core path does not ask).
    fn fail_plain<const SPECIAL: bool>(&mut self, u: usize, g: usize, rng: &mut Stream) {
        let c = self.c;
        if self.repairable && self.instant[g] {
            // Renewed in no time: the block stops for no time (which may fail the system).
            self.instant_stop(u, g);
            self.renew_in_place(u, g, rng);
            return;
        }
        let was = self.status[u];
        self.status[u] = Status::Down;
        match c.groups[g].kind {
            GroupKind::Plain { .. } => self.count[g] -= 1,
            GroupKind::Standby { .. } => {
                if was == Status::Running {
                    self.count[g] -= 1;
                    self.switch_in(g, rng);
                }
            }
        }
        self.refresh(g);
        if self.repairable {
            if SPECIAL {
                self.call_repairer(u, g, rng);
            } else {
                self.call_crew(u, g, rng);
            }
        }
    }

    /// An instantly renewed unit fails: if that stops its block (it ran, and no spare takes
    /// over), the block is down for no time, and so is the system if the block's loss takes
    /// it down: a system failure of zero length. Inside a common-cause event the block stays
    /// down until every member has failed (`release_held`), so simultaneous losses count.
    #[cold]
    #[inline(never)]
    fn instant_stop(&mut self, u: usize, g: usize) {
        if self.status[u] != Status::Running || self.count[g] == 0 || self.count[g] > self.need[g] {
            return;
        }
        let grp = &self.c.groups[g];
        if let GroupKind::Standby { .. } = grp.kind {
            let first = grp.first_unit as usize;
            if (first..first + grp.units as usize).any(|v| self.status[v] == Status::Idle) {
                return;
            }
        }
        if !self.batch {
            self.batch_up = self.system_up();
        }
        self.count[g] -= 1;
        self.refresh(g);
        self.held.push(g as u32);
        if !self.batch {
            self.release_held();
        }
    }

    /// Blocks held down for no time come back; a system they took down failed.
    #[cold]
    #[inline(never)]
    fn release_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        if self.batch_up && !self.system_up() {
            self.instant_system_failures += 1;
        }
        while let Some(g) = self.held.pop() {
            let g = g as usize;
            self.count[g] += 1;
            self.refresh(g);
        }
    }

    /// Simultaneous failures begin (a common-cause event).
    pub(super) fn begin_batch(&mut self) {
        self.batch = true;
        self.batch_up = self.system_up();
    }

    pub(super) fn end_batch(&mut self) {
        self.batch = false;
        self.release_held();
    }

    /// Failure of a proof-tested or common-cause block (a single-unit component when
    /// proof-tested or in a group). `independent`: its own failure, which on the
    /// probability basis may take other members with it.
    #[cold]
    #[inline(never)]
    fn fail_special(&mut self, u: usize, g: usize, rng: &mut Stream, independent: bool) {
        let c = self.c;
        let ci = c.group_ccf[g];
        let takes_others = independent && ci != NO_GROUP && !c.ccfs[ci as usize].rate_basis;
        if takes_others {
            self.begin_batch();
        }
        let rq = if self.repairable {
            c.groups[g].rq
        } else {
            None
        };
        if rq.is_none() {
            self.charge_failure(g, rng);
        }
        match c.groups[g].test {
            _ if rq.is_some() => self.fail_kijima(u, g, rq.expect("checked"), rng),
            Some(t) if self.repairable => {
                // Hidden: the block stops working, nobody knows until a test finds it. Its
                // own failure is the covered mode; a shared one is covered with chance c.
                let mode = if independent || t.coverage >= 1.0 || rng.uniform() < t.coverage {
                    COVERED
                } else {
                    NOT_COVERED
                };
                self.hide(u, g, mode);
            }
            _ => {
                self.fail_plain::<true>(u, g, rng);
                if self.repairable
                    && self.instant[g]
                    && let Some(pm) = c.groups[g].pm
                {
                    // Renewed in place: the age clock restarts with the new life.
                    self.born[u] = self.now;
                    if pm.policy == Policy::Age && self.life_at[u] >= pm.interval {
                        self.push(self.now + pm.interval, u as u32, PM);
                    }
                }
            }
        }
        if self.repairable && c.group_mg[g] != NO_GROUP {
            self.maint_down(g, !self.instant[g], rng);
        }
        if takes_others {
            let cc = &c.ccfs[ci as usize];
            let k = draw_index(&cc.take, rng.uniform());
            if k >= 2 {
                self.pick.clear();
                self.pick
                    .extend(cc.members.iter().copied().filter(|&h| h as usize != g));
                self.force_some(k - 1, rng);
            }
            self.end_batch();
        }
    }

    /// Imperfect repair: the virtual age grows by q times the running time (Kijima I) or
    /// becomes q times age plus running time (II); as new at the N-th failure.
    #[cold]
    #[inline(never)]
    fn fail_kijima(&mut self, u: usize, g: usize, rq: RepairQuality, rng: &mut Stream) {
        let x = self.now - self.born[u];
        let v = self.vage[u];
        self.fails_since[u] += 1;
        let renew = rq.replace_after > 0 && self.fails_since[u] >= rq.replace_after;
        if renew {
            self.vage[u] = 0.0;
            self.fails_since[u] = 0;
        } else {
            self.vage[u] = if rq.kijima2 {
                rq.q * (v + x)
            } else {
                v + rq.q * x
            };
        }
        if self.costs_on
            && let Some(k) = self.c.groups[g].costs
        {
            if renew {
                self.charge(g, K_REPLACE, k.replace, rng);
            } else {
                self.charge(g, K_REPAIR, k.repair, rng);
            }
        }
        if self.instant[g] {
            self.instant_stop(u, g);
            self.restart_aged(u, g, rng);
        } else {
            self.status[u] = Status::Down;
            self.count[g] -= 1;
            self.refresh(g);
            self.call_repairer(u, g, rng);
        }
    }

    /// Run again from the virtual age: the next life is the residual life at that age
    /// (a fresh life when it is 0, the same draw as perfect repair).
    #[cold]
    #[inline(never)]
    pub(super) fn restart_aged(&mut self, u: usize, g: usize, rng: &mut Stream) {
        let life = &self.c.dists[self.c.groups[g].life as usize];
        let v = self.vage[u];
        let r = pick(&mut self.unit_rng, u, rng);
        let l = if v > 0.0 {
            life.sample_residual(v, r)
        } else {
            life.sample(r)
        };
        self.born[u] = self.now;
        let l = l.max(0.0);
        // Age replacement: the clock restarts at each repair, the virtual age does not.
        match self.c.groups[g].pm {
            Some(pm) if pm.policy == Policy::Age && l >= pm.interval => {
                self.push(self.now + pm.interval, u as u32, PM)
            }
            _ => self.push(self.now + l, u as u32, FAIL),
        }
    }

    /// A failure mode of a proof-tested unit happened: hidden, the unit stops if it ran.
    #[cold]
    #[inline(never)]
    pub(super) fn hide(&mut self, u: usize, g: usize, mode: u8) {
        self.hidden[u] |= mode;
        if self.status[u] == Status::Running {
            self.status[u] = Status::Down;
            self.count[g] -= 1;
            self.refresh(g);
            if self.planned_down[g] {
                // Failed while off-line for a test: down for the failure from now.
                self.close_planned(g, self.now);
                self.classify();
            }
        }
    }

    /// Fail `k` members drawn at random from `pick` (those running; the rest are down).
    #[cold]
    #[inline(never)]
    /// Returns the first member failed (None when none ran).
    pub(super) fn force_some(&mut self, k: usize, rng: &mut Stream) -> Option<u32> {
        let n = self.pick.len();
        let mut first = None;
        for i in 0..k.min(n) {
            let j = i + ((rng.uniform() * (n - i) as f64) as usize).min(n - i - 1);
            self.pick.swap(i, j);
            let h = self.pick[i] as usize;
            let u = self.c.groups[h].first_unit as usize;
            if self.status[u] == Status::Running {
                self.agenda.cancel(u);
                self.failures[h] += 1;
                self.fail_special(u, h, rng, false);
                first = first.or(Some(h as u32));
            }
        }
        first
    }
}
