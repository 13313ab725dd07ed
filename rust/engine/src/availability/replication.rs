//! One replication of an availability run: the event loop feeding the accumulator
//! (downtime, outages, sample points, production, costs).
use super::*;
use crate::variance::Track;

/// Throughput followed through a replication: integrals of the flow over the horizon
/// and over the production period, and time below demand in the period.
struct Flow {
    period: f64,
    demand: f64,
    rate: f64,
    since: f64,
    total: f64,
    produced: f64,
    below: f64,
}

impl Flow {
    /// The flow held `rate` from `since` to `t`, and is `next` from `t`.
    fn to(&mut self, t: f64, next: f64) {
        self.total += self.rate * (t - self.since);
        let span = t.min(self.period) - self.since.min(self.period);
        self.produced += self.rate * span;
        if self.rate < self.demand {
            self.below += span;
        }
        self.rate = next;
        self.since = t;
    }
}

/// One replication into `acc`.
pub(crate) fn replicate(sim: &mut Sim, acc: &mut AvailabilityAcc, grid: &[f64], rep: u64) {
    replicate_observed(sim, acc, grid, rep, |_, _| {});
}

/// [`replicate`] with `observe(sim, t)` called before each event at `t` and once at the
/// horizon: the blocks' states seen then held since the previous call (the decisions
/// module integrates importance over them). The no-op observer compiles away, so plain
/// runs pay nothing and draw the same numbers.
#[inline(always)]
pub(crate) fn replicate_observed(
    sim: &mut Sim,
    acc: &mut AvailabilityAcc,
    grid: &[f64],
    rep: u64,
    mut observe: impl FnMut(&Sim, f64),
) {
    let o = &acc.options;
    let horizon = o.horizon;
    let mut rng = Stream::for_replication(o.seed, rep, acc.draws_at(rep));
    sim.reset(&mut rng);
    let mut up = sim.system_up();
    let (mut down_start, mut down_total) = (0.0, 0.0);
    let sys_rate = sim.c.system_downtime_rate;
    let mut sys_cost = 0.0;
    let cap = acc.cap_scale > 0.0;
    let system_stops = sim.c.mgroups.iter().any(|m| m.system_down);
    let mut flow = Flow {
        period: period(sim.c, horizon),
        demand: sim.c.demand,
        rate: if cap { sim.throughput() } else { 0.0 },
        since: 0.0,
        total: 0.0,
        produced: 0.0,
        below: 0.0,
    };
    let mut failures = 0u32;
    let (mut planned_outages, mut planned_down) = (0u64, 0.0);
    // Variance reduction (when asked): the conditional downtime followed beside the run.
    let mut variance = acc.variance.take();
    let mut track = variance
        .as_ref()
        .and_then(|v| v.condition.as_ref())
        .map(|k| {
            Track::new(
                k,
                sim.output_inputs_but(k.root),
                sim.passes_but(k.root, &k.local),
            )
        });
    let root = track.as_ref().map_or(0, |k| k.root());
    let mut j = 0;
    let mut next_grid = grid.first().copied().unwrap_or(f64::INFINITY);
    let mut events = 0u64;
    // the outages, for the availability over each curve interval (booked at the end)
    // (a caller reading no curve passes no grid: the searches, whose accumulators
    // still size intervals for proof-test instants)
    let by_interval = !acc.interval_up.is_empty() && grid.len() == acc.interval_up.len() + 1;
    let mut outages: Vec<(f64, f64)> = Vec::new();
    if !up {
        if !sim.begin_outage(0.0) {
            failures += 1;
        }
        sim.attribute_down(0.0);
    }
    loop {
        let te = sim.next_time();
        if te > horizon {
            break;
        }
        observe(sim, te);
        let s = sim.step(&mut rng).expect("an event is pending");
        events += 1;
        if cap {
            flow.to(s.time, sim.throughput());
        }
        if let Some(k) = track.as_mut() {
            k.at(
                s.time,
                sim.output_inputs_but(root),
                sim.passes_but(root, k.local()),
            );
        }
        let now_up = sim.system_up();
        if now_up != up {
            // A grid point is read before the events at its time (the left limit: the
            // peak just before a proof test): the state since the last system change, so
            // the points up to now are read here, at a change, not tested before each
            // event (a branch that went either way about every other event).
            while next_grid <= s.time {
                acc.point_up[j] += up as u64;
                j += 1;
                next_grid = grid.get(j).copied().unwrap_or(f64::INFINITY);
            }
        }
        if up && !now_up {
            if system_stops {
                sim.system_outage(&mut rng);
            }
            // Planned if the system would work but for planned stops; else a failure.
            if sim.begin_outage(s.time) {
                planned_outages += 1;
            } else {
                failures += 1;
            }
            down_start = s.time;
        } else if !up && now_up {
            let d = s.time - down_start;
            down_total += d;
            if by_interval {
                outages.push((down_start, s.time));
            }
            planned_down += sim.end_outage(s.time);
            if sys_rate > 0.0 {
                sys_cost += sys_rate * sim.discounted_span(down_start, s.time);
            }
            sim.attribution.close(s.time);
        }
        // Any event in an outage may change who restores the system.
        if !now_up {
            sim.attribute_down(s.time);
        }
        up = now_up;
    }
    while j < grid.len() {
        acc.point_up[j] += up as u64;
        j += 1;
    }
    observe(sim, horizon);
    if !up {
        let d = horizon - down_start;
        down_total += d;
        if by_interval {
            outages.push((down_start, horizon));
        }
        planned_down += sim.end_outage(horizon);
        if sys_rate > 0.0 {
            sys_cost += sys_rate * sim.discounted_span(down_start, horizon);
        }
        sim.attribution.close(horizon);
    }
    acc.book_shares(&sim.attribution.charge, horizon);
    sim.finish(horizon);
    for g in 0..acc.blocks.len() {
        acc.block_failures[g] += sim.failures[g];
        acc.block_downtime[g] += fx(sim.downtime[g] / horizon);
    }
    let conditional = track.map(|k| k.finish(horizon));
    if let Some(v) = variance.as_mut() {
        v.book(rep, down_total / horizon, conditional, |g| {
            sim.downtime[g] / horizon
        });
    }
    acc.variance = variance;
    // Planned stops happen only with planned replacements or proof tests.
    if !acc.block_preventive.is_empty() || !acc.test_times.is_empty() {
        for g in 0..acc.blocks.len() {
            acc.block_planned_downtime[g] += fx(sim.planned_downtime[g] / horizon);
            acc.block_tests[g] += sim.tests[g];
            acc.block_inspections[g] += sim.inspections[g];
        }
    }
    // Instantly renewed failures that stopped the system for no time.
    failures += (sim.instant_system_failures + sim.switch_failures) as u32;
    acc.planned_outages += planned_outages;
    if planned_down > 0.0 {
        acc.planned_downtime += fx(planned_down / horizon);
    }
    if cap {
        flow.to(horizon, 0.0);
        let sc = acc.cap_scale;
        acc.throughput.add(flow.total / (sc * horizon));
        acc.production.add(flow.produced / (sc * flow.period));
        acc.below_demand.add(flow.below / flow.period);
    }
    if !acc.cost_kind.is_empty() {
        let sc = acc.cost_scale;
        let mut kinds = [0.0; COST_KINDS.len()];
        for g in 0..acc.blocks.len() {
            for (k, total) in kinds.iter_mut().enumerate() {
                let x = sim.cost[g * COST_KINDS.len() + k];
                *total += x;
                acc.cost_block[g * COST_KINDS.len() + k] += fx(x / sc);
            }
        }
        kinds[K_DOWNTIME] += sys_cost;
        acc.cost_system += fx(sys_cost / sc);
        acc.cost_total.add(kinds.iter().sum::<f64>() / sc);
        for (m, x) in acc.cost_kind.iter_mut().zip(kinds) {
            m.add(x / sc);
        }
    }
    if !acc.block_preventive.is_empty() {
        add_vec(&mut acc.block_preventive, &sim.preventive);
    }
    acc.availability.add(1.0 - down_total / horizon);
    if by_interval {
        acc.book_intervals(grid, &outages);
    }
    acc.system_failures.add(failures as f64);
    acc.no_failure += (failures == 0) as u64;
    acc.events += events;
    acc.replication_count += 1;
}
