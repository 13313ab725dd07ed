//! The diagram as a continuous-time Markov chain: every block exponential in life and in
//! repair, so the state is each unit's status plus the repair queue, and each step is one
//! transition of the embedded jump chain. The rules are the event simulator's (`sim`):
//! units fail whether or not the system is up; a failed unit is repaired at once when a
//! crew is free (`crews` = 0: always), else it waits, higher `crew_priority` first, then
//! first come; a standby group runs `k` units, a failed running unit is replaced by its
//! first idle unit, idle units fail at `dormancy` times the rate, a repaired unit runs if
//! its group is short and goes back on the shelf otherwise.
use crate::diagram::{Compiled, GroupKind};
use crate::dist::{Dist, Lifetime};
use crate::error::EngineError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Running,
    Idle,
    Waiting,
    InRepair,
}

/// One block's rates and rule.
#[derive(Debug, Clone)]
struct Block {
    first: usize,
    units: usize,
    /// Units that must run (plain: units up needed; standby: k).
    need: u32,
    standby: bool,
    fail: f64,
    /// Failure rate of an idle (standby) unit.
    idle_fail: f64,
    repair: f64,
    priority: f64,
}

/// The chain's fixed part: compiled once per run, shared by the workers.
#[derive(Debug, Clone)]
pub struct Chain<'a> {
    c: &'a Compiled,
    blocks: Vec<Block>,
    unit_block: Vec<usize>,
    crews: u32,
}

/// The exponential rate of a memoryless distribution, or None.
fn rate(d: &Dist) -> Option<f64> {
    // An exponential with a failure-free time (location) has hazard 0 at 0: not memoryless.
    match d {
        Dist::Exponential(_) if d.hazard(0.0) > 0.0 => Some(d.hazard(0.0)),
        _ => None,
    }
}

impl<'a> Chain<'a> {
    /// The chain of a compiled diagram, or the rule it breaks (naming the block).
    pub fn new(c: &'a Compiled, crews: u32) -> Result<Self, EngineError> {
        let refuse = |id: &str, why: &str| Err(EngineError::node(id, why));
        if !c.phases.is_empty() {
            return Err(EngineError::new("phases are not a Markovian steady state"));
        }
        if !c.ccfs.is_empty() {
            return Err(EngineError::new("common-cause groups are not simulated"));
        }
        if !c.mgroups.is_empty() {
            return Err(EngineError::new("maintenance groups are not simulated"));
        }
        if c.has_costs || c.has_capacity {
            return Err(EngineError::new(
                "costs and capacity are not estimated (unavailability only)",
            ));
        }
        let mut blocks = vec![];
        for g in &c.groups {
            let id = g.id.as_str();
            if g.test.is_some() || g.pm.is_some() {
                return refuse(id, "proof tests and planned maintenance are not Markovian");
            }
            if g.rq.is_some() {
                return refuse(id, "imperfect repair (repair_quality) is not Markovian");
            }
            if g.start.is_some() {
                return refuse(
                    id,
                    "an initial state has no meaning for a steady-state figure",
                );
            }
            if g.instant_repair {
                return refuse(id, "instant repair is not an exponential repair");
            }
            if g.switch.is_some() {
                return refuse(
                    id,
                    "a standby switch (switch) is not in the chain: its switch-over and failures are simulated",
                );
            }
            if g.own_repairer {
                return refuse(
                    id,
                    "repair_one_at_a_time is not simulated (the diagram's crews are)",
                );
            }
            let Some(fail) = rate(&c.dists[g.life as usize]) else {
                return refuse(
                    id,
                    "the life must be exponential (no location): the method needs a Markovian diagram",
                );
            };
            let Some(repair) = g.repair.and_then(|r| rate(&c.dists[r as usize])) else {
                return refuse(
                    id,
                    "the repair must be exponential (no location): the method needs a Markovian diagram",
                );
            };
            let (need, standby, dormancy) = match g.kind {
                GroupKind::Plain { need } => (need, false, 1.0),
                GroupKind::Standby { k, dormancy } => (k, true, dormancy),
            };
            blocks.push(Block {
                first: g.first_unit as usize,
                units: g.units as usize,
                need,
                standby,
                fail,
                idle_fail: fail * dormancy,
                repair,
                priority: g.crew_priority,
            });
        }
        let unit_block = c.unit_group.iter().map(|&g| g as usize).collect();
        let chain = Chain {
            c,
            blocks,
            unit_block,
            crews,
        };
        if !c.evaluate(&vec![true; c.groups.len()]) {
            return Err(EngineError::new(
                "the system does not work with every block up",
            ));
        }
        Ok(chain)
    }

    pub fn units(&self) -> usize {
        self.unit_block.len()
    }
}

/// A transition out of the current state: unit `unit` fails or ends its repair.
#[derive(Debug, Clone, Copy)]
pub struct Move {
    pub unit: u32,
    pub rate: f64,
}

/// The chain's current state and the transitions out of it.
pub struct State<'c, 'a> {
    ch: &'c Chain<'a>,
    status: Vec<Status>,
    count: Vec<u32>,
    ok: Vec<bool>,
    up: bool,
    busy: u32,
    /// Units waiting for a crew: (priority, arrival), best first when picked.
    queue: Vec<(f64, u64, u32)>,
    seq: u64,
    /// Units not working for a failure (waiting or in repair).
    pub down_units: u32,
    pub failures: Vec<Move>,
    pub repairs: Vec<Move>,
    pub fail_rate: f64,
    pub repair_rate: f64,
}

impl<'c, 'a> State<'c, 'a> {
    pub fn new(ch: &'c Chain<'a>) -> Self {
        let g = ch.blocks.len();
        let mut s = State {
            ch,
            status: vec![Status::Running; ch.units()],
            count: vec![0; g],
            ok: vec![true; g],
            up: true,
            busy: 0,
            queue: vec![],
            seq: 0,
            down_units: 0,
            failures: vec![],
            repairs: vec![],
            fail_rate: 0.0,
            repair_rate: 0.0,
        };
        s.reset();
        s
    }

    /// Every unit up: plain units running, a standby group's first k running, the rest idle.
    pub fn reset(&mut self) {
        for (bi, b) in self.ch.blocks.iter().enumerate() {
            for u in b.first..b.first + b.units {
                let running = !b.standby || u - b.first < b.need as usize;
                self.status[u] = if running {
                    Status::Running
                } else {
                    Status::Idle
                };
            }
            self.count[bi] = if b.standby { b.need } else { b.units as u32 };
            self.ok[bi] = true;
        }
        self.up = true;
        self.busy = 0;
        self.queue.clear();
        self.seq = 0;
        self.down_units = 0;
        self.moves();
    }

    pub fn up(&self) -> bool {
        self.up
    }

    /// Total rate out of the state (1 / its mean holding time).
    pub fn rate(&self) -> f64 {
        self.fail_rate + self.repair_rate
    }

    /// List the transitions out of the current state.
    fn moves(&mut self) {
        self.failures.clear();
        self.repairs.clear();
        let (mut f, mut r) = (0.0, 0.0);
        for (u, st) in self.status.iter().enumerate() {
            let b = &self.ch.blocks[self.ch.unit_block[u]];
            let (rate, repair) = match st {
                Status::Running => (b.fail, false),
                Status::Idle => (b.idle_fail, false),
                Status::InRepair => (b.repair, true),
                Status::Waiting => (0.0, false),
            };
            if rate > 0.0 {
                let m = Move {
                    unit: u as u32,
                    rate,
                };
                if repair {
                    r += rate;
                    self.repairs.push(m);
                } else {
                    f += rate;
                    self.failures.push(m);
                }
            }
        }
        self.fail_rate = f;
        self.repair_rate = r;
    }

    /// Take a transition: `unit` fails (running or idle) or its repair ends.
    pub fn apply(&mut self, unit: u32) {
        let u = unit as usize;
        let bi = self.ch.unit_block[u];
        match self.status[u] {
            Status::Running | Status::Idle => self.fail(u, bi),
            Status::InRepair => self.repaired(u, bi),
            Status::Waiting => unreachable!("a waiting unit has no transition"),
        }
        let b = &self.ch.blocks[bi];
        let ok = self.count[bi] >= b.need;
        if ok != self.ok[bi] {
            self.ok[bi] = ok;
            self.up = self.ch.c.evaluate(&self.ok);
        }
        self.moves();
    }

    fn fail(&mut self, u: usize, bi: usize) {
        let was = self.status[u];
        let b = &self.ch.blocks[bi];
        self.down_units += 1;
        if was == Status::Running {
            self.count[bi] -= 1;
            if b.standby {
                // The first idle unit takes over (perfect switch).
                if let Some(v) =
                    (b.first..b.first + b.units).find(|&v| self.status[v] == Status::Idle)
                {
                    self.status[v] = Status::Running;
                    self.count[bi] += 1;
                }
            }
        }
        if self.ch.crews == 0 || self.busy < self.ch.crews {
            self.busy += 1;
            self.status[u] = Status::InRepair;
        } else {
            self.seq += 1;
            self.status[u] = Status::Waiting;
            self.queue.push((b.priority, self.seq, u as u32));
        }
    }

    fn repaired(&mut self, u: usize, bi: usize) {
        let b = &self.ch.blocks[bi];
        self.down_units -= 1;
        if !b.standby || self.count[bi] < b.need {
            self.status[u] = Status::Running;
            self.count[bi] += 1;
        } else {
            self.status[u] = Status::Idle;
        }
        self.busy -= 1;
        // The crew takes the waiting unit of highest priority, first come among equals.
        let best = self
            .queue
            .iter()
            .enumerate()
            .max_by(|(_, a), (_, b)| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
            .map(|(i, _)| i);
        if let Some(i) = best {
            let (_, _, w) = self.queue.remove(i);
            self.status[w as usize] = Status::InRepair;
            self.busy += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagram::{DiagramSpec, NodeSpec};
    use crate::fixtures::{edges, exp, node};

    fn two_in_parallel() -> Compiled {
        let comp = |id: &str, l: f64, m: f64| NodeSpec {
            model: Some(exp(l)),
            repair: Some(exp(m)),
            ..node(id, "component")
        };
        let d = DiagramSpec {
            nodes: vec![
                node("in", "input"),
                comp("A", 1.0, 10.0),
                comp("B", 2.0, 20.0),
                node("out", "output"),
            ],
            edges: edges(&[("in", "A"), ("in", "B"), ("A", "out"), ("B", "out")]),
            ..Default::default()
        };
        Compiled::new(&d).unwrap()
    }

    #[test]
    fn one_crew_repairs_in_order_of_arrival() {
        let c = two_in_parallel();
        let ch = Chain::new(&c, 1).unwrap();
        let mut s = State::new(&ch);
        assert!(s.up() && s.fail_rate == 3.0 && s.repair_rate == 0.0);
        s.apply(1); // B fails: in repair at 20
        assert!(s.up() && s.repair_rate == 20.0 && s.fail_rate == 1.0);
        s.apply(0); // A fails: waits, the system is down
        assert!(!s.up() && s.repair_rate == 20.0 && s.fail_rate == 0.0);
        s.apply(1); // B repaired: the crew takes A
        assert!(s.up() && s.repair_rate == 10.0 && s.fail_rate == 2.0);
        s.apply(0);
        assert_eq!(s.down_units, 0);
        assert_eq!(s.rate(), 3.0);
    }
}
