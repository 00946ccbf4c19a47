//! The bridge's own reflect-to-JSON walk (`reflect_json`) against Bevy's `TypedReflectSerializer`:
//! over the default value of every registered type (and its dynamic copy) and every reflected
//! component of the sandbox's world, the bridge writes exactly what Bevy writes, or hands the value
//! to Bevy's serializer; as a `Value` (replies) and as text (the history).

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use bevy::ecs::reflect::ReflectComponent;
use bevy::prelude::AppTypeRegistry;
use bevy::reflect::serde::TypedReflectSerializer;
use bevy::reflect::std_traits::ReflectDefault;
use bevy::reflect::{PartialReflect, TypeRegistry};
use bevy_mcp_bridge::test_support;
use bevy_mcp_bridge::test_support::reflect_to_json;
use bevy_mcp_sandbox::testing::Harness;
use bevy_mcp_sandbox::{Inventory, Item, Team, Weapon};

/// A dynamic copy of a value that has one.
fn dynamic(value: &dyn PartialReflect) -> Box<dyn PartialReflect> {
    bevy::compat::to_dynamic(value).unwrap_or_else(|error| panic!("no dynamic copy: {error}"))
}

/// How the two serializers compared.
#[derive(Default)]
struct Tally {
    /// Values the walk wrote itself (and matched Bevy).
    walked: usize,
    /// Values it handed to Bevy's serializer.
    handed_over: usize,
    /// Type paths of the values the walk wrote.
    walked_types: Vec<String>,
    mismatches: Vec<String>,
    /// Values with an asset handle inside, not compared.
    with_handles: usize,
}

impl Tally {
    fn compare(&mut self, value: &dyn PartialReflect, registry: &TypeRegistry) {
        let type_path = value.reflect_type_path().to_owned();
        // Handles take the bridge's own form, which Bevy's serializer has no equivalent of
        // (tests/handles.rs checks it).
        if test_support::holds_handle(value, registry) {
            self.with_handles += 1;
            return;
        }
        let bevy = serde_json::to_value(TypedReflectSerializer::new(value, registry));
        match reflect_to_json(value, registry) {
            Some(ours) => match &bevy {
                Ok(theirs) if *theirs == ours => {
                    self.walked += 1;
                    self.walked_types.push(type_path.clone());
                }
                _ => self
                    .mismatches
                    .push(format!("{type_path}: the walk wrote {ours}, Bevy {bevy:?}")),
            },
            None => self.handed_over += 1,
        }
        // What the history holds: the same walk written as text, read back as Bevy's text reads.
        let mut text = Vec::new();
        let ours = test_support::write_json(value, registry, &mut text)
            .ok()
            .and_then(|()| serde_json::from_slice::<serde_json::Value>(&text).ok());
        let theirs = serde_json::to_string(&TypedReflectSerializer::new(value, registry))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
        if ours != theirs {
            self.mismatches.push(format!(
                "{type_path}: the walk wrote the text {ours:?}, Bevy {theirs:?}"
            ));
        }
        // What handlers call: the walk, or Bevy's serializer behind it; either way Bevy's answer.
        match (test_support::to_json(value, registry), bevy) {
            (Ok(ours), Ok(theirs)) if ours == theirs => {}
            (Err(_), Err(_)) => {}
            (ours, theirs) => self.mismatches.push(format!(
                "{type_path}: to_json gave {ours:?}, Bevy {theirs:?}"
            )),
        }
    }
}

#[test]
fn the_walk_writes_what_bevys_serializer_writes() {
    let mut harness = Harness::new();
    harness.run_frames(2);
    let world = harness.world();
    let registry = world.resource::<AppTypeRegistry>().clone();
    let registry = registry.read();
    let mut tally = Tally::default();

    for registration in registry.iter() {
        let Some(default) = registration.data::<ReflectDefault>() else {
            continue;
        };
        // A type's `Default` is the game's code; one that panics is not what this test is about.
        let Ok(value) = catch_unwind(AssertUnwindSafe(|| default.default())) else {
            continue;
        };
        tally.compare(value.as_partial_reflect(), &registry);
        // Dynamic values (what a parsed write holds) take the structural path only. (Bevy 0.20
        // says when a value has no dynamic copy; such a value is never a parsed write.)
        if let Ok(copy) = bevy::compat::to_dynamic(value.as_partial_reflect()) {
            tally.compare(copy.as_ref(), &registry);
        }
    }

    // Every shape, with data: struct and tuple variants, options with and without a value, a
    // list of structs, a map.
    let inventory = Inventory {
        gold: 7,
        items: vec![
            Item {
                name: "rope".to_owned(),
                weight: 1.5,
                slot: Some(2),
            },
            Item::default(),
        ],
        equipped: Some(Weapon::Staff("fire".to_owned(), 2.5)),
        keys: BTreeMap::from([("cellar".to_owned(), 1), ("gate \"b\"".to_owned(), 3)]),
    };
    let weapons = [
        Weapon::Unarmed,
        Weapon::Sword {
            damage: 4.0,
            enchanted: true,
        },
        Weapon::Bow(12),
        Weapon::Staff(String::new(), f32::NAN),
    ];
    tally.compare(&inventory, &registry);
    tally.compare(dynamic(&inventory).as_ref(), &registry);
    for weapon in &weapons {
        tally.compare(weapon, &registry);
        tally.compare(dynamic(weapon).as_ref(), &registry);
    }
    tally.compare(&Team::Blue, &registry);

    let entities: Vec<_> = world.iter_entities().map(|entity| entity.id()).collect();
    for entity in entities {
        let Ok(entity_ref) = world.get_entity(entity) else {
            continue;
        };
        for (_, registration) in test_support::reflected_components(world, entity, &registry) {
            let Some(component) = registration.data::<ReflectComponent>() else {
                continue;
            };
            if let Some(value) = component.reflect(entity_ref) {
                tally.compare(value.as_partial_reflect(), &registry);
            }
        }
    }

    assert!(
        tally.mismatches.is_empty(),
        "{} mismatches, the first: {:#?}",
        tally.mismatches.len(),
        &tally.mismatches[..tally.mismatches.len().min(10)]
    );
    eprintln!(
        "the walk wrote {} values itself and handed {} to Bevy's serializer ({} with handles not compared)",
        tally.walked, tally.handed_over, tally.with_handles
    );
    // Not vacuous: the walk covers the common shapes a component read meets.
    assert!(tally.walked > 200, "only {} values walked", tally.walked);
    for expected in [
        "bevy_transform::components::transform::Transform",
        "bevy_ecs::name::Name",
        "bevy_mcp_sandbox::Inventory",
        "bevy_mcp_sandbox::Weapon",
        "bevy_mcp_sandbox::Team",
    ] {
        assert!(
            tally
                .walked_types
                .iter()
                .any(|path| path.starts_with(expected)),
            "no value of {expected}… was walked"
        );
    }
}
