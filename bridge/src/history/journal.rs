//! The journal: every change a call makes to the world through the bridge, held as a [`Delta`]
//! so `history.undo` and `history.redo` can take it back and make it again.
//!
//! Before a call runs, [`Watch::before`] decides what it may touch (from its typed params: the
//! entity it names and its descendants, a resource, game time, or the whole world) and holds
//! those values; after it succeeds, [`Watch::after`] reads them again (with the entities it
//! spawned) and keeps what differs. A change the bridge cannot take back (input, events, assets,
//! state transitions, files, the passage of time) is listed as not undoable, with why. The
//! journal is bounded by entries and bytes; old entries go first and the listing says how many.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

use bevy::ecs::archetype::ArchetypeId;
use bevy::ecs::component::ComponentId;
use bevy::prelude::{Entity, Name, Resource, World};
use bevy::reflect::TypeRegistry;
use bevy_mcp_generated::Call;
use bevy_mcp_generated::call::{
    ControlAppCall, ControlEntityCall, HistoryCall, ManageResourceCall, ManageWorldCall,
};
use mcp_vocabulary::catalog::Effect;
use serde_json::Value;

use crate::game::{GameActions, GameUndo};
use crate::history::world_delta::{
    self, Change, Delta, EntityChange, EntitySnapshot, Snapshot, TimeState, tracked, value_changes,
};
use crate::reflect::hierarchy;
use crate::reflect::names;
use crate::reflect::names::{resolve_component, resolve_entity, resolve_type};
use crate::reflect::world::{frame, resource_json};
use crate::runtime::mailbox::JobCall;

/// Bounds on the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalLimits {
    /// Most entries held; the oldest go first. Default 256; 0 turns journaling off (nothing
    /// is read around calls, and nothing can be undone).
    pub max_entries: usize,
    /// Most JSON bytes of values held over all entries. Default 16 MiB.
    pub max_bytes: usize,
}

impl Default for JournalLimits {
    fn default() -> Self {
        JournalLimits {
            max_entries: 256,
            max_bytes: 16 * 1024 * 1024,
        }
    }
}

/// Where an entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryState {
    /// Its change is in the world.
    Done,
    /// It was undone; `redo` makes it again.
    Undone,
    /// It was undone, then its session made a newer change: it can no longer be redone.
    Superseded,
}

impl EntryState {
    /// As the listing names it.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryState::Done => "done",
            EntryState::Undone => "undone",
            EntryState::Superseded => "superseded",
        }
    }
}

/// One call that changed (or may have changed) the world.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its number, counting from 1 since the app started.
    pub id: u64,
    /// The session that made the call.
    pub session: String,
    /// `tool.action`.
    pub action: String,
    /// The frame it ran in.
    pub frame: u64,
    /// When it ran.
    pub at: Instant,
    /// What changed, or why it cannot be taken back.
    pub change: Result<Delta, String>,
    /// What the change holds, as JSON bytes.
    pub bytes: usize,
    /// Where it stands.
    pub state: EntryState,
}

impl Entry {
    /// A short sentence saying what it changed.
    pub fn summary(&self) -> String {
        match &self.change {
            Ok(delta) => delta.summary(),
            Err(_) => "not held".to_owned(),
        }
    }
}

/// The journal of changes, oldest first.
#[derive(Resource, Debug)]
pub struct Journal {
    limits: JournalLimits,
    entries: VecDeque<Entry>,
    next_id: u64,
    dropped: u64,
    bytes: usize,
}

impl Journal {
    /// An empty journal within `limits`.
    pub fn new(limits: JournalLimits) -> Journal {
        Journal {
            limits,
            entries: VecDeque::new(),
            next_id: 1,
            dropped: 0,
            bytes: 0,
        }
    }

    /// Its bounds.
    pub fn limits(&self) -> JournalLimits {
        self.limits
    }

    /// The entries held, oldest first.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = &Entry> {
        self.entries.iter()
    }

    /// How many entries were dropped to stay within the limits.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// What the held entries take, as JSON bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The entry numbered `id`.
    pub fn get(&self, id: u64) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.id == id)
    }

    /// Sets where entry `id` stands.
    pub fn set_state(&mut self, id: u64, state: EntryState) {
        if let Some(entry) = self.entries.iter_mut().find(|entry| entry.id == id) {
            entry.state = state;
        }
    }

    fn push(&mut self, session: &str, action: String, frame: u64, change: Result<Delta, String>) {
        // A session that changes the world after undoing gives up redoing what it undid.
        for entry in &mut self.entries {
            if entry.session == session && entry.state == EntryState::Undone {
                entry.state = EntryState::Superseded;
            }
        }
        let bytes = change.as_ref().map_or(0, Delta::bytes);
        let change = match change {
            Ok(_) if bytes > self.limits.max_bytes => Err(format!(
                "the change takes {bytes} bytes; the journal holds at most {}",
                self.limits.max_bytes
            )),
            change => change,
        };
        let bytes = change.as_ref().map_or(0, |_| bytes);
        self.entries.push_back(Entry {
            id: self.next_id,
            session: session.to_owned(),
            action,
            frame,
            at: Instant::now(),
            change,
            bytes,
            state: EntryState::Done,
        });
        self.next_id += 1;
        self.bytes += bytes;
        while self.entries.len() > self.limits.max_entries || self.bytes > self.limits.max_bytes {
            let Some(oldest) = self.entries.pop_front() else {
                break;
            };
            self.bytes -= oldest.bytes;
            self.dropped += 1;
        }
    }
}

/// What a call may touch of an entity: everything, or the named components (with any the call
/// adds).
#[derive(Debug, Clone)]
enum Focus {
    All,
    Named(Vec<String>),
}

/// An entity's values held around a call.
#[derive(Debug, Clone)]
struct Held {
    name: Option<String>,
    values: BTreeMap<String, Value>,
    /// Its archetype, to see what a focused call added or removed besides what it names
    /// (archetypes live as long as the world, so the ids can be read after the call).
    archetype: Option<ArchetypeId>,
}

/// Entities a call makes, found in its reply.
#[derive(Debug, Clone, Copy)]
enum Made {
    Nothing,
    /// `control_entity.spawn`: `entity` and `children`.
    Spawned,
    /// `control_entity.duplicate`: `copies`, each with its descendants.
    Copies,
}

/// The values a call may touch, held before it runs.
#[derive(Debug)]
struct Before {
    entities: Vec<(Entity, Focus, Held)>,
    resources: BTreeMap<String, Option<Value>>,
    time: Option<Option<TimeState>>,
    made: Made,
}

/// What the journal holds of one call while it runs.
#[derive(Debug)]
pub struct Watch(Watching);

#[derive(Debug)]
enum Watching {
    /// A read, or a call that changes nothing of the world: not journaled.
    Nothing,
    /// A change that cannot be taken back, and why.
    NotUndoable {
        /// `tool.action`.
        action: String,
        /// Why.
        reason: String,
    },
    /// A change of parts of the world, held before it runs.
    Parts {
        /// `tool.action`.
        action: String,
        /// The values it may touch.
        before: Box<Before>,
    },
    /// A change of anything in the world, held whole before it runs.
    World {
        /// `tool.action`.
        action: String,
        /// The world before.
        before: Box<Snapshot>,
    },
}

/// What a call may touch, decided from its params before it runs.
#[derive(Debug, Default)]
struct Scope {
    entities: Vec<(Entity, Focus)>,
    resources: Vec<String>,
    time: bool,
    made: Option<Made>,
}

enum Plan {
    Nothing,
    NotUndoable(String),
    Parts(Scope),
    World,
}

const INPUT: &str = "input goes to the game, and what the game did with it is the game's own doing; release what is held with input.release_all";
const EVENTS: &str = "an event or message cannot be taken back once the game has seen it";
const ASSETS: &str =
    "assets are not part of the world's entities; load or release them again with manage_asset";
const STATES: &str = "a state transition runs the game's own OnEnter/OnExit systems, whose effects the bridge cannot take back; set the state back with state.set";
const TIME_PASSES: &str = "it lets game time pass; the game's own systems ran";
const FILE_ONLY: &str = "it writes a file and leaves the world as it was";
const SCRIPT_ONLY: &str = "it records a playtest script and leaves the world as it was";
const EXIT: &str = "the app exits";
const GAME_UNDECLARED: &str =
    "the game's handler does not declare what it changes (ActionSpec::undoable)";
const TOO_LARGE: &str = "the world is larger than the journal may hold";

impl Watch {
    /// Holds what `call` may touch, before it runs.
    pub fn before(world: &mut World, call: &JobCall) -> Watch {
        if world
            .get_resource::<Journal>()
            .is_some_and(|journal| journal.limits.max_entries == 0)
        {
            return Watch(Watching::Nothing);
        }
        let (tool, action) = call.names();
        let action_name = format!("{tool}.{action}");
        let plan = match call {
            JobCall::Builtin(call) => builtin_plan(world, call),
            JobCall::Game { tool, action, .. } => game_plan(world, tool, action),
        };
        Watch(match plan {
            Plan::Nothing => Watching::Nothing,
            Plan::NotUndoable(reason) => Watching::NotUndoable {
                action: action_name,
                reason,
            },
            Plan::World => match world_snapshot(world) {
                Ok(before) => Watching::World {
                    action: action_name,
                    before: Box::new(before),
                },
                Err(_) => Watching::NotUndoable {
                    action: action_name,
                    reason: TOO_LARGE.to_owned(),
                },
            },
            Plan::Parts(scope) => Watching::Parts {
                action: action_name,
                before: Box::new(hold(world, scope)),
            },
        })
    }

    /// A call whose values could not be read (reading them panicked): listed as not undoable.
    pub fn unreadable(call: &JobCall) -> Watch {
        let (tool, action) = call.names();
        Watch(Watching::NotUndoable {
            action: format!("{tool}.{action}"),
            reason: "its values could not be read before it ran".to_owned(),
        })
    }

    /// [`Watch::after`], with a panic while reading the values after caught and logged: the
    /// call is not journaled then.
    pub fn after_caught(self, world: &mut World, session: &str, reply: Option<&Value>) {
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.after(world, session, reply);
        }));
        if caught.is_err() {
            tracing::error!(
                "reading a call's values for the journal panicked; it is not journaled"
            );
        }
    }

    /// Keeps what the call changed, once it succeeded with `reply` (`None` for a call that goes
    /// on over frames).
    pub fn after(self, world: &mut World, session: &str, reply: Option<&Value>) {
        let (action, change) = match self.0 {
            Watching::Nothing => return,
            Watching::NotUndoable { action, reason } => (action, Err(reason)),
            Watching::World { action, before } => {
                let change = world_snapshot(world)
                    .map(|after| Delta::between(&before, &after))
                    .map_err(|_| TOO_LARGE.to_owned());
                (action, change)
            }
            Watching::Parts { action, before } => (action, held_delta(world, *before, reply)),
        };
        if matches!(&change, Ok(delta) if delta.is_empty()) {
            return;
        }
        let frame = frame(world);
        world
            .get_resource_or_insert_with(|| Journal::new(JournalLimits::default()))
            .push(session, action, frame, change);
    }
}

/// The whole world, within the journal's byte bound (a call that changes anything is held whole
/// before and after it runs).
fn world_snapshot(world: &World) -> Result<Snapshot, crate::error::BridgeError> {
    let limit = world
        .get_resource::<Journal>()
        .map_or(JournalLimits::default().max_bytes, |journal| {
            journal.limits.max_bytes
        });
    world_delta::snapshot(world, limit)
}

fn builtin_plan(world: &mut World, call: &Call) -> Plan {
    let effect = bevy_mcp_generated::CATALOG
        .action(call.tool(), call.action())
        .map(|found| found.action.effect);
    if effect == Some(Effect::Read) {
        return Plan::Nothing;
    }
    match call {
        Call::ControlEntity(call) => entity_plan(world, call),
        Call::ManageResource(call) => {
            let given = match call {
                ManageResourceCall::Insert(params) => &params.resource,
                ManageResourceCall::Mutate(params) => &params.resource,
                ManageResourceCall::Remove(params) => &params.resource,
            };
            let registry = names::registry(world);
            let registry = registry.read();
            let resources = resolve_type(&registry, given)
                .map(|registration| vec![registration.type_info().type_path().to_owned()])
                .unwrap_or_default();
            Plan::Parts(Scope {
                resources,
                ..Scope::default()
            })
        }
        Call::ControlApp(call) => match call {
            ControlAppCall::Pause(_) | ControlAppCall::Resume(_) | ControlAppCall::SetSpeed(_) => {
                Plan::Parts(Scope {
                    time: true,
                    ..Scope::default()
                })
            }
            ControlAppCall::StepFrames(_) => Plan::NotUndoable(TIME_PASSES.to_owned()),
            ControlAppCall::Exit(_) => Plan::NotUndoable(EXIT.to_owned()),
            ControlAppCall::GetState(_) | ControlAppCall::WaitUntil(_) => Plan::Nothing,
        },
        Call::ManageWorld(call) => match call {
            ManageWorldCall::Load(_) | ManageWorldCall::Clear(_) => Plan::World,
            ManageWorldCall::Save(_) => Plan::NotUndoable(FILE_ONLY.to_owned()),
            ManageWorldCall::ListFiles(_) | ManageWorldCall::DescribeFile(_) => Plan::Nothing,
        },
        Call::History(call) => match call {
            HistoryCall::Restore(_) => Plan::World,
            // Undo and redo change entries' states rather than making entries of their own.
            _ => Plan::Nothing,
        },
        Call::Input(_) => Plan::NotUndoable(INPUT.to_owned()),
        Call::ManageEvents(_) => Plan::NotUndoable(EVENTS.to_owned()),
        Call::ManageAsset(_) => Plan::NotUndoable(ASSETS.to_owned()),
        Call::State(_) => Plan::NotUndoable(STATES.to_owned()),
        Call::Playtest(_) => Plan::NotUndoable(SCRIPT_ONLY.to_owned()),
        // The gateway runs manage_tools per session: it never changes the world.
        Call::ManageTools(_) => Plan::Nothing,
        Call::Inspect(_) | Call::View(_) | Call::Watch(_) | Call::SystemControl(_) => Plan::Nothing,
    }
}

/// The entity a param names with what of it a call may touch, and its descendants in full.
fn entity_plan(world: &mut World, call: &ControlEntityCall) -> Plan {
    let registry = names::registry(world);
    let named = |given: &[&String]| {
        let registry = registry.read();
        Focus::Named(
            given
                .iter()
                .filter_map(|given| resolve_component(&registry, given).ok())
                .map(|(registration, _)| registration.type_info().type_path().to_owned())
                .collect(),
        )
    };
    let (param, focus, with_descendants, made) = match call {
        ControlEntityCall::Spawn(_) => {
            return Plan::Parts(Scope {
                made: Some(Made::Spawned),
                ..Scope::default()
            });
        }
        ControlEntityCall::Duplicate(_) => {
            return Plan::Parts(Scope {
                made: Some(Made::Copies),
                ..Scope::default()
            });
        }
        ControlEntityCall::Despawn(params) => (&params.entity, Focus::All, true, None),
        ControlEntityCall::DespawnDescendants(params) => {
            (&params.entity, Focus::Named(Vec::new()), true, None)
        }
        ControlEntityCall::InsertComponents(params) => (
            &params.entity,
            named(&params.components.keys().collect::<Vec<_>>()),
            false,
            None,
        ),
        ControlEntityCall::RemoveComponents(params) => (
            &params.entity,
            named(&params.components.iter().collect::<Vec<_>>()),
            false,
            None,
        ),
        ControlEntityCall::MutateComponent(params) => {
            (&params.entity, named(&[&params.component]), false, None)
        }
        ControlEntityCall::SetTransform(params) => (
            &params.entity,
            Focus::Named(vec![
                "bevy_transform::components::transform::Transform".to_owned(),
            ]),
            false,
            None,
        ),
        ControlEntityCall::SetParent(params) => (
            &params.entity,
            Focus::Named(vec![world_delta::CHILD_OF.to_owned()]),
            false,
            None,
        ),
        ControlEntityCall::Rename(params) => (
            &params.entity,
            Focus::Named(vec!["bevy_ecs::name::Name".to_owned()]),
            false,
            None,
        ),
    };
    // An entity that does not resolve makes the call fail too: nothing to hold.
    let Ok(entity) = resolve_entity(world, param) else {
        return Plan::Parts(Scope::default());
    };
    let mut entities = vec![(entity, focus)];
    if with_descendants {
        entities.extend(
            hierarchy::descendants(world, entity)
                .entities
                .into_iter()
                .map(|descendant| (descendant, Focus::All)),
        );
    }
    Plan::Parts(Scope {
        entities,
        made,
        ..Scope::default()
    })
}

fn game_plan(world: &World, tool: &str, action: &str) -> Plan {
    let Some((effect, undo)) = world
        .get_resource::<GameActions>()
        .and_then(|actions| actions.journaling(tool, action))
    else {
        return Plan::Nothing;
    };
    if effect == Effect::Read {
        return Plan::Nothing;
    }
    match undo {
        None => Plan::NotUndoable(GAME_UNDECLARED.to_owned()),
        Some(GameUndo::World) => Plan::World,
        Some(GameUndo::Resources(given)) => {
            let registry = names::registry(world);
            let registry = registry.read();
            let mut resources = Vec::new();
            for given in given {
                match resolve_type(&registry, given) {
                    Ok(registration) => {
                        resources.push(registration.type_info().type_path().to_owned());
                    }
                    // A declared resource the journal cannot read: never undone wrongly.
                    Err(error) => {
                        return Plan::NotUndoable(format!(
                            "the resource {given} it declares is not a registered reflected type ({error})"
                        ));
                    }
                }
            }
            Plan::Parts(Scope {
                resources,
                ..Scope::default()
            })
        }
    }
}

fn hold(world: &World, scope: Scope) -> Before {
    let registry = names::registry(world);
    let registry = registry.read();
    let entities = scope
        .entities
        .into_iter()
        .map(|(entity, focus)| {
            let held = held_values(world, entity, &focus, &registry);
            (entity, focus, held)
        })
        .collect();
    let resources = scope
        .resources
        .into_iter()
        .map(|type_path| {
            let value = resource_value(world, &type_path, &registry);
            (type_path, value)
        })
        .collect();
    Before {
        entities,
        resources,
        time: scope.time.then(|| TimeState::of(world)),
        made: scope.made.unwrap_or(Made::Nothing),
    }
}

fn resource_value(world: &World, type_path: &str, registry: &TypeRegistry) -> Option<Value> {
    let registration = registry.get_with_type_path(type_path)?;
    resource_json(world, registration, registry).ok()
}

fn archetype_of(world: &World, entity: Entity) -> Option<ArchetypeId> {
    world
        .get_entity(entity)
        .ok()
        .map(|entity_ref| entity_ref.archetype().id())
}

/// The component ids of `from` that `to` lacks.
fn missing_from(
    world: &World,
    from: Option<ArchetypeId>,
    to: Option<ArchetypeId>,
) -> Vec<ComponentId> {
    let components = |id: Option<ArchetypeId>| {
        id.and_then(|id| world.archetypes().get(id))
            .map(|archetype| archetype.components().to_vec())
            .unwrap_or_default()
    };
    let to = components(to);
    components(from)
        .into_iter()
        .filter(|id| !to.contains(id))
        .collect()
}

/// The values of `entity` a focus covers (all tracked ones, or the named ones).
fn held_values(world: &World, entity: Entity, focus: &Focus, registry: &TypeRegistry) -> Held {
    let name = world
        .get::<Name>(entity)
        .map(|name| name.as_str().to_owned());
    let values = match focus {
        Focus::All => world_delta::entity_snapshot(world, entity, registry).components,
        Focus::Named(paths) => paths
            .iter()
            .filter_map(|path| {
                let registration = registry.get_with_type_path(path)?;
                let value =
                    world_delta::component_value(world, entity, registration, registry)?.ok()?;
                Some((path.clone(), value))
            })
            .collect(),
    };
    Held {
        name,
        values,
        archetype: archetype_of(world, entity),
    }
}

/// The tracked type path of a component id, when it is reflected.
fn tracked_path(world: &World, id: ComponentId, registry: &TypeRegistry) -> Option<String> {
    let type_id = world.components().get_info(id)?.type_id()?;
    let path = registry.get(type_id)?.type_info().type_path();
    tracked(path).then(|| path.to_owned())
}

/// What differs between the values held before and the same values now, with the entities the
/// call made (from its reply).
fn held_delta(world: &World, before: Before, reply: Option<&Value>) -> Result<Delta, String> {
    let registry = names::registry(world);
    let registry = registry.read();
    let mut delta = Delta::default();
    for (entity, focus, held) in before.entities {
        let exists = world.get_entity(entity).is_ok();
        let change = match (&focus, exists) {
            (Focus::All, true) => {
                let after = world_delta::entity_snapshot(world, entity, &registry);
                EntityChange::between(Some(&snapshot_of(&held)), Some(&after))
            }
            (Focus::All, false) => EntityChange::between(Some(&snapshot_of(&held)), None),
            (Focus::Named(_), false) => {
                return Err(format!(
                    "it despawned {entity}, whose full contents were not held"
                ));
            }
            (Focus::Named(_), true) => {
                let mut after = held_values(world, entity, &focus, &registry);
                let reshaped = after.archetype != held.archetype;
                let added = if reshaped {
                    missing_from(world, after.archetype, held.archetype)
                } else {
                    Vec::new()
                };
                let removed = if reshaped {
                    missing_from(world, held.archetype, after.archetype)
                } else {
                    Vec::new()
                };
                for id in &added {
                    let Some(path) = tracked_path(world, *id, &registry) else {
                        continue;
                    };
                    if let Some(registration) = registry.get_with_type_path(&path)
                        && let Some(Ok(value)) =
                            world_delta::component_value(world, entity, registration, &registry)
                    {
                        after.values.insert(path, value);
                    }
                }
                for id in &removed {
                    let Some(path) = tracked_path(world, *id, &registry) else {
                        continue;
                    };
                    if !held.values.contains_key(&path) {
                        return Err(format!(
                            "it also removed {path} from {entity}, whose value was not held"
                        ));
                    }
                }
                let changes = value_changes(&held.values, &after.values);
                (!changes.is_empty()).then(|| EntityChange::Components {
                    name: after.name.or(held.name),
                    changes,
                })
            }
        };
        if let Some(change) = change {
            delta.entities.insert(entity.to_bits(), change);
        }
    }
    for entity in made_entities(world, before.made, reply) {
        let after = world_delta::entity_snapshot(world, entity, &registry);
        delta.entities.insert(
            entity.to_bits(),
            EntityChange::Whole(Change {
                before: None,
                after: Some(after),
            }),
        );
    }
    for (type_path, was) in before.resources {
        let is = resource_value(world, &type_path, &registry);
        if was != is {
            delta.resources.insert(
                type_path,
                Change {
                    before: was,
                    after: is,
                },
            );
        }
    }
    if let Some(was) = before.time {
        let is = TimeState::of(world);
        if was != is {
            delta.time = Some(Change {
                before: was,
                after: is,
            });
        }
    }
    Ok(delta)
}

fn snapshot_of(held: &Held) -> EntitySnapshot {
    EntitySnapshot {
        name: held.name.clone(),
        components: held.values.clone(),
    }
}

/// The entities a call made, named in its reply, with their descendants.
fn made_entities(world: &World, made: Made, reply: Option<&Value>) -> Vec<Entity> {
    let Some(reply) = reply else {
        return Vec::new();
    };
    let bits_of = |row: &Value| row["bits"].as_u64().and_then(Entity::try_from_bits);
    let rows: Vec<&Value> = match made {
        Made::Nothing => return Vec::new(),
        Made::Spawned => std::iter::once(&reply["entity"])
            .chain(reply["children"].as_array().into_iter().flatten())
            .collect(),
        Made::Copies => reply["copies"].as_array().into_iter().flatten().collect(),
    };
    let mut seen = BTreeSet::new();
    let mut found: Vec<Entity> = Vec::new();
    for entity in rows.into_iter().filter_map(bits_of) {
        if world.get_entity(entity).is_err() {
            continue;
        }
        let tree = std::iter::once(entity).chain(hierarchy::descendants(world, entity).entities);
        found.extend(tree.filter(|entity| seen.insert(*entity)));
    }
    found
}
