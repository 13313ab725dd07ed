//! The engine's one error type: a message that names what was refused and why.
use crate::dist::DistError;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct EngineError(pub String);

impl EngineError {
    pub fn node(id: &str, rule: impl fmt::Display) -> Self {
        EngineError(format!("node {id:?}: {rule}"))
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EngineError {}

impl From<DistError> for EngineError {
    fn from(e: DistError) -> Self {
        EngineError(e.0)
    }
}
