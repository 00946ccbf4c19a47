//! Generic writes to Bevy's own types on an app that renders what real games do (sprites, text, UI,
//! a lit 3D scene; `EngineShowcasePlugin`): the writes that crashed or froze Bevy's example games
//! are refused with what is allowed, the bounded ones go through, and a render error that follows
//! a write is survived by taking the write back.

#![cfg(feature = "render")]

use bevy::light::PointLightShadowMap;
use bevy_mcp_bridge::RenderRecoveries;
use bevy_mcp_sandbox::testing::Harness;
use serde_json::{Value, json};

/// The showcase, or `None` without a Vulkan driver (a failure under CI, which has one).
fn showcase(
    configure: impl FnOnce(bevy_mcp_bridge::BridgeConfig) -> bevy_mcp_bridge::BridgeConfig,
) -> Option<Harness> {
    match Harness::showcase(configure) {
        Ok(harness) => Some(harness),
        Err(reason) => {
            assert!(std::env::var_os("CI").is_none(), "{reason}");
            eprintln!("skipping: {reason}");
            None
        }
    }
}

/// The app is still running and rendering: it was not asked to exit, no render error happened,
/// and a screenshot comes back.
fn assert_still_rendering(harness: &mut Harness) {
    harness.run_frames(6);
    assert!(
        harness.app.should_exit().is_none(),
        "the app was asked to exit"
    );
    let recoveries = harness.world().resource::<RenderRecoveries>();
    assert!(
        recoveries.recoveries.is_empty() && recoveries.unexplained == 0,
        "a render error happened: {recoveries:?}"
    );
    let reply = harness
        .call_reply("view", "screenshot", json!({"maxWidth": 64}))
        .unwrap_or_else(|error| panic!("the app still captures: {error:?}"));
    assert_eq!(reply.images.len(), 1);
}

/// Asserts the call is refused with `code` and a message holding `says`.
fn refused(harness: &mut Harness, tool: &str, action: &str, params: Value, code: &str, says: &str) {
    let answer = harness.call(tool, action, params.clone());
    let error = answer
        .err()
        .unwrap_or_else(|| panic!("{tool}.{action} {params} was accepted"));
    assert_eq!(error.code.to_string(), code, "{error}");
    assert!(
        error.message.contains(says),
        "{tool}.{action} {params}: {:?} does not say {says:?}",
        error.message
    );
}

#[test]
fn writes_that_broke_bevy_examples_are_refused_with_what_is_allowed() {
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    harness.run_frames(2);
    // From the table: each once, on a fresh game.
    refused(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "Banner", "component": "bevy_text::text::TextFont", "path": ".font_size", "value": {"Px": 1e30}}),
        "INVALID_VALUE",
        "Px within 1..256",
    );
    refused(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "Label", "component": "bevy_text::text::TextFont", "path": ".font_size", "value": {"Px": 100000.0}}),
        "INVALID_VALUE",
        "Px(100000) is outside 1..256",
    );
    for size in [0, 100_000] {
        refused(
            &mut harness,
            "manage_resource",
            "mutate",
            json!({"resource": "bevy_light::point_light::PointLightShadowMap", "path": ".size", "value": size}),
            "INVALID_VALUE",
            "use one of 256, 512, 1024, 2048, 4096",
        );
    }
    refused(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "Camera3d", "component": "bevy_camera::components::Camera3d", "path": ".depth_texture_usages", "value": 0}),
        "PROTECTED_TYPE",
        "Bevy owns it",
    );
    refused(
        &mut harness,
        "control_entity",
        "insert_components",
        json!({"entity": "MainCamera", "components": {"bevy_camera::components::Camera3d": {}}}),
        "PROTECTED_TYPE",
        "Bevy owns it",
    );
    // A field Bevy keeps, and a tiled sprite cut into too many tiles.
    refused(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "MainCamera", "component": "bevy_camera::camera::Camera", "path": ".msaa_writeback", "value": "Always"}),
        "INVALID_VALUE",
        "the writable fields are: is_active, order, clear_color, viewport",
    );
    refused(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "TiledFloor", "component": "bevy_sprite::sprite::Sprite", "path": ".custom_size", "value": [4096.0, 4096.0]}),
        "INVALID_VALUE",
        "tiles, over 10000",
    );
    assert_still_rendering(&mut harness);
}

#[test]
fn bounded_engine_writes_go_through_and_the_game_keeps_rendering() {
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    harness.run_frames(2);
    let ok = |harness: &mut Harness, tool: &str, action: &str, params: Value| {
        harness
            .call(tool, action, params.clone())
            .unwrap_or_else(|error| panic!("{tool}.{action} {params}: {error}"))
    };
    ok(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "Banner", "component": "bevy_text::text::TextFont", "path": ".font_size", "value": {"Px": 64.0}}),
    );
    ok(
        &mut harness,
        "manage_resource",
        "mutate",
        json!({"resource": "bevy_light::point_light::PointLightShadowMap", "path": ".size", "value": 1024}),
    );
    ok(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "Sun", "component": "bevy_light::directional_light::DirectionalLight", "path": ".illuminance", "value": 2000.0}),
    );
    ok(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "TiledFloor", "component": "bevy_sprite::sprite::Sprite", "path": ".custom_size", "value": [8.0, 2.0]}),
    );
    // Spawning a UI node needs only the fields that matter: the rest take Node's defaults.
    let spawned = ok(
        &mut harness,
        "control_entity",
        "spawn",
        json!({"components": {
            "bevy_ecs::name::Name": "Toast",
            "bevy_ui::ui_node::Node": {"width": {"Px": 120.0}, "height": {"Px": 30.0}},
            "bevy_ui::ui_node::BackgroundColor": {"Srgba": {"red": 0.2, "green": 0.2, "blue": 0.2, "alpha": 1.0}},
        }}),
    );
    assert!(spawned["entity"].is_object(), "{spawned}");
    let node = ok(
        &mut harness,
        "inspect",
        "get_entity",
        json!({"entity": "Toast", "components": ["bevy_ui::ui_node::Node"]}),
    );
    let text = node.to_string();
    assert!(
        text.contains("\"width\":{\"Px\":120.0}") && text.contains("\"display\":\"Flex\""),
        "given fields set, the others default: {text}"
    );
    // Split screen: the 2D camera draws into the left half of its target.
    ok(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "MainCamera", "component": "bevy_camera::camera::Camera", "path": ".viewport", "value": {
            "physical_position": [0, 0], "physical_size": [320, 360], "depth": {"start": 0.0, "end": 1.0}}}),
    );
    refused(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "MainCamera", "component": "bevy_camera::camera::Camera", "path": ".viewport", "value": {
            "physical_position": [600, 0], "physical_size": [320, 360], "depth": {"start": 0.0, "end": 1.0}}}),
        "INVALID_VALUE",
        "does not fit the camera's 640x360 target",
    );
    assert_still_rendering(&mut harness);
}

#[test]
fn describe_type_shows_the_bounds_in_the_schema() {
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    let shadow = harness
        .call(
            "inspect",
            "describe_type",
            json!({"type": "bevy_light::point_light::PointLightShadowMap"}),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    let schema = shadow["schema"].to_string();
    assert!(
        schema.contains("\"enum\":[256.0,512.0,1024.0,2048.0,4096.0]"),
        "{schema}"
    );
    let font = harness
        .call(
            "inspect",
            "describe_type",
            json!({"type": "bevy_text::text::TextFont"}),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    let schema = font["schema"].to_string();
    assert!(schema.contains("Px within 1..256"), "{schema}");
    assert!(
        schema.contains("\"readOnly\":true"),
        "kept fields: {schema}"
    );
    assert_eq!(
        font["writable"]["fields"],
        json!(["font_size", "font", "font_smoothing"])
    );
    let node = harness
        .call(
            "inspect",
            "describe_type",
            json!({"type": "bevy_ui::ui_node::Node"}),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(
        node["schema"].to_string().contains("\"maximum\":16384.0"),
        "every number of a Node is bounded"
    );
    let camera3d = harness
        .call(
            "inspect",
            "describe_type",
            json!({"type": "bevy_camera::components::Camera3d"}),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(camera3d["protected"]["reason"].is_string(), "{camera3d}");
}

#[test]
fn every_writable_engine_type_is_registered_in_a_rendering_app() {
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    let registry = harness
        .world()
        .resource::<bevy::ecs::reflect::AppTypeRegistry>()
        .clone();
    let registry = registry.read();
    let missing: Vec<&str> = bevy_mcp_bridge::test_support::writable_engine_types()
        .into_iter()
        .filter(|path| {
            !registry.iter().any(|registration| {
                let own = registration.type_info().type_path();
                if path.ends_with('<') {
                    own.starts_with(path)
                } else {
                    own == *path
                }
            })
        })
        // A generic resource appears once an app has a state machine; the showcase has none of
        // Bevy's own, the sandbox's NextState<Phase> is there.
        .collect();
    assert!(
        missing.is_empty(),
        "not registered (renamed in Bevy?): {missing:?}"
    );
}

#[test]
fn every_type_of_bevys_crates_is_the_engines() {
    // A crate Bevy adds (0.20 split `bevy_extract`, `bevy_shape` and `bevy_curve` out) would
    // otherwise pass for the game's, and its types would be open to the generic writes.
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    let registry = harness
        .world()
        .resource::<bevy::ecs::reflect::AppTypeRegistry>()
        .clone();
    let registry = registry.read();
    let mut unknown: Vec<&str> = registry
        .iter()
        .map(|registration| registration.type_info().type_path())
        .filter(|path| {
            let krate = path.split("::").next().unwrap_or_default();
            krate.starts_with("bevy_")
                && !krate.starts_with("bevy_mcp")
                && !bevy_mcp_bridge::test_support::is_engine_type(path)
        })
        .collect();
    unknown.sort_unstable();
    assert!(
        unknown.is_empty(),
        "types of Bevy crates the write policy does not know (add the crate to ENGINE_CRATES): {unknown:?}"
    );
}

#[test]
fn a_render_error_after_a_write_takes_the_write_back_and_rendering_goes_on() {
    // The app opens the shadow map on purpose, so the bridge lets a size of zero through: wgpu
    // refuses the texture, and the backstop takes the write back.
    let Some(mut harness) = showcase(|config| config.with_open_type::<PointLightShadowMap>())
    else {
        return;
    };
    harness.run_frames(2);
    let before = harness.world().resource::<PointLightShadowMap>().size;
    harness
        .call(
            "manage_resource",
            "mutate",
            json!({"resource": "bevy_light::point_light::PointLightShadowMap", "path": ".size", "value": 0}),
        )
        .unwrap_or_else(|error| panic!("the open type takes the write: {error}"));
    let mut recovered = false;
    for _ in 0..60 {
        harness.run_frames(1);
        if !harness
            .world()
            .resource::<RenderRecoveries>()
            .recoveries
            .is_empty()
        {
            recovered = true;
            break;
        }
    }
    assert!(
        recovered,
        "a render error followed the write within 60 frames"
    );
    let recoveries = harness.world().resource::<RenderRecoveries>().clone();
    assert_eq!(recoveries.unexplained, 0);
    let recovery = &recoveries.recoveries[0];
    assert_eq!(recovery.rolled_back.len(), 1, "{recovery:?}");
    assert_eq!(recovery.rolled_back[0].1, "manage_resource.mutate");
    assert_eq!(
        harness.world().resource::<PointLightShadowMap>().size,
        before,
        "the write was taken back"
    );
    let history = harness
        .call("history", "list", json!({}))
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(
        history.to_string().contains("rolledBack"),
        "the journal says so: {history}"
    );
    // Rendering goes on: frames run, the app stays, a screenshot comes back.
    harness.run_frames(10);
    assert!(
        harness.app.should_exit().is_none(),
        "the app was asked to exit"
    );
    let reply = harness
        .call_reply("view", "screenshot", json!({"maxWidth": 64}))
        .unwrap_or_else(|error| panic!("the app still captures: {error:?}"));
    assert_eq!(reply.images.len(), 1);
    assert_eq!(
        harness
            .world()
            .resource::<RenderRecoveries>()
            .recoveries
            .len(),
        1,
        "no further render error"
    );
}

#[test]
fn engine_components_keep_what_bevy_needs_around_them() {
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    harness.run_frames(2);
    // A light on a camera's entity, or two kinds of light on one, panics Bevy's renderer.
    refused(
        &mut harness,
        "control_entity",
        "insert_components",
        json!({"entity": "MainCamera", "components": {"bevy_light::point_light::PointLight": {}}}),
        "INVALID_VALUE",
        "cannot share an entity with bevy_camera::camera::Camera",
    );
    refused(
        &mut harness,
        "control_entity",
        "spawn",
        json!({"components": {"bevy_light::point_light::PointLight": {}, "bevy_light::directional_light::DirectionalLight": {}}}),
        // Both are refused, so the answer lists both.
        "INVALID_PARAMS",
        "cannot share an entity with",
    );
    // A camera is made by the game; a bare one breaks the renderer's assumptions.
    refused(
        &mut harness,
        "control_entity",
        "spawn",
        json!({"components": {"bevy_camera::camera::Camera": {}}}),
        "INVALID_VALUE",
        "can only replace the one an entity already has",
    );
    // A component another one requires stays (Bevy adds required components only on insert).
    refused(
        &mut harness,
        "control_entity",
        "remove_components",
        json!({"entity": "Lamp", "components": ["bevy_transform::components::transform::Transform"]}),
        "INVALID_PARAMS",
        // The lamp's point light requires it (and so does the sprite the sandbox gives every
        // named entity with a transform).
        "bevy_transform::components::transform::Transform is required by",
    );
    // A light of its own is fine, and so is removing a light with what it required.
    harness
        .call(
            "control_entity",
            "spawn",
            json!({"components": {"bevy_ecs::name::Name": "Spot", "bevy_light::spot_light::SpotLight": {"intensity": 50000.0}}}),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    assert_still_rendering(&mut harness);
}

#[test]
fn a_world_with_sprites_text_and_cameras_saves_and_loads() {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("temp dir: {error}"));
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    harness
        .world()
        .insert_resource(bevy_mcp_bridge::test_support::ScenesDir(
            dir.path().to_owned(),
        ));
    harness.run_frames(2);
    let saved = harness
        .call(
            "manage_world",
            "save",
            json!({"name": "showcase", "names": ["SlicedPanel", "TiledFloor", "Banner"], "includeResources": false, "overwrite": false}),
        )
        .unwrap_or_else(|error| panic!("save: {error}"));
    assert_eq!(saved["entityCount"], json!(3), "{saved}");
    let loaded = harness
        .call("manage_world", "load", json!({"name": "showcase"}))
        .unwrap_or_else(|error| panic!("load: {error}"));
    assert_eq!(loaded["spawned"], json!(3), "{loaded}");
    assert_still_rendering(&mut harness);
}

#[test]
fn a_directional_lights_shadows_turn_off_but_not_on_through_the_bridge() {
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    harness.run_frames(2);
    let shadows = |value: bool| json!({"entity": "Sun", "component": "bevy_light::directional_light::DirectionalLight", "path": ".shadow_maps_enabled", "value": value});
    harness
        .call("control_entity", "mutate_component", shadows(false))
        .unwrap_or_else(|error| panic!("{error}"));
    harness.run_frames(3);
    refused(
        &mut harness,
        "control_entity",
        "mutate_component",
        shadows(true),
        "INVALID_VALUE",
        "shadow_maps_enabled cannot turn on through the bridge",
    );
    refused(
        &mut harness,
        "control_entity",
        "spawn",
        json!({"components": {"bevy_light::directional_light::DirectionalLight": {"shadow_maps_enabled": true}}}),
        "INVALID_VALUE",
        "cannot turn on",
    );
    harness
        .call(
            "control_entity",
            "spawn",
            json!({"components": {"bevy_ecs::name::Name": "Moon", "bevy_light::directional_light::DirectionalLight": {"illuminance": 50.0}}}),
        )
        .unwrap_or_else(|error| panic!("a sun without shadows spawns: {error}"));
    assert_still_rendering(&mut harness);
}

#[test]
fn a_transform_never_collapses_what_cameras_and_lights_look_along() {
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    harness.run_frames(2);
    // Found by the engine fuzzer (seed 4): a zero scale on the 3D camera made a NaN direction,
    // which panics Bevy's camera code.
    refused(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "Camera3d", "component": "bevy_transform::components::transform::Transform", "path": ".scale.z", "value": 0.0}),
        "INVALID_VALUE",
        "collapses or explodes the entity",
    );
    refused(
        &mut harness,
        "control_entity",
        "set_transform",
        json!({"entity": "Lamp", "mode": "set", "scale": [0.0, 1.0, 1.0]}),
        "INVALID_VALUE",
        "collapses or explodes the entity",
    );
    refused(
        &mut harness,
        "control_entity",
        "mutate_component",
        json!({"entity": "Sun", "component": "bevy_transform::components::transform::Transform", "path": ".rotation", "value": [0.0, 0.0, 0.0, 0.0]}),
        "INVALID_VALUE",
        "not 1",
    );
    harness
        .call(
            "control_entity",
            "mutate_component",
            json!({"entity": "Sun", "component": "bevy_transform::components::transform::Transform", "path": ".rotation", "value": [0.0, 0.70710677, 0.0, 0.70710677]}),
        )
        .unwrap_or_else(|error| panic!("a unit quaternion is fine: {error}"));
    assert_still_rendering(&mut harness);
}

#[test]
fn a_copy_passes_the_bounds_a_spawn_would() {
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    harness.run_frames(2);
    // The sun's shadows are on: its copy would be a new light whose shadows turn on after
    // PostUpdate, so the copy leaves the light out and says why.
    let copied = harness
        .call("control_entity", "duplicate", json!({"entity": "Sun"}))
        .unwrap_or_else(|error| panic!("{error}"));
    let text = copied.to_string();
    assert!(
        text.contains("shadow_maps_enabled cannot turn on through the bridge"),
        "{text}"
    );
    // A sprite is copied whole, image and all.
    harness
        .call(
            "control_entity",
            "duplicate",
            json!({"entity": "TiledFloor"}),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    assert_still_rendering(&mut harness);
}

#[test]
fn a_world_file_holds_the_placement_rules_a_spawn_does() {
    use bevy::light::{DirectionalLight, PointLight};
    // Headless, so the world itself may hold what the renderer would panic on: a point and a
    // directional light on one entity. Saved, it must not load back.
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("temp dir: {error}"));
    let mut harness = Harness::configured(
        |config| config,
        |app| {
            app.register_type::<PointLight>()
                .register_type::<DirectionalLight>();
        },
    );
    harness
        .world()
        .insert_resource(bevy_mcp_bridge::test_support::ScenesDir(
            dir.path().to_owned(),
        ));
    harness.world().spawn((
        bevy::prelude::Name::new("TwoLights"),
        PointLight::default(),
        DirectionalLight::default(),
    ));
    harness
        .call(
            "manage_world",
            "save",
            json!({"name": "lights", "names": ["TwoLights"], "includeResources": false, "overwrite": false}),
        )
        .unwrap_or_else(|error| panic!("save: {error}"));
    let error = harness
        .call("manage_world", "load", json!({"name": "lights"}))
        .err()
        .unwrap_or_else(|| panic!("the file loaded"));
    assert_eq!(error.code.to_string(), "INVALID_FILE", "{error}");
    assert!(error.message.contains("cannot share an entity"), "{error}");
}

#[test]
fn a_text_font_write_is_journaled_with_its_font_and_undone() {
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    harness.run_frames(2);
    // A font the game loaded: TextFont then holds a handle, which the journal holds as its path.
    let banner = harness.entity("Banner");
    let font = harness
        .world()
        .resource::<bevy::asset::AssetServer>()
        .load::<bevy::text::Font>("fonts/not-shipped.ttf");
    if let Some(mut text_font) = harness.world().get_mut::<bevy::text::TextFont>(banner) {
        text_font.font = bevy::text::FontSource::Handle(font);
    }
    harness.run_frames(1);
    let before = harness
        .call(
            "inspect",
            "get_entity",
            json!({"entity": "Banner", "components": ["TextFont"]}),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    let font_before = before["components"]["bevy_text::text::TextFont"].clone();
    assert!(
        font_before.to_string().contains("fonts/not-shipped.ttf"),
        "{before}"
    );
    harness
        .call(
            "control_entity",
            "mutate_component",
            json!({"entity": "Banner", "component": "bevy_text::text::TextFont", "path": ".font_size", "value": {"Px": 40.0}}),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    let listed = harness
        .call("history", "list", json!({}))
        .unwrap_or_else(|error| panic!("{error}"));
    let entry = &listed["entries"][0];
    assert_eq!(
        entry["action"],
        json!("control_entity.mutate_component"),
        "{listed}"
    );
    assert_eq!(entry["undoable"], json!(true), "{listed}");
    harness
        .call("history", "undo", json!({}))
        .unwrap_or_else(|error| panic!("{error}"));
    let after = harness
        .call(
            "inspect",
            "get_entity",
            json!({"entity": "Banner", "components": ["TextFont"]}),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(
        after["components"]["bevy_text::text::TextFont"],
        font_before
    );
}

/// Materials are made and changed within the bounds of their shaders, and a float that is not
/// finite stays only where the material already held it (the default's infinite attenuation).
#[test]
fn materials_are_made_and_changed_within_their_bounds() {
    let Some(mut harness) = showcase(|config| config) else {
        return;
    };
    harness.run_frames(2);
    let made = harness
        .call(
            "manage_asset",
            "create_asset",
            json!({"type": "StandardMaterial", "value": {"perceptual_roughness": 0.3}}),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    let id = made["id"].clone();
    let refusals = [
        (
            "create_asset",
            json!({"type": "StandardMaterial", "value": {"perceptual_roughness": 1e39}}),
        ),
        (
            "create_asset",
            json!({"type": "StandardMaterial", "value": {"max_parallax_layer_count": 1e9}}),
        ),
        (
            "create_asset",
            json!({"type": "StandardMaterial", "value": {"parallax_mapping_method": {"Relief": {"max_steps": 4_000_000_000_u32}}}}),
        ),
        (
            "mutate",
            json!({"asset": id, "path": ".perceptual_roughness", "value": 1e39}),
        ),
        (
            "mutate",
            json!({"asset": id, "path": ".max_parallax_layer_count", "value": 100000.0}),
        ),
        ("create_asset", json!({"type": "Image", "value": {}})),
    ];
    for (action, params) in refusals {
        let refused = harness
            .call("manage_asset", action, params.clone())
            .expect_err(&params.to_string());
        assert!(
            ["INVALID_VALUE", "PROTECTED_TYPE"].contains(&refused.code.as_str()),
            "{params}: {refused:?}"
        );
    }
    let read = harness
        .call("manage_asset", "get", json!({"asset": id}))
        .unwrap_or_else(|error| panic!("{error}"));
    let roughness = read["value"]["perceptual_roughness"]
        .as_f64()
        .unwrap_or(f64::NAN);
    assert!((roughness - 0.3).abs() < 1e-6, "nothing changed: {read}");
    let changed = harness
        .call(
            "manage_asset",
            "mutate",
            json!({"asset": id, "path": ".perceptual_roughness", "value": 0.8}),
        )
        .unwrap_or_else(|error| panic!("{error}"));
    let after = changed["after"].as_f64().unwrap_or(f64::NAN);
    assert!((after - 0.8).abs() < 1e-6, "{changed}");
}
