//! The diagram as the service stores it: nodes, edges and their options, read from JSON
//! (serde). Checked and compiled by `Compiled::new`.
use super::*;

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
    /// `standby`: the switch that puts a spare in service (imperfect switching).
    #[serde(default)]
    pub switch: Option<SwitchSpec>,
}

/// A standby group's switch: it fails on demand with chance `p_fail`, cannot switch once
/// its own `life` (while waiting) is over, and takes `switchover` time to start a spare.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct SwitchSpec {
    #[serde(default)]
    pub p_fail: Option<f64>,
    #[serde(default)]
    pub life: Option<DistSpec>,
    #[serde(default)]
    pub switchover: Option<f64>,
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

/// A maintenance group: `setup_cost` per group stop; with `system_down`, every system
/// outage is a stop too.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct MaintenanceGroupSpec {
    #[serde(default)]
    pub setup_cost: Option<f64>,
    #[serde(default)]
    pub system_down: Option<bool>,
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

/// A cost: a number, or a range {min, max} drawn uniformly each time it is charged.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(untagged)]
pub enum CostSpec {
    Fixed(f64),
    Range { min: f64, max: f64 },
}

impl CostSpec {
    pub(super) fn compile(&self, id: &str, what: &str) -> Result<(f64, f64), EngineError> {
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
