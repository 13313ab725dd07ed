//! `bathtub._engine`: the PyO3 face of bathtub-engine. No logic lives here.
use pyo3::prelude::*;

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", bathtub_engine::VERSION)?;
    Ok(())
}
