//! Repair: own repairers and crews, the queue for a crew, ends of repair; standby
//! switching when a running unit is lost or a preferred one comes back.
use super::*;

impl<'a> Sim<'a> {
    /// A failed unit of a group with its own repairer waits for it; others call a crew.
    #[cold]
    #[inline(never)]
    pub(super) fn call_repairer(&mut self, u: usize, g: usize, rng: &mut Stream) {
        if !self.own[g] {
            return self.call_crew(u, g, rng);
        }
        if self.own_busy[g] {
            self.own_queue[g].push_back(u as u32);
        } else {
            self.own_busy[g] = true;
            self.schedule_repair(u, rng);
        }
    }

    /// A failed unit's repair starts now, or it waits for a crew.
    #[inline(always)]
    pub(super) fn call_crew(&mut self, u: usize, g: usize, rng: &mut Stream) {
        if self.crews == 0 || self.busy < self.crews {
            self.start_repair(u, rng);
        } else {
            self.seq += 1;
            self.queue.push(Waiting {
                priority: self.priority[g],
                seq: self.seq,
                unit: u as u32,
            });
        }
    }

    /// A standby group lost a running unit: its switch starts the first idle unit (at once
    /// with a perfect switch).
    pub(super) fn switch_in(&mut self, g: usize, rng: &mut Stream) {
        let grp = &self.c.groups[g];
        let first = grp.first_unit as usize;
        let mut pick = usize::MAX;
        for u in first..first + grp.units as usize {
            if self.status[u] == Status::Idle {
                pick = u;
                break;
            }
        }
        if pick == usize::MAX {
            return;
        }
        let u = pick;
        let mut delay = 0.0;
        if let Some(sw) = grp.switch {
            if !self.switch_works(g, sw, rng) {
                // The spare stays on the shelf: the group is short until a repair.
                return;
            }
            delay = sw.switchover;
        }
        self.age[u] += self.c.unit_dormancy[u] * (self.now - self.last[u]);
        self.last[u] = self.now;
        if delay > 0.0 && self.repairable {
            // Down while the spare is switched in: it starts running when that is over.
            self.status[u] = Status::Switching;
            self.push(self.now + delay, u as u32, SWITCHED);
            return;
        }
        // A mission waits through the switch-over (the group is not lost): the spare's
        // running life starts when it is over, and it does not age meanwhile.
        self.status[u] = Status::Running;
        self.count[g] += 1;
        let remaining = (self.life_at[u] - self.age[u]).max(0.0);
        self.push(self.now + delay + remaining, u as u32, FAIL);
    }

    /// Whether the switch of group g works on this demand: not failed before, its own life
    /// not over, and not failing on demand (a draw only when p_fail > 0, so a switch that
    /// never fails on demand draws nothing). Once failed it stays failed (`renew_switch`).
    #[cold]
    #[inline(never)]
    fn switch_works(&mut self, g: usize, sw: Switch, rng: &mut Stream) -> bool {
        if self.sw_failed[g] {
            return false;
        }
        if self.now >= self.sw_end[g] || (sw.p_fail > 0.0 && rng.uniform() < sw.p_fail) {
            self.sw_failed[g] = true;
            return false;
        }
        true
    }

    /// The switch of group g as new from now: at the start of a replication, and when a
    /// repair brings its group back to k running units. Draws its life only when it has one.
    #[cold]
    #[inline(never)]
    pub(super) fn renew_switch(&mut self, g: usize, rng: &mut Stream) {
        let Some(sw) = self.c.groups[g].switch else {
            return;
        };
        self.sw_failed[g] = false;
        self.sw_end[g] = if sw.life == NO_DIST {
            f64::INFINITY
        } else {
            self.now + self.c.dists[sw.life as usize].sample(rng).max(0.0)
        };
    }

    /// A spare's switch-over is over: it runs, unless a repaired unit filled the place
    /// meanwhile (then it goes back on the shelf).
    #[cold]
    #[inline(never)]
    pub(super) fn switched(&mut self, u: usize, g: usize) {
        self.last[u] = self.now;
        let k = self.need_base[g];
        if self.count[g] < k {
            self.status[u] = Status::Running;
            self.count[g] += 1;
            let remaining = (self.life_at[u] - self.age[u]).max(0.0);
            self.push(self.now + remaining, u as u32, FAIL);
            self.refresh(g);
        } else {
            self.status[u] = Status::Idle;
            let dormancy = self.c.unit_dormancy[u];
            if dormancy > 0.0 {
                let remaining = (self.life_at[u] - self.age[u]).max(0.0);
                self.push(self.now + remaining / dormancy, u as u32, FAIL);
            }
        }
    }

    /// Switch-back: the least preferred running unit after `u` (a higher index) goes back on
    /// the shelf, keeping its age, so that `u` can run; false when none runs after it.
    #[cold]
    #[inline(never)]
    fn yield_to(&mut self, g: usize, u: usize) -> bool {
        let grp = &self.c.groups[g];
        let end = (grp.first_unit + grp.units) as usize;
        let Some(v) = (u + 1..end)
            .rev()
            .find(|&v| self.status[v] == Status::Running)
        else {
            return false;
        };
        self.age[v] += self.now - self.last[v];
        self.last[v] = self.now;
        self.status[v] = Status::Idle;
        self.count[g] -= 1;
        let dormancy = self.c.unit_dormancy[v];
        if dormancy > 0.0 {
            let remaining = (self.life_at[v] - self.age[v]).max(0.0);
            self.push(self.now + remaining / dormancy, v as u32, FAIL);
        } else {
            self.agenda.cancel(v);
        }
        true
    }

    pub(super) fn renew_in_place(&mut self, u: usize, g: usize, rng: &mut Stream) {
        let grp = &self.c.groups[g];
        let l = self.c.dists[self.life_of[u] as usize]
            .sample(pick(&mut self.unit_rng, u, rng))
            .max(0.0);
        let rate = match (grp.kind, self.status[u]) {
            (GroupKind::Standby { .. }, Status::Idle) => self.c.unit_dormancy[u],
            _ => 1.0,
        };
        self.age[u] = 0.0;
        self.last[u] = self.now;
        self.life_at[u] = l;
        if rate > 0.0 {
            self.push(self.now + l / rate, u as u32, FAIL);
        }
    }

    #[inline(always)]
    fn start_repair(&mut self, u: usize, rng: &mut Stream) {
        self.busy += 1;
        self.schedule_repair(u, rng);
    }

    #[inline(always)]
    fn schedule_repair(&mut self, u: usize, rng: &mut Stream) {
        // Availability runs check that every block has a repair model or instant repair.
        let d = self.repair_of[u] as usize;
        let r = self.c.dists[d]
            .draw(pick(&mut self.unit_rng, u, rng))
            .max(0.0);
        self.push(self.now + r, u as u32, REPAIRED);
    }

    /// A repair of group g ended: its repairer (own or a crew) takes the next unit.
    #[cold]
    #[inline(never)]
    fn release(&mut self, g: usize, rng: &mut Stream) {
        if self.own[g] {
            match self.own_queue[g].pop_front() {
                Some(w) => self.schedule_repair(w as usize, rng),
                None => self.own_busy[g] = false,
            }
        } else {
            self.free_crew(rng);
        }
    }

    pub(super) fn repaired(&mut self, u: usize, g: usize, rng: &mut Stream) {
        if self.special[g] {
            self.repaired_special(u, g, rng);
        } else {
            self.repaired_plain::<false>(u, g, rng);
        }
    }

    /// End of a repair of a proof-tested, planned, imperfectly repaired or own-repairer
    /// group (others as usual).
    #[cold]
    #[inline(never)]
    fn repaired_special(&mut self, u: usize, g: usize, rng: &mut Stream) {
        let c = self.c;
        let grp = &c.groups[g];
        let m = c.group_mg[g];
        if m != NO_GROUP {
            self.mg_active[m as usize] -= 1;
        }
        if grp.rq.is_some() {
            self.status[u] = Status::Running;
            self.count[g] += 1;
            self.restart_aged(u, g, rng);
        } else if grp.test.is_some() {
            self.renew_modes(u, g, rng);
        } else if grp.pm.is_some() {
            self.status[u] = Status::Running;
            self.count[g] += 1;
            self.start_life(u, g, rng);
        } else {
            return self.repaired_plain::<true>(u, g, rng);
        }
        self.refresh(g);
        self.release(g, rng);
    }

    fn repaired_plain<const SPECIAL: bool>(&mut self, u: usize, g: usize, rng: &mut Stream) {
        let c = self.c;
        let l = c.dists[self.life_of[u] as usize]
            .draw(pick(&mut self.unit_rng, u, rng))
            .max(0.0);
        match c.groups[g].kind {
            GroupKind::Plain { .. } => {
                // Plain units age only while running and are renewed here: no age kept.
                self.status[u] = Status::Running;
                self.count[g] += 1;
                self.push(self.now + l, u as u32, FAIL);
            }
            GroupKind::Standby { k, .. } => {
                let dormancy = c.unit_dormancy[u];
                self.age[u] = 0.0;
                self.last[u] = self.now;
                self.life_at[u] = l;
                if self.count[g] < k || (c.groups[g].switch_back && self.yield_to(g, u)) {
                    self.status[u] = Status::Running;
                    self.count[g] += 1;
                    self.push(self.now + l, u as u32, FAIL);
                    if self.any_switch && self.count[g] == k && self.sw_failed[g] {
                        // The group is whole again: its failed switch was repaired with it.
                        self.renew_switch(g, rng);
                    }
                } else {
                    // Back on the shelf as a spare.
                    self.status[u] = Status::Idle;
                    if dormancy > 0.0 {
                        self.push(self.now + l / dormancy, u as u32, FAIL);
                    }
                }
            }
        }
        self.refresh(g);
        if SPECIAL {
            self.release(g, rng);
        } else {
            self.free_crew(rng);
        }
    }

    /// A crew is free: it takes the first waiting unit.
    #[inline(always)]
    fn free_crew(&mut self, rng: &mut Stream) {
        self.busy -= 1;
        // Most runs have no queue (unlimited crews): skip the heap's out-of-line pop.
        if self.queue.is_empty() {
            return;
        }
        if let Some(w) = self.queue.pop() {
            let wu = w.unit as usize;
            self.start_repair(wu, rng);
        }
    }
}
