//! The core path of a repairable run as one tight loop: plain blocks whose units fail and
//! are repaired at once (unlimited crews), nothing scheduled, nothing special
//! (`sim::core_only`). Most runs are this, and on them `Sim`'s generality is all cost: an
//! event there goes through `step`, the feature flags, a `Step` handed back, state spread
//! over two dozen vectors reloaded behind `&mut self`, and a bounds check per access.
//!
//! Here a unit's state is one record, a block's another (one bounds check covers each),
//! the kind of a unit's pending event is whether it is up (no kind array), and the
//! replication's statistics are kept beside the loop. Every unit always has exactly one
//! pending event, so a few units' agenda is a scan of their times (`Scan`: the bare
//! event loop's, ~4 instructions a unit, where the tree's walk costs ~100 an event);
//! more units keep the tournament tree. Both pop equal times in the order they were
//! scheduled, as `Sim`'s agenda does. The draws, their order, the
//! agenda keys and every floating-point operation are those of `Sim` and
//! `availability::replicate` on such a diagram, so the numbers for a seed are identical:
//! pinned by a test against `Sim` on random plain diagrams (`tests` below).
use crate::agenda::Agenda;
use crate::attribution::Attribution;
use crate::availability::AvailabilityAcc;
use crate::diagram::{Compiled, GroupKind};
use crate::dist::{Dist, Exponential, Lifetime};
use crate::rng::Stream;
use crate::stats::fx;
use crate::variance::Track;

/// Units up to which the agenda is a scan (at 24 a scan and the tree's walk cost about
/// the same; callgrind, `two_trains`).
const SCAN_MAX: usize = 24;

/// The agenda of the core path: one pending event per unit, earliest first, equal times
/// in the order they were set.
pub(crate) trait Queue {
    fn new(units: usize) -> Self;
    fn clear(&mut self);
    /// The earliest event as (unit, time).
    fn first(&self) -> (usize, f64);
    /// Unit `slot`'s next event is at `time`.
    fn set(&mut self, slot: usize, time: f64);
}

impl Queue for Agenda {
    fn new(units: usize) -> Self {
        Agenda::new(units)
    }
    fn clear(&mut self) {
        Agenda::clear(self);
    }
    #[inline(always)]
    fn first(&self) -> (usize, f64) {
        let (u, t, _) = Agenda::first(self);
        (u, t)
    }
    #[inline(always)]
    fn set(&mut self, slot: usize, time: f64) {
        Agenda::set(self, slot, time, 0);
    }
}

/// A few units' agenda: their times and the order they were set in, scanned.
pub(crate) struct Scan {
    time: Vec<f64>,
    seq: Vec<u64>,
    counter: u64,
}

impl Queue for Scan {
    fn new(units: usize) -> Self {
        Scan {
            time: vec![f64::INFINITY; units],
            seq: vec![0; units],
            counter: 0,
        }
    }
    fn clear(&mut self) {
        self.time.iter_mut().for_each(|t| *t = f64::INFINITY);
        self.counter = 0;
    }
    #[inline(always)]
    fn first(&self) -> (usize, f64) {
        let time = &self.time[..];
        let seq = &self.seq[..time.len()];
        let Some(&t0) = time.first() else {
            return (0, f64::INFINITY);
        };
        let (mut i, mut t) = (0, t0);
        for (j, &tj) in time.iter().enumerate().skip(1) {
            // Mostly one compare: ties (rare) go to the one set first.
            if tj <= t && (tj < t || seq[j] < seq[i]) {
                (i, t) = (j, tj);
            }
        }
        (i, t)
    }
    #[inline(always)]
    fn set(&mut self, slot: usize, time: f64) {
        self.counter += 1;
        self.time[slot] = time;
        self.seq[slot] = self.counter;
    }
}

/// The core path's workspace for `c` (which must pass `sim::core_only`), with the agenda
/// that suits its size.
pub(crate) enum Workspace<'a> {
    Scan(Plain<'a, Scan>),
    Tree(Plain<'a, Agenda>),
}

impl<'a> Workspace<'a> {
    pub(crate) fn new(c: &'a Compiled) -> Self {
        if c.unit_group.len() <= SCAN_MAX {
            Workspace::Scan(Plain::new(c))
        } else {
            Workspace::Tree(Plain::new(c))
        }
    }

    /// One replication into `acc` (see `Plain::replicate`).
    pub(crate) fn replicate(&mut self, acc: &mut AvailabilityAcc, grid: &[f64], rep: u64) {
        match self {
            Workspace::Scan(p) => p.replicate(acc, grid, rep),
            Workspace::Tree(p) => p.replicate(acc, grid, rep),
        }
    }
}

/// A unit: its block and whether it is up (its pending event is then its failure, else
/// the end of its repair).
#[derive(Clone, Copy)]
struct Unit {
    group: u32,
    up: bool,
}

/// A block's life or repair: an exponential one held in place (its draw is then inlined
/// with no pointer to follow, most blocks' case), any other through the enum.
#[derive(Clone, Copy)]
enum Draw<'a> {
    Exp(Exponential),
    Other(&'a Dist),
}

impl<'a> Draw<'a> {
    fn of(d: &'a Dist) -> Self {
        match d {
            Dist::Exponential(e) => Draw::Exp(*e),
            other => Draw::Other(other),
        }
    }

    /// `Dist::draw`: the same numbers.
    #[inline(always)]
    fn draw(&self, rng: &mut Stream) -> f64 {
        match self {
            Draw::Exp(e) => e.sample(rng),
            Draw::Other(d) => d.draw(rng),
        }
    }
}

/// A block (group of units): units up, units needed, graph node, life and repair
/// distributions; whether it works, since when it is down, failures and downtime.
#[derive(Clone, Copy)]
struct Block<'a> {
    count: u32,
    need: u32,
    units: u32,
    node: u32,
    life: Draw<'a>,
    repair: Draw<'a>,
    ok: bool,
    down_since: f64,
    failures: u64,
    downtime: f64,
}

/// A graph node: live predecessors, blocks down, predecessors needed, whether the signal
/// passes, and its successors' range in `Plain::succ` (one record, one bounds check).
#[derive(Clone, Copy, Default)]
struct Node {
    live: u32,
    bad: u32,
    threshold: u32,
    reach: bool,
    first: u32,
    end: u32,
}

impl Node {
    #[inline(always)]
    fn passes(&self) -> bool {
        self.bad == 0 && self.live >= self.threshold
    }
}

/// `sim::propagate` on the packed nodes: re-derive `node` (its blocks down changed) and
/// carry each flip to the successors; the fixed point is the same in any order.
#[inline(always)]
fn propagate(nodes: &mut [Node], succ: &[u32], stack: &mut Vec<u32>, node: usize) {
    let n = &mut nodes[node];
    let r = n.passes();
    if r == n.reach {
        return;
    }
    n.reach = r;
    let mut v = node;
    loop {
        let Node {
            reach, first, end, ..
        } = nodes[v];
        for &w in &succ[first as usize..end as usize] {
            let m = &mut nodes[w as usize];
            if reach {
                m.live += 1;
            } else {
                m.live -= 1;
            }
            let rw = m.passes();
            if rw != m.reach {
                m.reach = rw;
                stack.push(w);
            }
        }
        match stack.pop() {
            Some(w) => v = w as usize,
            None => break,
        }
    }
}

/// Whether `node` would pass were its blocks `local` all working (variance reduction's
/// conditioning on them; true when none are named: a whole subtree is conditioned on).
#[inline(always)]
fn rest_passes(node: &Node, local: &[u32], blocks: &[Block]) -> bool {
    if local.is_empty() {
        return true;
    }
    let down = local.iter().filter(|&&g| !blocks[g as usize].ok).count() as u32;
    node.bad == down && node.live >= node.threshold
}

/// Workspace of the core path; reset and reused for each replication.
pub(crate) struct Plain<'a, Q> {
    c: &'a Compiled,
    agenda: Q,
    units: Vec<Unit>,
    blocks: Vec<Block<'a>>,
    nodes: Vec<Node>,
    succ: Vec<u32>,
    stack: Vec<u32>,
    attribution: Attribution,
}

impl<'a, Q: Queue> Plain<'a, Q> {
    /// A workspace for `c`, which must pass `sim::core_only`.
    fn new(c: &'a Compiled) -> Self {
        let n = c.threshold.len();
        let blocks = c
            .groups
            .iter()
            .map(|g| Block {
                count: g.units,
                need: match g.kind {
                    GroupKind::Plain { need } => need,
                    GroupKind::Standby { .. } => unreachable!("core_only admits plain blocks"),
                },
                units: g.units,
                node: g.node,
                life: Draw::of(&c.dists[g.life as usize]),
                repair: Draw::of(
                    &c.dists[g.repair.expect("core_only admits repairable blocks") as usize],
                ),
                ok: true,
                down_since: 0.0,
                failures: 0,
                downtime: 0.0,
            })
            .collect();
        let nodes = (0..n)
            .map(|v| Node {
                threshold: c.threshold[v],
                first: c.succ_start[v],
                end: c.succ_start[v + 1],
                ..Node::default()
            })
            .collect();
        Plain {
            c,
            agenda: Q::new(c.unit_group.len()),
            units: c
                .unit_group
                .iter()
                .map(|&g| Unit { group: g, up: true })
                .collect(),
            blocks,
            nodes,
            succ: c.succ.clone(),
            stack: Vec::with_capacity(n),
            attribution: Attribution::new(c),
        }
    }

    /// Every unit new and running, lives drawn block by block (as `Sim::reset`), the
    /// structure evaluated from scratch (as `sim::evaluate`).
    fn reset(&mut self, rng: &mut Stream) {
        self.agenda.clear();
        self.attribution.reset();
        for m in self.nodes.iter_mut() {
            m.live = 0;
            m.bad = 0;
        }
        let mut u = 0;
        for b in self.blocks.iter_mut() {
            for _ in 0..b.units {
                self.units[u].up = true;
                self.agenda.set(u, b.life.draw(rng).max(0.0));
                u += 1;
            }
            b.count = b.units;
            b.ok = b.count >= b.need;
            b.down_since = 0.0;
            b.failures = 0;
            b.downtime = 0.0;
            self.nodes[b.node as usize].bad += !b.ok as u32;
        }
        for &v in &self.c.order {
            let m = self.nodes[v as usize];
            let r = m.passes();
            self.nodes[v as usize].reach = r;
            if r {
                for &w in &self.succ[m.first as usize..m.end as usize] {
                    self.nodes[w as usize].live += 1;
                }
            }
        }
    }

    /// One replication into `acc`, read on `grid`: the same figures as
    /// `availability::replicate` on this diagram.
    fn replicate(&mut self, acc: &mut AvailabilityAcc, grid: &[f64], rep: u64) {
        let o = &acc.options;
        let horizon = o.horizon;
        let mut rng = Stream::for_replication(o.seed, rep, acc.draws_at(rep));
        self.reset(&mut rng);
        let output = self.c.output as usize;
        let Plain {
            agenda,
            units,
            blocks,
            nodes,
            succ,
            stack,
            attribution,
            c,
        } = self;
        let c: &Compiled = c;
        let (units, blocks, nodes, succ) =
            (&mut units[..], &mut blocks[..], &mut nodes[..], &succ[..]);
        let mut up = nodes[output].reach;
        // Variance reduction (when asked): the replication's conditional downtime is
        // followed beside it; no draw changes.
        let mut variance = acc.variance.take();
        let mut track = variance
            .as_ref()
            .and_then(|v| v.condition.as_ref())
            .map(|k| {
                let root = k.root as usize;
                let rest = rest_passes(&nodes[root], &k.local, blocks);
                Track::new(k, nodes[output].live - nodes[root].reach as u32, rest)
            });
        let root = track.as_ref().map_or(0, |k| k.root() as usize);
        let (mut down_start, mut down_total) = (0.0, 0.0);
        // the outages, for the availability over each curve interval (booked at the end)
        // (a caller reading no curve passes no grid: the searches, whose accumulators
        // still size intervals for proof-test instants)
        let by_interval = !acc.interval_up.is_empty() && grid.len() == acc.interval_up.len() + 1;
        let mut outages: Vec<(f64, f64)> = Vec::new();
        let mut failures = (!up) as u32;
        if !up {
            attribution.down_from(c, 0.0, |g| blocks[g].ok, &c.threshold);
        }
        let mut j = 0;
        let mut next_grid = grid.first().copied().unwrap_or(f64::INFINITY);
        let mut events = 0u64;
        loop {
            let (u, t) = agenda.first();
            if t > horizon {
                break;
            }
            events += 1;
            let unit = &mut units[u];
            let g = unit.group as usize;
            let b = &mut blocks[g];
            // The block's working state, before and after (`Sim::refresh`).
            let was = b.ok;
            if unit.up {
                // Failure: down, repaired at once (`fail_plain`, `call_crew`).
                b.failures += 1;
                unit.up = false;
                b.count -= 1;
                b.ok = b.count >= b.need;
                if was && !b.ok {
                    b.down_since = t;
                }
                let r = b.repair.draw(&mut rng).max(0.0);
                agenda.set(u, (t + r).max(0.0));
            } else {
                // Repaired: a new life (`repaired_plain`).
                let l = b.life.draw(&mut rng).max(0.0);
                unit.up = true;
                b.count += 1;
                agenda.set(u, (t + l).max(0.0));
                b.ok = b.count >= b.need;
                if !was && b.ok {
                    b.downtime += t - b.down_since;
                }
            }
            if b.ok != was {
                let node = b.node as usize;
                if b.ok {
                    nodes[node].bad -= 1;
                } else {
                    nodes[node].bad += 1;
                }
                propagate(nodes, succ, stack, node);
                if let Some(k) = track.as_mut() {
                    let rest = rest_passes(&nodes[root], k.local(), blocks);
                    k.at(t, nodes[output].live - nodes[root].reach as u32, rest);
                }
                let now_up = nodes[output].reach;
                if now_up != up {
                    // The grid points up to now read the state before the events at their
                    // time (the left limit), which held since the last system change: as
                    // `replicate` reading them before each event, without a test per event.
                    while next_grid <= t {
                        acc.point_up[j] += up as u64;
                        j += 1;
                        next_grid = grid.get(j).copied().unwrap_or(f64::INFINITY);
                    }
                }
                if up && !now_up {
                    failures += 1;
                    down_start = t;
                } else if !up && now_up {
                    down_total += t - down_start;
                    if by_interval {
                        outages.push((down_start, t));
                    }
                    attribution.close(t);
                }
                // A block changed state in an outage: who restores the system may change.
                if !now_up {
                    let blocks = &*blocks;
                    attribution.down_from(c, t, |g| blocks[g].ok, &c.threshold);
                }
                up = now_up;
            }
        }
        while j < grid.len() {
            acc.point_up[j] += up as u64;
            j += 1;
        }
        if !up {
            down_total += horizon - down_start;
            if by_interval {
                outages.push((down_start, horizon));
            }
            attribution.close(horizon);
        }
        acc.book_shares(&attribution.charge, horizon);
        for (g, b) in blocks.iter_mut().enumerate() {
            if !b.ok {
                b.downtime += horizon - b.down_since;
            }
            acc.block_failures[g] += b.failures;
            acc.block_downtime[g] += fx(b.downtime / horizon);
        }
        let conditional = track.map(|k| k.finish(horizon));
        if let Some(v) = variance.as_mut() {
            let blocks = &*blocks;
            v.book(rep, down_total / horizon, conditional, |g| {
                blocks[g].downtime / horizon
            });
        }
        acc.variance = variance;
        acc.availability.add(1.0 - down_total / horizon);
        if by_interval {
            acc.book_intervals(grid, &outages);
        }
        acc.system_failures.add(failures as f64);
        acc.no_failure += (failures == 0) as u64;
        acc.events += events;
        acc.replication_count += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::availability::{AvailabilityOptions, replicate, run, sample_times};
    use crate::diagram::{DiagramSpec, NodeSpec};
    use crate::dist::DistSpec;
    use crate::fixtures::{edges, exp, node};
    use crate::sim::{Sim, core_only};

    fn dist(id: &str, params: &[(&str, f64)]) -> DistSpec {
        DistSpec {
            distribution_id: id.into(),
            params: params.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            base_distribution_id: None,
            table: None,
            path: None,
        }
    }

    /// Lives and repairs on a few whole hours: many events fall at the same time, so the
    /// order of equal times is exercised.
    fn steps(knots: &[[f64; 2]]) -> DistSpec {
        DistSpec {
            table: Some(knots.to_vec()),
            ..dist("steps", &[])
        }
    }

    fn block(id: &str, kind: &str, model: DistSpec, repair: DistSpec) -> NodeSpec {
        NodeSpec {
            model: Some(model),
            repair: Some(repair),
            ..node(id, kind)
        }
    }

    /// Plain diagrams of every shape the core path takes: series chains, parallel and
    /// series groups, a 2-out-of-3 vote, shared paths; every family the hot path draws
    /// (exponential inlined, the others through the enum), negative draws clipped to 0,
    /// and step lives whose equal times pop in schedule order.
    fn plants() -> Vec<(&'static str, Compiled)> {
        let w = |a: f64| dist("weibull", &[("alpha", a), ("beta", 2.5)]);
        let ln = dist("lognormal", &[("mu", 1.5), ("sigma", 0.8)]);
        let normal = dist("normal", &[("mu", 3.0), ("sigma", 2.0)]);
        let tie = steps(&[[4.0, 0.3], [8.0, 0.7], [12.0, 1.0]]);
        let tie_r = steps(&[[1.0, 0.5], [2.0, 1.0]]);
        let mut out = vec![];
        let mut nodes = vec![node("in", "input"), node("out", "output")];
        let mut pairs = vec![];
        for (t, life) in [("a", exp(1e-2)), ("b", w(90.0))] {
            let mut prev = "in";
            for i in 0..4 {
                let id: &'static str = Box::leak(format!("{t}{i}").into_boxed_str());
                nodes.push(block(id, "component", life.clone(), exp(0.2)));
                pairs.push((prev, id));
                prev = id;
            }
            pairs.push((prev, "out"));
        }
        out.push(("two trains", nodes, pairs));
        let nodes = vec![
            node("in", "input"),
            node("out", "output"),
            block("A", "component", w(40.0), ln.clone()),
            block("B", "component", exp(0.03), normal.clone()),
            block("C", "component", tie.clone(), tie_r.clone()),
            NodeSpec {
                n: Some(3),
                ..block("P", "parallel", exp(0.05), exp(0.3))
            },
            NodeSpec {
                n: Some(2),
                ..block("S", "series", tie.clone(), tie_r.clone())
            },
            block("D", "component", ln.clone(), exp(0.5)),
            NodeSpec {
                n: Some(2),
                ..node("K", "knode")
            },
        ];
        let pairs = vec![
            ("in", "A"),
            ("in", "B"),
            ("A", "C"),
            ("B", "C"),
            ("A", "P"),
            ("in", "S"),
            ("C", "K"),
            ("P", "K"),
            ("S", "D"),
            ("D", "K"),
            ("K", "out"),
        ];
        out.push(("vote and shared paths", nodes, pairs));
        // 30 units: past SCAN_MAX, so the tournament tree.
        let nodes = vec![
            node("in", "input"),
            node("out", "output"),
            NodeSpec {
                n: Some(26),
                ..block("P", "parallel", w(20.0), exp(0.1))
            },
            block("X", "component", tie, tie_r),
            NodeSpec {
                n: Some(3),
                ..block("Y", "series", exp(0.01), exp(1.0))
            },
        ];
        let pairs = vec![
            ("in", "P"),
            ("P", "X"),
            ("in", "Y"),
            ("X", "out"),
            ("Y", "out"),
        ];
        out.push(("many units", nodes, pairs));
        out.into_iter()
            .map(|(name, nodes, pairs)| {
                let c = Compiled::new(&DiagramSpec {
                    nodes,
                    edges: edges(&pairs),
                    ..Default::default()
                })
                .unwrap();
                (name, c)
            })
            .collect()
    }

    fn options(horizon: f64) -> AvailabilityOptions {
        AvailabilityOptions {
            horizon,
            grid: 37,
            crews: 0,
            seed: 7,
        }
    }

    /// Replications [0, reps) through `Sim` and through the core path, one by one.
    fn both<Q: Queue>(
        c: &Compiled,
        o: &AvailabilityOptions,
        reps: u64,
    ) -> (AvailabilityAcc, AvailabilityAcc) {
        let blocks = c.block_ids();
        let grid = sample_times(o.horizon, o.grid, &[]);
        let (mut a, mut b) = (
            AvailabilityAcc::empty(c, o, &blocks, 0),
            AvailabilityAcc::empty(c, o, &blocks, 0),
        );
        let mut sim = Sim::new(c, true, 0);
        let mut plain = Plain::<Q>::new(c);
        for rep in 0..reps {
            replicate(&mut sim, &mut a, &grid, rep);
            plain.replicate(&mut b, &grid, rep);
            assert_eq!(a, b, "replication {rep}");
        }
        (a, b)
    }

    #[test]
    fn the_core_path_gives_sims_numbers_bit_for_bit() {
        for (name, c) in plants() {
            assert!(core_only(&c, 0), "{name}");
            for horizon in [50.0, 1000.0] {
                let o = options(horizon);
                let (a, _) = both::<Scan>(&c, &o, 300);
                let (_, b) = both::<Agenda>(&c, &o, 300);
                // Every figure compared, and the runs are not trivial.
                assert_eq!(a, b, "{name}");
                let s = a.summary();
                assert!(s.events > 1000, "{name}: {} events", s.events);
                assert!(
                    s.mean_availability < 1.0 && a.system_failures.mean() > 0.0,
                    "{name}"
                );
                assert!(
                    a.point_up.iter().any(|&k| k < 300),
                    "{name}: the curve dips"
                );
            }
        }
    }

    #[test]
    fn a_run_takes_the_core_path_only_where_it_applies() {
        let (_, c) = plants().swap_remove(1);
        assert!(core_only(&c, 0));
        // Limited crews queue repairs: Sim's path.
        assert!(!core_only(&c, 1));
        let mut nodes = vec![node("in", "input"), node("out", "output")];
        nodes.push(NodeSpec {
            instant_repair: Some(true),
            ..block("A", "component", exp(0.1), exp(1.0))
        });
        nodes.push(NodeSpec {
            k: Some(1),
            spares: Some(1),
            ..block("S", "standby", exp(0.1), exp(1.0))
        });
        for (id, kind) in [("A", "component"), ("S", "standby")] {
            let one = Compiled::new(&DiagramSpec {
                nodes: vec![
                    nodes[0].clone(),
                    nodes[1].clone(),
                    nodes.iter().find(|n| n.id == id).unwrap().clone(),
                ],
                edges: edges(&[("in", id), (id, "out")]),
                ..Default::default()
            })
            .unwrap();
            assert!(!core_only(&one, 0), "{kind}");
        }
        // A whole run (any thread count) equals Sim replication by replication.
        let o = options(1000.0);
        let (whole, _) = both::<Scan>(&c, &o, 200);
        for threads in [Some(1), Some(2), None] {
            let r = run(&c, &o, 0, 200, threads).unwrap();
            assert_eq!(r.summary().events, whole.summary().events);
            assert_eq!(r.availability, whole.availability);
            assert_eq!(r.point_up, whole.point_up);
            assert_eq!(r.block_downtime, whole.block_downtime);
            assert_eq!(r.block_caused_downtime, whole.block_caused_downtime);
            assert_eq!(r.block_charge_sq, whole.block_charge_sq);
            assert_eq!(r.block_charge_cross, whole.block_charge_cross);
            assert_eq!(r.charge_sq, whole.charge_sq);
        }
    }
}
