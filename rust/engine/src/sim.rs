//! The discrete-event core: units failing and being repaired, repair crews, standby
//! switching, and the structure kept up to date incrementally.
//!
//! Events sit in an agenda ordered by (time, sequence), so equal times pop first-in,
//! first-out (see `agenda`). Per-gate counts of live inputs are updated only along the edges whose
//! source changed state, so an event costs O(nodes it actually changes), not O(diagram).
//! All buffers live in `Sim` and are reused across replications: no allocation per event.
use crate::agenda::Agenda;
use crate::diagram::{Compiled, GroupKind};
use crate::dist::Lifetime;
use crate::rng::Stream;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Running,
    Idle,
    Down,
}

const FAIL: u32 = 0;
const REPAIRED: u32 = 1;

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

/// What one processed event did.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    pub time: f64,
    pub group: u32,
    pub failure: bool,
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
}

impl<'a> Sim<'a> {
    /// `crews` = 0 repairs every failed unit at once; `repairable` = false leaves them failed.
    pub fn new(c: &'a Compiled, repairable: bool, crews: u32) -> Self {
        let (u, g, n) = (c.unit_group.len(), c.groups.len(), c.threshold.len());
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
            life_of: c.groups.iter().map(|g| g.life).collect(),
            repair_of: c
                .groups
                .iter()
                .map(|g| g.repair.unwrap_or(u32::MAX))
                .collect(),
            instant: c.groups.iter().map(|g| g.instant_repair).collect(),
            need: c
                .groups
                .iter()
                .map(|g| match g.kind {
                    GroupKind::Plain { need } => need,
                    GroupKind::Standby { k, .. } => k,
                })
                .collect(),
            agenda: Agenda::new(u),
            seq: 0,
            queue: BinaryHeap::new(),
            busy: 0,
            stack: Vec::with_capacity(n),
            priority: c.groups.iter().map(|g| ordered(g.crew_priority)).collect(),
        }
    }

    #[inline]
    fn push(&mut self, time: f64, unit: u32, kind: u32) {
        self.agenda.set(unit as usize, time.max(0.0), kind);
    }

    /// Start a fresh replication: every unit new, running (standby: the first k running,
    /// the others idle), the structure evaluated once from scratch.
    pub fn reset(&mut self, rng: &mut Stream) {
        self.now = 0.0;
        self.agenda.clear();
        self.queue.clear();
        self.busy = 0;
        self.seq = 0;
        let c = self.c;
        for (gi, g) in c.groups.iter().enumerate() {
            let life = &c.dists[g.life as usize];
            self.failures[gi] = 0;
            self.downtime[gi] = 0.0;
            self.down_since[gi] = 0.0;
            self.ok[gi] = true;
            let (running, rate_idle) = match g.kind {
                GroupKind::Plain { .. } => (g.units, 0.0),
                GroupKind::Standby { k, dormancy } => (k, dormancy),
            };
            self.count[gi] = running;
            for j in 0..g.units {
                let u = (g.first_unit + j) as usize;
                self.age[u] = 0.0;
                self.last[u] = 0.0;
                let l = life.sample(rng).max(0.0);
                self.life_at[u] = l;
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
        self.live.iter_mut().for_each(|x| *x = 0);
        self.bad.iter_mut().for_each(|x| *x = 0);
        for (gi, g) in c.groups.iter().enumerate() {
            self.ok[gi] = self.count[gi] >= self.need[gi];
            self.bad[g.node as usize] += !self.ok[gi] as u32;
        }
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
    }

    #[inline]
    pub fn system_up(&self) -> bool {
        self.reach[self.c.output as usize]
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
        let g = self.c.unit_group[u];
        if kind == FAIL {
            self.fail(u, g as usize, rng);
        } else {
            self.repaired(u, g as usize, rng);
        }
        self.agenda.settle(u);
        Some(Step {
            time,
            group: g,
            failure: kind == FAIL,
        })
    }

    fn fail(&mut self, u: usize, g: usize, rng: &mut Stream) {
        let c = self.c;
        self.failures[g] += 1;
        if self.repairable && self.instant[g] {
            // Renewed in no time: the block never stops working.
            self.renew_in_place(u, g, rng);
            return;
        }
        let was = self.status[u];
        self.status[u] = Status::Down;
        match c.groups[g].kind {
            GroupKind::Plain { .. } => self.count[g] -= 1,
            GroupKind::Standby { dormancy, .. } => {
                if was == Status::Running {
                    self.count[g] -= 1;
                    self.switch_in(g, dormancy);
                }
            }
        }
        self.refresh(g);
        if self.repairable {
            if self.crews == 0 || self.busy < self.crews {
                self.start_repair(u, g, rng);
            } else {
                self.seq += 1;
                self.queue.push(Waiting {
                    priority: self.priority[g],
                    seq: self.seq,
                    unit: u as u32,
                });
            }
        }
    }

    /// A standby group lost a running unit: start its first idle unit (perfect switch).
    fn switch_in(&mut self, g: usize, dormancy: f64) {
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
        self.age[u] += dormancy * (self.now - self.last[u]);
        self.last[u] = self.now;
        self.status[u] = Status::Running;
        self.count[g] += 1;
        let remaining = (self.life_at[u] - self.age[u]).max(0.0);
        self.push(self.now + remaining, u as u32, FAIL);
    }

    fn renew_in_place(&mut self, u: usize, g: usize, rng: &mut Stream) {
        let grp = &self.c.groups[g];
        let l = self.c.dists[grp.life as usize].sample(rng).max(0.0);
        let rate = match (grp.kind, self.status[u]) {
            (GroupKind::Standby { dormancy, .. }, Status::Idle) => dormancy,
            _ => 1.0,
        };
        self.age[u] = 0.0;
        self.last[u] = self.now;
        self.life_at[u] = l;
        if rate > 0.0 {
            self.push(self.now + l / rate, u as u32, FAIL);
        }
    }

    fn start_repair(&mut self, u: usize, g: usize, rng: &mut Stream) {
        // Availability runs check that every block has a repair model or instant repair.
        let d = self.repair_of[g] as usize;
        let r = self.c.dists[d].sample(rng).max(0.0);
        self.busy += 1;
        self.push(self.now + r, u as u32, REPAIRED);
    }

    fn repaired(&mut self, u: usize, g: usize, rng: &mut Stream) {
        let c = self.c;
        let l = c.dists[self.life_of[g] as usize].sample(rng).max(0.0);
        match c.groups[g].kind {
            GroupKind::Plain { .. } => {
                // Plain units age only while running and are renewed here: no age kept.
                self.status[u] = Status::Running;
                self.count[g] += 1;
                self.push(self.now + l, u as u32, FAIL);
            }
            GroupKind::Standby { k, dormancy } => {
                self.age[u] = 0.0;
                self.last[u] = self.now;
                self.life_at[u] = l;
                if self.count[g] < k {
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
        self.busy -= 1;
        if let Some(w) = self.queue.pop() {
            let wu = w.unit as usize;
            self.start_repair(wu, self.c.unit_group[wu] as usize, rng);
        }
    }

    /// Re-derive a group's working state and push any change up the diagram.
    #[inline]
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
        self.stack.clear();
        self.stack.push(node as u32);
        while let Some(v) = self.stack.pop() {
            let v = v as usize;
            let r = self.bad[v] == 0 && self.live[v] >= c.threshold[v];
            if r == self.reach[v] {
                continue;
            }
            self.reach[v] = r;
            for &w in c.successors(v) {
                if r {
                    self.live[w as usize] += 1;
                } else {
                    self.live[w as usize] -= 1;
                }
                self.stack.push(w);
            }
        }
    }

    /// Close the books at `t`: downtime of blocks still down counts up to `t`.
    pub fn finish(&mut self, t: f64) {
        for g in 0..self.ok.len() {
            if !self.ok[g] {
                self.downtime[g] += t - self.down_since[g];
                self.down_since[g] = t;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagram::{DiagramSpec, EdgeSpec, NodeSpec};
    use crate::dist::DistSpec;

    fn exp(rate: f64) -> DistSpec {
        DistSpec {
            distribution_id: "exponential".into(),
            params: [("failure_rate".to_string(), rate)].into(),
            base_distribution_id: None,
        }
    }
    fn block(id: &str, kind: &str) -> NodeSpec {
        NodeSpec {
            id: id.into(),
            kind: kind.into(),
            model: Some(exp(0.1)),
            repair: Some(exp(0.5)),
            ..Default::default()
        }
    }

    /// A bridge feeding a 2-of-3 gate with a chain, a parallel node and a standby group.
    fn tangle() -> Compiled {
        let mut nodes = vec![
            NodeSpec {
                id: "in".into(),
                kind: "input".into(),
                ..Default::default()
            },
            NodeSpec {
                id: "out".into(),
                kind: "output".into(),
                ..Default::default()
            },
        ];
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
            id: "K".into(),
            kind: "knode".into(),
            n: Some(2),
            ..Default::default()
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
        let edges = pairs
            .iter()
            .map(|(s, t)| EdgeSpec {
                source: s.to_string(),
                target: t.to_string(),
            })
            .collect();
        Compiled::new(&DiagramSpec { nodes, edges }).unwrap()
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
