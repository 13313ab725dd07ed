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

mod build;
mod ccf;
mod compile;
mod options;
mod spec;
mod structure;
#[cfg(test)]
mod tests;

pub use spec::{
    BlockCostsSpec, BlockStateSpec, CapacityLevel, CapacitySpec, CcfSpec, CostSpec,
    DiagramCostsSpec, DiagramSpec, EdgeSpec, MaintenanceGroupSpec, NetworkSpec, NodeSpec,
    PhaseSpec, PreventiveSpec, ProductionSpec, ProofTestSpec, RepairQualitySpec, SwitchSpec,
    UnitSpec,
};

/// A compiled unit of a non-identical standby group (dists as indexes; repair `NO_DIST`
/// when none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitModel {
    pub life: u32,
    pub repair: u32,
    pub dormancy: f64,
    pub capacity: Option<f64>,
}

/// A compiled standby switch: chance of failing on demand, its own life while waiting
/// (a dist index, `NO_DIST` when it does not fail while waiting), switch-over time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Switch {
    pub p_fail: f64,
    pub life: u32,
    pub switchover: f64,
}

/// A unit with no repair model (non-repairable runs, instant repair).
pub const NO_DIST: u32 = u32::MAX;

/// A compiled maintenance group: its member groups.
#[derive(Debug, Clone)]
pub struct MGroup {
    pub name: String,
    pub setup_cost: f64,
    pub system_down: bool,
    pub members: Vec<u32>,
}

/// A block's units at time 0: failed for good (non-repairable), in repair for `since`
/// already, or running at an age.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Start {
    Failed,
    Down { since: f64 },
    Aged { age: f64 },
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
    /// Standby group with an imperfect switch (None: a perfect, instant switch).
    pub switch: Option<Switch>,
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
