//! Builders the unit tests share for small diagrams (test builds only).
use crate::diagram::{EdgeSpec, NodeSpec};
use crate::dist::DistSpec;

/// An exponential life or repair with this rate.
pub fn exp(rate: f64) -> DistSpec {
    DistSpec {
        distribution_id: "exponential".into(),
        params: [("failure_rate".to_string(), rate)].into(),
        base_distribution_id: None,
        table: None,
        path: None,
    }
}

/// A node with only an id and a type (input, output, knode...).
pub fn node(id: &str, kind: &str) -> NodeSpec {
    NodeSpec {
        id: id.into(),
        kind: kind.into(),
        ..Default::default()
    }
}

/// Edges from (source, target) pairs.
pub fn edges(pairs: &[(&str, &str)]) -> Vec<EdgeSpec> {
    pairs
        .iter()
        .map(|(s, t)| EdgeSpec {
            source: s.to_string(),
            target: t.to_string(),
        })
        .collect()
}
