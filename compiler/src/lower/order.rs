//! Clusters and tick order: units of one domain joined by zero-latency
//! channels form a cluster, ordered so that every zero-latency sender ticks
//! before its receivers (ties by instance path, like the runtime).

use crate::ir::{Cluster, Program};

/// Computes the clusters of a lowered program (its ports, channels and
/// units already in place).
pub fn clusters(p: &Program) -> Result<Vec<Cluster>, String> {
    let n = p.units.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut edges = Vec::new();
    for c in p.channels.iter().filter(|c| c.latency == 0) {
        let (a, b) = (
            p.ports[c.from as usize].unit as usize,
            p.ports[c.to as usize].unit as usize,
        );
        edges.push((a, b));
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        parent[ra] = rb;
    }
    let mut indegree = vec![0usize; n];
    for &(_, b) in &edges {
        indegree[b] += 1;
    }
    let mut by_path: Vec<usize> = (0..n).collect();
    by_path.sort_by(|&a, &b| p.units[a].path.cmp(&p.units[b].path));
    // Kahn's algorithm, always taking the ready unit first in path order.
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    while order.len() < n {
        let Some(&next) = by_path.iter().find(|&&u| !placed[u] && indegree[u] == 0) else {
            let stuck: Vec<&str> = by_path
                .iter()
                .filter(|&&u| !placed[u])
                .map(|&u| p.units[u].path.as_str())
                .collect();
            return Err(format!(
                "zero-latency connections form a cycle among {}",
                stuck.join(", ")
            ));
        };
        placed[next] = true;
        order.push(next);
        for &(a, b) in &edges {
            if a == next {
                indegree[b] -= 1;
            }
        }
    }
    let mut clusters: Vec<Cluster> = Vec::new();
    let mut cluster_of_root = std::collections::HashMap::new();
    for d in 0..p.domains.len().max(1) as u32 {
        for &u in &order {
            if p.units[u].domain != d {
                continue;
            }
            let root = find(&mut parent, u);
            let idx = *cluster_of_root.entry(root).or_insert_with(|| {
                clusters.push(Cluster {
                    domain: d,
                    units: Vec::new(),
                });
                clusters.len() - 1
            });
            clusters[idx].units.push(u as u32);
        }
    }
    Ok(clusters)
}
