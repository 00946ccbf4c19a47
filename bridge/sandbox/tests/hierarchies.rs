//! Whole subtrees through the real dispatch path: spawning a tree all or nothing, duplicating
//! with descendants, despawning only descendants, and hierarchy listings with a depth limit.
//! Every test checks the world's `ChildOf`/`Children`, not only the reply.

use bevy::prelude::{ChildOf, Children, Entity, Name, World};
use bevy_mcp_sandbox::Team;
use bevy_mcp_sandbox::testing::Harness;
use mcp_native_transport::ToolError;
use serde_json::{Value, json};

fn ok(result: Result<Value, ToolError>) -> Value {
    result.unwrap_or_else(|error| panic!("{error}: {:?}", error.details))
}

fn named(world: &mut World, name: &str) -> Vec<Entity> {
    world
        .query::<(Entity, &Name)>()
        .iter(world)
        .filter(|(_, own)| own.as_str() == name)
        .map(|(entity, _)| entity)
        .collect()
}

fn child_names(world: &World, entity: Entity) -> Vec<String> {
    world
        .get::<Children>(entity)
        .map(|children| {
            children
                .iter()
                .map(|child| {
                    world
                        .get::<Name>(*child)
                        .map_or_else(|| "?".to_owned(), |name| name.as_str().to_owned())
                })
                .collect()
        })
        .unwrap_or_default()
}

fn entity_count(world: &mut World) -> usize {
    world.query::<Entity>().iter(world).count()
}

#[test]
fn a_tree_spawns_in_one_call() {
    let mut harness = Harness::new();
    let reply = ok(harness.call(
        "control_entity",
        "spawn",
        json!({
            "name": "Tower",
            "parent": "Base",
            "components": {"Team": "Blue"},
            "children": [
                {"name": "Tower turret", "components": {"Team": "Blue"}},
                {"name": "Tower gun", "under": 0, "components": {"Health": {"current": 5.0, "max": 5.0}}},
                {"name": "Tower flag"},
                {"name": "Gun sight", "under": 1},
            ],
        }),
    ));
    assert_eq!(reply["children"].as_array().map(Vec::len), Some(4));
    let world = harness.world();
    let tower = named(world, "Tower")[0];
    let base = named(world, "Base")[0];
    let turret = named(world, "Tower turret")[0];
    let gun = named(world, "Tower gun")[0];
    assert_eq!(world.get::<ChildOf>(tower).map(ChildOf::parent), Some(base));
    assert_eq!(child_names(world, tower), ["Tower turret", "Tower flag"]);
    assert_eq!(child_names(world, turret), ["Tower gun"]);
    assert_eq!(child_names(world, gun), ["Gun sight"]);
    assert_eq!(world.get::<Team>(turret), Some(&Team::Blue));
    assert!(world.get::<bevy_mcp_sandbox::Health>(gun).is_some());
}

#[test]
fn a_refused_component_in_a_grandchild_spawns_nothing() {
    let mut harness = Harness::new();
    let before = entity_count(harness.world());
    let error = harness
        .call(
            "control_entity",
            "spawn",
            json!({
                "name": "Tower",
                "children": [
                    {"name": "Tower turret"},
                    {"name": "Tower gun", "under": 0, "components": {"Health": {"current": "lots", "max": 5.0}}},
                ],
            }),
        )
        .expect_err("a bad grandchild value is refused");
    assert_eq!(error.code.as_str(), "INVALID_VALUE", "{error}");
    assert!(
        error.message.contains("children[1] (Tower gun)"),
        "{}",
        error.message
    );
    let details = error.details.clone().unwrap_or_default();
    assert!(
        details["at"]
            .as_str()
            .is_some_and(|at| at.starts_with("children[1]")),
        "{details}"
    );
    assert_eq!(details["instancePath"], json!("/current"), "{details}");
    let world = harness.world();
    assert_eq!(entity_count(world), before, "nothing was spawned");
    assert!(named(world, "Tower").is_empty());
    assert!(named(world, "Tower turret").is_empty());

    // Two refused children: both are named, and still nothing is spawned.
    let error = harness
        .call(
            "control_entity",
            "spawn",
            json!({
                "name": "Tower",
                "children": [
                    {"name": "A", "components": {"Nope": {}}},
                    {"name": "B", "components": {"Team": "Purple"}},
                ],
            }),
        )
        .expect_err("bad children are refused");
    assert_eq!(error.code.as_str(), "INVALID_PARAMS");
    assert!(
        error.message.contains("children[0] (A)") && error.message.contains("children[1] (B)"),
        "{}",
        error.message
    );
    assert_eq!(entity_count(harness.world()), before);
}

#[test]
fn under_must_point_at_an_earlier_child() {
    let mut harness = Harness::new();
    let before = entity_count(harness.world());
    let refused = [
        json!([{"name": "A", "under": 0}]),
        json!([{"name": "A"}, {"name": "B", "under": 1}]),
        json!([{"name": "A"}, {"name": "B", "under": 5}]),
    ];
    for children in refused {
        let error = harness
            .call(
                "control_entity",
                "spawn",
                json!({"name": "Tower", "children": children}),
            )
            .expect_err("under must name an earlier child");
        assert_eq!(error.code.as_str(), "INVALID_PARAMS", "{children}");
        assert!(error.message.contains("under"), "{}", error.message);
    }
    assert_eq!(entity_count(harness.world()), before, "nothing was spawned");
}

#[test]
fn duplicate_with_descendants_copies_the_subtree() {
    let mut harness = Harness::new();
    ok(harness.call(
        "control_entity",
        "spawn",
        json!({"name": "Barrel", "parent": "Turret"}),
    ));
    let reply = ok(harness.call(
        "control_entity",
        "duplicate",
        json!({"entity": "Base", "count": 2, "name": "Outpost", "withDescendants": true}),
    ));
    assert_eq!(reply["descendantsCopied"], json!(2));
    assert_eq!(reply["copies"].as_array().map(Vec::len), Some(2));
    let world = harness.world();
    for name in ["Outpost (1)", "Outpost (2)"] {
        let copy = named(world, name)[0];
        assert_eq!(child_names(world, copy), ["Turret"], "{name}");
        let turret = world.get::<Children>(copy).map(|children| children[0]);
        let turret = turret.unwrap_or(Entity::PLACEHOLDER);
        assert_eq!(child_names(world, turret), ["Barrel"], "{name}");
        assert_eq!(world.get::<Team>(turret), Some(&Team::Blue));
    }
    assert_eq!(
        named(world, "Turret").len(),
        3,
        "the original and two copies"
    );
    let base = named(world, "Base")[0];
    assert_eq!(
        child_names(world, base),
        ["Turret"],
        "the original is untouched"
    );

    let plain = ok(harness.call(
        "control_entity",
        "duplicate",
        json!({"entity": "Base", "name": "Bare"}),
    ));
    assert!(plain.get("descendantsCopied").is_none());
    let world = harness.world();
    let bare = named(world, "Bare")[0];
    assert!(
        child_names(world, bare).is_empty(),
        "without withDescendants no child is copied"
    );
}

#[test]
fn despawn_descendants_keeps_the_entity() {
    let mut harness = Harness::new();
    ok(harness.call(
        "control_entity",
        "spawn",
        json!({"name": "Barrel", "parent": "Turret"}),
    ));
    let reply = ok(harness.call(
        "control_entity",
        "despawn_descendants",
        json!({"entity": "Base"}),
    ));
    assert_eq!(reply["despawned"], json!(2));
    let world = harness.world();
    let base = named(world, "Base");
    assert_eq!(base.len(), 1, "Base stays");
    assert!(child_names(world, base[0]).is_empty());
    assert!(named(world, "Turret").is_empty());
    assert!(named(world, "Barrel").is_empty());
    assert_eq!(world.get::<Team>(base[0]), Some(&Team::Blue));
}

#[test]
fn hierarchy_listings_stop_at_the_depth_asked() {
    let mut harness = Harness::new();
    ok(harness.call(
        "control_entity",
        "spawn",
        json!({"name": "Barrel", "parent": "Turret"}),
    ));
    let shallow = ok(harness.call("inspect", "hierarchy", json!({"root": "Base", "depth": 1})));
    let turret = &shallow["roots"][0]["children"][0];
    assert_eq!(turret["name"], json!("Turret"));
    assert_eq!(turret["truncatedChildren"], json!(1));
    assert!(turret.get("children").is_none());
    let deep = ok(harness.call("inspect", "hierarchy", json!({"root": "Base", "depth": 2})));
    assert_eq!(
        deep["roots"][0]["children"][0]["children"][0]["name"],
        json!("Barrel")
    );
}

#[test]
fn the_whole_tree_comes_in_pages_of_roots_with_their_descendants() {
    let mut harness = Harness::new();
    let crates: Vec<Entity> = harness.spawn_crates(120);
    // A child under a late root: it comes nested, never as a root of its own.
    let lid = harness
        .world()
        .spawn((Name::new("Lid"), ChildOf(crates[110])))
        .id();
    let roots: Vec<Entity> = harness
        .world()
        .query_filtered::<Entity, bevy::prelude::Without<ChildOf>>()
        .iter(harness.world())
        .collect();
    let mut seen = Vec::new();
    let mut cursor: Option<Value> = None;
    for page_number in 0.. {
        assert!(page_number < 10, "the pages end");
        let mut params = json!({"limit": 40, "depth": 1});
        if let Some(cursor) = &cursor {
            params["cursor"] = cursor.clone();
        }
        let page = ok(harness.call("inspect", "hierarchy", params));
        let nodes = page["roots"].as_array().cloned().unwrap_or_default();
        assert!(nodes.len() <= 40, "{page}");
        assert_eq!(page["total"], json!(nodes.len()));
        for node in &nodes {
            let entity = node["bits"].as_u64().map(Entity::from_bits);
            assert_ne!(entity, Some(lid), "a child is not a root");
            if entity == Some(crates[110]) {
                assert_eq!(node["children"][0]["name"], json!("Lid"), "{node}");
            }
            seen.extend(entity);
        }
        if page["moreAvailable"] != json!(true) {
            assert!(page.get("cursor").is_none(), "{page}");
            break;
        }
        cursor = Some(page["cursor"].clone());
    }
    let mut expected: Vec<Entity> = roots
        .into_iter()
        .filter(|root| {
            // Resource entities and observers are never listed.
            let entity = harness.world().entity(*root);
            !entity.contains::<bevy::ecs::resource::IsResource>()
                && !entity.contains::<bevy::ecs::observer::Observer>()
        })
        .collect();
    expected.sort_by_key(|entity| entity.index());
    assert_eq!(seen, expected, "every root once, in index order");
    assert!(crates.iter().all(|entity| seen.contains(entity)));

    let error = harness
        .call("inspect", "hierarchy", json!({"cursor": "a"}))
        .err()
        .unwrap_or_else(|| panic!("a bad cursor was accepted"));
    assert_eq!(error.code.as_str(), "INVALID_CURSOR", "{error}");
    assert_eq!(
        error.next_call.as_ref().map(|call| call["action"].clone()),
        Some(json!("hierarchy")),
        "{error}"
    );
}
