//! The structure kept up to date: evaluated from scratch, then re-derived incrementally
//! from a block whose state changed (network mode searched).
use super::*;

impl<'a> Sim<'a> {
    /// The structure from scratch (start of a replication, a new phase).
    pub(super) fn evaluate_all(&mut self) {
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

    /// Re-derive a group's working state and push any change up the diagram.
    #[inline(always)]
    pub(super) fn refresh(&mut self, g: usize) {
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
}
