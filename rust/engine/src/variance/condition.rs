//! Which subsystem a run conditions on (`Condition`): an input of the output node whose
//! blocks' probability of working is known as a sum of exponentials.
use super::expo::ExpSum;
use super::{Condition, Tree};
use crate::diagram::Compiled;

/// The input of the output node to condition on: a tree of known blocks feeding only the
/// output, with at least one block outside it (else the run would be the closed form);
/// among several, the one of largest mean downtime (its noise is the most removed).
pub(super) fn best(c: &Compiled, works: &[Option<ExpSum>], horizon: f64) -> Option<Condition> {
    let output = c.output as usize;
    let n = c.threshold.len();
    let has_blocks_at_output = c.groups.iter().any(|g| g.node as usize == output);
    if has_blocks_at_output {
        return None;
    }
    let mut best: Option<(f64, Condition)> = None;
    for v in 0..n as u32 {
        if !c.successors(v as usize).contains(&(output as u32)) {
            continue;
        }
        let (blocks, up, local) = match Tree::new(c, v, Some(output as u32))
            .and_then(|tree| Some((tree.works(|g| works[g as usize].clone(), n)?, tree)))
        {
            Some((up, tree)) => (tree.blocks().collect::<Vec<u32>>(), up, vec![]),
            None => {
                // The known blocks at `v` alone (a train with a block of unknown mean).
                if c.successors(v as usize) != [output as u32] {
                    continue;
                }
                let here: Vec<u32> = (0..c.groups.len() as u32)
                    .filter(|&g| c.groups[g as usize].node == v && works[g as usize].is_some())
                    .collect();
                let up = here.iter().try_fold(ExpSum::constant(1.0), |up, &g| {
                    up.mul(works[g as usize].as_ref().expect("known"))
                });
                let Some(up) = up else {
                    continue;
                };
                (here.clone(), up, here)
            }
        };
        if blocks.is_empty() || blocks.len() == c.groups.len() {
            continue;
        }
        let Some(down) = up.complement() else {
            continue;
        };
        let mean = down.integral(0.0, horizon) / horizon;
        if best.as_ref().is_none_or(|b| mean > b.0) {
            best = Some((
                mean,
                Condition {
                    root: v,
                    output: output as u32,
                    threshold: c.threshold[output],
                    local,
                    down,
                    blocks: blocks
                        .iter()
                        .map(|&g| c.groups[g as usize].id.clone())
                        .collect(),
                },
            ));
        }
    }
    best.map(|b| b.1)
}
