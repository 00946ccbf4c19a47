//! `search` that knows the game, against the real sandbox over real HTTP: the labelled intents
//! reach their recall floors, the issue's five queries rank the needed action first, and a name
//! the game gives later is found once the bridge republishes.

use std::time::Duration;

use bevy_mcp_contract_tests::mcp::McpSession;
use bevy_mcp_contract_tests::search_recall::{self, Recall};
use bevy_mcp_sandbox::testing::SandboxServer;
use serde_json::{Value, json};

/// Floors the older labelled set (`search-intents.json`) must keep: a little under what it
/// measured once search learnt from the labelled phrasings (tuning 0.991 / 1.000, held out
/// 0.905 / 0.986; after issue 33's second round 0.982 / 0.982 and 0.892 / 0.959; before issue 33
/// 0.936 / 0.973 and 0.824 / 0.932), so a regression fails. The targets are 0.90 / 0.98.
const TUNING_FLOOR: (f64, f64) = (0.97, 0.98);
const HELD_OUT_FLOOR: (f64, f64) = (0.88, 0.96);
/// Floors of issue 33's set (`search-phrasings.json`), a little under what it measured once
/// search read a game's names as one word and learnt from the twenty-first development set
/// (tuning 0.971 / 0.989, held out 0.899 / 0.953; with the names alone 0.975 / 0.989 and 0.899 /
/// 0.949; after
/// the thirteenth to twentieth development sets 0.971 / 0.986 and 0.888 / 0.949; when it first learnt from the labelled phrasings 0.967 / 0.982 and 0.826 /
/// 0.920; after the fifth development set's round 0.909 / 0.964 and 0.699 / 0.859; after the
/// second round 0.899 / 0.957 and 0.649 / 0.822; before any change 0.533 / 0.710 and 0.565 /
/// 0.699).
const PHRASINGS_TUNING_FLOOR: (f64, f64) = (0.95, 0.97);
const PHRASINGS_HELD_OUT_FLOOR: (f64, f64) = (0.86, 0.92);

async fn search(session: &McpSession, query: &str) -> Value {
    session
        .call(json!({"operation": "search", "query": query}))
        .await
        .payload()
}

/// Waits (bounded) until a search for `query` explains its first row by the app's terms.
async fn once_the_world_is_known(session: &McpSession, query: &str) -> Value {
    for _ in 0..100 {
        let reply = search(session, query).await;
        if reply["results"][0]["because"].is_string() {
            return reply;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("search never matched the app's terms for \"{query}\"");
}

/// Why the first row matched the app ("" when it says nothing).
fn first_because(reply: &Value) -> &str {
    reply["results"][0]["because"].as_str().unwrap_or_default()
}

fn first(reply: &Value) -> (String, String) {
    let row = &reply["results"][0];
    (
        row["tool"].as_str().unwrap_or("?").to_owned(),
        row["action"].as_str().unwrap_or("?").to_owned(),
    )
}

/// Fails unless each named part of `parts` reaches its floors (recall@1, recall@3).
fn assert_floors(parts: &[Recall], floors: [(&str, (f64, f64)); 2]) {
    for (name, (at_1, at_3)) in floors {
        let part = parts
            .iter()
            .find(|part| part.part == name)
            .unwrap_or_else(|| panic!("the set has a {name} part"));
        assert!(
            part.at_1() >= at_1 && part.at_3() >= at_3,
            "{name}: recall@1 {:.3} (floor {at_1}), recall@3 {:.3} (floor {at_3})",
            part.at_1(),
            part.at_3()
        );
    }
}

/// Prints each part's recall, and the misses of the parts that may be tuned on: a held-out
/// part's phrases are never shown, so nobody tunes on them by reading a test's output.
fn report(parts: &[Recall]) {
    for part in parts {
        eprintln!(
            "{}: {} phrases, recall@1 {:.3}, recall@3 {:.3}",
            part.part,
            part.phrases,
            part.at_1(),
            part.at_3()
        );
        if part.part == "held_out" {
            continue;
        }
        for miss in &part.misses {
            eprintln!(
                "  miss: {:?} wanted {:?}, found {:?}",
                miss.query, miss.expect, miss.found
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_labelled_intents_reach_their_recall_floors() {
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;
    once_the_world_is_known(&session, "show me the goblin").await;
    let intents = search_recall::intents().expect("search-intents.json parses");
    assert!(intents.len() >= 150, "at least 150 labelled phrases");
    let parts = search_recall::measure(&session, &intents).await;
    report(&parts);
    assert_floors(
        &parts,
        [("tuning", TUNING_FLOOR), ("held_out", HELD_OUT_FLOOR)],
    );
}

/// Breakout's pieces (Bevy's `examples/games/breakout.rs`) next to the sandbox's named world:
/// components without reflection on entities without names, as most games have them; walls,
/// bricks and the paddle share `Collider`, and the ball's `Velocity` shares its short name with
/// the sandbox's reflected one.
#[derive(bevy::prelude::Component)]
struct Paddle;

#[derive(bevy::prelude::Component)]
struct Ball;

#[derive(bevy::prelude::Component)]
struct Brick;

#[derive(bevy::prelude::Component, Default)]
struct Collider;

#[derive(bevy::prelude::Component)]
struct Wall;

#[derive(bevy::prelude::Component)]
#[allow(dead_code, reason = "game state the test never reads")]
struct Velocity(bevy::math::Vec2);

fn breakout_pieces(app: &mut bevy::prelude::App) {
    use bevy::prelude::{Startup, Transform, World};
    app.add_systems(Startup, |world: &mut World| {
        world.spawn((Paddle, Collider, Transform::from_xyz(0.0, -300.0, 0.0)));
        world.spawn((
            Ball,
            Velocity(bevy::math::Vec2::new(0.5, -0.5)),
            Transform::default(),
        ));
        for side in 0..4 {
            world.spawn((Wall, Collider, Transform::from_xyz(side as f32, 0.0, 0.0)));
        }
        for column in 0..8 {
            world.spawn((
                Brick,
                Collider,
                Transform::from_xyz(column as f32 * 60.0, 200.0, 0.0),
            ));
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_new_phrasings_reach_their_recall_floors() {
    let server = SandboxServer::with_app(60.0, |config| config, breakout_pieces);
    let session = McpSession::start(server.address).await;
    once_the_world_is_known(&session, "show me the goblin").await;
    once_the_world_is_known(&session, "move the paddle left").await;
    let phrasings = search_recall::phrasings().expect("search-phrasings.json parses");
    assert!(phrasings.len() >= 500, "at least 500 labelled phrasings");
    let parts = search_recall::measure(&session, &phrasings).await;
    report(&parts);
    for part in &parts {
        let (wanting, missed) = search_recall::destructive_only(&session, &phrasings, part).await;
        eprintln!(
            "{}: {wanting} phrases want only destructive actions; {missed} of them found none in the first three",
            part.part
        );
    }
    assert_floors(
        &parts,
        [
            ("tuning", PHRASINGS_TUNING_FLOOR),
            ("held_out", PHRASINGS_HELD_OUT_FLOOR),
        ],
    );
}

/// Issue 33's rule: a phrase whose answer is a read never finds a destructive action among
/// the first three, in any labelled set (tuning, held-out and development parts alike).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_question_is_offered_a_destructive_action() {
    let server = SandboxServer::with_app(60.0, |config| config, breakout_pieces);
    let session = McpSession::start(server.address).await;
    once_the_world_is_known(&session, "show me the goblin").await;
    once_the_world_is_known(&session, "move the paddle left").await;
    let mut all = search_recall::intents().expect("search-intents.json parses");
    all.extend(search_recall::phrasings().expect("search-phrasings.json parses"));
    for (part, _) in search_recall::DEVELOPMENT_SETS {
        all.extend(
            search_recall::development_set(part)
                .and_then(Result::ok)
                .unwrap_or_else(|| panic!("{part} parses")),
        );
    }
    let (checked, offers) = search_recall::destructive_offers(&session, &all).await;
    eprintln!("{checked} read phrases checked");
    assert!(
        checked >= 1000,
        "the sets hold at least 1,000 read phrases; {checked} were checked (describe gives no effect?)"
    );
    assert!(
        offers.is_empty(),
        "{} read phrases were offered a destructive action: {offers:#?}",
        offers.len()
    );
}

/// A game that names none of these entities: its component names stand for them, and the one
/// entity carrying `Paddle` is addressed by its id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn component_names_stand_for_unnamed_entities() {
    let server = SandboxServer::with_app(60.0, |config| config, breakout_pieces);
    let session = McpSession::start(server.address).await;
    let moved = once_the_world_is_known(&session, "move the paddle left").await;
    assert_eq!(
        first(&moved),
        ("control_entity".into(), "set_transform".into()),
        "{moved}"
    );
    let because = first_because(&moved);
    assert!(
        because.contains("Paddle names the entity") && because.contains("(it has no Name)"),
        "{moved}"
    );
    let paddle = moved["results"][0]["knownParams"]["entity"]
        .as_str()
        .expect("the one paddle's id is given")
        .to_owned();
    let read = session
        .execute("inspect", "get_entity", json!({"entity": paddle}))
        .await
        .payload();
    assert!(
        read.to_string().contains("Paddle"),
        "the id given is the paddle's: {read}"
    );
    // Many bricks: the name finds them, but no one brick is guessed.
    let bricks = search(&session, "delete a brick").await;
    assert_eq!(
        first(&bricks),
        ("control_entity".into(), "despawn".into()),
        "{bricks}"
    );
    assert!(
        bricks["results"][0]["knownParams"]["entity"].is_null(),
        "no brick is picked for the model: {bricks}"
    );
    let found = search(&session, "find all bricks").await;
    assert_eq!(
        first(&found),
        ("inspect".into(), "find_entities".into()),
        "{found}"
    );
    // Completion offers what a parameter takes: the paddle's id, never "Paddle" as a name, and
    // no unreflected type.
    let complete = |uri: &str, argument: &str, value: &str| {
        session.rpc(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": argument, "value": value}}),
        )
    };
    let entities = complete("bevy://entity/{entity}", "entity", "").await;
    let offered = entities["result"]["completion"]["values"].to_string();
    assert!(
        offered.contains(&format!("\"{paddle}\"")) && !offered.contains("\"Paddle\""),
        "{entities}"
    );
    let types = complete("bevy://type/{type}", "type", "Pad").await;
    let offered = types["result"]["completion"]["values"].to_string();
    assert!(
        offered.contains("Gamepad") && !offered.contains("Paddle"),
        "Paddle is not reflected (Gamepad is): {types}"
    );
}

/// An unreflected component names the entities that carry it, but has no values to read or
/// write: search fills it in where a parameter asks only for its presence (`with`,
/// `withComponents`), never where one reads or writes its values (`components`, `component`),
/// which would be refused as not reflected; and a name several entities carry leads to the
/// actions that find them (`get_entity` with `components: [Brick]` led before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreflected_component_is_filled_in_only_as_a_presence_filter() {
    let server = SandboxServer::with_app(60.0, |config| config, breakout_pieces);
    let session = McpSession::start(server.address).await;
    once_the_world_is_known(&session, "move the paddle left").await;
    let mut filters = 0;
    for query in [
        "print the entities that have a Brick",
        "show me every brick",
        "which entities are bricks?",
        "list the walls",
    ] {
        let found = search(&session, query).await;
        // The bricks are many: the actions that find entities by their component lead, not
        // the one that reads a single entity.
        let (tool, action) = first(&found);
        assert!(
            tool == "inspect" && (action == "find_entities" || action == "query"),
            "{query}: {found}"
        );
        for row in found["results"].as_array().into_iter().flatten() {
            // What the row fills in: its known params, or its ready call's params.
            let known = if row["knownParams"].is_null() {
                &row["nextCall"]["params"]
            } else {
                &row["knownParams"]
            };
            for param in ["components", "component"] {
                assert!(
                    !known[param].to_string().contains("breakout")
                        && !known[param].to_string().contains("world_search"),
                    "{query}: an unreflected component under `{param}`: {row}"
                );
            }
            for param in ["with", "withComponents"] {
                if known[param].to_string().contains("Brick")
                    || known[param].to_string().contains("Wall")
                {
                    filters += 1;
                }
            }
        }
    }
    assert!(
        filters >= 4,
        "each query offers a presence filter for its component"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_issue_queries_rank_the_needed_action_first() {
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;
    let explosion = once_the_world_is_known(&session, "make an explosion at the origin").await;
    assert_eq!(
        first(&explosion),
        ("manage_events".into(), "trigger_event".into()),
        "{explosion}"
    );
    assert_eq!(
        explosion["results"][0]["because"],
        json!("Explosion is an event")
    );
    assert_eq!(
        explosion["results"][0]["knownParams"],
        json!({"event": "bevy_mcp_sandbox::Explosion"}),
        "the event is filled in; its value is the model's to give"
    );

    let goblin = search(&session, "set the goblin's health to 10").await;
    assert_eq!(
        first(&goblin),
        ("control_entity".into(), "mutate_component".into()),
        "{goblin}"
    );
    assert_eq!(
        goblin["results"][0]["knownParams"],
        json!({"entity": "Goblin", "component": "bevy_mcp_sandbox::Health"})
    );

    let player = search(&session, "what components does the player have").await;
    assert_eq!(
        first(&player),
        ("inspect".into(), "get_entity".into()),
        "{player}"
    );
    assert_eq!(
        player["results"][0]["nextCall"],
        json!({"operation": "execute", "tool": "inspect", "action": "get_entity", "params": {"entity": "Player"}}),
        "every required parameter is known: the next call is ready"
    );

    let when = search(&session, "tell me when an explosion happens").await;
    assert_eq!(
        first(&when),
        ("watch".into(), "observe_event".into()),
        "{when}"
    );
    assert_eq!(
        when["results"][0]["nextCall"],
        json!({"operation": "execute", "tool": "watch", "action": "observe_event", "params": {"event": "bevy_mcp_sandbox::Explosion"}})
    );

    // The issue's needed action, `manage_resource.mutate` on the `red` field of `Score`, ranks
    // first; the sandbox's own `game.add_score` ("Give a team points") is offered beside it.
    let points = search(&session, "give the red team 5 points").await;
    assert_eq!(
        first(&points),
        ("manage_resource".into(), "mutate".into()),
        "{points}"
    );
    let row = &points["results"][0];
    assert_eq!(
        row["because"],
        json!("Score is a resource with a field red")
    );
    assert_eq!(
        row["knownParams"],
        json!({"resource": "bevy_mcp_sandbox::Score", "path": ".red"}),
        "the value (5 more) is the model's to work out"
    );
    let top_three: Vec<&str> = points["results"]
        .as_array()
        .expect("rows")
        .iter()
        .take(3)
        .filter_map(|row| row["action"].as_str())
        .collect();
    assert!(top_three.contains(&"add_score"), "{points}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_given_later_is_found_after_the_refresh() {
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;
    once_the_world_is_known(&session, "show me the goblin").await;
    let before = search(&session, "show me zorblax").await;
    assert!(
        before["results"]
            .as_array()
            .is_none_or(|rows| rows.iter().all(|row| row["because"].is_null())),
        "nothing is called Zorblax yet: {before}"
    );
    let renamed = session
        .execute(
            "control_entity",
            "rename",
            json!({"entity": "Crate", "name": "Zorblax"}),
        )
        .await;
    assert!(!renamed.is_error(), "{:?}", renamed.payload());
    let after = once_the_world_is_known(&session, "show me zorblax").await;
    assert_eq!(
        first(&after),
        ("inspect".into(), "get_entity".into()),
        "{after}"
    );
    assert_eq!(
        after["results"][0]["because"],
        json!("Zorblax is an entity")
    );
    let gone = search(&session, "show me the crate").await;
    assert!(
        gone["results"]
            .as_array()
            .is_some_and(|rows| rows.iter().all(|row| !row["because"]
                .as_str()
                .unwrap_or_default()
                .contains("Crate is an entity"))),
        "the old name is forgotten: {gone}"
    );
}

/// Writes the sandbox's published terms to `$SEARCH_TERMS_OUT` (a tuning aid: the gateway's
/// ranking can then be studied without Bevy). Run with `--ignored`.
#[test]
#[ignore = "a tuning aid, not a check"]
fn dump_the_sandbox_terms() {
    let harness = bevy_mcp_sandbox::testing::Harness::new();
    let feed = harness
        .app
        .world()
        .get_resource::<bevy_mcp_bridge::test_support::SearchTermsFeed>()
        .map(|feed| feed.0.clone())
        .expect("the bridge publishes its terms");
    let out = std::env::var("SEARCH_TERMS_OUT").unwrap_or_else(|_| "search-terms.json".into());
    let terms = serde_json::to_string(&*feed.current().1).expect("terms serialize");
    std::fs::write(&out, terms).expect("written");
}

/// A gateway over the sandbox's catalog and published terms, ranking in process.
/// What codegen counts as "a thing of the game" in the labelled phrasings is, world by world,
/// what search reads so for that world: the words naming its own things, the catalog's words
/// left out. A new name in the sandbox (or breakout's pieces) fails here until
/// `native-transport/search/labelled/world-things.json` says it, so training and queries never disagree.
#[test]
fn the_things_codegen_counts_are_what_each_world_names() {
    let listed: Value = serde_json::from_str(include_str!(
        "../../native-transport/search/labelled/world-things.json"
    ))
    .expect("world-things.json parses");
    let worlds = [
        (search_recall::SANDBOX, sandbox_gateway()),
        (
            search_recall::BREAKOUT,
            gateway_over(bevy_mcp_sandbox::testing::Harness::with_app(
                breakout_pieces,
            )),
        ),
    ];
    for (world, gateway) in worlds {
        let named = gateway.game_thing_words();
        assert!(
            named.contains("goblin") || world != search_recall::SANDBOX,
            "{named:?}"
        );
        let expected = json!(named);
        assert_eq!(
            listed["worlds"][world], expected,
            "native-transport/search/labelled/world-things.json, worlds.{world}, must be {expected}, then run codegen"
        );
    }
}

fn sandbox_gateway() -> mcp_native_transport::Gateway {
    gateway_over(bevy_mcp_sandbox::testing::Harness::new())
}

/// A gateway over `harness`'s catalog and published terms, ranking in process.
fn gateway_over(harness: bevy_mcp_sandbox::testing::Harness) -> mcp_native_transport::Gateway {
    let world = harness.app.world();
    let feed = world
        .get_resource::<bevy_mcp_bridge::test_support::SearchTermsFeed>()
        .map(|feed| feed.0.clone())
        .expect("the bridge publishes its terms");
    let catalog = world
        .get_resource::<bevy_mcp_bridge::ServedCatalog>()
        .map(|served| served.0)
        .expect("the served catalog");
    mcp_native_transport::Gateway::new(
        catalog,
        &mcp_native_transport::StartVisibility::default(),
        &mcp_native_transport::ServerConfig::default(),
    )
    .expect("the catalog compiles")
    .with_app_terms(feed)
}

/// How people ask, read the way they mean it: a weak opening word ("show", "give me") does not
/// pick an action by itself, a question opened by "give me" wants a read, and an alias said
/// whole ("find", "states") beats a topic sharing its word. Each of these ranked another action
/// first before.
#[test]
fn weak_words_openings_and_whole_aliases_rank_as_meant() {
    ranks_first(&[
        ("show the logs", "system_control.get_logs"),
        ("show the states", "state.list"),
        ("show all resources", "inspect.list_resources"),
        ("give me the fields of Health", "inspect.describe_type"),
        ("find the turret", "inspect.find_entities"),
    ]);
}

/// A game name said with its kind ("a Score resource") is the bridge's thing: the game's own
/// `add_score` no longer outranks inserting the resource; said bare, the game's action leads.
#[test]
fn a_name_said_with_its_kind_is_the_thing_not_the_games_action() {
    ranks_first(&[
        ("add a Score resource", "manage_resource.insert"),
        ("add 2 points to blue's score", "game.add_score"),
    ]);
}

/// A word of the game's own action that also names one of the game's things ("score",
/// "goblin") says which thing, and the bridge's actions on that thing answer as well: the
/// game's way leads only as far as the other words leave the model unsure ("throw 20 goblins at
/// the base"). Its words that name nothing of the game ("points", "wave") still ask for it.
#[test]
fn a_game_things_name_is_not_the_games_way() {
    ranks_first(&[
        ("Score to defaults", "manage_resource.reset_to_default"),
        (
            "the score jumps around and I want to see each change as it happens",
            "watch.watch_resource",
        ),
        (
            "the frame rate drops when lots of goblins spawn",
            "system_control.diagnostics",
        ),
        ("throw 20 goblins at the base", "game.spawn_wave"),
        ("send a wave at the base", "game.spawn_wave"),
    ]);
}

/// The learnt model reads a name of the game's ("the orc", "the goblin") as one word, a thing
/// of the game, as codegen counted the labelled phrasings: what people ask of a named thing is
/// not what they ask of the game as a whole, and it carries over to another game's things.
/// Each of these ranked its action second or lower when the names were dropped instead.
#[test]
fn a_named_thing_is_read_as_a_thing_of_the_game() {
    ranks_first(&[
        (
            "adopt the goblin into the base's family",
            "control_entity.set_parent",
        ),
        (
            "I'm not sure the orc has the components I think it has",
            "inspect.get_entity",
        ),
        (
            "the goblin's Inventory makes the save file huge",
            "control_entity.remove_components",
        ),
    ]);
}

/// A topic of several words is a phrase: its words one by one are not the action's own, so
/// "switched off" is not the game's "finish off", nor a "group" of tools its "group of enemies".
#[test]
fn a_topics_words_one_by_one_are_not_the_games_way() {
    ranks_first(&[
        (
            "calls to playtest get refused as if it were switched off",
            "manage_tools.enable_tools",
        ),
        (
            "I want to trim what the agent can do but the groups aren't clear to me",
            "manage_tools.list_categories",
        ),
    ]);
}

/// A question ranks the reads that answer it above every change, but a read matched by a word
/// or two in passing (a third of the best score or less) does not answer it: "what does the
/// game do when the pad drops out" asks to disconnect the gamepad (weak reads on "what",
/// "game" and "when" pushed it out of the top three before).
#[test]
fn a_read_matched_in_passing_does_not_answer_a_question() {
    ranks_first(&[(
        "what does the game do when the pad drops out",
        "input.disconnect_gamepad",
    )]);
    let scores =
        sandbox_gateway().search_scores("what happens in the game when the gamepad drops out?", 3);
    assert!(
        scores
            .iter()
            .any(|(action, _, _)| action == "input.disconnect_gamepad"),
        "{scores:?}"
    );
}

/// A wish states how a thing should be ("the lantern should also carry a Team tag"): the game's
/// own action, which does something, gets no lead on its words ("team" led `add_score` before).
#[test]
fn a_wish_gives_the_games_action_no_lead() {
    ranks_first(&[(
        "the lantern should also carry a Team tag",
        "control_entity.insert_components",
    )]);
}

/// Among equal scores of the same effect, the action more of the query speaks of comes first:
/// "emit a GoalScored message" names a message and says "message", which `write_message` takes;
/// `trigger_event` only shares "emit" (it led on catalog order before).
#[test]
fn among_equals_the_action_more_of_the_query_speaks_of_leads() {
    ranks_first(&[(
        "emit a GoalScored message for red",
        "manage_events.write_message",
    )]);
}

/// The game's own action leads when the query says one of its own words ("wave", "points"),
/// not on a word the bridge's actions are named by: "pop a new crate into the level" spawns
/// one entity (the game's `spawn_wave` led on "new" and "level" before).
#[test]
fn the_games_action_leads_on_its_own_words() {
    ranks_first(&[
        ("pop a new crate into the level", "control_entity.spawn"),
        ("send in the next wave", "game.spawn_wave"),
        ("award blue 3 points", "game.add_score"),
    ]);
}

/// A state's value said alone in a word the catalog names an action by ("paused") is the
/// catalog's word, not the state: "is the game paused right now?" asks for the app's clock
/// (`GameState::Paused` lifted `state.list` above it before); a value in the game's own words
/// ("the settings screen") still names the state.
#[test]
fn a_value_in_the_catalogs_words_is_the_catalogs_word() {
    ranks_first(&[
        ("is the game paused right now?", "control_app.get_state"),
        ("can you switch to the settings screen?", "state.set"),
    ]);
}

/// "print" asks to be shown, as "show" does.
#[test]
fn print_asks_to_be_shown() {
    ranks_first(&[(
        "print the parent/child tree under Base",
        "inspect.hierarchy",
    )]);
}

/// Asserts that each query ranks its action first in the sandbox.
fn ranks_first(cases: &[(&str, &str)]) {
    let gateway = sandbox_gateway();
    for (query, expected) in cases {
        let scores = gateway.search_scores(query, 3);
        assert_eq!(
            scores.first().map(|(action, _, _)| action.as_str()),
            Some(*expected),
            "{query:?} ranked {scores:?}"
        );
    }
}

/// Prints the scores of the first five actions for every tuning phrase (or the phrases in
/// `$SEARCH_QUERIES`, one per line), ranked in process against the sandbox, or against the
/// sandbox with breakout's pieces when `$SEARCH_WORLD` is `breakout` (then the phrases about
/// breakout): a tuning aid. Run with `--ignored --nocapture`.
#[test]
#[ignore = "a tuning aid, not a check"]
fn print_tuning_scores() {
    let world = match std::env::var("SEARCH_WORLD").as_deref() {
        Ok(search_recall::BREAKOUT) => search_recall::BREAKOUT,
        _ => search_recall::SANDBOX,
    };
    let gateway = if world == search_recall::BREAKOUT {
        gateway_over(bevy_mcp_sandbox::testing::Harness::with_app(
            breakout_pieces,
        ))
    } else {
        sandbox_gateway()
    };
    // Tuning phrases only: the held-out ones are never looked at while tuning.
    let intents = match std::env::var("SEARCH_SET").as_deref() {
        Ok("phrasings") => search_recall::phrasings().expect("search-phrasings.json parses"),
        Ok(part) if search_recall::development_set(part).is_some() => {
            search_recall::development_set(part)
                .and_then(Result::ok)
                .expect("the development set parses")
        }
        _ => search_recall::intents().expect("search-intents.json parses"),
    };
    let queries: Vec<(String, Vec<String>)> = match std::env::var("SEARCH_QUERIES") {
        Ok(lines) => lines
            .lines()
            .map(|line| (line.to_owned(), Vec::new()))
            .collect(),
        Err(_) => intents
            .iter()
            .filter(|intent| intent.part != "held_out" && intent.world == world)
            .map(|intent| (intent.query.clone(), intent.expect.clone()))
            .collect(),
    };
    // How many rows to print for each phrase (5 unless `SEARCH_TOP` says).
    let rows = std::env::var("SEARCH_TOP")
        .ok()
        .and_then(|top| top.parse().ok())
        .unwrap_or(5);
    let (mut first, mut top3) = (0, 0);
    let asked = queries.len();
    for (query, expect) in queries {
        let scores = gateway.search_scores(&query, rows);
        let hit = scores
            .first()
            .is_some_and(|(action, _, _)| expect.contains(action));
        first += usize::from(hit);
        top3 += usize::from(
            scores
                .iter()
                .take(3)
                .any(|(action, _, _)| expect.contains(action)),
        );
        eprintln!(
            "{} {query:?} wants {expect:?}",
            if hit { "ok  " } else { "MISS" }
        );
        for (action, score, because) in scores {
            eprintln!("      {score:3} {action}  {because}");
        }
    }
    eprintln!(
        "RECALL {asked} phrases: @1 {:.3} @3 {:.3}",
        first as f64 / asked.max(1) as f64,
        top3 as f64 / asked.max(1) as f64
    );
}

/// Resetting, removing and rolling back asked for by an idiom ("square one", "gone entirely",
/// "rip out"): the phrasebook's words for them ask for the destruction in so many words.
#[test]
fn a_reset_or_a_removal_asked_by_an_idiom_is_found() {
    ranks_first(&[
        ("square one for this level please", "game.reset_level"),
        (
            "start the level again from the beginning",
            "game.reset_level",
        ),
        (
            "I need the Score resource gone entirely",
            "manage_resource.remove",
        ),
        ("rip out the TypedText resource", "manage_resource.remove"),
    ]);
}

/// A sentence that says the speaker does not know something ("I'm not sure ...", "I wonder
/// whether ...") asks to be told, as a question does: the writes that share its words leave the
/// first three.
#[test]
fn not_knowing_asks_to_be_told() {
    let gateway = sandbox_gateway();
    for (query, read, writes) in [
        (
            "I wonder whether the Score resource exists",
            "inspect.get_resource",
            &["manage_resource.insert", "manage_resource.mutate"][..],
        ),
        (
            "I can't remember what I called my scene files",
            "manage_world.list_files",
            &["control_entity.rename", "manage_world.save"][..],
        ),
        (
            "I'm not sure the crate has a Velocity",
            "playtest.expect",
            &["control_entity.insert_components"][..],
        ),
    ] {
        let first_three: Vec<String> = gateway
            .search_scores(query, 3)
            .into_iter()
            .map(|(action, _, _)| action)
            .collect();
        assert!(
            first_three.iter().any(|action| action == read),
            "{query:?}: {first_three:?}"
        );
        assert!(
            !first_three
                .iter()
                .any(|action| writes.contains(&action.as_str())),
            "{query:?}: {first_three:?}"
        );
    }
}

/// A short naming typed alone ("all components", "my scenes") asks to be shown the things: a
/// read answers it, not the write that shares a word ("release all").
#[test]
fn a_bare_naming_asks_to_be_shown() {
    ranks_first(&[
        ("all components", "inspect.list_component_types"),
        ("my scenes", "manage_world.list_files"),
        ("all tools", "manage_tools.list_tools"),
    ]);
}

/// How a phrase is said decides between a read and a change of the same thing: a wish ("the
/// crate should sit under Base") asks for the change; a participle after "the" ("free up all
/// the loaded assets") describes the thing, so the verb decides.
#[test]
fn a_wish_asks_for_a_change_and_a_participle_describes() {
    ranks_first(&[
        (
            "the crate should sit under Base in the tree",
            "control_entity.set_parent",
        ),
        (
            "the orc's max health is wrong, it should be 50",
            "control_entity.mutate_component",
        ),
        ("free up all the loaded assets", "manage_asset.release"),
    ]);
}

/// A saved world file is named by its name: once `arena` is saved, "what's inside arena?"
/// finds `describe_file` ready to run on it, and "load the arena file" the load with the file
/// given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn world_files_are_found_by_their_names() {
    let scenes = tempfile::tempdir().expect("a scenes folder");
    let dir = scenes.path().to_owned();
    let server = SandboxServer::start(60.0, move |config| config.with_scenes_dir(dir));
    let session = McpSession::start(server.address).await;
    let saved = session
        .execute("manage_world", "save", json!({"name": "arena"}))
        .await
        .payload();
    assert_eq!(saved["file"], "arena.scn.ron", "{saved}");
    // The census lists the folder every two seconds.
    let mut described = Value::Null;
    for _ in 0..200 {
        described = search(&session, "what's inside arena?").await;
        if described.to_string().contains("arena is a world file") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        first(&described),
        ("manage_world".into(), "describe_file".into()),
        "{described}"
    );
    assert_eq!(
        described["results"][0]["nextCall"],
        json!({"operation": "execute", "tool": "manage_world", "action": "describe_file",
               "params": {"name": "arena"}}),
        "{described}"
    );
    assert!(
        first_because(&described).contains("arena is a world file"),
        "{described}"
    );
    // A count asked of a file is about the file, not the running world.
    let counted = search(&session, "how many entities does arena hold?").await;
    assert_eq!(
        first(&counted),
        ("manage_world".into(), "describe_file".into()),
        "{counted}"
    );
    // Saving over a file that exists is still a save.
    let saved_over = search(&session, "save the world as arena again").await;
    assert_eq!(
        first(&saved_over),
        ("manage_world".into(), "save".into()),
        "{saved_over}"
    );
    let load = search(&session, "load the arena file").await;
    assert_eq!(
        first(&load),
        ("manage_world".into(), "load".into()),
        "{load}"
    );
    assert_eq!(
        load["results"][0]["knownParams"],
        json!({"name": "arena"}),
        "{load}"
    );
}

/// A word misspelled by a slip (a letter dropped, two swapped, one doubled) is read as the
/// catalog's word it slipped from, and the reply says how search read the query; a real word
/// the catalog does not hold stays as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misspelled_word_is_read_as_the_word_meant() {
    // Each ranked another action first, or nothing, as written.
    ranks_first(&[
        ("pasue the game now please", "control_app.pause"),
        ("take a screnshot", "view.screenshot"),
        ("retsore the calm checkpoint", "history.restore"),
        ("despwan the crate", "control_entity.despawn"),
        ("list the schedlues", "inspect.list_schedules"),
    ]);
    let server = SandboxServer::start(60.0, |config| config);
    let session = McpSession::start(server.address).await;
    once_the_world_is_known(&session, "show me the goblin").await;
    let reply = search(&session, "take a screnshot").await;
    assert_eq!(reply["query"], json!("take a screnshot"), "{reply}");
    assert_eq!(reply["readAs"], json!("take a screenshot"), "{reply}");
    assert_eq!(first(&reply), ("view".to_owned(), "screenshot".to_owned()));
    // A name only the game holds ("Weapon", a component of the sandbox) is meant too.
    let reply = search(&session, "remove the Weapn from the player").await;
    assert_eq!(
        reply["readAs"],
        json!("remove the weapon from the player"),
        "{reply}"
    );
    assert!(
        first_because(&reply).contains("Weapon is a component"),
        "{reply}"
    );
    // Said as written: nothing is read otherwise.
    let reply = search(&session, "take a screenshot").await;
    assert!(reply.get("readAs").is_none(), "{reply}");
    // "quiet" is "quit" with a letter added, and a real word: left as written, so it asks
    // for no destruction.
    let reply = search(&session, "the level is too quiet").await;
    assert!(reply.get("readAs").is_none(), "{reply}");
    for row in reply["results"].as_array().into_iter().flatten().take(3) {
        assert_ne!(row["effect"], json!("destructive"), "{reply}");
    }
}
