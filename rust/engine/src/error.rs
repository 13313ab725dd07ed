//! The engine's one error type: where the refused input is (`path`) and the rule it broke.
//!
//! The path is structured so a front end can put the refusal under its own field names
//! (the Python library reads `path` and `rule`; it never parses the message), and the
//! message (`Display`) is the path's steps then the rule, each after `": "`, as in
//! `designs[2]: node "pump": life: weibull: parameter beta is required`.
use crate::dist::DistError;
use std::fmt;

/// One step into the engine's input: a named part (a field such as `objective`, or an
/// element named by its id such as `node "pump"`) or a position in a list.
#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    Name(String),
    Index(usize),
}

impl From<&str> for Key {
    fn from(name: &str) -> Self {
        Key::Name(name.to_string())
    }
}

impl From<String> for Key {
    fn from(name: String) -> Self {
        Key::Name(name)
    }
}

impl From<usize> for Key {
    fn from(i: usize) -> Self {
        Key::Index(i)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct EngineError {
    /// Where, from the outside in; empty when the refusal is about the input as a whole or
    /// about the run (a cancelled run, a thread pool that cannot start).
    pub path: Vec<Key>,
    /// What was broken.
    pub rule: String,
}

impl EngineError {
    /// A refusal of the input as a whole (or of the run).
    pub fn new(rule: impl Into<String>) -> Self {
        EngineError {
            path: vec![],
            rule: rule.into(),
        }
    }

    /// A refusal of the field `name`.
    pub fn at(name: impl Into<String>, rule: impl fmt::Display) -> Self {
        EngineError {
            path: vec![Key::Name(name.into())],
            rule: rule.to_string(),
        }
    }

    /// A refusal of diagram node `id` (a block, gate or subsystem, by its id).
    pub fn node(id: &str, rule: impl fmt::Display) -> Self {
        Self::at(node_key(id), rule)
    }

    /// A refusal of the field `field` of diagram node `id`.
    pub fn node_field(id: &str, field: &str, rule: impl fmt::Display) -> Self {
        EngineError {
            path: vec![node_key(id).into(), field.into()],
            rule: rule.to_string(),
        }
    }

    /// The same refusal seen from diagram node `id`, which holds what it refused.
    pub fn in_node(self, id: &str) -> Self {
        self.within([node_key(id)])
    }

    /// The same refusal seen from a containing input: `outer` goes in front of the path.
    pub fn within<K: Into<Key>>(mut self, outer: impl IntoIterator<Item = K>) -> Self {
        let mut path: Vec<Key> = outer.into_iter().map(Into::into).collect();
        path.append(&mut self.path);
        self.path = path;
        self
    }
}

/// How a node is named in a path: `node "pump"`.
fn node_key(id: &str) -> String {
    format!("node {id:?}")
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Name(n) => f.write_str(n),
            Key::Index(i) => write!(f, "[{i}]"),
        }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in self.path.iter().enumerate() {
            // An index belongs to the name before it (`designs[2]`); names are steps.
            if i > 0 && matches!(k, Key::Name(_)) {
                f.write_str(": ")?;
            }
            write!(f, "{k}")?;
        }
        if !self.path.is_empty() {
            f.write_str(": ")?;
        }
        f.write_str(&self.rule)
    }
}

impl std::error::Error for EngineError {}

/// A distribution's refusal names no field of its own: the caller that built it from a
/// field (`node "pump": life`) puts it there with [`EngineError::within`].
impl From<DistError> for EngineError {
    fn from(e: DistError) -> Self {
        EngineError::new(e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_is_the_path_then_the_rule() {
        let e = EngineError::node_field("pump", "life", "weibull: parameter beta is required")
            .within([Key::from("designs"), Key::Index(2)]);
        assert_eq!(
            e.to_string(),
            "designs[2]: node \"pump\": life: weibull: parameter beta is required"
        );
        assert_eq!(e.path.len(), 4);
        assert_eq!(e.rule, "weibull: parameter beta is required");
        assert_eq!(
            EngineError::new("the diagram has no blocks").to_string(),
            "the diagram has no blocks"
        );
        assert_eq!(
            EngineError::at("blocks", "name at least one block").to_string(),
            "blocks: name at least one block"
        );
    }
}
