//! The discrete-event core: units failing and being repaired, repair crews, standby
//! switching, and the structure kept up to date incrementally.
//!
//! Events sit in an agenda ordered by (time, sequence), so equal times pop first-in,
//! first-out (see `agenda`). Per-gate counts of live inputs are updated only along the edges whose
//! source changed state, so an event costs O(nodes it actually changes), not O(diagram).
//! All buffers live in `Sim` and are reused across replications: no allocation per event.
use crate::agenda::Agenda;
use crate::diagram::{Compiled, GroupKind, NO_GROUP, Policy, RepairQuality, Start};
use crate::dist::Lifetime;
use crate::rng::Stream;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Running,
    Idle,
    Down,
}

const FAIL: u32 = 0;
const REPAIRED: u32 = 1;
/// Scheduled events in the slots after the units: a proof test starts, ends (tests with a
/// duration), a common-cause shock arrives.
const TEST: u32 = 2;
const TEST_END: u32 = 3;
const SHOCK: u32 = 4;
const UNCOVERED: u32 = 5;
/// Planned replacement: due by age (unit slot), its off-line time over (unit slot), a
/// calendar replacement or condition inspection (calendar slot).
const PM: u32 = 6;
const PM_END: u32 = 7;
const CALENDAR: u32 = 8;
const PHASE: u32 = 9;
/// Cost kinds, in `Sim::cost` (per group) and the accumulators.
pub const COST_KINDS: [&str; 7] = [
    "repair",
    "replacement",
    "preventive",
    "inspection",
    "set_up",
    "downtime",
    "acquisition",
];
const K_REPAIR: usize = 0;
const K_REPLACE: usize = 1;
const K_PREVENTIVE: usize = 2;
const K_INSPECTION: usize = 3;
const K_SETUP: usize = 4;
pub const K_DOWNTIME: usize = 5;
const K_ACQUISITION: usize = 6;
const KINDS: usize = COST_KINDS.len();
/// Hidden failure modes of a proof-tested unit: the one partial tests find, the other.
const COVERED: u8 = 1;
const NOT_COVERED: u8 = 2;
/// `need` while a block is off-line: no unit count reaches it.
const OFF_LINE: u32 = u32::MAX;

/// A unit waiting for a crew: higher priority first, then first come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Waiting {
    priority: i64,
    seq: u64,
    unit: u32,
}

impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .cmp(&other.priority)
            .then(other.seq.cmp(&self.seq))
    }
}
impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// f64 to an i64 with the same order (for priorities).
fn ordered(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ (((b >> 63) as u64) >> 1) as i64
}

/// What one processed event did. `failure`: a failure (own, common-cause or uncovered),
/// not a planned event (replacement, proof test, inspection, phase change, repair end).
#[derive(Debug, Clone, Copy)]
pub struct Step {
    pub time: f64,
    pub group: u32,
    pub failure: bool,
}

/// Index k with cum(p[..k]) <= x < cum(p[..=k]) (the last positive one at the top end).
fn draw_index(p: &[f64], x: f64) -> usize {
    let mut acc = 0.0;
    let mut last = 0;
    for (k, &w) in p.iter().enumerate() {
        if w > 0.0 {
            acc += w;
            last = k;
            if x < acc {
                return k;
            }
        }
    }
    last
}

/// The directed structure from scratch, in topological order: whether the signal passes
/// each node (`reach`) given its blocks down (`bad`), counting live predecessors into
/// `live` (zero on entry).
pub(crate) fn evaluate(
    c: &Compiled,
    bad: &[u32],
    threshold: &[u32],
    live: &mut [u32],
    reach: &mut [bool],
) {
    for &v in &c.order {
        let v = v as usize;
        let r = bad[v] == 0 && live[v] >= threshold[v];
        reach[v] = r;
        if r {
            for &w in c.successors(v) {
                live[w as usize] += 1;
            }
        }
    }
}

/// Re-derive graph node `node` (its blocks down changed) and push a flip of whether the
/// signal passes it down to its successors. Every node on the stack has just flipped; a
/// successor is re-derived as soon as its live count moves and goes on the stack only if
/// it flips too, so most changes stop at the first successor with nothing pushed, and
/// the fixed point is the same in any order. The arrays are taken as slices cut to one
/// length, so one bounds check per node covers all four (their headers stay in
/// registers instead of being reloaded after each store).
#[inline(always)]
fn propagate(
    c: &Compiled,
    node: usize,
    live: &mut [u32],
    bad: &[u32],
    threshold: &[u32],
    reach: &mut [bool],
    stack: &mut Vec<u32>,
) {
    let n = reach.len();
    let (live, bad, threshold) = (&mut live[..n], &bad[..n], &threshold[..n]);
    let r = bad[node] == 0 && live[node] >= threshold[node];
    if r == reach[node] {
        return;
    }
    reach[node] = r;
    stack.clear();
    let mut v = node;
    loop {
        let r = reach[v];
        for &w in c.successors(v) {
            let w = w as usize;
            if r {
                live[w] += 1;
            } else {
                live[w] -= 1;
            }
            let rw = bad[w] == 0 && live[w] >= threshold[w];
            if rw != reach[w] {
                reach[w] = rw;
                stack.push(w as u32);
            }
        }
        match stack.pop() {
            Some(w) => v = w as usize,
            None => break,
        }
    }
}

/// Whether group `i` fails and is repaired off the core path (`fail_special`,
/// `repaired_special`): proof-tested, planned, imperfectly repaired, own repairer,
/// maintenance group, costs, common cause.
fn special(c: &Compiled, i: usize) -> bool {
    let grp = &c.groups[i];
    grp.test.is_some()
        || grp.pm.is_some()
        || grp.rq.is_some()
        || grp.own_repairer
        || c.group_mg[i] != NO_GROUP
        || grp.costs.is_some()
        || c.group_ccf[i] != NO_GROUP
}

/// Whether a replication starts with scheduled events or states beyond every unit new
/// and running (`reset_scheduled`).
fn extra(c: &Compiled) -> bool {
    !(c.tested.is_empty() && c.ccfs.is_empty() && c.phases.is_empty())
        || c.has_capacity
        || c.groups.iter().any(|g| g.start.is_some())
        || !c.mgroups.is_empty()
        || c.has_costs
        || c.groups.iter().any(|g| g.pm.is_some() || g.rq.is_some())
}

/// Whether every event of a repairable run on `c` with `crews` takes the core path and
/// nothing else: plain blocks (no standby), each failure repaired at once by its own
/// crew (crews = 0, no instant renewal), block states joined by the directed structure
/// with no costs, and nothing scheduled or special (the same flags that keep `Sim` on
/// `fail_plain` / `repaired_plain`, so a feature that leaves those paths leaves this one
/// too). Such a run may use `plain::Plain`, which gives the same numbers.
pub fn core_only(c: &Compiled, crews: u32) -> bool {
    crews == 0
        && !extra(c)
        && c.network_source.is_none()
        && !c.has_costs
        && c.system_downtime_rate == 0.0
        && (0..c.groups.len()).all(|i| {
            let g = &c.groups[i];
            !special(c, i)
                && matches!(g.kind, GroupKind::Plain { .. })
                && !g.instant_repair
                && g.repair.is_some()
        })
}

/// Simulation state of one replication; reset and reused for the next.
pub struct Sim<'a> {
    pub c: &'a Compiled,
    repairable: bool,
    crews: u32,
    pub now: f64,
    pub status: Vec<Status>,
    life_at: Vec<f64>,
    age: Vec<f64>,
    last: Vec<f64>,
    /// Per group: units up (plain) or running (standby); whether it works; failures; downtime.
    count: Vec<u32>,
    pub ok: Vec<bool>,
    down_since: Vec<f64>,
    pub failures: Vec<u64>,
    pub downtime: Vec<f64>,
    /// Per graph node: live predecessors, blocks down, whether the signal passes.
    live: Vec<u32>,
    bad: Vec<u32>,
    reach: Vec<bool>,
    /// Per group: units that must be up (plain) or running (standby) for it to work;
    /// life and repair distributions; instant renewal. Copied flat from the compiled
    /// groups so the hot path reads a few small arrays.
    need: Vec<u32>,
    life_of: Vec<u32>,
    repair_of: Vec<u32>,
    instant: Vec<bool>,
    agenda: Agenda,
    seq: u64,
    queue: BinaryHeap<Waiting>,
    busy: u32,
    stack: Vec<u32>,
    priority: Vec<i64>,
    /// Units before the scheduled-event slots.
    n_units: usize,
    /// Per group: proof-tested or in a common-cause group (the slow failure path).
    special: Vec<bool>,
    need_base: Vec<u32>,
    /// Per unit: hidden failed modes (COVERED | NOT_COVERED); modes under repair.
    hidden: Vec<u8>,
    fixing: Vec<u8>,
    /// Per group: its index among the proof-tested groups (NO_GROUP when none).
    test_index: Vec<u32>,
    /// Per proof-tested group: index j of its current test; whether it is a full one.
    test_no: Vec<u64>,
    test_full: Vec<bool>,
    pick: Vec<u32>,
    /// Any proof test, common cause, planned replacement or cost: reset schedules them.
    extra: bool,
    costs_on: bool,
    /// Per unit: time of its last renewal (condition-based replacement reads the age).
    born: Vec<f64>,
    /// Per group and cost kind: cost so far this replication (discounted to time 0).
    pub cost: Vec<f64>,
    /// Per group: planned replacements this replication.
    pub preventive: Vec<u64>,
    /// Per calendar slot: index of its next calendar time.
    cal_no: Vec<u64>,
    /// Per unit (imperfect repair): virtual age after its last repair; failures since
    /// it was last renewed as new.
    vage: Vec<f64>,
    fails_since: Vec<u32>,
    /// Per graph node: predecessors needed now (a phase may change a knode's votes).
    threshold: Vec<u32>,
    /// Current mission phase (0 without phases).
    pub phase: usize,
    /// Per group: capacity per unit this replication (infinite when unlimited); per
    /// graph node: scratch for the throughput.
    cap_unit: Vec<f64>,
    node_cap: Vec<f64>,
    inflow: Vec<f64>,
    /// Per group: repaired by its own single repairer; that repairer busy; units waiting
    /// for it, first come first served.
    own: Vec<bool>,
    own_busy: Vec<bool>,
    own_queue: Vec<VecDeque<u32>>,
    any_own: bool,
    /// Network mode: connectivity is searched afresh on each block state change.
    net: bool,
    seen: Vec<bool>,
    /// Costs or network mode: a state change does more than the core path.
    slow_refresh: bool,
    /// Per maintenance group: members down for maintenance now; renewing by opportunity.
    mg_active: Vec<u32>,
    mg_busy: Vec<bool>,
    /// Per group: down now only for a plan (a replacement, or a proof test off-line, it
    /// entered working and did not fail in); how many are; planned downtime so far; proof
    /// tests and condition inspections made.
    planned_down: Vec<bool>,
    planned_n: u32,
    pub planned_downtime: Vec<f64>,
    pub tests: Vec<u64>,
    pub inspections: Vec<u64>,
    /// Instantly renewed failures that took the system down for no time, this replication
    /// (system failures of zero length: the replication loop never sees the system down).
    pub instant_system_failures: u64,
    /// The system outage the replication loop has open (`begin_outage`): whether it is
    /// planned now (the system would work but for planned stops), since when; planned
    /// time in its earlier parts; turns from planned to unplanned this replication (each a
    /// system failure: one that would have stopped the system anyway).
    outage_open: bool,
    seg_planned: bool,
    seg_since: f64,
    planned_acc: f64,
    pub switch_failures: u64,
    /// `slow_refresh` without planned stops in progress; scratch for `failures_hold`.
    slow_base: bool,
    ev_live: Vec<u32>,
    ev_bad: Vec<u32>,
    ev_reach: Vec<bool>,
    /// Simultaneous failures in progress (a common-cause event): instantly renewed members
    /// stay down (`held`) until all are applied; whether the system was up before them.
    batch: bool,
    batch_up: bool,
    held: Vec<u32>,
    /// Common-random-numbers runs (`unit_streams`): each unit's lives and repairs drawn
    /// from its own stream, so changing one block leaves every other unit's draws as they
    /// were. Empty in ordinary runs (every draw from the replication's one stream).
    unit_rng: Vec<Stream>,
}

/// The stream a unit's life or repair is drawn from: its own in common-random-numbers
/// runs, else the replication's.
#[inline(always)]
fn pick<'s>(own: &'s mut [Stream], u: usize, rng: &'s mut Stream) -> &'s mut Stream {
    if own.is_empty() { rng } else { &mut own[u] }
}

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
        }
    }

    #[inline(always)]
    fn push(&mut self, time: f64, unit: u32, kind: u32) {
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
        if self.extra {
            self.reset_scheduled(rng);
        }
        self.evaluate_all();
    }

    /// The structure from scratch (start of a replication, a new phase).
    fn evaluate_all(&mut self) {
        let c = self.c;
        self.live.iter_mut().for_each(|x| *x = 0);
        self.bad.iter_mut().for_each(|x| *x = 0);
        for (gi, g) in c.groups.iter().enumerate() {
            self.ok[gi] = self.count[gi] >= self.need[gi];
            self.bad[g.node as usize] += !self.ok[gi] as u32;
        }
        if self.net {
            self.search();
            return;
        }
        evaluate(
            c,
            &self.bad,
            &self.threshold,
            &mut self.live,
            &mut self.reach,
        );
    }

    #[inline]
    pub fn system_up(&self) -> bool {
        self.reach[self.c.output as usize]
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
    fn classify(&mut self) {
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

    fn fail(&mut self, u: usize, g: usize, rng: &mut Stream) {
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
                    self.switch_in(g);
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
    fn begin_batch(&mut self) {
        self.batch = true;
        self.batch_up = self.system_up();
    }

    fn end_batch(&mut self) {
        self.batch = false;
        self.release_held();
    }

    /// A failed unit of a group with its own repairer waits for it; others call a crew.
    #[cold]
    #[inline(never)]
    fn call_repairer(&mut self, u: usize, g: usize, rng: &mut Stream) {
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
    fn call_crew(&mut self, u: usize, g: usize, rng: &mut Stream) {
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
    fn restart_aged(&mut self, u: usize, g: usize, rng: &mut Stream) {
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
    fn hide(&mut self, u: usize, g: usize, mode: u8) {
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
    fn force_some(&mut self, k: usize, rng: &mut Stream) -> Option<u32> {
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

    /// First proof tests and common-cause shocks of a replication.
    #[cold]
    #[inline(never)]
    fn reset_scheduled(&mut self, rng: &mut Stream) {
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
    fn charge(&mut self, g: usize, k: usize, (lo, hi): (f64, f64), rng: &mut Stream) {
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
    fn charge_failure(&mut self, g: usize, rng: &mut Stream) {
        if self.costs_on
            && self.repairable
            && let Some(k) = self.c.groups[g].costs
        {
            self.charge(g, K_REPAIR, k.repair, rng);
            self.charge(g, K_REPLACE, k.replace, rng);
        }
    }

    /// A planned block's new life from now: it fails, or (age policy) is replaced first.
    #[cold]
    #[inline(never)]
    fn start_life(&mut self, u: usize, g: usize, rng: &mut Stream) {
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
    fn planned(&mut self, u: usize, g: usize, kind: u32, rng: &mut Stream) {
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

    fn close_planned(&mut self, g: usize, t: f64) {
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
    fn maint_down(&mut self, g: usize, lasting: bool, rng: &mut Stream) {
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
    fn scheduled(&mut self, slot: usize, kind: u32, rng: &mut Stream) -> u32 {
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
    fn renew_modes(&mut self, u: usize, g: usize, rng: &mut Stream) {
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

    /// A standby group lost a running unit: start its first idle unit (perfect switch).
    fn switch_in(&mut self, g: usize) {
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
        self.age[u] += self.c.unit_dormancy[u] * (self.now - self.last[u]);
        self.last[u] = self.now;
        self.status[u] = Status::Running;
        self.count[g] += 1;
        let remaining = (self.life_at[u] - self.age[u]).max(0.0);
        self.push(self.now + remaining, u as u32, FAIL);
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

    fn renew_in_place(&mut self, u: usize, g: usize, rng: &mut Stream) {
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

    fn repaired(&mut self, u: usize, g: usize, rng: &mut Stream) {
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

    /// Re-derive a group's working state and push any change up the diagram.
    #[inline(always)]
    fn refresh(&mut self, g: usize) {
        let ok = self.count[g] >= self.need[g];
        if ok == self.ok[g] {
            return;
        }
        self.ok[g] = ok;
        let c = self.c;
        let node = c.groups[g].node as usize;
        if ok {
            self.downtime[g] += self.now - self.down_since[g];
            self.bad[node] -= 1;
        } else {
            self.down_since[g] = self.now;
            self.bad[node] += 1;
        }
        if self.slow_refresh {
            return self.refresh_slow(g, ok, node);
        }
        propagate(
            c,
            node,
            &mut self.live,
            &self.bad,
            &self.threshold,
            &mut self.reach,
            &mut self.stack,
        );
    }

    /// `refresh` with costs, network mode or planned stops in progress.
    #[cold]
    #[inline(never)]
    fn refresh_slow(&mut self, g: usize, ok: bool, node: usize) {
        if ok && self.costs_on {
            self.downtime_cost(g, self.now);
        }
        if self.net {
            self.search();
        } else {
            propagate(
                self.c,
                node,
                &mut self.live,
                &self.bad,
                &self.threshold,
                &mut self.reach,
                &mut self.stack,
            );
        }
        if self.planned_n > 0 || self.seg_planned {
            self.classify();
        }
    }

    #[cold]
    #[inline(never)]
    fn downtime_cost(&mut self, g: usize, t: f64) {
        if let Some(k) = self.c.groups[g].costs
            && k.downtime > 0.0
        {
            self.cost[g * KINDS + K_DOWNTIME] +=
                k.downtime * self.discounted_span(self.down_since[g], t);
        }
    }

    /// Network mode: the system works while working nodes join source and target.
    #[cold]
    #[inline(never)]
    fn search(&mut self) {
        let c = self.c;
        let src = c.network_source.expect("network mode");
        self.seen.iter_mut().for_each(|x| *x = false);
        let up = c.connected(src, &self.bad, &mut self.seen, &mut self.stack);
        self.reach[c.output as usize] = up;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagram::{DiagramSpec, NodeSpec};
    use crate::fixtures::{edges, exp, node};

    fn block(id: &str, kind: &str) -> NodeSpec {
        NodeSpec {
            model: Some(exp(0.1)),
            repair: Some(exp(0.5)),
            ..node(id, kind)
        }
    }

    /// A bridge feeding a 2-of-3 gate with a chain, a parallel node and a standby group.
    fn tangle() -> Compiled {
        let mut nodes = vec![node("in", "input"), node("out", "output")];
        for id in ["A", "B", "C", "D", "E", "F", "G"] {
            nodes.push(block(id, "component"));
        }
        nodes.push(NodeSpec {
            n: Some(3),
            ..block("P", "parallel")
        });
        nodes.push(NodeSpec {
            spares: Some(2),
            dormancy: Some(0.5),
            ..block("S", "standby")
        });
        nodes.push(NodeSpec {
            n: Some(2),
            ..node("K", "knode")
        });
        let pairs = [
            ("in", "A"),
            ("in", "B"),
            ("A", "C"),
            ("B", "D"),
            ("A", "E"),
            ("B", "E"),
            ("E", "C"),
            ("E", "D"),
            ("C", "K"),
            ("D", "F"),
            ("F", "G"),
            ("G", "K"),
            ("in", "P"),
            ("P", "S"),
            ("S", "K"),
            ("K", "out"),
        ];
        Compiled::new(&DiagramSpec {
            nodes,
            edges: edges(&pairs),
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn incremental_structure_matches_full_evaluation() {
        let c = tangle();
        for crews in [0, 1, 2] {
            let mut sim = Sim::new(&c, true, crews);
            for rep in 0..20 {
                let mut rng = Stream::new(99, rep);
                sim.reset(&mut rng);
                for _ in 0..2000 {
                    let s = sim.step(&mut rng).expect("repairable runs never run dry");
                    assert!(s.time >= 0.0);
                    assert_eq!(
                        sim.system_up(),
                        c.evaluate(&sim.ok),
                        "crews {crews} rep {rep} at {}",
                        s.time
                    );
                }
            }
        }
    }

    #[test]
    fn one_crew_never_repairs_two_units_at_once() {
        let c = tangle();
        let mut sim = Sim::new(&c, true, 1);
        let mut rng = Stream::new(5, 0);
        sim.reset(&mut rng);
        for _ in 0..5000 {
            sim.step(&mut rng);
            assert!(sim.busy <= 1);
        }
    }
}
