//! Publishes what `search` may match of the app to the transport: its reflected types
//! (components, resources, events, messages, states) with their fields, variants and docs, its
//! entity names with how many entities carry each, and the game's components the world holds:
//! unreflected ones by name, and, where the game names few entities (Bevy's breakout), each
//! component most of whose carriers have no `Name` as a name for them ("the paddle"), and the
//! saved world files by the names actions take ("arena"), listed by the census thread every
//! [`WORLD_FILES_EVERY`].
//!
//! It looks for changes at most every [`REFRESH_EVERY`] and publishes only when types or names
//! changed, so a search never waits on the game thread and a settled world costs nothing. Names
//! are followed incrementally (changed names, removed names), so a refresh costs what changed,
//! not the whole world. A name edited in place (`Mut<Name>`) is seen like any other change.
//! A refresh only notes which entities changed; their names are read a bounded batch per frame
//! ([`NAME_READING_PER_FRAME`]), so a world file loading 100,000 named entities never puts
//! thousands of name reads into one frame (it did: 2 to 6 ms every half second); the terms are
//! published once a refresh's names are all read, so still at most twice a second.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use bevy::ecs::archetype::Archetypes;
use bevy::ecs::component::{ComponentId, Components};
use bevy::ecs::observer::Observer;
use bevy::ecs::reflect::{ReflectComponent, ReflectResource};
use bevy::ecs::reflect::{ReflectEvent, ReflectMessage};
use bevy::ecs::resource::IsResource;
use bevy::prelude::{
    AppTypeRegistry, Changed, Entity, Local, Name, Query, RemovedComponents, Res, ResMut, Resource,
};
use bevy::reflect::{TypeInfo, TypeRegistration, TypeRegistry};
use bevy_mcp_generated::CATALOG;
use mcp_native_transport::{AppTerms, AppTermsFeed, Term, TermField, TermKind};
use parking_lot::Mutex;

use crate::reflect::names::{is_games_own, is_unnamed};
use crate::reflect::world::{BridgeOwned, HeldOutOfSight};
use crate::reflect::writable::is_engine_crate;
use crate::runtime::background::spawn_background;
use crate::runtime::catalog::ServedCatalog;

/// Most distinct entity names published; the rest are counted as left out.
pub const MAX_ENTITY_NAMES: usize = 10_000;
/// Longest entity name published: a query (at most a few hundred characters) could not name a
/// longer one, and search results stay small.
pub(crate) const MAX_NAME_CHARS: usize = 128;
/// How often the publisher looks for new types and names.
pub(crate) const REFRESH_EVERY: Duration = Duration::from_millis(500);
/// What reading noted names may take of a frame; at least [`NAMES_PER_CLOCK_READ`] are read.
const NAME_READING_PER_FRAME: Duration = Duration::from_micros(150);
/// Names read between two looks at the clock.
const NAMES_PER_CLOCK_READ: usize = 64;
/// Names a frame's batch holds room for at first.
const MOST_NAMES_PER_FRAME: usize = 4_096;

/// The feed the transport's `search` reads.
#[derive(Resource, Clone, Debug, Default)]
pub struct SearchTermsFeed(pub AppTermsFeed);

/// Where the app's world files are, and how their names end: the census lists them so a query
/// naming one ("load arena") finds the actions that take a world file.
#[derive(Resource, Clone, Debug)]
pub(crate) struct WorldFilesDir {
    /// The scenes directory.
    pub dir: PathBuf,
    /// The world files' extension (`.scn.ron`).
    pub extension: &'static str,
}

/// How often the census thread lists the world files: a file saved is found by search within
/// this time.
const WORLD_FILES_EVERY: Duration = Duration::from_secs(2);
/// Most world files published.
const MAX_WORLD_FILES: usize = 1_000;
/// Most entries (files and folders) a listing of the world files looks at: a scenes folder set
/// to a big tree (the project's root) costs no more than this every [`WORLD_FILES_EVERY`].
const MOST_LISTED: usize = 20_000;

/// What the publisher follows on the game thread: entities whose name changed or went away and
/// was not read yet, the registry's size as last seen, and the census, which is folded in and
/// published on a thread of its own after the first publication (folding in 100,000 new names
/// took 10 to 20 ms of a frame every refresh while a big world file loaded).
#[derive(Resource, Default)]
pub(crate) struct NameCensus {
    /// Entities whose `Name` went away since the last refresh (noted every frame: Bevy keeps
    /// removals for two frames only).
    removed: Vec<Entity>,
    /// Entities to read: their `Name` changed, came or went before the last refresh, and they
    /// were not read since.
    unread: Vec<Entity>,
    registry_size: usize,
    /// The reflected types' terms as last built (when the registry last grew).
    reflected: Vec<Term>,
    /// The game components' terms as last published.
    components: Vec<Term>,
    /// The app's own tools as last published.
    app_tools: Vec<String>,
    census: Arc<Mutex<Census>>,
    worker: Option<Sender<CensusChanges>>,
}

/// Every named entity's name, the count of each name, the type terms and the app's own tools.
#[derive(Default, Debug)]
struct Census {
    by_entity: HashMap<Entity, String>,
    counts: BTreeMap<String, usize>,
    types: Vec<Term>,
    app_tools: Vec<String>,
    /// The world files' names, without their extension, sorted.
    world_files: Vec<String>,
    published: bool,
}

/// What changed since the last look (`None`: unchanged).
#[derive(Debug, Default)]
struct CensusChanges {
    removed: Vec<Entity>,
    changed: Vec<(Entity, String)>,
    types: Option<Vec<Term>>,
    app_tools: Option<Vec<String>>,
    /// The last of a refresh's batches: publish what was folded in. A refresh's names come in
    /// a batch per frame, and publishing each would rebuild every term that often.
    settled: bool,
}

impl CensusChanges {
    fn is_empty(&self) -> bool {
        self.removed.is_empty()
            && self.changed.is_empty()
            && self.types.is_none()
            && self.app_tools.is_none()
    }
}

impl Census {
    /// Folds `changes` in; whether anything published changed.
    fn fold(&mut self, changes: CensusChanges) -> bool {
        let mut changed = !self.published;
        if let Some(app_tools) = changes.app_tools
            && app_tools != self.app_tools
        {
            self.app_tools = app_tools;
            changed = true;
        }
        for entity in changes.removed {
            if let Some(name) = self.by_entity.remove(&entity) {
                forget(&mut self.counts, &name);
                changed = true;
            }
        }
        for (entity, name) in changes.changed {
            if self.by_entity.get(&entity) == Some(&name) {
                continue;
            }
            *self.counts.entry(name.clone()).or_default() += 1;
            if let Some(old) = self.by_entity.insert(entity, name) {
                forget(&mut self.counts, &old);
            }
            changed = true;
        }
        if let Some(types) = changes.types {
            self.types = types;
            changed = true;
        }
        changed
    }

    /// Takes the world files listed now; whether they differ from the last.
    fn fold_world_files(&mut self, files: Vec<String>) -> bool {
        if files == self.world_files {
            return false;
        }
        self.world_files = files;
        true
    }

    fn publish(&mut self, feed: &AppTermsFeed) {
        let mut terms = self.types.clone();
        terms.extend(self.world_files.iter().map(|name| Term {
            kind: TermKind::WorldFile,
            name: name.clone(),
            address: name.clone(),
            fields: Vec::new(),
            values: Vec::new(),
            docs: None,
            count: 1,
            engine: false,
            carried_by: None,
            reflected: true,
        }));
        terms.extend(
            self.counts
                .iter()
                .filter(|(name, _)| name.chars().count() <= MAX_NAME_CHARS)
                .take(MAX_ENTITY_NAMES)
                .map(|(name, count)| Term {
                    kind: TermKind::Entity,
                    name: name.clone(),
                    address: name.clone(),
                    fields: Vec::new(),
                    values: Vec::new(),
                    docs: None,
                    count: *count,
                    engine: false,
                    carried_by: None,
                    reflected: true,
                }),
        );
        let published_names = terms
            .len()
            .saturating_sub(self.types.len() + self.world_files.len());
        feed.publish(AppTerms {
            terms,
            names_left_out: self.counts.len().saturating_sub(published_names),
            app_tools: self.app_tools.clone(),
        });
        self.published = true;
    }
}

/// Folds changes in and publishes, off the game thread, as they come (a burst in one go); lists
/// the world files at most every [`WORLD_FILES_EVERY`] and publishes when they changed.
fn census_worker(
    census: Arc<Mutex<Census>>,
    feed: AppTermsFeed,
    changes: Receiver<CensusChanges>,
    world_files: Option<WorldFilesDir>,
) {
    let mut unpublished = false;
    // Whether the names of the last burst are all read: only then is a publication whole.
    let mut settled = true;
    let mut listed_at: Option<Instant> = None;
    loop {
        if let Some(files) = &world_files
            && listed_at.is_none_or(|at| at.elapsed() >= WORLD_FILES_EVERY)
        {
            listed_at = Some(Instant::now());
            let names = world_file_names(files);
            unpublished |= census.lock().fold_world_files(names);
        }
        match changes.recv_timeout(WORLD_FILES_EVERY) {
            Ok(first) => {
                let mut census = census.lock();
                settled = first.settled;
                unpublished |= census.fold(first);
                while let Ok(more) = changes.try_recv() {
                    settled |= more.settled;
                    unpublished |= census.fold(more);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if settled && unpublished {
            census.lock().publish(&feed);
            unpublished = false;
        }
    }
}

/// The world files under `files.dir` by the names actions take (without the extension),
/// sorted, at most [`MAX_WORLD_FILES`]; none when the folder cannot be read.
fn world_file_names(files: &WorldFilesDir) -> Vec<String> {
    let mut names: Vec<String> =
        crate::reflect::files::files_ending_within(&files.dir, files.extension, MOST_LISTED)
            .into_iter()
            .filter_map(|(name, _)| name.strip_suffix(files.extension).map(str::to_owned))
            .filter(|name| name.chars().count() <= MAX_NAME_CHARS)
            .collect();
    names.sort();
    names.truncate(MAX_WORLD_FILES);
    names
}

/// Notes entities whose `Name` went away (every frame: Bevy keeps removals for two frames only).
pub(crate) fn note_removed_names(
    mut removed: RemovedComponents<Name>,
    mut census: ResMut<NameCensus>,
) {
    if removed.is_empty() {
        return;
    }
    census.removed.extend(removed.read());
}

/// Reads the names of noted entities: all of them with `within` `None`, else as many as fit in
/// it. An entity without a `Name` now is one whose name went away.
fn read_names(
    unread: &mut Vec<Entity>,
    names: &Query<&Name>,
    within: Option<Duration>,
) -> (Vec<(Entity, String)>, Vec<Entity>) {
    let started = Instant::now();
    // Sized once: growing it name by name reallocated it over and over in one frame.
    let mut changed = Vec::with_capacity(unread.len().min(MOST_NAMES_PER_FRAME));
    let mut removed = Vec::new();
    let mut read = 0;
    while let Some(entity) = unread.pop() {
        match names.get(entity) {
            Ok(name) => changed.push((entity, name.as_str().to_owned())),
            Err(_) => removed.push(entity),
        }
        read += 1;
        if read % NAMES_PER_CLOCK_READ == 0
            && within.is_some_and(|within| started.elapsed() >= within)
        {
            break;
        }
    }
    (changed, removed)
}

/// Reads a frame's batch of the names a refresh noted and hands them to the census thread.
pub(crate) fn read_noted_names(
    names: Query<&Name>,
    feed: Res<SearchTermsFeed>,
    mut census: ResMut<NameCensus>,
) {
    let census = &mut *census;
    let Some(worker) = &census.worker else {
        return;
    };
    if census.unread.is_empty() {
        return;
    }
    let (changed, removed) = read_names(&mut census.unread, &names, Some(NAME_READING_PER_FRAME));
    let changes = CensusChanges {
        removed,
        changed,
        settled: census.unread.is_empty(),
        ..CensusChanges::default()
    };
    if let Err(unsent) = worker.send(changes) {
        // The thread is gone: fold in here from now on.
        census.worker = None;
        let mut state = census.census.lock();
        if state.fold(unsent.0) {
            state.publish(&feed.0);
        }
    }
}

/// A run condition: true at most once per `period` of real time (and on the first frame).
pub(crate) fn at_most_every(
    period: Duration,
) -> impl FnMut(Local<Option<Instant>>) -> bool + Clone {
    move |mut last: Local<Option<Instant>>| {
        let now = Instant::now();
        if last.is_some_and(|last| now.duration_since(last) < period) {
            return false;
        }
        *last = Some(now);
        true
    }
}

/// Notes what changed since the last look. The first publication is made here when the world's
/// names fit in a frame's batch; otherwise, and for every later one, the census thread publishes
/// once [`read_noted_names`] has read them all.
pub(crate) fn publish_search_terms(
    changed_names: Query<Entity, Changed<Name>>,
    names: Query<&Name>,
    registry: Res<AppTypeRegistry>,
    (archetypes, components): (&Archetypes, &Components),
    served: Option<Res<ServedCatalog>>,
    (feed, world_files): (Res<SearchTermsFeed>, Option<Res<WorldFilesDir>>),
    mut census: ResMut<NameCensus>,
) {
    let census = &mut *census;
    let removed = std::mem::take(&mut census.removed);
    census.unread.extend(removed);
    census.unread.extend(changed_names.iter());
    // The app's own tools: those of the served catalog the generated one lacks.
    let app_tools: Vec<String> = served
        .map(|served| {
            served
                .0
                .tools
                .iter()
                .filter(|tool| CATALOG.tool(tool.name).is_none())
                .map(|tool| tool.name.to_owned())
                .collect()
        })
        .unwrap_or_default();
    let mut changes = CensusChanges::default();
    if census.worker.is_none() || app_tools != census.app_tools {
        census.app_tools = app_tools.clone();
        changes.app_tools = Some(app_tools);
    }
    let registry = registry.read();
    let size = registry.iter().count();
    let grown = size != census.registry_size;
    if grown {
        census.reflected = type_terms(&registry);
        census.registry_size = size;
    }
    let held = component_terms(archetypes, components, &registry);
    if grown || !same_terms(&held, &census.components) {
        census.components = held;
        let mut types = census.reflected.clone();
        types.extend(census.components.iter().cloned());
        changes.types = Some(types);
    }
    // With names to read, the last frame's batch settles the refresh.
    changes.settled = census.unread.is_empty();
    if let Some(worker) = &census.worker {
        if changes.is_empty() {
            return;
        }
        match worker.send(changes) {
            Ok(()) => return,
            // The thread is gone: fold in here, every name at once.
            Err(unsent) => changes = unsent.0,
        }
    }
    // The first look reads a frame's batch of names, as later ones do: a world that starts with
    // 100,000 named entities had them all read (5 to 7 ms) and folded in (10 to 20 ms more) in
    // its first frame. A small world's names all fit, and it is published in this frame; a big
    // one's are read in the next frames and folded in and published by the census thread.
    let first = census.worker.is_none();
    let within = first.then_some(NAME_READING_PER_FRAME);
    (changes.changed, changes.removed) = read_names(&mut census.unread, &names, within);
    if first && !census.unread.is_empty() {
        census.worker = census_thread(&census.census, &feed.0, world_files.as_deref().cloned());
        if let Some(worker) = &census.worker {
            changes.settled = false;
            match worker.send(changes) {
                Ok(()) => return,
                Err(unsent) => changes = unsent.0,
            }
        }
        // No thread to hand them to: the rest are read here.
        let (changed, removed) = read_names(&mut census.unread, &names, None);
        changes.changed.extend(changed);
        changes.removed.extend(removed);
    }
    let mut state = census.census.lock();
    if state.fold(changes) {
        state.publish(&feed.0);
    }
    drop(state);
    if census.worker.is_none() {
        census.worker = census_thread(&census.census, &feed.0, world_files.as_deref().cloned());
    }
}

/// Starts the census thread; `None` when no thread could be started.
fn census_thread(
    census: &Arc<Mutex<Census>>,
    feed: &AppTermsFeed,
    world_files: Option<WorldFilesDir>,
) -> Option<Sender<CensusChanges>> {
    let (sender, receiver) = channel();
    let (state, feed) = (Arc::clone(census), feed.clone());
    spawn_background("bevy-mcp-search-terms", move || {
        census_worker(state, feed, receiver, world_files)
    })
    .ok()
    .map(|_| sender)
}

/// How many entities carry a component, with and without a `Name`.
#[derive(Default)]
struct Carriers {
    named: usize,
    unnamed: usize,
    /// The unnamed carrier, while there is only one.
    single: Option<Entity>,
}

/// The game's components the world holds, as terms: each unreflected one by its name (a query
/// naming `Brick` finds the actions that filter by components), and each one most of whose
/// carriers have no `Name` as an entity term (so "move the paddle" is about the entity with
/// `Paddle`, addressed by its id when it is the only one). Engine and bridge components, and
/// those of resources and observers, are left out. A scan of the archetypes, not the entities.
fn component_terms(
    archetypes: &Archetypes,
    components: &Components,
    registry: &TypeRegistry,
) -> Vec<Term> {
    let plumbing: Vec<ComponentId> = [
        components.component_id::<IsResource>(),
        components.component_id::<Observer>(),
        components.component_id::<BridgeOwned>(),
        components.component_id::<HeldOutOfSight>(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let name = components.component_id::<Name>();
    let mut carried: BTreeMap<ComponentId, Carriers> = BTreeMap::new();
    for archetype in archetypes.iter() {
        let len = archetype.len() as usize;
        if len == 0 || plumbing.iter().any(|id| archetype.contains(*id)) {
            continue;
        }
        let named = name.is_some_and(|id| archetype.contains(id));
        for id in archetype.components() {
            let carriers = carried.entry(*id).or_default();
            if named {
                carriers.named += len;
            } else {
                carriers.unnamed += len;
                carriers.single = archetype.entities().first().map(|found| found.id());
            }
        }
    }
    let mut terms = Vec::new();
    for (id, carriers) in carried {
        let Some(info) = components.get_info(id) else {
            continue;
        };
        let path = info.name().to_string();
        if path.contains('<') || is_unnamed(&path) || !is_games_own(&path) {
            continue;
        }
        let short = info.name().shortname().to_string();
        let reflected = info
            .type_id()
            .and_then(|type_id| registry.get(type_id))
            .is_some_and(|registration| registration.data::<ReflectComponent>().is_some());
        let term = |kind, address: String, carried_by, reflected| Term {
            kind,
            name: short.clone(),
            address,
            fields: Vec::new(),
            values: Vec::new(),
            docs: None,
            count: carriers.named + carriers.unnamed,
            engine: false,
            carried_by,
            reflected,
        };
        if !reflected {
            terms.push(term(TermKind::Component, path.clone(), None, false));
        }
        if carriers.unnamed > carriers.named {
            let only = carriers
                .single
                .filter(|_| carriers.unnamed == 1 && carriers.named == 0);
            let address = only.map(|entity| entity.to_string()).unwrap_or_default();
            terms.push(term(TermKind::Entity, address, Some(path), true));
        }
    }
    terms
}

/// Whether two lists of component terms say the same (their counts aside: a brick broken does
/// not republish, the one ball respawned does).
fn same_terms(new: &[Term], old: &[Term]) -> bool {
    new.len() == old.len()
        && new.iter().zip(old).all(|(a, b)| {
            a.kind == b.kind
                && a.reflected == b.reflected
                && a.name == b.name
                && a.address == b.address
                && a.carried_by == b.carried_by
        })
}

fn forget(counts: &mut BTreeMap<String, usize>, name: &str) {
    if let Some(count) = counts.get_mut(name) {
        *count = count.saturating_sub(1);
        if *count == 0 {
            counts.remove(name);
        }
    }
}

/// Every reflected component, resource, event, message and state type, by its short name.
/// Generic types (`State<GameState>`, `Assets<Image>`) are left out: their wrapped type is what
/// people name.
fn type_terms(registry: &TypeRegistry) -> Vec<Term> {
    let mut terms = Vec::new();
    for registration in registry.iter() {
        for (kind, has) in [
            // Resources are components on their own entities (Bevy 0.19): a resource type
            // counts as a resource only.
            (
                TermKind::Component,
                registration.data::<ReflectComponent>().is_some()
                    && registration.data::<ReflectResource>().is_none(),
            ),
            (
                TermKind::Resource,
                registration.data::<ReflectResource>().is_some(),
            ),
            (
                TermKind::Event,
                registration.data::<ReflectEvent>().is_some(),
            ),
            (
                TermKind::Message,
                registration.data::<ReflectMessage>().is_some(),
            ),
        ] {
            if has && let Some(term) = type_term(kind, registration) {
                terms.push(term);
            }
        }
    }
    for registration in crate::reflect::states::state_registrations(registry) {
        if let Some(term) = type_term(TermKind::State, registration) {
            terms.push(term);
        }
    }
    terms
}

fn type_term(kind: TermKind, registration: &TypeRegistration) -> Option<Term> {
    let info = registration.type_info();
    let table = info.type_path_table();
    let name = table.short_path();
    if name.contains('<') {
        return None;
    }
    let (fields, values) = match info {
        TypeInfo::Struct(info) => (
            info.iter()
                .map(|field| TermField {
                    name: field.name().to_owned(),
                    docs: first_line(field_docs(field)),
                })
                .collect(),
            Vec::new(),
        ),
        TypeInfo::Enum(info) => (
            Vec::new(),
            info.iter()
                .map(|variant| TermField {
                    name: variant.name().to_owned(),
                    docs: first_line(variant_docs(variant)),
                })
                .collect(),
        ),
        _ => (Vec::new(), Vec::new()),
    };
    Some(Term {
        kind,
        name: name.to_owned(),
        address: table.path().to_owned(),
        fields,
        values,
        docs: first_line(type_docs(info)),
        count: 0,
        engine: table.crate_name().is_some_and(is_engine_crate),
        carried_by: None,
        reflected: true,
    })
}

fn first_line(docs: Option<&str>) -> Option<String> {
    docs.and_then(|docs| docs.lines().map(str::trim).find(|line| !line.is_empty()))
        .map(str::to_owned)
}

#[cfg(feature = "reflect_documentation")]
fn type_docs(info: &TypeInfo) -> Option<&str> {
    info.docs()
}

#[cfg(not(feature = "reflect_documentation"))]
fn type_docs(_info: &TypeInfo) -> Option<&str> {
    None
}

#[cfg(feature = "reflect_documentation")]
fn field_docs(field: &bevy::reflect::NamedField) -> Option<&str> {
    field.docs()
}

#[cfg(not(feature = "reflect_documentation"))]
fn field_docs(_field: &bevy::reflect::NamedField) -> Option<&str> {
    None
}

#[cfg(feature = "reflect_documentation")]
fn variant_docs(variant: &bevy::reflect::enums::VariantInfo) -> Option<&str> {
    variant.docs()
}

#[cfg(not(feature = "reflect_documentation"))]
fn variant_docs(_variant: &bevy::reflect::enums::VariantInfo) -> Option<&str> {
    None
}

/// What `search` may match of the running app, republished to the gateway when it changes.
#[derive(Debug, Clone, Copy, Default)]
pub struct BridgeSearchTermsPlugin;

impl bevy::app::Plugin for BridgeSearchTermsPlugin {
    fn build(&self, app: &mut bevy::app::App) {
        use bevy::ecs::schedule::IntoScheduleConfigs;
        app.insert_resource(SearchTermsFeed(AppTermsFeed::new()))
            .init_resource::<NameCensus>()
            .add_systems(
                crate::runtime::schedule::BridgeLast,
                (
                    note_removed_names,
                    publish_search_terms.run_if(at_most_every(REFRESH_EVERY)),
                    read_noted_names,
                )
                    .chain()
                    .in_set(crate::runtime::schedule::BridgeSystems::Housekeeping),
            );
    }
}

#[cfg(test)]
mod tests {
    use bevy::ecs::system::RunSystemOnce;
    use bevy::prelude::World;

    use super::*;

    /// Spawns `count` named entities and one that lost its name; all of them noted as unread.
    fn noted_world(count: usize) -> (World, Vec<Entity>) {
        let mut world = World::new();
        let mut unread: Vec<Entity> = (0..count)
            .map(|index| world.spawn(Name::new(format!("Crate {index}"))).id())
            .collect();
        unread.push(world.spawn_empty().id());
        (world, unread)
    }

    #[test]
    fn a_bounded_read_stops_at_its_first_look_at_the_clock_and_keeps_the_rest() {
        let (mut world, mut unread) = noted_world(1_000);
        // No time at all: the clock's first look (after a batch) ends the read.
        let (changed, removed, left) = world
            .run_system_once(move |names: Query<&Name>| {
                let (changed, removed) = read_names(&mut unread, &names, Some(Duration::ZERO));
                (changed, removed, unread.len())
            })
            .unwrap_or_default();
        assert_eq!(changed.len() + removed.len(), NAMES_PER_CLOCK_READ);
        assert_eq!(left, 1_001 - NAMES_PER_CLOCK_READ);
        // Read from the newest noted: the nameless entity first, as a removed name.
        assert_eq!(removed.len(), 1);
        assert_eq!(changed[0].1, "Crate 999");
    }

    /// Runs the census thread's loop here over `batches` (all sent before it starts); how many
    /// times it published, and the entity names last published.
    fn census_over(batches: Vec<CensusChanges>) -> (u64, Vec<String>) {
        census_with_files(batches, None)
    }

    /// [`census_over`] with the world files of a folder listed too.
    fn census_with_files(
        batches: Vec<CensusChanges>,
        world_files: Option<WorldFilesDir>,
    ) -> (u64, Vec<String>) {
        let feed = AppTermsFeed::new();
        let (before, _) = feed.current();
        let (sender, receiver) = channel();
        for batch in batches {
            let _ = sender.send(batch);
        }
        drop(sender);
        census_worker(
            Arc::new(Mutex::new(Census::default())),
            feed.clone(),
            receiver,
            world_files,
        );
        let (after, terms) = feed.current();
        let names = terms.terms.iter().map(|term| term.name.clone()).collect();
        (after - before, names)
    }

    fn batch(name: &str, settled: bool) -> CensusChanges {
        CensusChanges {
            changed: vec![(
                Entity::from_raw_u32(7).unwrap_or(Entity::PLACEHOLDER),
                name.to_owned(),
            )],
            settled,
            ..CensusChanges::default()
        }
    }

    #[test]
    fn the_census_publishes_once_a_refresh_has_settled() {
        // A refresh's names still being read: nothing is published yet.
        assert_eq!(census_over(vec![batch("Crate 1", false)]).0, 0);
        let (publications, names) =
            census_over(vec![batch("Crate 1", false), batch("Crate 2", true)]);
        assert_eq!(publications, 1);
        assert_eq!(names, vec!["Crate 2".to_owned()]);
    }

    #[test]
    fn world_files_are_published_by_the_names_actions_take() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let levels = dir.path().join("levels");
        std::fs::create_dir_all(&levels).expect("a folder inside it");
        for file in [
            dir.path().join("arena.scn.ron"),
            levels.join("one.scn.ron"),
            dir.path().join("notes.txt"),
        ] {
            std::fs::write(file, "()").expect("a file");
        }
        let files = WorldFilesDir {
            dir: dir.path().to_path_buf(),
            extension: ".scn.ron",
        };
        let (publications, names) = census_with_files(vec![batch("Crate 1", true)], Some(files));
        assert_eq!(publications, 1);
        assert_eq!(names, vec!["arena", "levels/one", "Crate 1"]);
    }

    #[test]
    fn an_unbounded_read_takes_every_noted_name() {
        let (mut world, mut unread) = noted_world(300);
        let (changed, removed, left) = world
            .run_system_once(move |names: Query<&Name>| {
                let (changed, removed) = read_names(&mut unread, &names, None);
                (changed, removed, unread.len())
            })
            .unwrap_or_default();
        assert_eq!((changed.len(), removed.len(), left), (300, 1, 0));
    }
}
