//! What the bridge publishes for `search` on a real sandbox app: its types with fields, values
//! and docs, its entity names with counts, its own tools; names that go away are forgotten; and
//! the published names stay bounded.

use std::time::Duration;

use bevy::prelude::Name;
use bevy_mcp_bridge::test_support::{MAX_ENTITY_NAMES, SearchTermsFeed};
use bevy_mcp_sandbox::testing::Harness;
use mcp_native_transport::{AppTerms, Term, TermKind};

fn published(harness: &mut Harness) -> (u64, std::sync::Arc<AppTerms>) {
    harness
        .world()
        .get_resource::<SearchTermsFeed>()
        .map(|feed| feed.0.current())
        .unwrap_or_else(|| panic!("the bridge inserts its search feed"))
}

fn find<'a>(terms: &'a AppTerms, kind: TermKind, name: &str) -> Option<&'a Term> {
    terms
        .terms
        .iter()
        .find(|term| term.kind == kind && term.name == name)
}

/// How many entity names are published.
fn entity_names(terms: &AppTerms) -> usize {
    terms
        .terms
        .iter()
        .filter(|term| term.kind == TermKind::Entity)
        .count()
}

/// Runs frames (bounded, a little apart: the publisher looks at most twice a second) until a
/// publication newer than `after` satisfies `done`.
fn until_published(harness: &mut Harness, after: u64, done: impl Fn(&AppTerms) -> bool) -> bool {
    for _ in 0..60 {
        harness.app.update();
        let (version, terms) = published(harness);
        if version > after && done(&terms) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn the_first_frame_publishes_the_games_types_names_and_tools() {
    let mut harness = Harness::new();
    let (version, terms) = published(&mut harness);
    assert!(version >= 1, "published in the first frame");
    let score = find(&terms, TermKind::Resource, "Score").expect("Score is a resource");
    assert_eq!(score.address, "bevy_mcp_sandbox::Score");
    let red = score.fields.iter().find(|field| field.name == "red");
    assert_eq!(
        red.and_then(|field| field.docs.as_deref()),
        Some("Red team points."),
        "the sandbox keeps docs (reflect_documentation)"
    );
    assert!(
        find(&terms, TermKind::Component, "Score").is_none(),
        "a resource is not also listed as a component"
    );
    assert!(find(&terms, TermKind::Component, "Health").is_some());
    assert!(find(&terms, TermKind::Event, "Explosion").is_some());
    assert!(find(&terms, TermKind::Message, "GoalScored").is_some());
    let team = find(&terms, TermKind::Component, "Team").expect("Team is a component");
    let values: Vec<&str> = team
        .values
        .iter()
        .map(|value| value.name.as_str())
        .collect();
    assert_eq!(values, ["Neutral", "Red", "Blue"]);
    let state = find(&terms, TermKind::State, "GameState").expect("GameState is a state");
    assert!(state.values.iter().any(|value| value.name == "Paused"));
    assert!(!state.engine && team.engine == state.engine);
    let transform = find(&terms, TermKind::Component, "Transform").expect("Transform");
    assert!(
        transform.engine,
        "Bevy's own types are marked as the engine's"
    );
    let goblin = find(&terms, TermKind::Entity, "Goblin").expect("the Goblin entity");
    assert_eq!(goblin.count, 1);
    assert_eq!(terms.app_tools, ["game"]);
}

#[test]
fn names_that_go_away_are_forgotten_and_new_ones_counted() {
    let mut harness = Harness::new();
    let (version, _) = published(&mut harness);
    let orc = harness.entity("Orc");
    harness.world().despawn(orc);
    let crate_entity = harness.entity("Crate");
    harness
        .world()
        .entity_mut(crate_entity)
        .insert(Name::new("Goblin"));
    harness.world().spawn(Name::new("Goblin"));
    assert!(
        until_published(&mut harness, version, |terms| {
            find(terms, TermKind::Entity, "Orc").is_none()
                && find(terms, TermKind::Entity, "Crate").is_none()
                && find(terms, TermKind::Entity, "Goblin").is_some_and(|goblin| goblin.count == 3)
        }),
        "the despawned Orc and the renamed Crate are gone, and three entities are called Goblin: {:?}",
        published(&mut harness)
            .1
            .terms
            .iter()
            .filter(|term| term.kind == TermKind::Entity)
            .collect::<Vec<_>>()
    );
}

#[test]
fn published_names_are_bounded() {
    let mut harness = Harness::new();
    let (version, before) = published(&mut harness);
    let named_before = entity_names(&before);
    let extra = MAX_ENTITY_NAMES + 50 - named_before;
    for index in 0..extra {
        harness.world().spawn(Name::new(format!("Rock {index:05}")));
    }
    assert!(
        until_published(&mut harness, version, |terms| terms.names_left_out > 0),
        "a publication after the spawn"
    );
    let (_, terms) = published(&mut harness);
    assert_eq!(entity_names(&terms), MAX_ENTITY_NAMES);
    assert_eq!(terms.names_left_out, 50);
}

#[test]
fn a_world_that_starts_big_is_read_over_frames_then_published() {
    const ROCKS: usize = 100_000;
    // Far more names than one frame's batch of reads (150 µs) could take on any machine.
    let mut harness = Harness::with_app(|app| {
        app.world_mut()
            .spawn_batch((0..ROCKS).map(|index| Name::new(format!("Rock {index:06}"))));
    });
    let (version, _) = published(&mut harness);
    assert_eq!(
        version, 0,
        "the first frame read a batch of the names and published nothing yet"
    );
    // The rest are read a batch per frame; the census thread publishes once all are read.
    let mut terms = None;
    for _ in 0..5_000 {
        harness.app.update();
        let (version, published) = published(&mut harness);
        if version > 0 {
            terms = Some(published);
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let terms = terms.unwrap_or_else(|| panic!("published within 5,000 frames"));
    assert_eq!(entity_names(&terms), MAX_ENTITY_NAMES);
    assert!(
        terms.names_left_out >= ROCKS - MAX_ENTITY_NAMES,
        "{}",
        terms.names_left_out
    );
    assert!(
        find(&terms, TermKind::Resource, "Score").is_some(),
        "the types come with the names"
    );
}
