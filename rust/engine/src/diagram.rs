//! Reliability block diagrams: the spec's node/edge form and its compiled, flat form.
//!
//! Semantics: the signal reaches a node when the node's block works (non-blocks always
//! "work") and at least `threshold` of its predecessors pass the signal on: 1 for an
//! ordinary node, `n` for a k-of-n gate. The system works when the signal reaches the
//! output. A block with several outgoing edges is one shared block (a bridge's middle).
//! Subsystems are inlined: their input takes the outer predecessors, their output feeds
//! the outer successors, and their blocks are named `outer/inner`.
use crate::dist::{Dist, DistSpec, Lifetime, hazard_share};
use crate::error::EngineError;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A node as the service stores it (only the fields the engine simulates).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct NodeSpec {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub model: Option<DistSpec>,
    #[serde(default)]
    pub repair: Option<DistSpec>,
    #[serde(default)]
    pub n: Option<u32>,
    #[serde(default)]
    pub k: Option<u32>,
    #[serde(default)]
    pub spares: Option<u32>,
    #[serde(default)]
    pub cold: Option<bool>,
    #[serde(default)]
    pub dormancy: Option<f64>,
    #[serde(default)]
    pub instant_repair: Option<bool>,
    #[serde(default)]
    pub crew_priority: Option<f64>,
    /// `subsystem`: the embedded diagram, inline.
    #[serde(default)]
    pub diagram: Option<DiagramSpec>,
    /// Repairable component: failures stay hidden until a proof test finds them.
    #[serde(default)]
    pub inspection: Option<ProofTestSpec>,
    /// Repairable component: planned replacement.
    #[serde(default)]
    pub preventive: Option<PreventiveSpec>,
    #[serde(default)]
    pub costs: Option<BlockCostsSpec>,
    #[serde(default)]
    pub repair_quality: Option<RepairQualitySpec>,
    /// Throughput while working: a number, or levels drawn once per replication.
    #[serde(default)]
    pub capacity: Option<CapacitySpec>,
    /// Repairable standby group: its own single repairer.
    #[serde(default)]
    pub repair_one_at_a_time: Option<bool>,
    /// Where the block is at time 0 ("from now").
    #[serde(default)]
    pub state: Option<BlockStateSpec>,
    /// Name of its maintenance group (top diagram).
    #[serde(default)]
    pub maintenance_group: Option<String>,
    /// `standby` with non-identical units, in order of preference (instead of `model`,
    /// `repair` and `spares`): the first `k` available run.
    #[serde(default)]
    pub units: Option<Vec<UnitSpec>>,
    /// With `units`: a repaired unit preferred to a running one takes over from it (the
    /// less preferred goes back on the shelf), e.g. the large pump back in duty.
    #[serde(default)]
    pub switch_back: Option<bool>,
}

/// One unit of a standby group of non-identical units: its own life and repair, idle
/// ageing rate (default the node's `dormancy`/`cold`) and throughput while running.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct UnitSpec {
    pub model: DistSpec,
    #[serde(default)]
    pub repair: Option<DistSpec>,
    #[serde(default)]
    pub dormancy: Option<f64>,
    #[serde(default)]
    pub capacity: Option<f64>,
}

/// A compiled unit of a non-identical standby group (dists as indexes; repair `NO_DIST`
/// when none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitModel {
    pub life: u32,
    pub repair: u32,
    pub dormancy: f64,
    pub capacity: Option<f64>,
}

/// A unit with no repair model (non-repairable runs, instant repair).
pub const NO_DIST: u32 = u32::MAX;

/// A maintenance group: `setup_cost` per group stop; with `system_down`, every system
/// outage is a stop too.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct MaintenanceGroupSpec {
    #[serde(default)]
    pub setup_cost: Option<f64>,
    #[serde(default)]
    pub system_down: Option<bool>,
}

/// A compiled maintenance group: its member groups.
#[derive(Debug, Clone)]
pub struct MGroup {
    pub name: String,
    pub setup_cost: f64,
    pub system_down: bool,
    pub members: Vec<u32>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct BlockStateSpec {
    #[serde(default)]
    pub failed: Option<bool>,
    #[serde(default)]
    pub down: Option<bool>,
    #[serde(default)]
    pub since: Option<f64>,
    #[serde(default)]
    pub age: Option<f64>,
}

/// A block's units at time 0: failed for good (non-repairable), in repair for `since`
/// already, or running at an age.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Start {
    Failed,
    Down { since: f64 },
    Aged { age: f64 },
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum CapacitySpec {
    Fixed(f64),
    Levels(Vec<CapacityLevel>),
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
pub struct CapacityLevel {
    pub value: f64,
    pub probability: f64,
}

/// Production: throughput is compared with `demand` and summed over [0, `period`]
/// (0 = the whole horizon).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct ProductionSpec {
    #[serde(default)]
    pub demand: Option<f64>,
    #[serde(default)]
    pub period: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct RepairQualitySpec {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub q: Option<f64>,
    #[serde(default)]
    pub replace_after: Option<u32>,
}

/// Compiled imperfect repair: Kijima I (v += q x) or II (v = q (v + x)) on the virtual
/// age v, x the running time since the last repair; as new at the `replace_after`-th
/// failure since renewal (0 = never).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepairQuality {
    pub kijima2: bool,
    pub q: f64,
    pub replace_after: u32,
}

/// A cost: a number, or a range {min, max} drawn uniformly each time it is charged.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(untagged)]
pub enum CostSpec {
    Fixed(f64),
    Range { min: f64, max: f64 },
}

impl CostSpec {
    fn compile(&self, id: &str, what: &str) -> Result<(f64, f64), EngineError> {
        let (lo, hi) = match *self {
            CostSpec::Fixed(x) => (x, x),
            CostSpec::Range { min, max } => (min, max),
        };
        if !(lo.is_finite() && hi.is_finite() && lo >= 0.0 && hi >= lo) {
            return Err(EngineError::node(
                id,
                format!("{what}: costs must be finite, >= 0, min <= max"),
            ));
        }
        Ok((lo, hi))
    }
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct PreventiveSpec {
    #[serde(default)]
    pub policy: Option<String>,
    pub interval: f64,
    #[serde(default)]
    pub duration: Option<f64>,
    #[serde(default)]
    pub cost: Option<CostSpec>,
    #[serde(default)]
    pub opportunity: Option<f64>,
    #[serde(default)]
    pub threshold: Option<f64>,
    #[serde(default)]
    pub inspection_cost: Option<CostSpec>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct BlockCostsSpec {
    #[serde(default)]
    pub repair: Option<CostSpec>,
    #[serde(default)]
    pub replace: Option<CostSpec>,
    #[serde(default)]
    pub downtime: Option<f64>,
    #[serde(default)]
    pub acquisition: Option<f64>,
}

/// Diagram-level costs: `downtime_rate` per unit time the system is down; `discount`
/// a continuous discount rate per diagram time unit (0 = none).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct DiagramCostsSpec {
    #[serde(default)]
    pub downtime_rate: Option<f64>,
    #[serde(default)]
    pub discount: Option<f64>,
}

/// Proof tests of a block (times in the diagram unit).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct ProofTestSpec {
    pub interval: f64,
    #[serde(default)]
    pub cost: Option<CostSpec>,
    #[serde(default)]
    pub duration: Option<f64>,
    #[serde(default)]
    pub offset: Option<f64>,
    #[serde(default)]
    pub coverage: Option<f64>,
    #[serde(default)]
    pub full_test: Option<f64>,
}

/// A common-cause group: `beta` of each member's failures (rate basis: of its hazard;
/// probability basis: of its failures) are shared; `mgl` [gamma] (3 members) or
/// [gamma, delta] (4 members) splits shared events by how many members they take.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct CcfSpec {
    #[serde(default)]
    pub id: Option<String>,
    pub members: Vec<String>,
    pub beta: f64,
    #[serde(default)]
    pub basis: Option<String>,
    #[serde(default)]
    pub mgl: Option<Vec<f64>>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct EdgeSpec {
    pub source: String,
    pub target: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct DiagramSpec {
    pub nodes: Vec<NodeSpec>,
    pub edges: Vec<EdgeSpec>,
    #[serde(default)]
    pub ccf: Vec<CcfSpec>,
    #[serde(default)]
    pub costs: Option<DiagramCostsSpec>,
    #[serde(default)]
    pub phases: Vec<PhaseSpec>,
    #[serde(default)]
    pub production: Option<ProductionSpec>,
    /// true, or {source, target}: read the diagram as an undirected network.
    #[serde(default)]
    pub network: Option<NetworkSpec>,
    #[serde(default)]
    pub maintenance_groups: BTreeMap<String, MaintenanceGroupSpec>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum NetworkSpec {
    On(bool),
    Terminals {
        #[serde(default)]
        source: Option<String>,
        #[serde(default)]
        target: Option<String>,
    },
}

/// A mission phase: blocks not needed (they still age and fail; a subsystem id stands for
/// its blocks) and knode votes (working inputs needed) in force for `duration`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct PhaseSpec {
    pub name: String,
    pub duration: f64,
    #[serde(default)]
    pub not_needed: Vec<String>,
    #[serde(default)]
    pub votes: BTreeMap<String, u32>,
}

/// A compiled phase: ends at `end` (from time 0); groups not needed; knode thresholds.
#[derive(Debug, Clone)]
pub struct Phase {
    pub name: String,
    pub end: f64,
    pub not_needed: Vec<bool>,
    pub threshold: Vec<u32>,
}

/// How a block's units make the block work.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GroupKind {
    /// component, series, parallel: works while at least `need` units are up.
    Plain { need: u32 },
    /// standby: `k` units must run; idle units age at `dormancy` (0 cold, 1 hot).
    Standby { k: u32, dormancy: f64 },
}

/// A block of the diagram (one node holding one or more identical units).
#[derive(Debug, Clone)]
pub struct Group {
    pub id: String,
    pub node: u32,
    pub first_unit: u32,
    pub units: u32,
    pub kind: GroupKind,
    pub life: u32,
    /// The life as given (before common-cause or coverage shares).
    pub whole: u32,
    pub repair: Option<u32>,
    pub instant_repair: bool,
    pub crew_priority: f64,
    pub test: Option<ProofTest>,
    /// Proof-tested with coverage below 1: the life of the failure mode only a full test
    /// finds (S^(1-c)); `life` is then the mode partial tests find (S^c).
    pub uncovered: Option<u32>,
    pub pm: Option<Preventive>,
    pub costs: Option<GroupCosts>,
    pub rq: Option<RepairQuality>,
    /// Capacity levels per unit as (value, cumulative probability); empty = unlimited.
    pub capacity: Vec<(f64, f64)>,
    /// Standby group repaired by its own single repairer, one unit at a time.
    pub own_repairer: bool,
    pub start: Option<Start>,
    /// Standby group of non-identical units: each unit's models (empty: every unit is
    /// the group's `life`, `repair` and dormancy).
    pub own_units: Vec<UnitModel>,
    /// Non-identical units: a repaired unit takes over from a less preferred running one.
    pub switch_back: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    Age,
    Block,
    Condition,
}

/// Compiled planned replacement; costs as (min, max), equal for a fixed cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preventive {
    pub policy: Policy,
    pub interval: f64,
    pub duration: f64,
    pub cost: (f64, f64),
    pub threshold: f64,
    pub inspection_cost: (f64, f64),
    /// Age policy in a maintenance group: renewed at a group stop once this old.
    pub opportunity: Option<f64>,
}

/// A block's costs: per failure (repair, replacement), per unit time down, once.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GroupCosts {
    pub repair: (f64, f64),
    pub replace: (f64, f64),
    pub downtime: f64,
    pub acquisition: f64,
    /// Per proof test (from the inspection's cost).
    pub test: (f64, f64),
}

/// Compiled proof tests: at `offset + j * interval` (j >= 0; none at time 0), full when
/// j is a multiple of `full_every`; partial tests find a failure with chance `coverage`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProofTest {
    pub interval: f64,
    pub duration: f64,
    pub offset: f64,
    pub coverage: f64,
    pub full_every: u32,
}

/// A compiled common-cause group. A failure event takes `k` members with probability
/// `take[k]` (k = 1 is an independent failure, used by the probability basis); on the
/// rate basis shared events arrive on their own at `shock_rate`, taking k >= 2 members
/// with probability `shock_take[k]`; members sharing one life model have shared events
/// renewing with that life's hazard times the shared share (`shock_life`), exact for
/// any life when not repaired.
#[derive(Debug, Clone)]
pub struct Ccf {
    pub id: String,
    pub members: Vec<u32>,
    pub rate_basis: bool,
    pub shock_rate: f64,
    pub shock_life: Option<u32>,
    pub shock_take: Vec<f64>,
    pub take: Vec<f64>,
}

/// A diagram compiled into flat arrays for the simulator.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub groups: Vec<Group>,
    /// Group of each unit.
    pub unit_group: Vec<u32>,
    pub dists: Vec<Dist>,
    /// Per graph node: predecessors needed, blocks it holds (a node works while none of
    /// them is down), successors (CSR).
    pub threshold: Vec<u32>,
    pub members: Vec<u32>,
    pub succ_start: Vec<u32>,
    pub succ: Vec<u32>,
    /// Graph nodes in topological order (input first).
    pub order: Vec<u32>,
    pub output: u32,
    /// Scheduled-event slots after the units: one per proof-tested group (its group),
    /// then one per rate-basis common-cause group.
    pub tested: Vec<u32>,
    pub ccfs: Vec<Ccf>,
    /// Per group: its common-cause group (NO_GROUP when none).
    pub group_ccf: Vec<u32>,
    /// Groups replaced on a calendar (block policy) or inspected on one (condition): one
    /// slot each after the uncovered-mode slots.
    pub calendar: Vec<u32>,
    pub system_downtime_rate: f64,
    pub discount: f64,
    /// Whether any cost is set (costs are then accumulated).
    pub has_costs: bool,
    /// Mission phases (empty: one phase, the diagram as drawn); one slot after the
    /// calendar slots switches them.
    pub phases: Vec<Phase>,
    /// Whether any block has a capacity (throughput is then followed); demand; the
    /// production period (0 = horizon).
    pub has_capacity: bool,
    pub demand: f64,
    pub period: f64,
    /// Network mode: the source terminal (the target is `output`); successors are then
    /// undirected neighbours and the system works while a path of working nodes joins them.
    pub network_source: Option<u32>,
    pub mgroups: Vec<MGroup>,
    /// Per group: its maintenance group (NO_GROUP when none).
    pub group_mg: Vec<u32>,
    /// Per unit: its life and repair (`NO_DIST`) dists and idle ageing rate (the group's,
    /// or its own in a standby group of non-identical units).
    pub unit_life: Vec<u32>,
    pub unit_repair: Vec<u32>,
    pub unit_dormancy: Vec<f64>,
}

pub const NO_GROUP: u32 = u32::MAX;

struct Builder {
    groups: Vec<Group>,
    unit_group: Vec<u32>,
    dists: Vec<Dist>,
    threshold: Vec<u32>,
    node_group: Vec<u32>,
    edges: Vec<(u32, u32)>,
    ccfs: Vec<Ccf>,
    /// Top-level knodes: (id, raw graph node, inputs feeding it).
    knodes: Vec<(String, u32, u32)>,
    /// Network mode: the top diagram read as an undirected network; its terminals.
    network: bool,
    terminals: (u32, u32),
    /// Per group: its maintenance group's name and whether it is in the top diagram.
    group_mg_names: Vec<(Option<String>, bool)>,
}

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
        let bad = |why: String| EngineError::node(id, format!("units: {why}"));
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

    fn dist(&mut self, id: &str, what: &str, spec: &DistSpec) -> Result<u32, EngineError> {
        let d = Dist::from_spec(spec).map_err(|e| EngineError::node(id, format!("{what}: {e}")))?;
        self.dists.push(d);
        Ok((self.dists.len() - 1) as u32)
    }

    /// Compile a common-cause group over member groups; on the rate basis each member's
    /// life keeps (1 - beta) of its hazard and shared shocks arrive at beta times the
    /// members' mean failure rate (1 / MTTF): exact for exponential members.
    fn ccf(
        &mut self,
        id: &str,
        cc: &CcfSpec,
        members: Vec<u32>,
        same_model: bool,
    ) -> Result<Ccf, EngineError> {
        let m = members.len();
        let bad = |why: String| EngineError(format!("common-cause group {id:?}: {why}"));
        if m < 2 {
            return Err(bad("needs at least 2 members".into()));
        }
        if !(cc.beta > 0.0 && cc.beta < 1.0) {
            return Err(bad(format!("beta must be in (0, 1) (got {})", cc.beta)));
        }
        let rate_basis = match cc.basis.as_deref() {
            None | Some("rate") => true,
            Some("probability") => false,
            Some(other) => {
                return Err(bad(format!(
                    "basis must be rate or probability (got {other:?})"
                )));
            }
        };
        // rho[k] = P(an event taking this member takes at least k + 1 members | at least k).
        let mut rho = vec![1.0, cc.beta];
        match &cc.mgl {
            None => rho.extend(std::iter::repeat_n(1.0, m.saturating_sub(2))),
            Some(g) => {
                if !(m == 3 || m == 4) || g.len() != m - 2 {
                    return Err(bad(format!(
                        "mgl needs [gamma] for 3 members or [gamma, delta] for 4 (has {m} members, {} values)",
                        g.len()
                    )));
                }
                if g.iter().any(|x| !(0.0..=1.0).contains(x)) {
                    return Err(bad("mgl values must be in [0, 1]".into()));
                }
                rho.extend(g);
            }
        }
        rho.push(0.0);
        // take[k]: P(an event taking a given member takes k members in all), k = 1..m.
        let mut take = vec![0.0; m + 1];
        let mut prod = 1.0;
        for k in 1..=m {
            prod *= rho[k - 1];
            take[k] = prod * (1.0 - rho[k]);
        }
        let mut shock_rate = 0.0;
        let mut shock_life = None;
        let mut shock_take = vec![0.0; m + 1];
        if rate_basis && same_model {
            // The whole life of a member (both modes of a partially covered block).
            let whole = self.dists[self.groups[members[0] as usize].whole as usize].clone();
            // Shared events take (sum over k of take[k] m / k) of a member's hazard.
            let share: f64 = (2..=m).map(|k| take[k] * m as f64 / k as f64).sum();
            self.dists.push(hazard_share(whole, share));
            shock_life = Some((self.dists.len() - 1) as u32);
        }
        if rate_basis {
            let mut rate = 0.0;
            for &g in &members {
                let life = self.groups[g as usize].life as usize;
                // The whole life's mean (both modes of a partially covered block).
                let mean = self.dists[self.groups[g as usize].whole as usize].mean();
                if !(mean.is_finite() && mean > 0.0) {
                    return Err(bad(format!(
                        "member {:?} needs a finite mean life",
                        self.groups[g as usize].id
                    )));
                }
                rate += 1.0 / mean / m as f64;
                let base = self.dists[life].clone();
                self.dists.push(hazard_share(base, 1.0 - cc.beta));
                self.groups[g as usize].life = (self.dists.len() - 1) as u32;
                if let Some(un) = self.groups[g as usize].uncovered {
                    let base = self.dists[un as usize].clone();
                    self.dists.push(hazard_share(base, 1.0 - cc.beta));
                    self.groups[g as usize].uncovered = Some((self.dists.len() - 1) as u32);
                }
            }
            // Events of k members arrive at rate * take[k] * m / k (each is counted by k members).
            let per_k: Vec<f64> = (0..=m)
                .map(|k| {
                    if k >= 2 {
                        rate * take[k] * m as f64 / k as f64
                    } else {
                        0.0
                    }
                })
                .collect();
            shock_rate = per_k.iter().sum();
            for k in 2..=m {
                shock_take[k] = per_k[k] / shock_rate;
            }
        }
        Ok(Ccf {
            id: id.to_string(),
            members,
            rate_basis,
            shock_rate,
            shock_life,
            shock_take,
            take,
        })
    }

    /// Adds a diagram's nodes; returns (entry, exit) graph nodes of its input and output.
    fn diagram(
        &mut self,
        spec: &DiagramSpec,
        prefix: &str,
        top: bool,
        depth: u32,
    ) -> Result<(u32, u32), EngineError> {
        if depth > 16 {
            return Err(EngineError(format!(
                "subsystem {prefix:?}: nested more than 16 deep"
            )));
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
                EngineError(format!(
                    "edge {} -> {}: unknown source node {:?}",
                    e.source,
                    e.target,
                    name(&e.source)
                ))
            })?;
            let t = *index.get(e.target.as_str()).ok_or_else(|| {
                EngineError(format!(
                    "edge {} -> {}: unknown target node {:?}",
                    e.source,
                    e.target,
                    name(&e.target)
                ))
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
            return Err(EngineError(format!(
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
                        .ok_or_else(|| EngineError(format!("network: no node {t:?}"))),
                }
            };
            let (src, dst) = match &spec.network {
                Some(NetworkSpec::Terminals { source, target }) => (source.clone(), target.clone()),
                _ => (None, None),
            };
            self.terminals = (term(&src, input)?, term(&dst, output)?);
            if self.terminals.0 == self.terminals.1 {
                return Err(EngineError("network: source and target must differ".into()));
            }
        }
        for (i, cc) in spec.ccf.iter().enumerate() {
            let cid = name(&cc.id.clone().unwrap_or_else(|| format!("ccf-{}", i + 1)));
            let mut members = vec![];
            for m in &cc.members {
                let j = *index.get(m.as_str()).ok_or_else(|| {
                    EngineError(format!("common-cause group {cid:?}: unknown block {m:?}"))
                })?;
                if spec.nodes[j].kind != "component" {
                    return Err(EngineError(format!(
                        "common-cause group {cid:?}: member {m:?} must be a component block"
                    )));
                }
                let g = self.node_group[ends[j].0 as usize];
                if members.contains(&g) {
                    return Err(EngineError(format!(
                        "common-cause group {cid:?}: member {m:?} is listed twice"
                    )));
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

fn preventive(id: &str, n: &NodeSpec, p: &PreventiveSpec) -> Result<Preventive, EngineError> {
    let bad = |why: String| EngineError::node(id, format!("preventive: {why}"));
    if n.kind != "component" {
        return Err(bad("planned replacement is for component blocks".into()));
    }
    if n.inspection.is_some() {
        return Err(bad("not together with inspection".into()));
    }
    let policy = match p.policy.as_deref() {
        None | Some("age") => Policy::Age,
        Some("block") => Policy::Block,
        Some("condition") => Policy::Condition,
        Some(other) => {
            return Err(bad(format!(
                "policy must be age, block or condition (got {other:?})"
            )));
        }
    };
    if !(p.interval.is_finite() && p.interval > 0.0) {
        return Err(bad(format!(
            "interval must be a finite number > 0 (got {})",
            p.interval
        )));
    }
    let duration = p.duration.unwrap_or(0.0);
    if !(duration.is_finite() && duration >= 0.0) {
        return Err(bad(format!("duration must be >= 0 (got {duration})")));
    }
    if policy == Policy::Block && duration >= p.interval {
        return Err(bad(
            "duration must be below the interval for block replacement".into(),
        ));
    }
    let threshold = match (policy, p.threshold) {
        (Policy::Condition, Some(t)) if (0.0..=1.0).contains(&t) => t,
        (Policy::Condition, _) => {
            return Err(bad("threshold in [0, 1] is required for condition".into()));
        }
        (_, Some(_)) => return Err(bad("threshold is for the condition policy".into())),
        (_, None) => 0.0,
    };
    if policy != Policy::Condition && p.inspection_cost.is_some() {
        return Err(bad("inspection_cost is for the condition policy".into()));
    }
    let zero = (0.0, 0.0);
    Ok(Preventive {
        policy,
        interval: p.interval,
        duration,
        cost: p
            .cost
            .map_or(Ok(zero), |c| c.compile(id, "preventive.cost"))?,
        threshold,
        inspection_cost: p
            .inspection_cost
            .map_or(Ok(zero), |c| c.compile(id, "preventive.inspection_cost"))?,
        opportunity: match p.opportunity {
            None => None,
            Some(o)
                if policy == Policy::Age
                    && n.maintenance_group.is_some()
                    && (0.0..=p.interval).contains(&o) =>
            {
                Some(o)
            }
            Some(_) => {
                return Err(bad(
                    "opportunity is for the age policy in a maintenance group, 0 to the interval"
                        .into(),
                ));
            }
        },
    })
}

/// A standby node's idle ageing rate: `dormancy`, else 0 when `cold`, else 1 (hot).
fn node_dormancy(id: &str, n: &NodeSpec) -> Result<f64, EngineError> {
    let dormancy = match (n.dormancy, n.cold) {
        (Some(d), _) => d,
        (None, Some(true)) => 0.0,
        (None, _) => 1.0,
    };
    if !(0.0..=1.0).contains(&dormancy) {
        return Err(EngineError::node(
            id,
            format!("dormancy must be in [0, 1] (got {dormancy})"),
        ));
    }
    Ok(dormancy)
}

fn start_state(id: &str, n: &NodeSpec, st: &BlockStateSpec) -> Result<Option<Start>, EngineError> {
    let bad = |why: &str| EngineError::node(id, format!("state: {why}"));
    if n.kind == "standby" {
        return Err(bad("not simulated for standby groups"));
    }
    if n.preventive.is_some() || n.inspection.is_some() || n.repair_quality.is_some() {
        return Err(bad(
            "not simulated together with preventive, inspection or repair_quality",
        ));
    }
    let (failed, down) = (st.failed.unwrap_or(false), st.down.unwrap_or(false));
    if failed && down {
        return Err(bad("failed or down, not both"));
    }
    if st.since.is_some() && !down {
        return Err(bad("since goes with down"));
    }
    if st.age.is_some() && (failed || down) {
        return Err(bad("age is for a running block"));
    }
    let finite = |x: f64| x.is_finite() && x >= 0.0;
    Ok(if failed {
        Some(Start::Failed)
    } else if down {
        let since = st.since.unwrap_or(0.0);
        if !finite(since) {
            return Err(bad("since must be a finite number >= 0"));
        }
        if n.repair.is_none() {
            return Err(bad("down needs a repair model"));
        }
        Some(Start::Down { since })
    } else {
        match st.age {
            Some(a) if !finite(a) => return Err(bad("age must be a finite number >= 0")),
            Some(a) if a > 0.0 => Some(Start::Aged { age: a }),
            _ => None,
        }
    })
}

fn capacity(id: &str, cs: &CapacitySpec) -> Result<Vec<(f64, f64)>, EngineError> {
    let bad = |why: &str| EngineError::node(id, format!("capacity: {why}"));
    let levels = match cs {
        CapacitySpec::Fixed(x) => vec![CapacityLevel {
            value: *x,
            probability: 1.0,
        }],
        CapacitySpec::Levels(l) => l.clone(),
    };
    if levels.is_empty() {
        return Err(bad("give a number or at least one level"));
    }
    let mut cum = 0.0;
    let mut out = vec![];
    for l in &levels {
        if !(l.value.is_finite() && l.value > 0.0) {
            return Err(bad("values must be finite numbers > 0"));
        }
        if !(l.probability > 0.0 && l.probability <= 1.0) {
            return Err(bad("probabilities must be in (0, 1]"));
        }
        cum += l.probability;
        out.push((l.value, cum));
    }
    if (cum - 1.0).abs() > 1e-9 {
        return Err(bad("level probabilities must add to 1"));
    }
    Ok(out)
}

fn repair_quality(
    id: &str,
    n: &NodeSpec,
    r: &RepairQualitySpec,
) -> Result<Option<RepairQuality>, EngineError> {
    let bad = |why: &str| EngineError::node(id, format!("repair_quality: {why}"));
    if n.kind != "component" {
        return Err(bad("is for component blocks"));
    }
    if n.inspection.is_some() {
        return Err(bad("not simulated together with inspection"));
    }
    if n.preventive
        .as_ref()
        .is_some_and(|p| p.policy.as_deref() == Some("condition"))
    {
        return Err(bad("not on a condition-replaced block"));
    }
    if n.model
        .as_ref()
        .is_some_and(|m| m.distribution_id == "mixture")
    {
        return Err(bad("refused with a mixture life"));
    }
    let kijima2 = match r.model.as_deref() {
        None | Some("perfect") => {
            if r.q.is_some() || r.replace_after.is_some() {
                return Err(bad("q and replace_after are for the kijima models"));
            }
            return Ok(None);
        }
        Some("kijima1") => false,
        Some("kijima2") => true,
        Some(_) => return Err(bad("model must be perfect, kijima1 or kijima2")),
    };
    let q = r.q.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&q) {
        return Err(bad("q must be in [0, 1]"));
    }
    let replace_after = r.replace_after.unwrap_or(0);
    if replace_after > 1000 || (r.replace_after.is_some() && (replace_after == 0 || q == 0.0)) {
        return Err(bad("replace_after is an integer 1..1000, with q > 0"));
    }
    Ok(Some(RepairQuality {
        kijima2,
        q,
        replace_after,
    }))
}

fn block_costs(id: &str, k: &BlockCostsSpec) -> Result<GroupCosts, EngineError> {
    let zero = (0.0, 0.0);
    let rate = |v: Option<f64>, what: &str| -> Result<f64, EngineError> {
        let x = v.unwrap_or(0.0);
        if x.is_finite() && x >= 0.0 {
            Ok(x)
        } else {
            Err(EngineError::node(
                id,
                format!("costs.{what} must be a finite number >= 0"),
            ))
        }
    };
    Ok(GroupCosts {
        repair: k
            .repair
            .map_or(Ok(zero), |c| c.compile(id, "costs.repair"))?,
        replace: k
            .replace
            .map_or(Ok(zero), |c| c.compile(id, "costs.replace"))?,
        downtime: rate(k.downtime, "downtime")?,
        acquisition: rate(k.acquisition, "acquisition")?,
        test: zero,
    })
}

/// Validate and compile a block's proof tests.
fn proof_test(id: &str, n: &NodeSpec, t: &ProofTestSpec) -> Result<ProofTest, EngineError> {
    let bad = |why: String| EngineError::node(id, format!("inspection: {why}"));
    if n.kind != "component" {
        return Err(bad("proof tests are for component blocks".into()));
    }
    if !(t.interval.is_finite() && t.interval > 0.0) {
        return Err(bad(format!(
            "interval must be a finite number > 0 (got {})",
            t.interval
        )));
    }
    let duration = t.duration.unwrap_or(0.0);
    if !(duration.is_finite() && duration >= 0.0 && duration < t.interval) {
        return Err(bad(format!(
            "duration must be >= 0 and below the interval (got {duration})"
        )));
    }
    let offset = t.offset.unwrap_or(0.0);
    if !(offset.is_finite() && offset >= 0.0 && offset < t.interval) {
        return Err(bad(format!(
            "offset must be >= 0 and below the interval (got {offset})"
        )));
    }
    let coverage = t.coverage.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&coverage) {
        return Err(bad(format!("coverage must be in [0, 1] (got {coverage})")));
    }
    let full_every = match t.full_test {
        None if coverage < 1.0 => return Err(bad("coverage below 1 needs full_test".into())),
        None => 1,
        Some(f) => {
            let m = (f / t.interval).round();
            if !(f.is_finite() && f > 0.0 && m >= 1.0 && (f - m * t.interval).abs() <= 1e-9 * f) {
                return Err(bad(format!(
                    "full_test must be a whole multiple of the interval (got {f})"
                )));
            }
            if m > u32::MAX as f64 {
                return Err(bad("full_test is too many intervals".into()));
            }
            m as u32
        }
    };
    Ok(ProofTest {
        interval: t.interval,
        duration,
        offset,
        coverage,
        full_every,
    })
}

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
                    return Err(EngineError(format!(
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
            return Err(EngineError(
                "costs.downtime_rate must be a finite number >= 0".into(),
            ));
        }
        if !(discount.is_finite() && discount >= 0.0) {
            return Err(EngineError(
                "costs.discount must be a finite number >= 0".into(),
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
            let bad = |why: String| EngineError(format!("phase {:?}: {why}", p.name));
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
            return Err(EngineError(
                "maintenance_groups: setup_cost must be a finite number >= 0".into(),
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
            return Err(EngineError(
                "production: demand and period must be finite numbers >= 0".into(),
            ));
        }
        if (demand > 0.0 || period > 0.0) && !has_capacity {
            return Err(EngineError(
                "production needs at least one block with a capacity".into(),
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
            return Err(EngineError("the diagram has no blocks".into()));
        }
        if c.slots() > crate::agenda::MAX_SLOTS {
            return Err(EngineError(format!(
                "the diagram has more than {} units",
                crate::agenda::MAX_SLOTS
            )));
        }
        if c.has_capacity && c.network_source.is_some() {
            return Err(EngineError(
                "capacity is not simulated in network (undirected) diagrams".into(),
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
            return Err(EngineError(format!(
                "capacity: {who} feeds several nodes downstream of a capacity limit; splitting a \
                 limited flow needs a max-flow, not simulated (give capacities after the split)"
            )));
        }
        if c.has_capacity && !c.max_flow_is_finite() {
            return Err(EngineError(
                "capacity: some input-to-output path has no block with a capacity (unlimited throughput)".into(),
            ));
        }
        if c.evaluate(&vec![false; c.groups.len()]) {
            return Err(EngineError(
                "the output is reached with every block failed: some path joins input to output through no block".into(),
            ));
        }
        Ok(c)
    }

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
    fn capacity_fan_out(&self) -> Option<u32> {
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
    fn max_flow_is_finite(&self) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fixtures::{edges, exp, node};

    fn comp(id: &str) -> NodeSpec {
        NodeSpec {
            model: Some(exp(1.0)),
            ..node(id, "component")
        }
    }
    pub(crate) fn bridge() -> DiagramSpec {
        DiagramSpec {
            nodes: vec![
                node("in", "input"),
                comp("A"),
                comp("B"),
                comp("C"),
                comp("D"),
                comp("E"),
                node("out", "output"),
            ],
            edges: edges(&[
                ("in", "A"),
                ("in", "B"),
                ("A", "C"),
                ("B", "D"),
                ("A", "E"),
                ("B", "E"),
                ("E", "C"),
                ("E", "D"),
                ("C", "out"),
                ("D", "out"),
            ]),
            ..Default::default()
        }
    }

    #[test]
    fn bridge_structure_matches_its_minimal_paths() {
        let c = Compiled::new(&bridge()).unwrap();
        let ids = c.block_ids();
        let pos = |s: &str| ids.iter().position(|x| x == s).unwrap();
        for mask in 0u32..32 {
            let mut ok = vec![false; 5];
            let w = |s: &str| mask >> (s.as_bytes()[0] - b'A') & 1 == 1;
            for s in ["A", "B", "C", "D", "E"] {
                ok[pos(s)] = w(s);
            }
            let expect = (w("A") && w("C"))
                || (w("B") && w("D"))
                || (w("A") && w("E") && w("D"))
                || (w("B") && w("E") && w("C"));
            assert_eq!(c.evaluate(&ok), expect, "mask {mask:05b}");
        }
    }

    #[test]
    fn common_cause_groups_split_each_members_rate() {
        // Beta factor on 3 exponential members (rate 1): shocks at beta taking all 3;
        // MGL [gamma]: k = 2 events at 3 * beta (1 - gamma) / 2, k = 3 at beta gamma.
        let mut d = bridge();
        d.ccf = vec![CcfSpec {
            members: vec!["A".into(), "B".into(), "C".into()],
            beta: 0.2,
            ..Default::default()
        }];
        let c = Compiled::new(&d).unwrap();
        let cc = &c.ccfs[0];
        assert!((cc.shock_rate - 0.2).abs() < 1e-12 && (cc.shock_take[3] - 1.0).abs() < 1e-12);
        assert!((cc.take.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        d.ccf[0].mgl = Some(vec![0.4]);
        let c = Compiled::new(&d).unwrap();
        let cc = &c.ccfs[0];
        let (k2, k3) = (3.0 * 0.2 * 0.6 / 2.0, 0.2 * 0.4);
        assert!(
            (cc.shock_rate - (k2 + k3)).abs() < 1e-12,
            "{}",
            cc.shock_rate
        );
        assert!((cc.shock_take[2] - k2 / (k2 + k3)).abs() < 1e-12);
        // Members keep (1 - beta) of their hazard.
        let a = c.block_ids().iter().position(|x| x == "A").unwrap();
        assert!((c.dists[c.groups[a].life as usize].hazard(1.0) - 0.8).abs() < 1e-12);
        d.ccf[0].mgl = Some(vec![0.4, 0.5]);
        assert!(Compiled::new(&d).unwrap_err().0.contains("mgl"));
    }

    #[test]
    fn refusals_name_the_node() {
        let mut d = bridge();
        d.edges.push(EdgeSpec {
            source: "C".into(),
            target: "A".into(),
        });
        let e = Compiled::new(&d).unwrap_err().0;
        assert!(e.contains("cycle"), "{e}");
        let mut d = bridge();
        d.nodes.push(NodeSpec {
            id: "K".into(),
            kind: "knode".into(),
            n: Some(3),
            ..Default::default()
        });
        d.edges.retain(|e| e.target != "out");
        d.edges
            .extend(edges(&[("C", "K"), ("D", "K"), ("K", "out")]));
        let e = Compiled::new(&d).unwrap_err().0;
        assert!(e.contains("\"K\"") && e.contains("only 2"), "{e}");
        let mut d = bridge();
        d.nodes[1].model = None;
        assert!(Compiled::new(&d).unwrap_err().0.contains("\"A\""));
        let mut d = bridge();
        d.edges.push(EdgeSpec {
            source: "in".into(),
            target: "out".into(),
        });
        assert!(Compiled::new(&d).is_err());
    }
}
