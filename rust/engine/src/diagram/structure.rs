//! Reading a compiled diagram: the structure function, network connectivity, capacity
//! checks, agenda slots and block ids.
use super::*;

impl Compiled {
    /// The structure function from scratch: does the system work when `ok[g]` says which
    /// blocks work? (The simulator keeps this incrementally; this is the reference.)
    pub fn evaluate(&self, ok: &[bool]) -> bool {
        if let Some(src) = self.network_source {
            let mut bad = vec![0u32; self.threshold.len()];
            for (g, grp) in self.groups.iter().enumerate() {
                bad[grp.node as usize] += !ok[g] as u32;
            }
            let mut seen = vec![false; self.threshold.len()];
            return self.connected(src, &bad, &mut seen, &mut vec![]);
        }
        let mut live = vec![0u32; self.threshold.len()];
        let mut reach = vec![false; self.threshold.len()];
        let mut bad = vec![0u32; self.threshold.len()];
        for (g, grp) in self.groups.iter().enumerate() {
            bad[grp.node as usize] += !ok[g] as u32;
        }
        for &v in &self.order {
            let v = v as usize;
            reach[v] = bad[v] == 0 && live[v] >= self.threshold[v];
            if reach[v] {
                for &w in self.successors(v) {
                    live[w as usize] += 1;
                }
            }
        }
        reach[self.output as usize]
    }

    /// Network mode: is the target reached from the source through nodes holding no
    /// failed block? (`seen` all false on entry; `stack` a scratch buffer.)
    pub fn connected(
        &self,
        src: u32,
        bad: &[u32],
        seen: &mut [bool],
        stack: &mut Vec<u32>,
    ) -> bool {
        let target = self.output;
        stack.clear();
        if bad[src as usize] > 0 {
            return false;
        }
        seen[src as usize] = true;
        stack.push(src);
        let mut found = false;
        while let Some(v) = stack.pop() {
            if v == target {
                found = true;
                break;
            }
            for &w in self.successors(v as usize) {
                if !seen[w as usize] && bad[w as usize] == 0 {
                    seen[w as usize] = true;
                    stack.push(w);
                }
            }
        }
        found
    }

    /// A graph node that feeds several successors while a capacity limit lies on or
    /// before it (where the least-and-sum rule would count its flow twice), if any.
    pub(super) fn capacity_fan_out(&self) -> Option<u32> {
        let mut limited = vec![false; self.threshold.len()];
        for g in &self.groups {
            if !g.capacity.is_empty() {
                limited[g.node as usize] = true;
            }
        }
        for &v in &self.order {
            let v = v as usize;
            if limited[v] {
                let succ = self.successors(v);
                if succ.len() > 1 {
                    return Some(v as u32);
                }
                for &w in succ {
                    limited[w as usize] = true;
                }
            }
        }
        None
    }

    /// Throughput with every block up at its largest level: finite unless some path has
    /// no capacity-limited block.
    pub(super) fn max_flow_is_finite(&self) -> bool {
        let mut cap = vec![f64::INFINITY; self.threshold.len()];
        for g in &self.groups {
            if let Some(&(v, _)) = g.capacity.iter().max_by(|a, b| a.0.total_cmp(&b.0)) {
                let node = g.node as usize;
                cap[node] = cap[node].min(v * g.units as f64);
            }
        }
        let mut inflow = vec![0.0f64; self.threshold.len()];
        let mut out = 0.0f64;
        for &v in &self.order {
            let v = v as usize;
            let f = if self.threshold[v] == 0 {
                f64::INFINITY
            } else {
                inflow[v].min(cap[v])
            };
            if v == self.output as usize {
                out = f;
            }
            for &w in self.successors(v) {
                inflow[w as usize] += f;
            }
        }
        out.is_finite()
    }

    /// Agenda slots: one per unit, per proof-tested group (its tests), per common-cause
    /// group (its shocks), per proof-tested group (its uncovered failure mode).
    pub fn slots(&self) -> usize {
        self.unit_group.len()
            + 2 * self.tested.len()
            + self.ccfs.len()
            + self.calendar.len()
            + usize::from(!self.phases.is_empty())
    }

    #[inline]
    pub fn successors(&self, v: usize) -> &[u32] {
        &self.succ[self.succ_start[v] as usize..self.succ_start[v + 1] as usize]
    }

    /// Block ids in group order (subsystem blocks as `outer/inner`).
    pub fn block_ids(&self) -> Vec<String> {
        self.groups.iter().map(|g| g.id.clone()).collect()
    }
}
