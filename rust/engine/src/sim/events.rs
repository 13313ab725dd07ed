//! The event loop: a `Sim` built for a diagram, reset per replication, the next event
//! taken from the agenda and dispatched; outages opened, closed and classified planned or not.
use super::*;

impl<'a> Sim<'a> {
    /// `crews` = 0 repairs every failed unit at once; `repairable` = false leaves them failed.
    pub fn new(c: &'a Compiled, repairable: bool, crews: u32) -> Self {
        let (u, g, n) = (c.unit_group.len(), c.groups.len(), c.threshold.len());
        let need: Vec<u32> = c
            .groups
            .iter()
            .map(|g| match g.kind {
                GroupKind::Plain { need } => need,
                GroupKind::Standby { k, .. } => k,
            })
            .collect();
        Sim {
            c,
            repairable,
            crews,
            now: 0.0,
            status: vec![Status::Running; u],
            life_at: vec![0.0; u],
            age: vec![0.0; u],
            last: vec![0.0; u],
            count: vec![0; g],
            ok: vec![true; g],
            down_since: vec![0.0; g],
            failures: vec![0; g],
            downtime: vec![0.0; g],
            live: vec![0; n],
            bad: vec![0; n],
            reach: vec![false; n],
            life_of: c.unit_life.clone(),
            repair_of: c.unit_repair.clone(),
            instant: c.groups.iter().map(|g| g.instant_repair).collect(),
            need: need.clone(),
            agenda: Agenda::new(c.slots()),
            seq: 0,
            queue: BinaryHeap::new(),
            busy: 0,
            stack: Vec::with_capacity(n),
            priority: c.groups.iter().map(|g| ordered(g.crew_priority)).collect(),
            n_units: u,
            special: (0..g).map(|i| special(c, i)).collect(),
            need_base: need,
            hidden: vec![0; u],
            fixing: vec![0; u],
            test_index: {
                let mut t = vec![NO_GROUP; g];
                for (i, &tg) in c.tested.iter().enumerate() {
                    t[tg as usize] = i as u32;
                }
                t
            },
            test_no: vec![0; c.tested.len()],
            test_full: vec![false; c.tested.len()],
            pick: vec![],
            extra: extra(c),
            costs_on: c.has_costs,
            born: vec![0.0; u],
            cost: vec![0.0; g * KINDS],
            preventive: vec![0; g],
            cal_no: vec![0; c.calendar.len()],
            vage: vec![0.0; u],
            fails_since: vec![0; u],
            threshold: c.threshold.clone(),
            attribution: Attribution::new(c),
            phase: 0,
            cap_unit: vec![f64::INFINITY; g],
            node_cap: vec![f64::INFINITY; n],
            inflow: vec![0.0; n],
            own: c.groups.iter().map(|g| g.own_repairer).collect(),
            own_busy: vec![false; g],
            own_queue: vec![VecDeque::new(); g],
            any_own: c.groups.iter().any(|g| g.own_repairer),
            net: c.network_source.is_some(),
            seen: vec![false; n],
            slow_refresh: c.network_source.is_some() || c.has_costs,
            mg_active: vec![0; c.mgroups.len()],
            mg_busy: vec![false; c.mgroups.len()],
            planned_down: vec![false; g],
            planned_downtime: vec![0.0; g],
            tests: vec![0; g],
            inspections: vec![0; g],
            instant_system_failures: 0,
            planned_n: 0,
            outage_open: false,
            seg_planned: false,
            seg_since: 0.0,
            planned_acc: 0.0,
            switch_failures: 0,
            slow_base: c.network_source.is_some() || c.has_costs,
            ev_live: vec![0; n],
            ev_bad: vec![0; n],
            ev_reach: vec![false; n],
            batch: false,
            batch_up: false,
            held: vec![],
            unit_rng: vec![],
            any_switch: c.groups.iter().any(|g| g.switch.is_some()),
            sw_failed: vec![false; g],
            sw_end: vec![f64::INFINITY; g],
        }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, time: f64, unit: u32, kind: u32) {
        self.agenda.set(unit as usize, time.max(0.0), kind);
    }

    /// Start a fresh replication: every unit new, running (standby: the first k running,
    /// the others idle), the structure evaluated once from scratch.
    /// Common random numbers: from now on (until `shared_streams`), draw each unit's lives
    /// and repairs in replication `rep` from its own stream of `seed`.
    pub fn unit_streams(&mut self, seed: u64, rep: u64) {
        let n = self.c.unit_group.len();
        self.unit_rng.clear();
        self.unit_rng
            .extend((0..n as u64).map(|u| Stream::new(crate::rng::substream_seed(seed, u), rep)));
    }

    pub fn reset(&mut self, rng: &mut Stream) {
        self.now = 0.0;
        self.agenda.clear();
        self.queue.clear();
        if self.any_own {
            self.own_busy.iter_mut().for_each(|x| *x = false);
            self.own_queue.iter_mut().for_each(|q| q.clear());
        }
        self.busy = 0;
        self.seq = 0;
        self.instant_system_failures = 0;
        self.attribution.reset();
        self.outage_open = false;
        self.seg_planned = false;
        self.switch_failures = 0;
        let c = self.c;
        for (gi, g) in c.groups.iter().enumerate() {
            self.failures[gi] = 0;
            self.downtime[gi] = 0.0;
            self.down_since[gi] = 0.0;
            self.ok[gi] = true;
            let running = match g.kind {
                GroupKind::Plain { .. } => g.units,
                GroupKind::Standby { k, .. } => k,
            };
            self.count[gi] = running;
            for j in 0..g.units {
                let u = (g.first_unit + j) as usize;
                self.age[u] = 0.0;
                self.last[u] = 0.0;
                let life = &c.dists[self.life_of[u] as usize];
                let l = life.sample(pick(&mut self.unit_rng, u, rng)).max(0.0);
                self.life_at[u] = l;
                let rate_idle = c.unit_dormancy[u];
                if j < running {
                    self.status[u] = Status::Running;
                    self.push(l, u as u32, FAIL);
                } else {
                    self.status[u] = Status::Idle;
                    if rate_idle > 0.0 {
                        self.push(l / rate_idle, u as u32, FAIL);
                    }
                }
            }
        }
        if self.any_switch {
            // After every unit's life, and only for diagrams with a switch: others draw as before.
            for g in 0..c.groups.len() {
                self.renew_switch(g, rng);
            }
        }
        if self.extra {
            self.reset_scheduled(rng);
        }
        self.evaluate_all();
    }

    #[inline]
    pub fn system_up(&self) -> bool {
        self.reach[self.c.output as usize]
    }

    /// Inputs of the output node passing, but for node `v`'s (variance reduction's
    /// conditioning on the subsystem feeding `v`).
    pub(crate) fn output_inputs_but(&self, v: u32) -> u32 {
        self.live[self.c.output as usize] - self.reach[v as usize] as u32
    }

    /// Whether node `v` would pass were its blocks `local` all working (true when none are
    /// named: the conditioning is then on the whole subtree feeding `v`).
    pub(crate) fn passes_but(&self, v: u32, local: &[u32]) -> bool {
        if local.is_empty() {
            return true;
        }
        let v = v as usize;
        let down = local.iter().filter(|&&g| !self.ok[g as usize]).count() as u32;
        self.bad[v] == down && self.live[v] >= self.c.threshold[v]
    }

    /// The system is down from `t` in its present state: charge the outage's stretch so
    /// far and pick who the next one is charged to (see `attribution`).
    #[cold]
    #[inline(never)]
    pub(crate) fn attribute_down(&mut self, t: f64) {
        let ok = &self.ok;
        self.attribution
            .down_from(self.c, t, |g| ok[g], &self.threshold);
    }

    /// The system went down at `t`: open an outage; true when it is planned (it would
    /// work but for planned stops), false when failures keep it down.
    #[cold]
    #[inline(never)]
    pub fn begin_outage(&mut self, t: f64) -> bool {
        self.outage_open = true;
        self.seg_since = t;
        self.planned_acc = 0.0;
        self.seg_planned = self.planned_n > 0 && !self.failures_hold();
        self.seg_planned
    }

    /// The open outage ends at `t`: its planned time.
    #[cold]
    #[inline(never)]
    pub fn end_outage(&mut self, t: f64) -> f64 {
        let p = self.planned_acc
            + if self.seg_planned {
                t - self.seg_since
            } else {
                0.0
            };
        self.outage_open = false;
        self.seg_planned = false;
        p
    }

    /// While an outage is open, something changed: is it planned now? A turn from planned
    /// to unplanned is a system failure (a failure that would have stopped the system).
    #[cold]
    #[inline(never)]
    pub(super) fn classify(&mut self) {
        if !self.outage_open || self.system_up() {
            return;
        }
        let planned = self.planned_n > 0 && !self.failures_hold();
        if planned != self.seg_planned {
            if self.seg_planned {
                self.planned_acc += self.now - self.seg_since;
                self.switch_failures += 1;
            }
            self.seg_planned = planned;
            self.seg_since = self.now;
        }
    }

    /// Would the system be down with every block that is down only for a plan working?
    fn failures_hold(&mut self) -> bool {
        let c = self.c;
        self.ev_bad.iter_mut().for_each(|x| *x = 0);
        for (g, grp) in c.groups.iter().enumerate() {
            self.ev_bad[grp.node as usize] += !(self.ok[g] || self.planned_down[g]) as u32;
        }
        if let Some(src) = c.network_source {
            self.seen.iter_mut().for_each(|x| *x = false);
            return !c.connected(src, &self.ev_bad, &mut self.seen, &mut self.stack);
        }
        self.ev_live.iter_mut().for_each(|x| *x = 0);
        evaluate(
            c,
            &self.ev_bad,
            &self.threshold,
            &mut self.ev_live,
            &mut self.ev_reach,
        );
        !self.ev_reach[c.output as usize]
    }

    /// Time of the next event (infinity when none).
    #[inline]
    pub fn next_time(&self) -> f64 {
        self.agenda.first().1
    }

    /// Process the next event; None when nothing is pending.
    pub fn step(&mut self, rng: &mut Stream) -> Option<Step> {
        let (u, time, kind) = self.agenda.first();
        if time == f64::INFINITY {
            return None;
        }
        self.now = time;
        // Consumed: the handlers below give the unit its next event, or none.
        self.agenda.take(u);
        // Units' own events first (the core path); scheduled slots lie past the units.
        let g = if kind == FAIL {
            let g = self.c.unit_group[u];
            self.fail(u, g as usize, rng);
            g
        } else if kind == REPAIRED {
            let g = self.c.unit_group[u];
            self.repaired(u, g as usize, rng);
            g
        } else if kind == SWITCHED {
            let g = self.c.unit_group[u];
            self.switched(u, g as usize);
            g
        } else if u < self.n_units {
            let g = self.c.unit_group[u];
            self.planned(u, g as usize, kind, rng);
            g
        } else {
            self.scheduled(u, kind, rng)
        };
        self.agenda.settle(u);
        Some(Step {
            time,
            group: g,
            failure: kind == FAIL || kind == SHOCK || kind == UNCOVERED,
        })
    }
}
