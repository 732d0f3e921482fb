//! Clusters and tick order: units of one domain joined by zero-latency
//! channels form a cluster, ordered so that every zero-latency sender ticks
//! before its receivers (ties by instance path, like the runtime).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    let mut receivers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in &edges {
        indegree[b] += 1;
        receivers[a].push(b);
    }
    let mut by_path: Vec<usize> = (0..n).collect();
    by_path.sort_by(|&a, &b| p.units[a].path.cmp(&p.units[b].path));
    let mut rank = vec![0usize; n];
    for (r, &u) in by_path.iter().enumerate() {
        rank[u] = r;
    }
    // Kahn's algorithm, always taking the ready unit first in path order:
    // the ready units by path rank in a min-heap, so the order costs
    // O((units + links) log units), not a scan per unit.
    let mut ready: BinaryHeap<Reverse<usize>> = by_path
        .iter()
        .enumerate()
        .filter(|&(_, &u)| indegree[u] == 0)
        .map(|(r, _)| Reverse(r))
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(r)) = ready.pop() {
        let next = by_path[r];
        order.push(next);
        for &b in &receivers[next] {
            indegree[b] -= 1;
            if indegree[b] == 0 {
                ready.push(Reverse(rank[b]));
            }
        }
    }
    if order.len() < n {
        let mut placed = vec![false; n];
        for &u in &order {
            placed[u] = true;
        }
        let stuck: Vec<&str> = by_path
            .iter()
            .filter(|&&u| !placed[u])
            .map(|&u| p.units[u].path.as_str())
            .collect();
        return Err(format!(
            "zero-latency connections form a cycle among {}",
            stuck.join(", ")
        ));
    }
    // Clusters domain by domain, each domain's units in that order.
    let domains = p.domains.len().max(1);
    let mut per_domain: Vec<Vec<usize>> = vec![Vec::new(); domains];
    for &u in &order {
        if let Some(list) = per_domain.get_mut(p.units[u].domain as usize) {
            list.push(u);
        }
    }
    let mut clusters: Vec<Cluster> = Vec::new();
    let mut cluster_of_root = std::collections::HashMap::new();
    for (d, units) in per_domain.iter().enumerate() {
        for &u in units {
            let root = find(&mut parent, u);
            let idx = *cluster_of_root.entry(root).or_insert_with(|| {
                clusters.push(Cluster {
                    domain: d as u32,
                    units: Vec::new(),
                });
                clusters.len() - 1
            });
            clusters[idx].units.push(u as u32);
        }
    }
    Ok(clusters)
}
