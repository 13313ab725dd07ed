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
    assert!(Compiled::new(&d).unwrap_err().to_string().contains("mgl"));
}

#[test]
fn refusals_name_the_node() {
    let mut d = bridge();
    d.edges.push(EdgeSpec {
        source: "C".into(),
        target: "A".into(),
    });
    let e = Compiled::new(&d).unwrap_err().to_string();
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
    let e = Compiled::new(&d).unwrap_err().to_string();
    assert!(e.contains("\"K\"") && e.contains("only 2"), "{e}");
    let mut d = bridge();
    d.nodes[1].model = None;
    assert!(Compiled::new(&d).unwrap_err().to_string().contains("\"A\""));
    let mut d = bridge();
    d.edges.push(EdgeSpec {
        source: "in".into(),
        target: "out".into(),
    });
    assert!(Compiled::new(&d).is_err());
}
