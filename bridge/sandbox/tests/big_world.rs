//! Reads in a world of twenty thousand entities, some despawned in the middle: pages come in
//! index order with the right total, and an entity late in the world is found by its display
//! form and by its name. (What the reads cost at 1 000 to 100 000 entities belongs in a
//! benchmark; these machines are too noisy for timing assertions.)

use bevy::prelude::{Entity, Name};
use bevy_mcp_sandbox::testing::Harness;
use serde_json::{Value, json};

const SPAWNED: usize = 20_000;

fn ok(result: Result<Value, mcp_native_transport::ToolError>) -> Value {
    result.unwrap_or_else(|error| panic!("{error}: {:?}", error.details))
}

#[test]
fn pages_totals_and_lookups_stay_right_in_a_big_world() {
    let mut harness = Harness::new();
    let before = ok(harness.call("inspect", "list_entities", json!({"limit": 1})))["total"]
        .as_u64()
        .unwrap_or_default() as usize;
    let spawned: Vec<Entity> = harness.spawn_crates(SPAWNED);
    // Holes in the index space: despawned entities are neither listed nor counted.
    let holes: Vec<Entity> = spawned.iter().copied().skip(100).step_by(1000).collect();
    for entity in &holes {
        harness.world().despawn(*entity);
    }
    let despawned = holes.len();
    let expected = before + SPAWNED - despawned;

    let first = ok(harness.call("inspect", "list_entities", json!({"limit": 50})));
    assert_eq!(first["total"], json!(expected));
    let last_page = ok(harness.call(
        "inspect",
        "list_entities",
        json!({"offset": expected - 10, "limit": 50}),
    ));
    let rows = last_page["entities"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(rows.len(), 10, "the last ten");
    let indices: Vec<u64> = rows
        .iter()
        .filter_map(|row| row["bits"].as_u64())
        .map(|bits| Entity::from_bits(bits).index().index().into())
        .collect();
    assert!(indices.is_sorted(), "index order: {indices:?}");
    assert_eq!(
        rows.last().map(|row| row["name"].clone()),
        Some(json!(format!("Crate {}", SPAWNED - 1)))
    );

    let late = spawned[SPAWNED - 1];
    let by_display = ok(harness.call("inspect", "get_entity", json!({"entity": late.to_string()})));
    assert_eq!(by_display["entity"]["bits"], json!(late.to_bits()));
    let by_name = ok(harness.call("inspect", "get_entity", json!({"entity": "Crate 19998"})));
    assert_eq!(
        by_name["entity"]["bits"],
        json!(spawned[SPAWNED - 2].to_bits())
    );
    let gone = harness.call(
        "inspect",
        "get_entity",
        json!({"entity": spawned[100].to_string()}),
    );
    assert_eq!(
        gone.err().map(|error| error.code.to_string()).as_deref(),
        Some("ENTITY_NOT_FOUND")
    );

    let found = ok(harness.call(
        "inspect",
        "find_entities",
        json!({"name": "Crate 1999", "limit": 3}),
    ));
    // "Crate 1999" and "Crate 19990".."Crate 19999": eleven match, three are returned.
    assert_eq!(found["total"], json!(11));
    assert_eq!(found["entities"].as_array().map(Vec::len), Some(3));
}

#[test]
fn a_cursor_pages_through_a_big_world_like_offsets_do_and_a_bad_one_is_refused() {
    let mut harness = Harness::new();
    let spawned: Vec<Entity> = harness.spawn_crates(SPAWNED);
    for entity in spawned.iter().skip(7).step_by(997) {
        harness.world().despawn(*entity);
    }
    let bits = |page: &Value| -> Vec<u64> {
        page["entities"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|row| row["bits"].as_u64())
            .collect()
    };
    // Every entity once, in index order, the same as offset pages give.
    let mut by_cursor = Vec::new();
    let mut cursor: Option<Value> = None;
    let mut pages = 0;
    loop {
        let mut params = json!({"limit": 500, "withComponentNames": false});
        if let Some(cursor) = &cursor {
            params["cursor"] = cursor.clone();
        }
        let page = ok(harness.call("inspect", "list_entities", params));
        by_cursor.extend(bits(&page));
        pages += 1;
        assert!(pages <= SPAWNED / 500 + 2, "the pages end");
        if page["moreAvailable"] != json!(true) {
            assert!(page.get("cursor").is_none(), "{page}");
            break;
        }
        cursor = Some(page["cursor"].clone());
    }
    let total = ok(harness.call("inspect", "list_entities", json!({"limit": 1})))["total"].clone();
    assert_eq!(json!(by_cursor.len()), total);
    let mut by_offset = Vec::new();
    for offset in (0..by_cursor.len()).step_by(500) {
        let page = ok(harness.call(
            "inspect",
            "list_entities",
            json!({"offset": offset, "limit": 500, "withComponentNames": false}),
        ));
        by_offset.extend(bits(&page));
    }
    assert_eq!(by_cursor, by_offset);
    assert!(
        by_cursor.windows(2).all(|pair| {
            Entity::from_bits(pair[0]).index() < Entity::from_bits(pair[1]).index()
        })
    );

    // A cursor no page returned: a typed error that says how to start again.
    for bad in ["next", "-1", "99999999999"] {
        let error = harness
            .call("inspect", "list_entities", json!({"cursor": bad}))
            .err()
            .unwrap_or_else(|| panic!("{bad} was accepted"));
        assert_eq!(error.code.as_str(), "INVALID_CURSOR", "{error}");
        assert!(error.message.contains("start again"), "{error}");
        assert!(error.next_call.is_some(), "{error}");
    }
}

#[test]
fn a_query_over_a_big_world_reads_a_slice_per_frame_and_answers_once_all_is_read() {
    use bevy::prelude::Transform;
    use bevy_mcp_bridge::test_support::SLICE_UNITS;
    use mcp_native_transport::ProgressSink;

    let mut harness = Harness::new();
    let spawned: Vec<Entity> = (0..SPAWNED)
        .map(|index| {
            harness
                .world()
                .spawn((
                    Name::new(format!("Crate {index}")),
                    // The first five and the last five are marked.
                    Transform::from_xyz(
                        index as f32,
                        0.0,
                        if !(5..SPAWNED - 5).contains(&index) {
                            7.0
                        } else {
                            0.0
                        },
                    ),
                ))
                .id()
        })
        .collect();
    let entities = harness.world().entities().len();
    let frames = entities.div_ceil(SLICE_UNITS);
    assert!(frames >= 3, "the world takes several slices: {entities}");
    let marked =
        json!([{"component": "Transform", "path": ".translation.z", "op": "eq", "value": 7.0}]);
    let query = json!({"with": ["Transform"], "components": [], "limit": 5, "where": marked});
    let pending = harness.start("inspect", "query", query, ProgressSink::disabled());
    // The first slice ran in the frame the call arrived in; the rest need a frame each at least
    // (a slice may end sooner, on time, never later).
    for _ in 1..frames - 1 {
        harness.run_frames(1);
        if let Some(answer) = pending.try_answer() {
            panic!("answered before the whole world was read: {answer:?}");
        }
    }
    // An entity the first slice matched is despawned before the answer: it is left out.
    harness.world().despawn(spawned[0]);
    let answer = ok(harness.finish(&pending));
    assert_eq!(answer["total"], json!(9), "{answer}");
    assert_eq!(answer["returned"], json!(5));
    // The same query again pages on with the cursor, over frames too.
    let rest = ok(harness.call(
        "inspect",
        "query",
        json!({"with": ["Transform"], "components": [], "limit": 5, "cursor": answer["cursor"],
            "where": marked}),
    ));
    assert_eq!(rest["returned"], json!(4), "{rest}");
    assert_eq!(rest["moreAvailable"], json!(false));
}
