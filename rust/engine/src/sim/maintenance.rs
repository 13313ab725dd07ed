//! Scheduled events: proof tests and their findings, common-cause shocks, mission phases,
//! planned replacement (age, block and condition policies), maintenance groups.
use super::*;

impl<'a> Sim<'a> {
    /// First proof tests and common-cause shocks of a replication.
    #[cold]
    #[inline(never)]
    pub(super) fn reset_scheduled(&mut self, rng: &mut Stream) {
        let c = self.c;
        self.hidden.iter_mut().for_each(|x| *x = 0);
        self.fixing.iter_mut().for_each(|x| *x = 0);
        self.need.copy_from_slice(&self.need_base);
        self.born.iter_mut().for_each(|x| *x = 0.0);
        self.mg_active.iter_mut().for_each(|x| *x = 0);
        self.mg_busy.iter_mut().for_each(|x| *x = false);
        self.vage.iter_mut().for_each(|x| *x = 0.0);
        self.fails_since.iter_mut().for_each(|x| *x = 0);
        self.cost.iter_mut().for_each(|x| *x = 0.0);
        self.preventive.iter_mut().for_each(|x| *x = 0);
        self.planned_down.iter_mut().for_each(|x| *x = false);
        self.planned_n = 0;
        self.slow_refresh = self.slow_base;
        self.planned_downtime.iter_mut().for_each(|x| *x = 0.0);
        self.tests.iter_mut().for_each(|x| *x = 0);
        self.inspections.iter_mut().for_each(|x| *x = 0);
        for (g, grp) in c.groups.iter().enumerate() {
            if let Some(k) = grp.costs {
                self.cost[g * KINDS + K_ACQUISITION] += k.acquisition;
            }
            if self.repairable
                && let Some(pm) = grp.pm
                && pm.policy == Policy::Age
            {
                let u = grp.first_unit as usize;
                if self.life_at[u] >= pm.interval {
                    self.push(pm.interval, u as u32, PM);
                }
            }
        }
        if !c.phases.is_empty() {
            self.phase = 0;
            self.enter_phase();
        }
        for (g, grp) in c.groups.iter().enumerate() {
            let Some(start) = grp.start else { continue };
            for j in 0..grp.units {
                let u = (grp.first_unit + j) as usize;
                match start {
                    Start::Aged { age } => {
                        let l = c.dists[self.life_of[u] as usize]
                            .sample_residual(age, pick(&mut self.unit_rng, u, rng));
                        self.life_at[u] = l;
                        self.push(l, u as u32, FAIL);
                    }
                    Start::Failed => {
                        self.status[u] = Status::Down;
                        self.count[g] -= 1;
                        self.agenda.cancel(u);
                    }
                    Start::Down { since } => {
                        self.status[u] = Status::Down;
                        self.count[g] -= 1;
                        if self.repairable && c.group_mg[g] != NO_GROUP {
                            self.mg_active[c.group_mg[g] as usize] += 1;
                        }
                        if self.repairable {
                            // In repair now (a crew on it): the rest of a repair begun `since` ago.
                            let d = &c.dists[self.repair_of[u] as usize];
                            self.busy += 1;
                            let r = d.sample_residual(since, pick(&mut self.unit_rng, u, rng));
                            self.push(r, u as u32, REPAIRED);
                        } else {
                            self.agenda.cancel(u);
                        }
                    }
                }
            }
        }
        if c.has_capacity {
            for (g, grp) in c.groups.iter().enumerate() {
                self.cap_unit[g] = match grp.capacity.as_slice() {
                    [] => f64::INFINITY,
                    [(v, _)] => *v,
                    levels => {
                        let x = rng.uniform();
                        levels
                            .iter()
                            .find(|l| x < l.1)
                            .unwrap_or(&levels[levels.len() - 1])
                            .0
                    }
                };
            }
        }
        if self.repairable {
            for (i, &g) in c.calendar.iter().enumerate() {
                let pm = c.groups[g as usize].pm.expect("a planned group");
                self.cal_no[i] = 1;
                let slot = self.calendar_slot(i);
                self.push(pm.interval, slot as u32, CALENDAR);
            }
        }
        if self.repairable {
            for (i, &g) in c.tested.iter().enumerate() {
                let grp = &c.groups[g as usize];
                let t = grp.test.expect("a tested group");
                let j = if t.offset > 0.0 { 0 } else { 1 };
                self.test_no[i] = j;
                self.push(
                    t.offset + j as f64 * t.interval,
                    (self.n_units + i) as u32,
                    TEST,
                );
                if let Some(d) = grp.uncovered {
                    let l = c.dists[d as usize].sample(rng).max(0.0);
                    self.push(l, self.uncovered_slot(i) as u32, UNCOVERED);
                }
            }
        }
        for (i, cc) in c.ccfs.iter().enumerate() {
            if cc.rate_basis {
                let slot = self.n_units + c.tested.len() + i;
                let dt = self.shock_gap(cc, rng);
                self.push(dt, slot as u32, SHOCK);
            }
        }
    }

    /// Put the current phase in force: blocks not needed cannot fail the structure (they
    /// need no unit up), knodes take the phase's votes; its end is scheduled.
    #[cold]
    #[inline(never)]
    fn enter_phase(&mut self) {
        let c = self.c;
        let p = &c.phases[self.phase];
        for g in 0..c.groups.len() {
            self.need[g] = if p.not_needed[g] {
                0
            } else {
                self.need_base[g]
            };
        }
        self.threshold.copy_from_slice(&p.threshold);
        if self.phase + 1 < c.phases.len() {
            let slot = self.calendar_slot(c.calendar.len());
            self.push(p.end, slot as u32, PHASE);
        }
    }

    /// Time to a common-cause group's next shared event.
    fn shock_gap(&self, cc: &crate::diagram::Ccf, rng: &mut Stream) -> f64 {
        match cc.shock_life {
            Some(d) => self.c.dists[d as usize].sample(rng).max(0.0),
            None => -(1.0 - rng.uniform()).ln() / cc.shock_rate,
        }
    }

    #[inline]
    fn calendar_slot(&self, i: usize) -> usize {
        self.n_units + 2 * self.c.tested.len() + self.c.ccfs.len() + i
    }

    /// A planned block's new life from now: it fails, or (age policy) is replaced first.
    #[cold]
    #[inline(never)]
    pub(super) fn start_life(&mut self, u: usize, g: usize, rng: &mut Stream) {
        let grp = &self.c.groups[g];
        // A planned replacement renews as new (imperfect repair starts over).
        self.vage[u] = 0.0;
        self.fails_since[u] = 0;
        let l = self.c.dists[grp.life as usize]
            .sample(pick(&mut self.unit_rng, u, rng))
            .max(0.0);
        self.life_at[u] = l;
        self.born[u] = self.now;
        match grp.pm {
            Some(pm) if pm.policy == Policy::Age && l >= pm.interval => {
                self.push(self.now + pm.interval, u as u32, PM)
            }
            _ => self.push(self.now + l, u as u32, FAIL),
        }
    }

    /// A planned replacement starts: off-line for its duration, then as new.
    #[cold]
    #[inline(never)]
    fn preventive_stop(&mut self, u: usize, g: usize, rng: &mut Stream) {
        let pm = self.c.groups[g].pm.expect("a planned group");
        if self.costs_on {
            self.charge(g, K_PREVENTIVE, pm.cost, rng);
        }
        self.preventive[g] += 1;
        if self.c.group_mg[g] != NO_GROUP {
            self.maint_down(g, pm.duration > 0.0, rng);
        }
        if pm.duration > 0.0 {
            self.status[u] = Status::Down;
            self.count[g] -= 1;
            self.planned_stop(g);
            self.push(self.now + pm.duration, u as u32, PM_END);
        } else {
            self.start_life(u, g, rng);
        }
    }

    /// Planned events in a unit's own slot.
    #[cold]
    #[inline(never)]
    pub(super) fn planned(&mut self, u: usize, g: usize, kind: u32, rng: &mut Stream) {
        if kind == PM {
            self.preventive_stop(u, g, rng);
        } else {
            let m = self.c.group_mg[g];
            if m != NO_GROUP {
                self.mg_active[m as usize] -= 1;
            }
            self.status[u] = Status::Running;
            self.count[g] += 1;
            self.start_life(u, g, rng);
            self.planned_end(g);
            self.classify();
        }
    }

    /// A planned stop (replacement, proof test off-line) takes group g down: if it worked
    /// until now, the outage is planned while the stop lasts.
    #[cold]
    #[inline(never)]
    fn planned_stop(&mut self, g: usize) {
        // Marked before the refresh, so an open outage reads it as planned at once.
        if self.ok[g] && self.count[g] < self.need[g] {
            self.planned_down[g] = true;
            self.planned_n += 1;
            self.slow_refresh = true;
        }
        self.refresh(g);
    }

    /// A planned stop of group g ends: its planned downtime closes now (a failure found
    /// meanwhile keeps it down, unplanned from here).
    #[cold]
    #[inline(never)]
    fn planned_end(&mut self, g: usize) {
        self.close_planned(g, self.now);
        self.refresh(g);
    }

    pub(super) fn close_planned(&mut self, g: usize, t: f64) {
        if self.planned_down[g] {
            self.planned_down[g] = false;
            self.planned_downtime[g] += t - self.down_since[g];
            self.planned_n -= 1;
            if self.planned_n == 0 {
                self.slow_refresh = self.slow_base;
            }
        }
    }

    /// A member of a maintenance group goes down for maintenance (`lasting`: for a while,
    /// not in no time). If no member was down the group stops: its set-up cost is charged
    /// (to this block) and members old enough are renewed by opportunity.
    #[cold]
    #[inline(never)]
    pub(super) fn maint_down(&mut self, g: usize, lasting: bool, rng: &mut Stream) {
        let m = self.c.group_mg[g] as usize;
        let new = self.mg_active[m] == 0 && !self.mg_busy[m];
        if lasting {
            self.mg_active[m] += 1;
        }
        if new {
            self.group_stop(m, g, g, rng);
        }
    }

    /// A stop of maintenance group m, charged to block `g`, begun by block `by` (not
    /// renewed again by opportunity; usize::MAX for a system outage).
    #[cold]
    #[inline(never)]
    fn group_stop(&mut self, m: usize, g: usize, by: usize, rng: &mut Stream) {
        let c = self.c;
        let mg = &c.mgroups[m];
        if self.costs_on && mg.setup_cost > 0.0 {
            self.charge(g, K_SETUP, (mg.setup_cost, mg.setup_cost), rng);
        }
        self.mg_busy[m] = true;
        for &h in &mg.members {
            let h = h as usize;
            let Some(pm) = c.groups[h].pm else { continue };
            let Some(o) = pm.opportunity else { continue };
            let u = c.groups[h].first_unit as usize;
            if h != by && self.status[u] == Status::Running && self.now - self.born[u] >= o {
                self.preventive_stop(u, h, rng);
            }
        }
        self.mg_busy[m] = false;
    }

    /// The system went down: groups with `system_down` stop (if not stopped already).
    #[cold]
    #[inline(never)]
    pub fn system_outage(&mut self, rng: &mut Stream) {
        let c = self.c;
        for (m, mg) in c.mgroups.iter().enumerate() {
            if mg.system_down
                && self.mg_active[m] == 0
                && !self.mg_busy[m]
                && !mg.members.is_empty()
            {
                self.group_stop(m, mg.members[0] as usize, usize::MAX, rng);
            }
        }
    }

    /// A calendar replacement (block policy) or inspection (condition policy).
    #[cold]
    #[inline(never)]
    fn calendar(&mut self, slot: usize, i: usize, rng: &mut Stream) -> u32 {
        let c = self.c;
        let g = c.calendar[i] as usize;
        let pm = c.groups[g].pm.expect("a planned group");
        let u = c.groups[g].first_unit as usize;
        let running = self.status[u] == Status::Running;
        match pm.policy {
            Policy::Condition => {
                self.inspections[g] += 1;
                if self.costs_on {
                    self.charge(g, K_INSPECTION, pm.inspection_cost, rng);
                }
                if running {
                    // Chance of failing before the next inspection, given the age now.
                    let life = &c.dists[c.groups[g].life as usize];
                    let age = self.now - self.born[u];
                    let s = life.sf(age);
                    let p = if s > 0.0 {
                        1.0 - life.sf(age + pm.interval) / s
                    } else {
                        1.0
                    };
                    if p > pm.threshold {
                        self.preventive_stop(u, g, rng);
                    }
                }
            }
            _ => {
                if running {
                    self.preventive_stop(u, g, rng);
                }
            }
        }
        self.cal_no[i] += 1;
        self.push(self.cal_no[i] as f64 * pm.interval, slot as u32, CALENDAR);
        g as u32
    }

    #[inline]
    fn uncovered_slot(&self, i: usize) -> usize {
        self.n_units + self.c.tested.len() + self.c.ccfs.len() + i
    }

    /// A proof test, common-cause shock or uncovered failure in slot `slot`; returns the
    /// group it concerns.
    #[cold]
    #[inline(never)]
    pub(super) fn scheduled(&mut self, slot: usize, kind: u32, rng: &mut Stream) -> u32 {
        let c = self.c;
        let i = slot - self.n_units;
        if kind == UNCOVERED {
            let i = i - c.tested.len() - c.ccfs.len();
            let g = c.tested[i] as usize;
            self.failures[g] += 1;
            self.charge_failure(g, rng);
            self.hide(c.groups[g].first_unit as usize, g, NOT_COVERED);
            return g as u32;
        }
        if kind == PHASE {
            self.phase += 1;
            self.enter_phase();
            self.evaluate_all();
            // A block needed again that failed meanwhile fails the system now.
            return (0..c.groups.len()).find(|&g| !self.ok[g]).unwrap_or(0) as u32;
        }
        if i >= c.tested.len() * 2 + c.ccfs.len() {
            return self.calendar(slot, i - c.tested.len() * 2 - c.ccfs.len(), rng);
        }
        if kind == SHOCK {
            let cc = &c.ccfs[i - c.tested.len()];
            let k = draw_index(&cc.shock_take, rng.uniform());
            self.pick.clear();
            self.pick.extend_from_slice(&cc.members);
            self.begin_batch();
            let failed = self.force_some(k, rng);
            self.end_batch();
            // The event's group: a member it failed (what took the system down, if it went
            // down), not one it found stopped for a test.
            let first = failed.unwrap_or(self.pick[0]);
            let dt = self.shock_gap(cc, rng);
            self.push(self.now + dt, slot as u32, SHOCK);
            return first;
        }
        let g = c.tested[i] as usize;
        let t = c.groups[g].test.expect("a tested group");
        let u = c.groups[g].first_unit as usize;
        if kind == TEST {
            self.tests[g] += 1;
            let full = self.test_no[i] % t.full_every as u64 == 0;
            if self.costs_on
                && let Some(k) = c.groups[g].costs
            {
                self.charge(g, K_INSPECTION, k.test, rng);
            }
            if t.duration > 0.0 {
                // Off-line for the test; what it finds is repaired when it ends.
                self.need[g] = OFF_LINE;
                self.planned_stop(g);
                self.test_full[i] = full;
                self.push(self.now + t.duration, slot as u32, TEST_END);
                return g as u32;
            }
            self.detect(u, g, full, rng);
        } else {
            self.need[g] = self.need_base[g];
            self.planned_end(g);
            self.detect(u, g, self.test_full[i], rng);
            self.classify();
        }
        self.test_no[i] += 1;
        let next = t.offset + self.test_no[i] as f64 * t.interval;
        self.push(next, slot as u32, TEST);
        g as u32
    }

    /// A test looks at a unit: the hidden failure modes it can see are repaired from now
    /// (a unit already under repair is looked at again by the next test).
    #[cold]
    #[inline(never)]
    fn detect(&mut self, u: usize, g: usize, full: bool, rng: &mut Stream) {
        let found = self.hidden[u] & if full { COVERED | NOT_COVERED } else { COVERED };
        if found == 0 || self.fixing[u] != 0 {
            return;
        }
        self.hidden[u] &= !found;
        self.fixing[u] = found;
        if self.instant[g] {
            self.renew_modes(u, g, rng);
            self.refresh(g);
        } else {
            self.call_repairer(u, g, rng);
        }
    }

    /// End of a proof-tested unit's repair: the covered mode renewed (the unit slot), the
    /// uncovered one if it was repaired; the unit runs again unless a mode is still failed.
    #[cold]
    #[inline(never)]
    pub(super) fn renew_modes(&mut self, u: usize, g: usize, rng: &mut Stream) {
        let c = self.c;
        let grp = &c.groups[g];
        let l = c.dists[grp.life as usize]
            .sample(pick(&mut self.unit_rng, u, rng))
            .max(0.0);
        self.push(self.now + l, u as u32, FAIL);
        if self.fixing[u] & NOT_COVERED != 0
            && let Some(d) = grp.uncovered
        {
            let l = c.dists[d as usize]
                .sample(pick(&mut self.unit_rng, u, rng))
                .max(0.0);
            let slot = self.uncovered_slot(self.test_index[g] as usize);
            self.push(self.now + l, slot as u32, UNCOVERED);
        }
        self.fixing[u] = 0;
        // The covered mode is renewed whatever happened to it while the unit waited for
        // a crew; an undetected uncovered failure stays.
        self.hidden[u] &= !COVERED;
        if self.hidden[u] == 0 {
            self.status[u] = Status::Running;
            self.count[g] += 1;
        }
    }
}
