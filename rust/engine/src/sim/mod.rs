//! The discrete-event core: units failing and being repaired, repair crews, standby
//! switching, and the structure kept up to date incrementally.
//!
//! Events sit in an agenda ordered by (time, sequence), so equal times pop first-in,
//! first-out (see `agenda`). Per-gate counts of live inputs are updated only along the edges whose
//! source changed state, so an event costs O(nodes it actually changes), not O(diagram).
//! All buffers live in `Sim` and are reused across replications: no allocation per event.
mod costs;
mod events;
mod failure;
mod maintenance;
mod repair;
mod structure;
#[cfg(test)]
mod tests;

use crate::agenda::Agenda;
use crate::attribution::Attribution;
use crate::diagram::{
    Compiled, GroupKind, NO_DIST, NO_GROUP, Policy, RepairQuality, Start, Switch,
};
use crate::dist::Lifetime;
use crate::rng::Stream;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Running,
    Idle,
    Down,
    /// A spare being switched in (repairable runs with a switch-over time): not yet running.
    Switching,
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
/// A spare's switch-over is over (unit slot): it runs, or goes back on the shelf.
const SWITCHED: u32 = 10;
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
pub(crate) fn special(c: &Compiled, i: usize) -> bool {
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
    /// Standby switches: any in the diagram; per group, failed (it cannot switch until the
    /// group is repaired back), and when its own life ends (infinite without one).
    any_switch: bool,
    sw_failed: Vec<bool>,
    sw_end: Vec<f64>,
    /// Who the system's outages are charged to (bookkeeping the replication loop drives).
    pub(crate) attribution: Attribution,
}

/// The stream a unit's life or repair is drawn from: its own in common-random-numbers
/// runs, else the replication's.
#[inline(always)]
fn pick<'s>(own: &'s mut [Stream], u: usize, rng: &'s mut Stream) -> &'s mut Stream {
    if own.is_empty() { rng } else { &mut own[u] }
}
