//! `inspect.ui_tree`: the UI as a player sees it. Nodes are walked depth-first from the UI roots
//! (nodes without a UI parent, in entity order; children in their order), filtered, then paged;
//! the walk is bounded so a huge UI answers within a frame.

use bevy::compat::ui_button;
use bevy::ecs::reflect::ReflectComponent;
use bevy::prelude::{Entity, ImageNode, Text, TextSpan, With, World};
use bevy::reflect::{GetPath, TypeRegistry};
use bevy::ui::Node;
use bevy_mcp_generated::params::{InspectUiTreeParams, InspectUiTreeParamsKind};
use serde_json::{Value, json};

use crate::error::BridgeError;
use crate::observe::ui_nodes::{self, primary_window};
use crate::reflect::hierarchy::{children_of, parent_of};
use crate::reflect::names::{self, entity_info};
use crate::reflect::world::resource_entity;

/// Nodes walked at most: beyond it the answer says `truncated`.
const MAX_WALKED: usize = 20_000;
/// Characters of a node's text shown (a label, a paragraph's start).
const MAX_TEXT: usize = 256;

/// A node as the walk meets it.
struct Visit {
    node: Entity,
    depth: usize,
    parent: Option<Entity>,
}

pub(crate) fn ui_tree(world: &World, params: InspectUiTreeParams) -> Result<Value, BridgeError> {
    let Some(mut nodes) = world.try_query_filtered::<Entity, With<Node>>() else {
        return Ok(json!({"nodes": [], "total": 0, "moreAvailable": false}));
    };
    let is_node = |entity: Entity| world.get::<Node>(entity).is_some();
    let mut roots: Vec<Entity> = nodes
        .iter(world)
        .filter(|node| parent_of(world, *node).is_none_or(|parent| !is_node(parent)))
        .collect();
    roots.sort();
    let primary = primary_window(world);
    let focus = focused(world);
    let wanted = params.text.as_deref().map(str::to_lowercase);
    let mut stack: Vec<Visit> = roots
        .into_iter()
        .rev()
        .map(|node| Visit {
            node,
            depth: 0,
            parent: None,
        })
        .collect();
    let (mut rows, mut total, mut walked) = (Vec::new(), 0usize, 0usize);
    while let Some(visit) = stack.pop() {
        walked += 1;
        if walked > MAX_WALKED {
            break;
        }
        let children: Vec<Entity> = children_of(world, visit.node)
            .into_iter()
            .filter(|child| is_node(*child))
            .collect();
        stack.extend(children.into_iter().rev().map(|child| Visit {
            node: child,
            depth: visit.depth + 1,
            parent: Some(visit.node),
        }));
        let kind = kind_of(world, visit.node);
        if params.kind.is_some_and(|wanted| wanted != kind) {
            continue;
        }
        let text = text_of(world, visit.node, kind);
        if let Some(wanted) = &wanted
            && !text
                .as_deref()
                .is_some_and(|text| text.to_lowercase().contains(wanted))
        {
            continue;
        }
        let place = ui_nodes::on_screen(world, visit.node, primary);
        let visible = place
            .as_ref()
            .is_ok_and(|place| place.not_visible.is_none());
        if params.visible_only && !visible {
            continue;
        }
        total += 1;
        if total <= params.offset as usize || rows.len() >= params.limit as usize {
            continue;
        }
        let mut row = entity_info(world, visit.node);
        row["kind"] = json!(kind_name(kind));
        if let Some(text) = text {
            row["text"] = json!(text);
        }
        row["depth"] = json!(visit.depth);
        if let Some(parent) = visit.parent {
            row["parent"] = json!(parent.to_string());
        }
        row["visible"] = json!(visible);
        match &place {
            Ok(place) => {
                row["rect"] = place.rect_json();
                if let Some(window) = place.window {
                    row["window"] = json!(window.to_string());
                }
                if let Some(reason) = place.not_visible {
                    row["notVisible"] = json!(reason);
                }
            }
            Err(reason) => row["notVisible"] = json!(reason),
        }
        if let Some(interaction) = ui_button::interaction(world, visit.node) {
            row["interaction"] = json!(interaction);
        }
        if focus == Some(visit.node) {
            row["focused"] = json!(true);
        }
        rows.push(row);
    }
    let listed = rows.len();
    let mut answer = json!({
        "nodes": rows,
        "total": total,
        "moreAvailable": (params.offset as usize).saturating_add(listed) < total,
    });
    if walked > MAX_WALKED {
        answer["truncated"] = json!(format!(
            "the UI has more than {MAX_WALKED} nodes; only the first {MAX_WALKED} were walked"
        ));
    }
    Ok(answer)
}

fn kind_of(world: &World, node: Entity) -> InspectUiTreeParamsKind {
    if ui_button::is_button(world, node) {
        InspectUiTreeParamsKind::Button
    } else if world.get::<Text>(node).is_some() {
        InspectUiTreeParamsKind::Text
    } else if world.get::<ImageNode>(node).is_some() {
        InspectUiTreeParamsKind::Image
    } else {
        InspectUiTreeParamsKind::Container
    }
}

fn kind_name(kind: InspectUiTreeParamsKind) -> &'static str {
    match kind {
        InspectUiTreeParamsKind::Button => "button",
        InspectUiTreeParamsKind::Text => "text",
        InspectUiTreeParamsKind::Image => "image",
        InspectUiTreeParamsKind::Container => "container",
    }
}

/// A text node's text (with its spans), or a button's label (the texts below it); bounded.
fn text_of(world: &World, node: Entity, kind: InspectUiTreeParamsKind) -> Option<String> {
    let mut text = String::new();
    match kind {
        InspectUiTreeParamsKind::Text => block_text(world, node, &mut text),
        InspectUiTreeParamsKind::Button => {
            let mut below = children_of(world, node);
            let mut seen = 0;
            while let Some(entity) = below.pop() {
                seen += 1;
                if seen > 64 || text.len() >= MAX_TEXT {
                    break;
                }
                if world.get::<Text>(entity).is_some() {
                    if !text.is_empty() {
                        text.push(' ');
                    }
                    block_text(world, entity, &mut text);
                } else {
                    below.extend(children_of(world, entity));
                }
            }
        }
        InspectUiTreeParamsKind::Image | InspectUiTreeParamsKind::Container => return None,
    }
    if text.len() > MAX_TEXT {
        let cut = (0..=MAX_TEXT)
            .rev()
            .find(|at| text.is_char_boundary(*at))
            .unwrap_or(0);
        text.truncate(cut);
    }
    (!text.is_empty()).then_some(text)
}

/// A text block's string: its `Text` and the `TextSpan`s of its children.
fn block_text(world: &World, node: Entity, out: &mut String) {
    if let Some(text) = world.get::<Text>(node) {
        out.push_str(&text.0);
    }
    for child in children_of(world, node) {
        if let Some(span) = world.get::<TextSpan>(child) {
            out.push_str(&span.0);
        }
    }
}

/// The entity Bevy's input focus names, when the app has it (read by reflection: the app's
/// Bevy may be built without the focus crate).
fn focused(world: &World) -> Option<Entity> {
    let registry = names::registry(world);
    let registry: &TypeRegistry = &registry.read();
    let registration = registry.get_with_type_path("bevy_input_focus::InputFocus")?;
    let (holder, component): (Entity, &ReflectComponent) =
        resource_entity(world, registration).ok()?;
    let value = component.reflect(world.get_entity(holder).ok()?)?;
    value
        .reflect_path("current_focus")
        .ok()?
        .try_downcast_ref::<Option<Entity>>()
        .copied()
        .flatten()
}
