//! The node hierarchy of one scene: shape checks, then a walk that yields global transforms.
//!
//! Follows glTF 2.0 §3.5.2 (the hierarchy MUST be disjoint strict trees: no cycles, at most one
//! parent per node, scene nodes are roots) and §3.5.3 (a node's local transform is `matrix`, or
//! `T * R * S`; global = parent global × local). The shape is checked from the `children` lists
//! before walking, so the walk cannot loop; it uses an explicit stack, so a deep hierarchy costs
//! memory, never call-stack depth.

use ::gltf::json;
use glam::{Mat4, Quat, Vec3};

use crate::error::{Problem, invalid};

/// Every node reachable from `roots` with its global transform, parents before children.
///
/// §3.5.2: the hierarchy MUST be disjoint strict trees. Checked up front from the `children`
/// lists alone, so the walk itself can never revisit a node.
pub(crate) fn walk(root: &json::Root, roots: &[usize]) -> Result<Vec<(usize, Mat4)>, Problem> {
    let nodes = &root.nodes;
    let mut parent: Vec<Option<usize>> = vec![None; nodes.len()];
    for (index, node) in nodes.iter().enumerate() {
        for child in node.children.iter().flatten().map(|c| c.value()) {
            let Some(slot) = parent.get_mut(child) else {
                return invalid!("node {index} lists missing child {child}");
            };
            if let Some(other) = *slot {
                return invalid!(
                    "node {child} has two parents (nodes {other} and {index}); glTF 2.0 §3.5.2 \
                     requires disjoint strict trees"
                );
            }
            *slot = Some(index);
        }
    }
    for &start in roots {
        if start >= nodes.len() {
            return invalid!("the scene lists missing node {start}");
        }
        if let Some(first_parent) = parent[start] {
            // Each node has at most one parent, so following parents either reaches a true
            // root or runs into a cycle; name the cycle when there is one.
            let mut chain = vec![start];
            let mut position_in_chain = vec![None; nodes.len()];
            position_in_chain[start] = Some(0);
            let mut at = start;
            while let Some(next) = parent[at] {
                if let Some(repeat) = position_in_chain[next] {
                    chain.push(next);
                    return invalid!(
                        "node hierarchy has a cycle (child → parent: {}); glTF 2.0 §3.5.2 forbids \
                         cycles",
                        describe_chain(&chain[repeat..])
                    );
                }
                position_in_chain[next] = Some(chain.len());
                chain.push(next);
                at = next;
            }
            return invalid!(
                "the scene lists node {start} as a root, but it is a child of node {first_parent}"
            );
        }
    }

    let mut visited = vec![false; nodes.len()];
    let mut placed = Vec::new();
    let mut stack: Vec<(usize, Mat4)> = roots.iter().rev().map(|&r| (r, Mat4::IDENTITY)).collect();
    while let Some((index, parent_world)) = stack.pop() {
        if std::mem::replace(&mut visited[index], true) {
            return invalid!("the scene lists node {index} more than once");
        }
        let node = &nodes[index];
        let world =
            parent_world * local_transform(node).map_err(|p| p.context(format!("node {index}")))?;
        placed.push((index, world));
        for child in node.children.iter().flatten().rev() {
            stack.push((child.value(), world));
        }
    }
    Ok(placed)
}

/// `0 → 1 → 0`, shortened in the middle when long.
fn describe_chain(chain: &[usize]) -> String {
    let names: Vec<String> = chain.iter().map(usize::to_string).collect();
    if names.len() <= 8 {
        return names.join(" → ");
    }
    format!(
        "{} → … {} more … → {}",
        names[..4].join(" → "),
        names.len() - 6,
        names[names.len() - 2..].join(" → ")
    )
}

/// §3.5.3: `matrix` (column-major) if present, else `T * R * S`.
fn local_transform(node: &json::Node) -> Result<Mat4, Problem> {
    let values: Vec<f32> = node
        .matrix
        .iter()
        .flatten()
        .chain(node.translation.iter().flatten())
        .chain(node.rotation.iter().flat_map(|r| r.0.iter()))
        .chain(node.scale.iter().flatten())
        .copied()
        .collect();
    if values.iter().any(|v| !v.is_finite()) {
        return invalid!("transform has a non-finite value");
    }
    if let Some(matrix) = node.matrix {
        return Ok(Mat4::from_cols_array(&matrix));
    }
    let rotation = match node.rotation {
        None => Quat::IDENTITY,
        Some(r) => {
            let q = Quat::from_array(r.0);
            if !q.length().is_normal() {
                return invalid!("rotation {:?} is not a unit quaternion", r.0);
            }
            q.normalize()
        }
    };
    Ok(Mat4::from_scale_rotation_translation(
        Vec3::from(node.scale.unwrap_or([1.0; 3])),
        rotation,
        Vec3::from(node.translation.unwrap_or([0.0; 3])),
    ))
}
