//! Validating and compiling a whole diagram: the graph in compressed-row form, its
//! topological order, phases, maintenance groups and the run-wide checks.
use super::*;

/// Successor lists in compressed-row form.
fn csr(n: usize, edges: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; n + 1];
    for &(s, _) in edges {
        start[s as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut succ = vec![0u32; edges.len()];
    for &(s, t) in edges {
        succ[fill[s as usize] as usize] = t;
        fill[s as usize] += 1;
    }
    (start, succ)
}

/// Kahn's order of an acyclic graph in CSR form.
fn topological(n: usize, start: &[u32], succ: &[u32]) -> Vec<u32> {
    let mut indeg = vec![0u32; n];
    for &t in succ {
        indeg[t as usize] += 1;
    }
    let mut order: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut head = 0;
    while head < order.len() {
        let v = order[head] as usize;
        head += 1;
        for &w in &succ[start[v] as usize..start[v + 1] as usize] {
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                order.push(w);
            }
        }
    }
    order
}

impl Compiled {
    /// Validate and compile a diagram; errors name the offending node.
    pub fn new(spec: &DiagramSpec) -> Result<Compiled, EngineError> {
        let mut b = Builder {
            groups: vec![],
            unit_group: vec![],
            dists: vec![],
            threshold: vec![],
            node_group: vec![],
            edges: vec![],
            ccfs: vec![],
            knodes: vec![],
            network: false,
            terminals: (0, 0),
            group_mg_names: vec![],
        };
        b.network = match &spec.network {
            None | Some(NetworkSpec::On(false)) => false,
            Some(_) => true,
        };
        let (_, mut raw_output) = b.diagram(spec, "", true, 0)?;
        if b.network {
            // Undirected: every edge both ways; the target plays the output.
            let back: Vec<(u32, u32)> = b.edges.iter().map(|&(s, t)| (t, s)).collect();
            b.edges.extend(back);
            raw_output = b.terminals.1;
        }
        let raw = b.threshold.len();
        let (raw_succ_start, raw_succ) = csr(raw, &b.edges);
        let raw_order = topological(raw, &raw_succ_start, &raw_succ);
        // Chain compression: a block whose only successor is a block with that one
        // predecessor (and threshold 1) joins it in one graph node that works while none of
        // its blocks is down. A train of k blocks in series then costs one node update per
        // state change instead of k.
        let mut indeg = vec![0u32; raw];
        for &(_, t) in &b.edges {
            indeg[t as usize] += 1;
        }
        let mut rep: Vec<u32> = (0..raw as u32).collect();
        for &v in &raw_order {
            let v = v as usize;
            let out = &raw_succ[raw_succ_start[v] as usize..raw_succ_start[v + 1] as usize];
            if !b.network && b.node_group[v] != NO_GROUP && out.len() == 1 {
                let w = out[0] as usize;
                if b.node_group[w] != NO_GROUP && indeg[w] == 1 && b.threshold[w] == 1 {
                    rep[w] = rep[v];
                }
            }
        }
        let mut new_id = vec![u32::MAX; raw];
        let mut threshold = vec![];
        for v in 0..raw {
            if rep[v] as usize == v {
                new_id[v] = threshold.len() as u32;
                threshold.push(b.threshold[v]);
            }
        }
        let map: Vec<u32> = (0..raw).map(|v| new_id[rep[v] as usize]).collect();
        let n = threshold.len();
        let mut members = vec![0u32; n];
        for v in 0..raw {
            if b.node_group[v] != NO_GROUP {
                members[map[v] as usize] += 1;
            }
        }
        let edges: Vec<(u32, u32)> = b
            .edges
            .iter()
            .map(|&(s, t)| (map[s as usize], map[t as usize]))
            .filter(|(s, t)| s != t)
            .collect();
        let (succ_start, succ) = csr(n, &edges);
        let order = if b.network {
            (0..n as u32).collect()
        } else {
            topological(n, &succ_start, &succ)
        };
        let mut groups = b.groups;
        for g in &mut groups {
            g.node = map[g.node as usize];
        }
        let mut group_ccf = vec![NO_GROUP; groups.len()];
        for (i, cc) in b.ccfs.iter().enumerate() {
            for &g in &cc.members {
                if group_ccf[g as usize] != NO_GROUP {
                    return Err(EngineError::new(format!(
                        "block {:?} is in two common-cause groups ({:?} and {:?})",
                        groups[g as usize].id, b.ccfs[group_ccf[g as usize] as usize].id, cc.id
                    )));
                }
                group_ccf[g as usize] = i as u32;
            }
        }
        let tested: Vec<u32> = (0..groups.len() as u32)
            .filter(|&g| groups[g as usize].test.is_some())
            .collect();
        let calendar: Vec<u32> = (0..groups.len() as u32)
            .filter(|&g| {
                groups[g as usize]
                    .pm
                    .is_some_and(|p| p.policy != Policy::Age)
            })
            .collect();
        let dc = spec.costs.clone().unwrap_or_default();
        let system_downtime_rate = dc.downtime_rate.unwrap_or(0.0);
        let discount = dc.discount.unwrap_or(0.0);
        if !(system_downtime_rate.is_finite() && system_downtime_rate >= 0.0) {
            return Err(EngineError::new(
                "costs.downtime_rate must be a finite number >= 0",
            ));
        }
        if !(discount.is_finite() && discount >= 0.0) {
            return Err(EngineError::new(
                "costs.discount must be a finite number >= 0",
            ));
        }
        let has_costs = system_downtime_rate > 0.0
            || groups.iter().any(|g| {
                g.costs.is_some()
                    || g.pm
                        .is_some_and(|p| p.cost.1 > 0.0 || p.inspection_cost.1 > 0.0)
            });
        let mut phases = vec![];
        let mut end = 0.0;
        for p in &spec.phases {
            let bad = |why: String| EngineError::at(format!("phase {:?}", p.name), why);
            if !(p.duration.is_finite() && p.duration >= 0.0) {
                return Err(bad("duration must be a finite number >= 0".into()));
            }
            end += p.duration;
            let mut not_needed = vec![false; groups.len()];
            for id in &p.not_needed {
                let prefix = format!("{id}/");
                let mut hit = false;
                for (gi, g) in groups.iter().enumerate() {
                    if g.id == *id || g.id.starts_with(&prefix) {
                        not_needed[gi] = true;
                        hit = true;
                    }
                }
                if !hit {
                    return Err(bad(format!("not_needed: no block {id:?}")));
                }
            }
            let mut th = threshold.clone();
            for (k, &votes) in &p.votes {
                let (_, raw_v, inputs) = b
                    .knodes
                    .iter()
                    .find(|(kid, _, _)| kid == k)
                    .ok_or_else(|| bad(format!("votes: no knode {k:?}")))?;
                if votes == 0 || votes > *inputs {
                    return Err(bad(format!(
                        "votes: knode {k:?} needs 1 to {inputs} working inputs (got {votes})"
                    )));
                }
                th[map[*raw_v as usize] as usize] = votes;
            }
            phases.push(Phase {
                name: p.name.clone(),
                end,
                not_needed,
                threshold: th,
            });
        }
        let mut mgroups: Vec<MGroup> = spec
            .maintenance_groups
            .iter()
            .map(|(name, m)| MGroup {
                name: name.clone(),
                setup_cost: m.setup_cost.unwrap_or(0.0),
                system_down: m.system_down.unwrap_or(false),
                members: vec![],
            })
            .collect();
        if mgroups
            .iter()
            .any(|m| !(m.setup_cost.is_finite() && m.setup_cost >= 0.0))
        {
            return Err(EngineError::at(
                "maintenance_groups",
                "setup_cost must be a finite number >= 0",
            ));
        }
        let mut group_mg = vec![NO_GROUP; groups.len()];
        for (gi, (name, top)) in b.group_mg_names.iter().enumerate() {
            let Some(name) = name else { continue };
            let id = &groups[gi].id;
            if !top {
                return Err(EngineError::node(
                    id,
                    "maintenance groups are for blocks of the top diagram",
                ));
            }
            let m = mgroups
                .iter()
                .position(|m| &m.name == name)
                .ok_or_else(|| EngineError::node(id, format!("no maintenance group {name:?}")))?;
            mgroups[m].members.push(gi as u32);
            group_mg[gi] = m as u32;
        }
        let has_costs = has_costs
            || mgroups
                .iter()
                .any(|m| m.setup_cost > 0.0 && !m.members.is_empty());
        let has_capacity = groups.iter().any(|g| !g.capacity.is_empty());
        let prod = spec.production.clone().unwrap_or_default();
        let (demand, period) = (prod.demand.unwrap_or(0.0), prod.period.unwrap_or(0.0));
        if !(demand.is_finite() && demand >= 0.0 && period.is_finite() && period >= 0.0) {
            return Err(EngineError::at(
                "production",
                "demand and period must be finite numbers >= 0",
            ));
        }
        if (demand > 0.0 || period > 0.0) && !has_capacity {
            return Err(EngineError::new(
                "production needs at least one block with a capacity",
            ));
        }
        let (mut unit_life, mut unit_repair, mut unit_dormancy) = (vec![], vec![], vec![]);
        for g in &groups {
            for j in 0..g.units as usize {
                let m = g.own_units.get(j).copied().unwrap_or(UnitModel {
                    life: g.life,
                    repair: g.repair.unwrap_or(NO_DIST),
                    dormancy: match g.kind {
                        GroupKind::Standby { dormancy, .. } => dormancy,
                        GroupKind::Plain { .. } => 1.0,
                    },
                    capacity: None,
                });
                unit_life.push(m.life);
                unit_repair.push(m.repair);
                unit_dormancy.push(m.dormancy);
            }
        }
        let c = Compiled {
            groups,
            unit_group: b.unit_group,
            dists: b.dists,
            threshold,
            members,
            succ_start,
            succ,
            order,
            output: map[raw_output as usize],
            tested,
            ccfs: b.ccfs,
            group_ccf,
            calendar,
            system_downtime_rate,
            discount,
            has_costs,
            phases,
            has_capacity,
            demand,
            period,
            network_source: b.network.then(|| map[b.terminals.0 as usize]),
            mgroups,
            group_mg,
            unit_life,
            unit_repair,
            unit_dormancy,
        };
        if c.groups.is_empty() {
            return Err(EngineError::new("the diagram has no blocks"));
        }
        if c.slots() > crate::agenda::MAX_SLOTS {
            return Err(EngineError::new(format!(
                "the diagram has more than {} units",
                crate::agenda::MAX_SLOTS
            )));
        }
        if c.has_capacity && c.network_source.is_some() {
            return Err(EngineError::new(
                "capacity is not simulated in network (undirected) diagrams",
            ));
        }
        if c.has_capacity
            && let Some(v) = c.capacity_fan_out()
        {
            let who = c
                .groups
                .iter()
                .find(|g| g.node == v)
                .map_or("a gate".to_string(), |g| format!("{:?}", g.id));
            return Err(EngineError::at(
                "capacity",
                format!(
                    "{who} feeds several nodes downstream of a capacity limit; splitting a \
                 limited flow needs a max-flow, not simulated (give capacities after the split)"
                ),
            ));
        }
        if c.has_capacity && !c.max_flow_is_finite() {
            return Err(EngineError::at(
                "capacity",
                "some input-to-output path has no block with a capacity (unlimited throughput)",
            ));
        }
        if c.evaluate(&vec![false; c.groups.len()]) {
            return Err(EngineError::new(
                "the output is reached with every block failed: some path joins input to output through no block",
            ));
        }
        Ok(c)
    }
}
