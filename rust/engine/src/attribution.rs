//! Who a system outage is charged to. An outage is cut at every event into stretches in
//! which the blocks' states hold still. A stretch is shared equally among the blocks that
//! are down and whose restoration alone would bring the system back; when no single
//! block would (two of a 2-of-3 in PM, both of a series pair down), among every block
//! that is down. So blocks in identical positions get equal shares, a series system's
//! shares follow its blocks' unavailabilities, and the shares add up to the downtime the
//! blocks explain (a stretch with no block down, a whole-system stop, is charged to none).
//!
//! Bookkeeping only: it draws no random number and changes no event, so every other
//! figure of a run stays what it was.
use crate::diagram::{Compiled, Policy};
use crate::sim::evaluate;

/// Per worker: the blocks charged for the stretch in progress and this replication's
/// charge per block, with scratch space for the restoration test.
pub(crate) struct Attribution {
    /// Blocks charged for the stretch that began at `since` (empty while the system works).
    charged: Vec<u32>,
    since: f64,
    /// This replication's charge per block (diagram time).
    pub(crate) charge: Vec<f64>,
    down: Vec<u32>,
    bad: Vec<u32>,
    live: Vec<u32>,
    reach: Vec<bool>,
    seen: Vec<bool>,
    stack: Vec<u32>,
}

impl Attribution {
    pub(crate) fn new(c: &Compiled) -> Self {
        let (g, n) = (c.groups.len(), c.threshold.len());
        Attribution {
            charged: Vec::with_capacity(g),
            since: 0.0,
            charge: vec![0.0; g],
            down: Vec::with_capacity(g),
            bad: vec![0; n],
            live: vec![0; n],
            reach: vec![false; n],
            seen: vec![false; n],
            stack: Vec::with_capacity(n),
        }
    }

    /// A new replication.
    pub(crate) fn reset(&mut self) {
        self.charged.clear();
        self.since = 0.0;
        self.charge.iter_mut().for_each(|x| *x = 0.0);
    }

    /// Close the stretch in progress at `t` (its time goes to the blocks it was charged to).
    #[inline]
    pub(crate) fn close(&mut self, t: f64) {
        if !self.charged.is_empty() {
            let each = (t - self.since) / self.charged.len() as f64;
            for &g in &self.charged {
                self.charge[g as usize] += each;
            }
            self.charged.clear();
        }
        self.since = t;
    }

    /// The system is down from `t` with block g working while `ok(g)` (`threshold`: the
    /// votes each graph node needs now): close the stretch in progress and pick the
    /// blocks the next one is charged to.
    pub(crate) fn down_from(
        &mut self,
        c: &Compiled,
        t: f64,
        ok: impl Fn(usize) -> bool,
        threshold: &[u32],
    ) {
        let groups = c.groups.len();
        // The same blocks down as in the stretch in progress: it goes on (most events in
        // an outage are elsewhere), so a stretch ends only where the blocks down change,
        // at the same instants on every path (its charge is one division, not a sum of
        // pieces whose rounding would depend on the events between).
        let same = !self.charged.is_empty()
            && self.down.iter().all(|&g| !ok(g as usize))
            && (0..groups).filter(|&g| !ok(g)).count() == self.down.len();
        if same {
            return;
        }
        self.close(t);
        self.down.clear();
        self.bad.iter_mut().for_each(|x| *x = 0);
        for (g, grp) in c.groups.iter().enumerate() {
            if !ok(g) {
                self.down.push(g as u32);
                self.bad[grp.node as usize] += 1;
            }
        }
        for i in 0..self.down.len() {
            let g = self.down[i];
            let node = c.groups[g as usize].node as usize;
            self.bad[node] -= 1;
            let up = self.works(c, threshold);
            self.bad[node] += 1;
            if up {
                self.charged.push(g);
            }
        }
        if self.charged.is_empty() {
            self.charged.extend_from_slice(&self.down);
        }
    }

    /// Whether the system works with the blocks down in `bad`.
    fn works(&mut self, c: &Compiled, threshold: &[u32]) -> bool {
        if let Some(src) = c.network_source {
            self.seen.iter_mut().for_each(|x| *x = false);
            return c.connected(src, &self.bad, &mut self.seen, &mut self.stack);
        }
        self.live.iter_mut().for_each(|x| *x = 0);
        evaluate(c, &self.bad, threshold, &mut self.live, &mut self.reach);
        self.reach[c.output as usize]
    }
}

/// Blocks whose planned replacements coincide and take the system down together although
/// each alone would not: calendar (`block` policy) replacements at one interval stop
/// every member at the same instants, so redundancy planned for failures is lost to the
/// plan. Each set holds the groups (indices) that are redundant on their own; a set is
/// reported when stopping all of them at once stops the system.
pub fn coinciding_preventive(c: &Compiled) -> Vec<Vec<usize>> {
    let n = c.groups.len();
    let mut ok = vec![true; n];
    let mut sets: Vec<(u64, Vec<usize>)> = vec![];
    for (g, grp) in c.groups.iter().enumerate() {
        let Some(pm) = grp.pm.filter(|p| p.policy == Policy::Block) else {
            continue;
        };
        // A block whose own stop takes the system down is not redundant: its outages are
        // planned whatever the others do.
        ok[g] = false;
        let alone = c.evaluate(&ok);
        ok[g] = true;
        if !alone {
            continue;
        }
        let key = pm.interval.to_bits();
        match sets.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(g),
            None => sets.push((key, vec![g])),
        }
    }
    sets.into_iter()
        .filter(|(_, v)| v.len() > 1)
        .filter_map(|(_, v)| {
            v.iter().for_each(|&g| ok[g] = false);
            let up = c.evaluate(&ok);
            v.iter().for_each(|&g| ok[g] = true);
            (!up).then_some(v)
        })
        .collect()
}
