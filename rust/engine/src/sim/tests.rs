use super::*;
use crate::diagram::{DiagramSpec, NodeSpec};
use crate::fixtures::{edges, exp, node};

fn block(id: &str, kind: &str) -> NodeSpec {
    NodeSpec {
        model: Some(exp(0.1)),
        repair: Some(exp(0.5)),
        ..node(id, kind)
    }
}

/// A bridge feeding a 2-of-3 gate with a chain, a parallel node and a standby group.
fn tangle() -> Compiled {
    let mut nodes = vec![node("in", "input"), node("out", "output")];
    for id in ["A", "B", "C", "D", "E", "F", "G"] {
        nodes.push(block(id, "component"));
    }
    nodes.push(NodeSpec {
        n: Some(3),
        ..block("P", "parallel")
    });
    nodes.push(NodeSpec {
        spares: Some(2),
        dormancy: Some(0.5),
        ..block("S", "standby")
    });
    nodes.push(NodeSpec {
        n: Some(2),
        ..node("K", "knode")
    });
    let pairs = [
        ("in", "A"),
        ("in", "B"),
        ("A", "C"),
        ("B", "D"),
        ("A", "E"),
        ("B", "E"),
        ("E", "C"),
        ("E", "D"),
        ("C", "K"),
        ("D", "F"),
        ("F", "G"),
        ("G", "K"),
        ("in", "P"),
        ("P", "S"),
        ("S", "K"),
        ("K", "out"),
    ];
    Compiled::new(&DiagramSpec {
        nodes,
        edges: edges(&pairs),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn incremental_structure_matches_full_evaluation() {
    let c = tangle();
    for crews in [0, 1, 2] {
        let mut sim = Sim::new(&c, true, crews);
        for rep in 0..20 {
            let mut rng = Stream::new(99, rep);
            sim.reset(&mut rng);
            for _ in 0..2000 {
                let s = sim.step(&mut rng).expect("repairable runs never run dry");
                assert!(s.time >= 0.0);
                assert_eq!(
                    sim.system_up(),
                    c.evaluate(&sim.ok),
                    "crews {crews} rep {rep} at {}",
                    s.time
                );
            }
        }
    }
}

#[test]
fn one_crew_never_repairs_two_units_at_once() {
    let c = tangle();
    let mut sim = Sim::new(&c, true, 1);
    let mut rng = Stream::new(5, 0);
    sim.reset(&mut rng);
    for _ in 0..5000 {
        sim.step(&mut rng);
        assert!(sim.busy <= 1);
    }
}
