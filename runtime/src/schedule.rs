//! Evaluation order and clusters.
//!
//! Units joined by zero-latency connections form a *cluster* (contract §7);
//! clusters talk only through channels with latency >= 1 and CDC FIFOs, which
//! is what later allows them to run in parallel. Within a domain, clusters are
//! evaluated in the order of their first unit instance path, and the units of a
//! cluster in a topological order of their zero-latency connections (every
//! sender before its receivers), ties broken by instance path. The runtime
//! computes this order itself; a compiler only declares the connections.

use crate::design::{BuildError, DesignBuilder, DomainId, UnitId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A set of units joined by zero-latency connections, in evaluation order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// The domain all its units belong to.
    pub domain: DomainId,
    /// Its units, in evaluation order.
    pub units: Vec<UnitId>,
}

/// The evaluation plan of a design.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    /// Per unit: its rank in instance path order.
    pub(crate) rank: Vec<u32>,
    /// Clusters grouped by domain (domain order), each in evaluation order.
    pub(crate) clusters: Vec<Cluster>,
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// Plans evaluation for a declared design: its units and the zero-latency
/// connections between them.
pub(crate) fn plan_design(design: &DesignBuilder) -> Result<Schedule, BuildError> {
    let mut zero_latency = Vec::new();
    for c in design.connections.iter().filter(|c| c.latency == 0) {
        let from = design
            .outputs
            .get(c.from as usize)
            .ok_or(BuildError::UnknownId("output port", c.from))?;
        let to = design
            .inputs
            .get(c.to as usize)
            .ok_or(BuildError::UnknownId("input port", c.to))?;
        zero_latency.push((from.unit, to.unit));
    }
    let unit_keys: Vec<(&str, u32)> = design
        .units
        .iter()
        .map(|u| (u.path.as_str(), u.domain))
        .collect();
    if let Some(&(_, to)) = zero_latency
        .iter()
        .find(|(a, b)| *a as usize >= unit_keys.len() || *b as usize >= unit_keys.len())
    {
        return Err(BuildError::UnknownId("unit", to));
    }
    plan(&unit_keys, design.domains.len(), &zero_latency)
}

/// Plans evaluation for units given as (path, domain) and zero-latency edges
/// (sender unit, receiver unit).
fn plan(
    units: &[(&str, u32)],
    domains: usize,
    zero_latency: &[(u32, u32)],
) -> Result<Schedule, BuildError> {
    let n = units.len();
    let mut by_path: Vec<usize> = (0..n).collect();
    by_path.sort_by(|&a, &b| units[a].0.cmp(units[b].0));
    let mut rank = vec![0u32; n];
    for (r, &u) in by_path.iter().enumerate() {
        rank[u] = r as u32;
        if r > 0 && units[by_path[r - 1]].0 == units[u].0 {
            return Err(BuildError::DuplicatePath(units[u].0.to_string()));
        }
    }

    let mut parent: Vec<usize> = (0..n).collect();
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for &(from, to) in zero_latency {
        let (a, b) = (from as usize, to as usize);
        successors[a].push(b);
        indegree[b] += 1;
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        parent[ra] = rb;
    }

    // Members of each cluster root, discovered in path order.
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots_in_path_order = Vec::new();
    for &u in &by_path {
        let root = find(&mut parent, u);
        if members[root].is_empty() {
            roots_in_path_order.push(root);
        }
        members[root].push(u);
    }

    let mut clusters = Vec::new();
    for domain in 0..domains as u32 {
        for &root in &roots_in_path_order {
            let cluster = &members[root];
            if units[cluster[0]].1 != domain {
                continue;
            }
            let mut ready: BinaryHeap<Reverse<(u32, usize)>> = cluster
                .iter()
                .filter(|&&u| indegree[u] == 0)
                .map(|&u| Reverse((rank[u], u)))
                .collect();
            let mut order = Vec::with_capacity(cluster.len());
            while let Some(Reverse((_, u))) = ready.pop() {
                order.push(UnitId(u as u32));
                for &s in &successors[u] {
                    indegree[s] -= 1;
                    if indegree[s] == 0 {
                        ready.push(Reverse((rank[s], s)));
                    }
                }
            }
            if order.len() < cluster.len() {
                return Err(BuildError::ZeroLatencyCycle(find_cycle(
                    units,
                    cluster,
                    &indegree,
                    zero_latency,
                )));
            }
            clusters.push(Cluster {
                domain: DomainId(domain),
                units: order,
            });
        }
    }
    Ok(Schedule { rank, clusters })
}

/// Names the units of one zero-latency cycle among the units Kahn's algorithm left.
fn find_cycle(
    units: &[(&str, u32)],
    cluster: &[usize],
    indegree: &[usize],
    edges: &[(u32, u32)],
) -> Vec<String> {
    // Every leftover unit has a leftover predecessor: walk predecessors until one repeats.
    let left = |u: usize| cluster.contains(&u) && indegree[u] > 0;
    let start = cluster
        .iter()
        .copied()
        .find(|&u| left(u))
        .unwrap_or(cluster[0]);
    let mut walk = vec![start];
    let mut current = start;
    while let Some(pred) = edges
        .iter()
        .find(|&&(from, to)| to as usize == current && left(from as usize))
        .map(|&(from, _)| from as usize)
    {
        if let Some(at) = walk.iter().position(|&w| w == pred) {
            let mut cycle: Vec<String> = walk[at..]
                .iter()
                .rev()
                .map(|&u| units[u].0.to_string())
                .collect();
            cycle.push(cycle[0].clone());
            return cycle;
        }
        walk.push(pred);
        current = pred;
    }
    walk.iter().map(|&u| units[u].0.to_string()).collect()
}
