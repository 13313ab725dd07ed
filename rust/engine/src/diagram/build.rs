//! Compiling a diagram's nodes into flat groups, units and graph nodes: subsystems
//! inlined, standby units, each node's options checked (errors name the node).
use super::options::{
    block_costs, capacity, node_dormancy, preventive, proof_test, repair_quality, start_state,
};
use super::*;

impl Builder {
    fn node(&mut self, threshold: u32, group: u32) -> u32 {
        self.threshold.push(threshold);
        self.node_group.push(group);
        (self.threshold.len() - 1) as u32
    }

    /// A standby group's non-identical units: each unit's life, repair (every unit one, or
    /// none), dormancy (default the node's) and capacity (every unit one, or none).
    fn standby_units(
        &mut self,
        id: &str,
        n: &NodeSpec,
        units: &[UnitSpec],
    ) -> Result<Vec<UnitModel>, EngineError> {
        let bad = |why: String| EngineError::node_field(id, "units", why);
        if n.kind != "standby" {
            return Err(bad("is for standby groups".into()));
        }
        if n.model.is_some() || n.repair.is_some() || n.spares.is_some() {
            return Err(bad(
                "each unit has its own model and repair: not with the node's model, repair or spares"
                    .into(),
            ));
        }
        let k = n.k.unwrap_or(1).max(1);
        if units.is_empty() || units.len() < k as usize {
            return Err(bad(format!(
                "at least k = {k} units (the running ones), then the spares"
            )));
        }
        let default = node_dormancy(id, n)?;
        let mut out = Vec::with_capacity(units.len());
        for (i, u) in units.iter().enumerate() {
            let life = self.dist(id, &format!("units[{i}].model"), &u.model)?;
            let repair = match &u.repair {
                Some(r) => self.dist(id, &format!("units[{i}].repair"), r)?,
                None => NO_DIST,
            };
            let dormancy = u.dormancy.unwrap_or(default);
            if !(0.0..=1.0).contains(&dormancy) {
                return Err(bad(format!(
                    "units[{i}].dormancy must be in [0, 1] (got {dormancy})"
                )));
            }
            if dormancy > 0.0 && dormancy < 1.0 && k != 1 {
                return Err(bad(format!(
                    "units[{i}]: warm spares (0 < dormancy < 1) need k = 1"
                )));
            }
            if let Some(c) = u.capacity
                && !(c.is_finite() && c > 0.0)
            {
                return Err(bad(format!(
                    "units[{i}].capacity must be a finite number > 0"
                )));
            }
            out.push(UnitModel {
                life,
                repair,
                dormancy,
                capacity: u.capacity,
            });
        }
        if out.iter().any(|u| u.repair == NO_DIST) && out.iter().any(|u| u.repair != NO_DIST) {
            return Err(bad("give every unit a repair model, or none".into()));
        }
        let caps = out.iter().filter(|u| u.capacity.is_some()).count();
        if caps > 0 && (caps < out.len() || n.capacity.is_some()) {
            return Err(bad(
                "give every unit a capacity, or none (then the node's capacity is each unit's)"
                    .into(),
            ));
        }
        Ok(out)
    }

    /// A standby group's switch: `p_fail` in [0, 1], `switchover` finite and >= 0, its own
    /// life a distribution; refused on other blocks and with switch_back (a spare coming back
    /// by repair takes no switch, and the shelf swap would need one).
    fn switch(&mut self, id: &str, n: &NodeSpec, s: &SwitchSpec) -> Result<Switch, EngineError> {
        if n.kind != "standby" {
            return Err(EngineError::node_field(
                id,
                "switch",
                "is for standby groups",
            ));
        }
        if n.switch_back.unwrap_or(false) {
            return Err(EngineError::node_field(
                id,
                "switch",
                "not with switch_back (a unit back from repair takes over without the switch)",
            ));
        }
        let p_fail = s.p_fail.unwrap_or(0.0);
        if !(0.0..=1.0).contains(&p_fail) {
            return Err(EngineError::node_field(
                id,
                "switch.p_fail",
                format!("must be in [0, 1] (got {p_fail})"),
            ));
        }
        let switchover = s.switchover.unwrap_or(0.0);
        if !(switchover.is_finite() && switchover >= 0.0) {
            return Err(EngineError::node_field(
                id,
                "switch.switchover",
                format!("must be a finite number >= 0 (got {switchover})"),
            ));
        }
        let life = match &s.life {
            Some(l) => self.dist(id, "switch.life", l)?,
            None => NO_DIST,
        };
        Ok(Switch {
            p_fail,
            life,
            switchover,
        })
    }

    fn dist(&mut self, id: &str, what: &str, spec: &DistSpec) -> Result<u32, EngineError> {
        let d = Dist::from_spec(spec).map_err(|e| EngineError::node_field(id, what, e))?;
        self.dists.push(d);
        Ok((self.dists.len() - 1) as u32)
    }

    /// Adds a diagram's nodes; returns (entry, exit) graph nodes of its input and output.
    pub(super) fn diagram(
        &mut self,
        spec: &DiagramSpec,
        prefix: &str,
        top: bool,
        depth: u32,
    ) -> Result<(u32, u32), EngineError> {
        if depth > 16 {
            return Err(EngineError::at(
                format!("subsystem {prefix:?}"),
                "nested more than 16 deep",
            ));
        }
        let name = |id: &str| {
            if prefix.is_empty() {
                id.to_string()
            } else {
                format!("{prefix}/{id}")
            }
        };
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, n) in spec.nodes.iter().enumerate() {
            if index.insert(n.id.as_str(), i).is_some() {
                return Err(EngineError::node(&name(&n.id), "id is used twice"));
            }
        }
        let (mut ins, mut outs) = (vec![], vec![]);
        let mut indeg = vec![0u32; spec.nodes.len()];
        let mut adj: Vec<Vec<usize>> = vec![vec![]; spec.nodes.len()];
        for e in &spec.edges {
            let s = *index.get(e.source.as_str()).ok_or_else(|| {
                EngineError::at(
                    format!("edge {} -> {}", e.source, e.target),
                    format!("unknown source node {:?}", name(&e.source)),
                )
            })?;
            let t = *index.get(e.target.as_str()).ok_or_else(|| {
                EngineError::at(
                    format!("edge {} -> {}", e.source, e.target),
                    format!("unknown target node {:?}", name(&e.target)),
                )
            })?;
            if s == t {
                return Err(EngineError::node(
                    &name(&e.source),
                    "edge from a node to itself (a cycle)",
                ));
            }
            if adj[s].contains(&t) {
                return Err(EngineError::node(
                    &name(&e.source),
                    format!("edge to {:?} given twice", e.target),
                ));
            }
            adj[s].push(t);
            indeg[t] += 1;
        }
        for (i, n) in spec.nodes.iter().enumerate() {
            match n.kind.as_str() {
                "input" => ins.push(i),
                "output" => outs.push(i),
                _ => {}
            }
        }
        let where_ = if prefix.is_empty() {
            "the diagram".to_string()
        } else {
            format!("subsystem {prefix:?}")
        };
        if ins.len() != 1 || outs.len() != 1 {
            return Err(EngineError::new(format!(
                "{where_} needs exactly one input and one output node (has {} and {})",
                ins.len(),
                outs.len()
            )));
        }
        let (input, output) = (ins[0], outs[0]);
        // A network is undirected: edge directions, cycles and dead ends mean nothing.
        if !self.network {
            if indeg[input] > 0 {
                return Err(EngineError::node(
                    &name(&spec.nodes[input].id),
                    "the input node cannot have incoming edges",
                ));
            }
            if !adj[output].is_empty() {
                return Err(EngineError::node(
                    &name(&spec.nodes[output].id),
                    "the output node cannot have outgoing edges",
                ));
            }
            // Kahn's algorithm: what is left unsorted lies on a cycle.
            let mut deg = indeg.clone();
            let mut order: Vec<usize> = (0..spec.nodes.len()).filter(|&i| deg[i] == 0).collect();
            let mut head = 0;
            while head < order.len() {
                let v = order[head];
                head += 1;
                for &w in &adj[v] {
                    deg[w] -= 1;
                    if deg[w] == 0 {
                        order.push(w);
                    }
                }
            }
            if order.len() < spec.nodes.len() {
                let on_cycle = (0..spec.nodes.len())
                    .find(|&i| deg[i] > 0)
                    .expect("a node left");
                return Err(EngineError::node(
                    &name(&spec.nodes[on_cycle].id),
                    "lies on a cycle; edges must form a DAG",
                ));
            }
            // Every node must lie on some input -> output path.
            let mut from_in = vec![false; spec.nodes.len()];
            from_in[input] = true;
            for &v in &order {
                if from_in[v] {
                    for &w in &adj[v] {
                        from_in[w] = true;
                    }
                }
            }
            let mut to_out = vec![false; spec.nodes.len()];
            to_out[output] = true;
            for &v in order.iter().rev() {
                if adj[v].iter().any(|&w| to_out[w]) {
                    to_out[v] = true;
                }
            }
            if !from_in[output] {
                return Err(EngineError::node(
                    &name(&spec.nodes[output].id),
                    "is not reachable from the input",
                ));
            }
            if let Some(i) = (0..spec.nodes.len()).find(|&i| !(from_in[i] && to_out[i])) {
                let why = if from_in[i] {
                    "does not lead to the output"
                } else {
                    "is not reachable from the input"
                };
                return Err(EngineError::node(&name(&spec.nodes[i].id), why));
            }
        }
        // Nodes: (entry, exit) in the flat graph, blocks in the order the diagram lists them.
        let mut ends = vec![(0u32, 0u32); spec.nodes.len()];
        for i in 0..spec.nodes.len() {
            let n = &spec.nodes[i];
            let id = name(&n.id);
            if self.network && matches!(n.kind.as_str(), "knode" | "subsystem") {
                return Err(EngineError::node(
                    &id,
                    format!(
                        "a {} has no meaning in a network (undirected) diagram",
                        n.kind
                    ),
                ));
            }
            let one = |v: Option<u32>, what: &str| -> Result<u32, EngineError> {
                match v {
                    None => Ok(1),
                    Some(0) => Err(EngineError::node(&id, format!("{what} must be at least 1"))),
                    Some(x) => Ok(x),
                }
            };
            ends[i] = match n.kind.as_str() {
                "input" => {
                    let v = self.node(if top { 0 } else { 1 }, NO_GROUP);
                    (v, v)
                }
                "output" => {
                    let v = self.node(1, NO_GROUP);
                    (v, v)
                }
                "knode" => {
                    let need = n.n.ok_or_else(|| {
                        EngineError::node(
                            &id,
                            "knode needs n, the number of branches that must work",
                        )
                    })?;
                    if need == 0 {
                        return Err(EngineError::node(&id, "knode n must be at least 1"));
                    }
                    if need > indeg[i] {
                        return Err(EngineError::node(
                            &id,
                            format!(
                                "knode needs {need} working branches but only {} feed it",
                                indeg[i]
                            ),
                        ));
                    }
                    if let Some(k) = n.k
                        && k != indeg[i]
                    {
                        return Err(EngineError::node(
                            &id,
                            format!("knode k = {k} but {} branches feed it", indeg[i]),
                        ));
                    }
                    let v = self.node(need, NO_GROUP);
                    if top {
                        self.knodes.push((id.clone(), v, indeg[i]));
                    }
                    (v, v)
                }
                "component" | "series" | "parallel" | "standby" => {
                    let own_units = match &n.units {
                        Some(us) => self.standby_units(&id, n, us)?,
                        None => vec![],
                    };
                    let switch_back = n.switch_back.unwrap_or(false);
                    if switch_back && own_units.is_empty() {
                        return Err(EngineError::node(
                            &id,
                            "switch_back is for standby groups of non-identical units (units)",
                        ));
                    }
                    let (life, repair) = match own_units.first() {
                        // The group's models are its first unit's (what-if and importance
                        // read them; the simulator reads each unit's own).
                        Some(u0) => (u0.life, (u0.repair != NO_DIST).then_some(u0.repair)),
                        None => {
                            let model = n.model.as_ref().ok_or_else(|| {
                                EngineError::node(&id, "a life model is required")
                            })?;
                            let life = self.dist(&id, "model", model)?;
                            let repair = match &n.repair {
                                Some(r) => Some(self.dist(&id, "repair", r)?),
                                None => None,
                            };
                            (life, repair)
                        }
                    };
                    let (units, kind) = match n.kind.as_str() {
                        "component" => (1, GroupKind::Plain { need: 1 }),
                        "series" => {
                            let u = one(n.n, "n")?;
                            (u, GroupKind::Plain { need: u })
                        }
                        "parallel" => (one(n.n, "n")?, GroupKind::Plain { need: 1 }),
                        _ => {
                            let k = one(n.k, "k")?;
                            if let Some(u0) = own_units.first() {
                                let kind = GroupKind::Standby {
                                    k,
                                    dormancy: u0.dormancy,
                                };
                                (own_units.len() as u32, kind)
                            } else {
                                let spares = n.spares.unwrap_or(0);
                                let dormancy = node_dormancy(&id, n)?;
                                if dormancy > 0.0 && dormancy < 1.0 && k != 1 {
                                    return Err(EngineError::node(
                                        &id,
                                        "warm spares (0 < dormancy < 1) need k = 1",
                                    ));
                                }
                                (k + spares, GroupKind::Standby { k, dormancy })
                            }
                        }
                    };
                    let prio = n.crew_priority.unwrap_or(0.0);
                    if !prio.is_finite() {
                        return Err(EngineError::node(
                            &id,
                            "crew_priority must be a finite number",
                        ));
                    }
                    if n.maintenance_group.is_some()
                        && (n.kind != "component" || n.inspection.is_some())
                    {
                        return Err(EngineError::node(
                            &id,
                            "maintenance groups are for component blocks without proof tests",
                        ));
                    }
                    self.group_mg_names.push((n.maintenance_group.clone(), top));
                    let g = self.groups.len() as u32;
                    let v = self.node(1, g);
                    let test = match &n.inspection {
                        Some(t) => Some(proof_test(&id, n, t)?),
                        None => None,
                    };
                    let pm = match &n.preventive {
                        Some(p) => Some(preventive(&id, n, p)?),
                        None => None,
                    };
                    let mut costs = match &n.costs {
                        Some(k) => Some(block_costs(&id, k)?),
                        None => None,
                    };
                    if let Some(tc) = n.inspection.as_ref().and_then(|t| t.cost.as_ref()) {
                        costs.get_or_insert_with(GroupCosts::default).test =
                            tc.compile(&id, "inspection.cost")?;
                    }
                    let start = match &n.state {
                        Some(st) => start_state(&id, n, st)?,
                        None => None,
                    };
                    let own = n.repair_one_at_a_time.unwrap_or(false);
                    if own && n.kind != "standby" {
                        return Err(EngineError::node(
                            &id,
                            "repair_one_at_a_time is for standby groups",
                        ));
                    }
                    if own && n.costs.is_some() {
                        return Err(EngineError::node(
                            &id,
                            "no costs on a group with its own repairer (repair_one_at_a_time)",
                        ));
                    }
                    let cap_levels = match &n.capacity {
                        Some(cs) => capacity(&id, cs)?,
                        // Units with their own capacities: the largest bounds the flow.
                        None => own_units
                            .iter()
                            .filter_map(|u| u.capacity)
                            .reduce(f64::max)
                            .map_or(vec![], |m| vec![(m, 1.0)]),
                    };
                    let rq = match &n.repair_quality {
                        Some(r) => repair_quality(&id, n, r)?,
                        None => None,
                    };
                    let whole = life;
                    let (mut life, mut uncovered) = (life, None);
                    if let Some(t) = test
                        && t.coverage < 1.0
                    {
                        let base = self.dists[life as usize].clone();
                        self.dists
                            .push(hazard_share(base.clone(), 1.0 - t.coverage));
                        uncovered = Some((self.dists.len() - 1) as u32);
                        self.dists.push(hazard_share(base, t.coverage));
                        life = (self.dists.len() - 1) as u32;
                    }
                    let switch = match &n.switch {
                        Some(sw) => Some(self.switch(&id, n, sw)?),
                        None => None,
                    };
                    self.groups.push(Group {
                        id,
                        node: v,
                        first_unit: self.unit_group.len() as u32,
                        units,
                        kind,
                        life,
                        whole,
                        repair,
                        instant_repair: n.instant_repair.unwrap_or(false),
                        crew_priority: prio,
                        test,
                        uncovered,
                        pm,
                        costs,
                        rq,
                        capacity: cap_levels,
                        own_repairer: own,
                        start,
                        own_units,
                        switch_back,
                        switch,
                    });
                    self.unit_group
                        .extend(std::iter::repeat_n(g, units as usize));
                    (v, v)
                }
                "subsystem" => {
                    let inner = n.diagram.as_ref().ok_or_else(|| {
                        EngineError::node(
                            &id,
                            "subsystem needs its embedded diagram (key `diagram`)",
                        )
                    })?;
                    self.diagram(inner, &id, false, depth + 1)?
                }
                other => {
                    return Err(EngineError::node(
                        &id,
                        format!("unknown node type {other:?}"),
                    ));
                }
            };
        }
        for (s, targets) in adj.iter().enumerate() {
            for &t in targets {
                self.edges.push((ends[s].1, ends[t].0));
            }
        }
        if top && self.network {
            let term = |want: &Option<String>, default: usize| -> Result<u32, EngineError> {
                match want {
                    None => Ok(ends[default].0),
                    Some(t) => index
                        .get(t.as_str())
                        .map(|&j| ends[j].0)
                        .ok_or_else(|| EngineError::at("network", format!("no node {t:?}"))),
                }
            };
            let (src, dst) = match &spec.network {
                Some(NetworkSpec::Terminals { source, target }) => (source.clone(), target.clone()),
                _ => (None, None),
            };
            self.terminals = (term(&src, input)?, term(&dst, output)?);
            if self.terminals.0 == self.terminals.1 {
                return Err(EngineError::at("network", "source and target must differ"));
            }
        }
        for (i, cc) in spec.ccf.iter().enumerate() {
            let cid = name(&cc.id.clone().unwrap_or_else(|| format!("ccf-{}", i + 1)));
            let mut members = vec![];
            for m in &cc.members {
                let j = *index.get(m.as_str()).ok_or_else(|| {
                    EngineError::at(
                        format!("common-cause group {cid:?}"),
                        format!("unknown block {m:?}"),
                    )
                })?;
                if spec.nodes[j].kind != "component" {
                    return Err(EngineError::at(
                        format!("common-cause group {cid:?}"),
                        format!("member {m:?} must be a component block"),
                    ));
                }
                let g = self.node_group[ends[j].0 as usize];
                if members.contains(&g) {
                    return Err(EngineError::at(
                        format!("common-cause group {cid:?}"),
                        format!("member {m:?} is listed twice"),
                    ));
                }
                members.push(g);
            }
            let first = index[cc.members[0].as_str()];
            let same_model = cc
                .members
                .iter()
                .all(|m| spec.nodes[index[m.as_str()]].model == spec.nodes[first].model);
            let ccf = self.ccf(&cid, cc, members, same_model)?;
            self.ccfs.push(ccf);
        }
        Ok((ends[input].0, ends[output].1))
    }
}
