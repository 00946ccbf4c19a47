//! Making the world match one side of a delta: checked whole first, then written a slice per
//! frame, the holding area's entities brought back under their own ids.

use super::*;

/// What applying a delta did.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// Entities despawned.
    pub despawned: usize,
    /// Entities that came back, old bits to the new entity.
    pub respawned: BTreeMap<u64, Entity>,
    /// Entities brought back whole from the holding area, under their own ids.
    pub brought_back: usize,
    /// Component values written.
    pub components_written: usize,
    /// Components removed.
    pub components_removed: usize,
    /// Resource values written.
    pub resources_written: usize,
    /// Resources removed.
    pub resources_removed: usize,
    /// Type path (or entity) to why it was left as it is.
    pub not_restored: BTreeMap<String, String>,
}

impl Applied {
    /// `{old: new}` of the respawned entities.
    pub(crate) fn respawned_json(&self) -> Value {
        self.respawned
            .iter()
            .map(|(old, new)| {
                let old = Entity::try_from_bits(*old)
                    .map_or_else(|| old.to_string(), |old| old.to_string());
                (old, json!(new.to_string()))
            })
            .collect::<Map<String, Value>>()
            .into()
    }

    /// `[{type, reason}]` of what was left as it is.
    pub(crate) fn not_restored_json(&self) -> Value {
        self.not_restored
            .iter()
            .map(|(what, reason)| json!({"type": what, "reason": reason}))
            .collect::<Vec<_>>()
            .into()
    }

    /// Adds what another step did.
    pub(crate) fn add(&mut self, step: Applied) {
        self.despawned += step.despawned;
        self.components_written += step.components_written;
        self.components_removed += step.components_removed;
        self.resources_written += step.resources_written;
        self.resources_removed += step.resources_removed;
        self.respawned.extend(step.respawned);
        self.brought_back += step.brought_back;
        self.not_restored.extend(step.not_restored);
    }
}

/// A component value to write, checked before anything changes.
pub(super) struct Write {
    /// The entity as the delta holds it (bits).
    pub(super) key: u64,
    pub(super) type_path: &'static str,
    pub(super) value: Box<dyn Reflect>,
}

/// Where [`Applying`] is: checking (nothing changed yet), then each kind of change in turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    Check,
    Detach,
    Remove,
    BringBack,
    Respawn,
    Removals,
    Writes,
    Parents,
    Resources,
    Readded,
    Done,
}

/// Makes the world hold one side of a delta, a slice at a time. Every value is read back from
/// JSON and checked before anything changes (the check stage changes nothing, so a value that no
/// longer fits its type refuses the whole delta); then the changes are made in order: children
/// of departing entities detached, departing entities held (or despawned), held ones brought
/// back, gone ones respawned, components removed, values written, parents last (every entity a
/// parent names exists by then), resources and game time.
///
/// Types the write policy protects are left as they are (the parent relation aside: it is
/// remapped and written here, and the held hierarchy had no loop), as are game states (they
/// change through transitions); both are listed in `not_restored`. Does not check what the world
/// holds now: callers do that first ([`Planned::step`]) unless asked to force. A big delta spans
/// frames, and the game runs between them; an entity the game despawns meanwhile is passed over.
pub(crate) struct Applying {
    pub(super) delta: Arc<Delta>,
    pub(super) side: Side,
    pub(super) ids: Ids<'static>,
    /// The last entity of the delta the stage at hand looked at (the check and the re-added
    /// stages walk the delta itself, by key: collecting 100,000 keys at once held a frame).
    pub(super) after: Option<u64>,
    pub(super) stage: Stage,
    pub(super) next: usize,
    pub(super) despawn: Vec<Entity>,
    pub(super) going: HashSet<Entity>,
    pub(super) bring_back: Vec<Entity>,
    pub(super) respawn: Vec<u64>,
    pub(super) removals: Vec<(u64, &'static str)>,
    pub(super) writes: Vec<Write>,
    pub(super) parents: Vec<Write>,
    pub(super) resource_writes: Vec<(&'static str, Box<dyn Reflect>)>,
    pub(super) resource_removals: Vec<&'static str>,
    /// The protected types left out that Bevy may have re-added to every entity holding them
    /// (required components), each with whether every holder so far came back new with it.
    pub(super) readded: Vec<(String, bool, bool)>,
    /// Entities that already held what the side holds (brought back whole), as read.
    pub(super) unchanged: HashMap<u64, EntitySnapshot>,
    pub(super) applied: Applied,
}

impl std::fmt::Debug for Applying {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Applying")
            .field("stage", &self.stage)
            .field("entities", &self.delta.entities.len())
            .finish_non_exhaustive()
    }
}

/// A registered component type, as the apply stages need it.
pub(super) fn component_of<'r>(
    registry: &'r TypeRegistry,
    type_path: &str,
) -> Option<(&'r TypeRegistration, &'r ReflectComponent)> {
    let registration = registry.get_with_type_path(type_path)?;
    Some((registration, registration.data::<ReflectComponent>()?))
}

impl Applying {
    /// Starts making the world hold `delta`'s `side`.
    pub(crate) fn new(world: &World, delta: Arc<Delta>, side: Side) -> Applying {
        // Sized once: growing a map of 100,000 rehashes it in one frame.
        let (going, unchanged) = (
            HashSet::with_capacity(delta.entities.len()),
            HashMap::with_capacity(delta.entities.len()),
        );
        Applying {
            delta,
            side,
            ids: Ids::owned(world),
            after: None,
            stage: Stage::Check,
            next: 0,
            despawn: Vec::new(),
            going,
            bring_back: Vec::new(),
            respawn: Vec::new(),
            removals: Vec::new(),
            writes: Vec::new(),
            parents: Vec::new(),
            resource_writes: Vec::new(),
            resource_removals: Vec::new(),
            readded: Vec::new(),
            unchanged,
            applied: Applied::default(),
        }
    }

    /// Frees what it read and wrote on the game thread over the next frames (see
    /// [`FreedOverFrames`]): dropped at once, the values of 100,000 entities took 17 ms.
    pub(crate) fn free_over_frames(self, world: &mut World) {
        Delta::free_over_frames(self.delta, world);
        FreedOverFrames::hand_over_items(world, self.writes);
        FreedOverFrames::hand_over_items(world, self.parents);
        FreedOverFrames::hand_over_items(world, self.unchanged);
        FreedOverFrames::hand_over_items(world, self.going);
        FreedOverFrames::hand_over_items(world, self.applied.respawned);
    }

    /// The entities that already held what the side holds, as the check read them (once done,
    /// they hold it still: nothing was written to them).
    pub(crate) fn take_unchanged(&mut self) -> HashMap<u64, EntitySnapshot> {
        std::mem::take(&mut self.unchanged)
    }

    /// Whether anything has changed yet (a failure before that changed nothing).
    pub(crate) fn changed_anything(&self) -> bool {
        self.stage != Stage::Check
    }

    /// `(units done, units in all)` of the current stage, for progress.
    pub(crate) fn progress(&self) -> (usize, usize) {
        let total = match self.stage {
            Stage::Check => self.delta.entities.len(),
            Stage::Detach | Stage::Remove => self.despawn.len(),
            Stage::BringBack => self.bring_back.len(),
            Stage::Respawn => self.respawn.len(),
            Stage::Removals => self.removals.len(),
            Stage::Writes => self.writes.len(),
            Stage::Parents => self.parents.len(),
            Stage::Resources | Stage::Readded | Stage::Done => 0,
        };
        (self.next.min(total), total)
    }

    /// Goes on while the slice lasts; `Some` once done. An error comes only from the check stage,
    /// before anything changed.
    pub(crate) fn advance(
        &mut self,
        world: &mut World,
        slice: &mut Slice,
    ) -> Result<Option<Applied>, BridgeError> {
        let registry = names::registry(world);
        let registry = registry.read();
        while !slice.is_over() && self.stage != Stage::Done {
            let more = match self.stage {
                Stage::Check => self.check(world, &registry, slice)?,
                Stage::Detach => self.detach(world, slice),
                Stage::Remove => self.remove(world, slice),
                Stage::BringBack => self.bring_back(world, slice),
                Stage::Respawn => self.respawn(world, slice),
                Stage::Removals => self.remove_components(world, &registry, slice),
                Stage::Writes => self.write(world, &registry, slice, false),
                Stage::Parents => self.write(world, &registry, slice, true),
                Stage::Resources => {
                    self.resources(world, &registry);
                    false
                }
                Stage::Readded => self.forget_readded(world, &registry, slice),
                Stage::Done => false,
            };
            if !more {
                self.stage = match self.stage {
                    Stage::Check => Stage::Detach,
                    Stage::Detach => Stage::Remove,
                    Stage::Remove => Stage::BringBack,
                    Stage::BringBack => Stage::Respawn,
                    Stage::Respawn => Stage::Removals,
                    Stage::Removals => Stage::Writes,
                    Stage::Writes => Stage::Parents,
                    Stage::Parents => Stage::Resources,
                    Stage::Resources => Stage::Readded,
                    Stage::Readded | Stage::Done => Stage::Done,
                };
                self.next = 0;
                self.after = None;
            }
        }
        if self.stage == Stage::Done {
            return Ok(Some(std::mem::take(&mut self.applied)));
        }
        Ok(None)
    }

    /// The check stage: decides every change and reads every value back, changing nothing.
    /// `true` while entities are left to check.
    pub(super) fn check(
        &mut self,
        world: &World,
        registry: &TypeRegistry,
        slice: &mut Slice,
    ) -> Result<bool, BridgeError> {
        let policy = WritePolicy::of(world);
        let delta = Arc::clone(&self.delta);
        for (bits, change) in entities_after(&delta, self.after) {
            if !slice.more() {
                return Ok(true);
            }
            self.after = Some(*bits);
            self.next += 1;
            self.check_entity(world, registry, &policy, *bits, change)?;
        }
        self.check_resources(world, registry, &policy)?;
        self.after = None;
        Ok(false)
    }

    /// The component type at `type_path` when the delta may write it; otherwise `None`, and why
    /// goes into `not_restored`.
    pub(super) fn writable<'r>(
        &mut self,
        world: &World,
        registry: &'r TypeRegistry,
        policy: &WritePolicy,
        type_path: &str,
    ) -> Option<(&'r TypeRegistration, &'r ReflectComponent)> {
        let Some(found) = component_of(registry, type_path) else {
            self.applied
                .not_restored
                .entry(type_path.to_owned())
                .or_insert_with(|| "no longer registered".to_owned());
            return None;
        };
        let protection = (type_path != CHILD_OF)
            .then(|| policy.protection(world, found.0))
            .flatten();
        if let Some(protection) = protection {
            self.applied
                .not_restored
                .entry(type_path.to_owned())
                .or_insert_with(|| format!("{PROTECTED}: {}", protection.reason));
            return None;
        }
        Some(found)
    }

    /// [`Applying::checked`], but a value naming an asset that is gone (one the game made at
    /// run time, freed since, and no longer kept by the history) is left as it is and named in
    /// `not_restored`: the rest of the change is given back.
    pub(super) fn checked_or_named(
        &mut self,
        world: &World,
        registry: &TypeRegistry,
        policy: &WritePolicy,
        registration: &TypeRegistration,
        type_path: &str,
        value: &Raw,
    ) -> Result<Option<Box<dyn Reflect>>, BridgeError> {
        match self.checked(world, registry, policy, registration, type_path, value) {
            Ok(value) => Ok(Some(value)),
            Err(BridgeError::HandleRefused { reason, .. }) => {
                self.applied
                    .not_restored
                    .entry(type_path.to_owned())
                    .or_insert_with(|| format!("an asset it names is gone: {reason}"));
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    pub(super) fn checked(
        &self,
        world: &World,
        registry: &TypeRegistry,
        policy: &WritePolicy,
        registration: &TypeRegistration,
        type_path: &str,
        value: &Raw,
    ) -> Result<Box<dyn Reflect>, BridgeError> {
        let value = values::concrete_from_json(
            registration,
            registry,
            &self.ids.value(type_path, value).value(),
            &mut HandleReader::naming(world),
        )?;
        if type_path != CHILD_OF {
            policy.check_value(world, registration, value.as_partial_reflect())?;
        }
        Ok(value)
    }

    pub(super) fn check_entity(
        &mut self,
        world: &World,
        registry: &TypeRegistry,
        policy: &WritePolicy,
        bits: u64,
        change: &EntityChange,
    ) -> Result<(), BridgeError> {
        let live = self.ids.live(world, bits);
        // The rule every entity action keeps: resource entities and observers are not touched.
        if let Some(entity) = live
            && world::require_plain_entity(world, entity).is_err()
        {
            self.applied.not_restored.insert(
                format!("entity {entity}"),
                "it is a resource entity or an observer now; entity actions leave those alone"
                    .to_owned(),
            );
            return Ok(());
        }
        let side = self.side;
        let (wanted, current): (BTreeMap<String, Raw>, BTreeMap<String, Raw>) = match change {
            EntityChange::Whole(change) => match (change.side(side), live) {
                (None, Some(entity)) => {
                    self.despawn.push(entity);
                    self.going.insert(entity);
                    return Ok(());
                }
                (None, None) => return Ok(()),
                (Some(held), live) => {
                    let now = match (live, self.ids.held(world, bits)) {
                        (Some(entity), _) => Some(entity_snapshot(world, entity, registry)),
                        // Held out of sight: it comes back whole, under the same id.
                        (None, Some(entity)) => {
                            self.bring_back.push(entity);
                            Some(entity_snapshot(world, entity, registry))
                        }
                        (None, None) => None,
                    };
                    // What it holds already: nothing to write or remove.
                    if let Some(now) = &now
                        && now.same_values(&self.ids.snapshot(held))
                    {
                        self.unchanged.insert(bits, now.clone());
                        return Ok(());
                    }
                    let current = match now {
                        Some(now) => now.values(),
                        None => {
                            self.respawn.push(bits);
                            self.name_lost_on_respawn(registry, bits, held);
                            BTreeMap::new()
                        }
                    };
                    let wanted = held.values();
                    for type_path in current.keys().filter(|path| !wanted.contains_key(*path)) {
                        if let Some((registration, _)) =
                            self.writable(world, registry, policy, type_path)
                        {
                            self.removals
                                .push((bits, registration.type_info().type_path()));
                        }
                    }
                    (wanted, current)
                }
            },
            EntityChange::Components { name, changes } => {
                let Some(entity) = live else {
                    self.applied.not_restored.insert(
                        entity_label(self.ids.current(bits), name.as_ref()),
                        "the entity no longer exists".to_owned(),
                    );
                    return Ok(());
                };
                let mut wanted = BTreeMap::new();
                let mut current = BTreeMap::new();
                for (type_path, change) in changes {
                    let Some((registration, _)) = self.writable(world, registry, policy, type_path)
                    else {
                        continue;
                    };
                    let now = component_raw(world, entity, registration, registry);
                    match change.side(side) {
                        Some(value) => {
                            wanted.insert(type_path.clone(), value.clone());
                            if let Some(now) = now {
                                current.insert(type_path.clone(), now);
                            }
                        }
                        None if now.is_some() => self
                            .removals
                            .push((bits, registration.type_info().type_path())),
                        None => {}
                    }
                }
                (wanted, current)
            }
        };
        self.plan_writes(world, registry, policy, bits, (&wanted, &current))
    }

    /// Names, on an entity brought back from its reflected values, every component it loses.
    fn name_lost_on_respawn(&mut self, registry: &TypeRegistry, bits: u64, held: &EntitySnapshot) {
        let label = entity_label(self.ids.current(bits), held.name().as_ref());
        for lost in &held.unread {
            // A game's own unreflected marker matters most: a brick without
            // it may be a picture the ball passes through.
            let fix = if registry.get_with_type_path(lost).is_none() {
                format!(
                    ". The component is not reflected, so the copy lacks it and may behave differently; to bring it back next time, {}",
                    names::HOW_TO_REFLECT
                )
            } else {
                String::new()
            };
            self.applied.not_restored.entry(lost.clone()).or_insert_with(|| {
                format!(
                    "{LOST_ON_RESPAWN} on {label}: it was despawned outside the bridge (or held too long), so only its reflected values came back under a new id{fix}"
                )
            });
        }
    }

    /// The writes that give an entity the values wanted where they differ from its current ones.
    fn plan_writes(
        &mut self,
        world: &World,
        registry: &TypeRegistry,
        policy: &WritePolicy,
        bits: u64,
        (wanted, current): (&BTreeMap<String, Raw>, &BTreeMap<String, Raw>),
    ) -> Result<(), BridgeError> {
        for (type_path, value) in wanted {
            if current.get(type_path) == Some(&self.ids.value(type_path, value)) {
                continue;
            }
            let Some((registration, _)) = self.writable(world, registry, policy, type_path) else {
                continue;
            };
            let Some(value) =
                self.checked_or_named(world, registry, policy, registration, type_path, value)?
            else {
                continue;
            };
            let write = Write {
                key: bits,
                type_path: registration.type_info().type_path(),
                value,
            };
            if type_path == CHILD_OF {
                self.parents.push(write);
            } else {
                self.writes.push(write);
            }
        }
        Ok(())
    }

    pub(super) fn check_resources(
        &mut self,
        world: &World,
        registry: &TypeRegistry,
        policy: &WritePolicy,
    ) -> Result<(), BridgeError> {
        let delta = Arc::clone(&self.delta);
        for (type_path, change) in &delta.resources {
            if type_path.starts_with(STATE_PREFIX) {
                self.applied.not_restored.insert(
                    type_path.clone(),
                    "a game state changes only through a transition; use state.set".to_owned(),
                );
                continue;
            }
            let Some((registration, _)) = self.writable(world, registry, policy, type_path) else {
                continue;
            };
            let now = resource_raw(world, registration, registry);
            let path = registration.type_info().type_path();
            match change.side(self.side) {
                Some(value) if now.as_ref() != Some(value) => {
                    if let Some(value) = self.checked_or_named(
                        world,
                        registry,
                        policy,
                        registration,
                        type_path,
                        value,
                    )? {
                        self.resource_writes.push((path, value));
                    }
                }
                None if now.is_some() => self.resource_removals.push(path),
                _ => {}
            }
        }
        Ok(())
    }

    /// Children of an entity that goes, and that do not go with it, stay in the world.
    pub(super) fn detach(&mut self, world: &mut World, slice: &mut Slice) -> bool {
        while self.next < self.despawn.len() {
            if !slice.more() {
                return true;
            }
            let entity = self.despawn[self.next];
            self.next += 1;
            // A model's parts came from Bevy, after the change this undoes: they go with their
            // root, which spawns them again if it comes back.
            let parts = models::parts_of(world, entity);
            if !parts.is_empty() && parts.iter().any(|part| !self.going.contains(part)) {
                models::despawn_model(world, entity);
            }
            for child in hierarchy::children_of(world, entity) {
                if !self.going.contains(&child)
                    && let Ok(mut entity_mut) = world.get_entity_mut(child)
                {
                    entity_mut.remove::<ChildOf>();
                }
            }
        }
        false
    }

    /// What goes is held out of sight (so a later undo brings it back whole), or despawned
    /// leaf-first where the history keeps no holding area.
    pub(super) fn remove(&mut self, world: &mut World, slice: &mut Slice) -> bool {
        let start = self.next;
        while self.next < self.despawn.len() && slice.more() {
            self.next += 1;
        }
        let chunk = &self.despawn[start..self.next];
        if world.contains_resource::<holding::HoldingArea>() {
            holding::hold_among(world, chunk, &self.going);
        } else {
            holding::despawn_leaf_first(world, chunk);
        }
        self.applied.despawned += chunk.len();
        self.next < self.despawn.len()
    }

    pub(super) fn bring_back(&mut self, world: &mut World, slice: &mut Slice) -> bool {
        while self.next < self.bring_back.len() {
            if !slice.more() {
                return true;
            }
            if holding::bring_back(world, self.bring_back[self.next]) {
                self.applied.brought_back += 1;
            }
            self.next += 1;
        }
        false
    }

    pub(super) fn respawn(&mut self, world: &mut World, slice: &mut Slice) -> bool {
        while self.next < self.respawn.len() {
            if !slice.more() {
                return true;
            }
            let bits = self.respawn[self.next];
            self.applied
                .respawned
                .insert(bits, world.spawn_empty().id());
            self.next += 1;
        }
        false
    }

    /// The entity the delta holds as `bits`, as it is now.
    pub(super) fn live(&self, world: &World, bits: u64) -> Option<Entity> {
        self.applied
            .respawned
            .get(&bits)
            .copied()
            .or_else(|| self.ids.live(world, bits))
    }

    pub(super) fn remove_components(
        &mut self,
        world: &mut World,
        registry: &TypeRegistry,
        slice: &mut Slice,
    ) -> bool {
        while self.next < self.removals.len() {
            if !slice.more() {
                return true;
            }
            let (bits, type_path) = self.removals[self.next];
            self.next += 1;
            let Some((registration, component)) = component_of(registry, type_path) else {
                continue;
            };
            if let Some(entity) = self.live(world, bits)
                && models::remove_component(world, entity, registration.type_id(), component)
            {
                self.applied.components_removed += 1;
            }
        }
        false
    }

    pub(super) fn write(
        &mut self,
        world: &mut World,
        registry: &TypeRegistry,
        slice: &mut Slice,
        parents: bool,
    ) -> bool {
        let total = if parents {
            self.parents.len()
        } else {
            self.writes.len()
        };
        while self.next < total {
            if !slice.more() {
                return true;
            }
            let index = self.next;
            self.next += 1;
            let write = if parents {
                &mut self.parents[index]
            } else {
                &mut self.writes[index]
            };
            let (key, type_path) = (write.key, write.type_path);
            if let Some(child_of) = write.value.downcast_mut::<ChildOf>() {
                if let Some(parent) = self.applied.respawned.get(&child_of.parent().to_bits()) {
                    *child_of = ChildOf(*parent);
                }
                // A parent gone for good (despawned by the game, not held): the child stays a
                // root rather than hang under nothing.
                if world.get_entity(child_of.parent()).is_err() {
                    let parent = child_of.parent();
                    self.applied
                        .not_restored
                        .entry(CHILD_OF.to_owned())
                        .or_insert_with(|| {
                            format!("entity {parent} stays gone, so its children came back without a parent")
                        });
                    continue;
                }
            }
            let entity = self
                .applied
                .respawned
                .get(&key)
                .copied()
                .or_else(|| self.ids.live(world, key));
            let (Some(entity), Some((_, component))) = (entity, component_of(registry, type_path))
            else {
                continue;
            };
            let value = if parents {
                &self.parents[index].value
            } else {
                &self.writes[index].value
            };
            if let Ok(mut entity_mut) = world.get_entity_mut(entity) {
                component.insert(&mut entity_mut, value.as_partial_reflect(), registry);
                self.applied.components_written += 1;
            }
        }
        false
    }

    pub(super) fn resources(&mut self, world: &mut World, registry: &TypeRegistry) {
        for label in &self.delta.unheld_resources {
            self.applied
                .not_restored
                .entry(label.clone())
                .or_insert_with(|| unheld_resource_reason(registry, label));
        }
        for (type_path, value) in std::mem::take(&mut self.resource_writes) {
            let Some((registration, component)) = component_of(registry, type_path) else {
                continue;
            };
            let entity = resource_slot(world, registration);
            if let Ok(mut entity_mut) = world.get_entity_mut(entity) {
                component.insert(&mut entity_mut, value.as_partial_reflect(), registry);
                self.applied.resources_written += 1;
            }
        }
        for type_path in std::mem::take(&mut self.resource_removals) {
            let Some(registration) = registry.get_with_type_path(type_path) else {
                continue;
            };
            if resource_entity(world, registration).is_ok()
                && names::component_id(world, registration.type_id())
                    .is_some_and(|id| world.remove_resource_by_id(id))
            {
                self.applied.resources_removed += 1;
            }
        }
        let time = self
            .delta
            .time
            .as_ref()
            .and_then(|change| change.side(self.side).copied());
        if let (Some(time), Some(mut virtual_time)) =
            (time, world.get_resource_mut::<Time<Virtual>>())
        {
            if time.paused {
                virtual_time.pause();
            } else {
                virtual_time.unpause();
            }
            virtual_time.set_relative_speed_f64(time.speed);
        }
    }

    /// Drops from `not_restored` the protected components that every entity holding them came
    /// back new with anyway: Bevy adds required components (a transform's `GlobalTransform` and
    /// `TransformTreeChanged`) when the components that require them come back. Looks through
    /// the delta's whole entities while the slice lasts; `true` while some are left.
    pub(super) fn forget_readded(
        &mut self,
        world: &World,
        registry: &TypeRegistry,
        slice: &mut Slice,
    ) -> bool {
        if self.next == 0 {
            self.readded = self
                .applied
                .not_restored
                .iter()
                .filter(|(_, reason)| {
                    reason.starts_with(PROTECTED) || reason.starts_with(LOST_ON_RESPAWN)
                })
                .map(|(type_path, _)| (type_path.clone(), false, true))
                .collect();
        }
        if self.readded.is_empty() {
            return false;
        }
        let ids: Vec<_> = self
            .readded
            .iter()
            .map(|(type_path, _, _)| {
                registry
                    .get_with_type_path(type_path)
                    .and_then(|registration| world.components().get_id(registration.type_id()))
            })
            .collect();
        let delta = Arc::clone(&self.delta);
        for (bits, change) in entities_after(&delta, self.after) {
            if !slice.more() {
                return true;
            }
            let bits = *bits;
            self.after = Some(bits);
            self.next += 1;
            let EntityChange::Whole(change) = change else {
                continue;
            };
            let Some(held) = change.side(self.side) else {
                continue;
            };
            for ((type_path, held_somewhere, every), id) in self.readded.iter_mut().zip(&ids) {
                if !held.holds(type_path) && !held.unread.contains(type_path) {
                    continue;
                }
                *held_somewhere = true;
                // A respawned entity under its new id; one brought back whole under its own.
                let back = self
                    .applied
                    .respawned
                    .get(&bits)
                    .copied()
                    .or_else(|| Entity::try_from_bits(self.ids.current(bits)))
                    .and_then(|entity| world.get_entity(entity).ok())
                    .is_some_and(|entity| id.is_some_and(|id| entity.contains_id(id)));
                *every &= back;
            }
        }
        for (type_path, held_somewhere, every) in std::mem::take(&mut self.readded) {
            if held_somewhere && every {
                self.applied.not_restored.remove(&type_path);
            }
        }
        false
    }
}

/// The delta's entities after `after` (all of them for `None`), in order.
pub(super) fn entities_after(
    delta: &Delta,
    after: Option<u64>,
) -> std::collections::btree_map::Range<'_, u64, EntityChange> {
    use std::ops::Bound::{Excluded, Unbounded};
    match after {
        Some(key) => delta.entities.range((Excluded(key), Unbounded)),
        None => delta.entities.range(..),
    }
}

/// Makes the world hold `delta`'s `side` at once (see [`Applying`]): the render backstop takes
/// recent changes back within the frame of a render error.
#[cfg(feature = "render")]
pub(crate) fn apply(
    world: &mut World,
    delta: Arc<Delta>,
    side: Side,
) -> Result<Applied, BridgeError> {
    let mut applying = Applying::new(world, delta, side);
    loop {
        if let Some(applied) = applying.advance(world, &mut Slice::unbounded())? {
            return Ok(applied);
        }
    }
}

/// Checks that every value `delta`'s `side` would write still reads as its type and passes the
/// write policy, without changing anything: a run of steps is checked whole before its first
/// step is applied. Goes on while the slice lasts, from the entity after `after` on; `true` once
/// the whole delta is checked.
pub(crate) fn check_values(
    world: &World,
    delta: &Delta,
    side: Side,
    after: &mut Option<u64>,
    slice: &mut Slice,
) -> Result<bool, BridgeError> {
    use std::ops::Bound::{Excluded, Unbounded};
    let registry = names::registry(world);
    let registry = registry.read();
    let policy = WritePolicy::of(world);
    let ids = Ids::of(world);
    let check = |type_path: &str, value: &Raw| {
        let Some(registration) = registry.get_with_type_path(type_path) else {
            return Ok(());
        };
        if type_path == CHILD_OF || type_path.starts_with(STATE_PREFIX) {
            return Ok(());
        }
        if policy.protection(world, registration).is_some() {
            return Ok(());
        }
        let value = match values::concrete_from_json(
            registration,
            &registry,
            &ids.value(type_path, value).value(),
            &mut HandleReader::naming(world),
        ) {
            Ok(value) => value,
            // Applying leaves it as it is and names it (see `Applying::checked_or_named`).
            Err(BridgeError::HandleRefused { .. }) => return Ok(()),
            Err(error) => return Err(error),
        };
        policy.check_value(world, registration, value.as_partial_reflect())
    };
    let range = match *after {
        Some(key) => delta.entities.range((Excluded(key), Unbounded)),
        None => delta.entities.range(..),
    };
    for (bits, change) in range {
        if !slice.more() {
            return Ok(false);
        }
        *after = Some(*bits);
        match change {
            EntityChange::Whole(change) => {
                if let Some(held) = change.side(side) {
                    for (type_path, value) in held.values() {
                        check(&type_path, &value)?;
                    }
                }
            }
            EntityChange::Components { changes, .. } => {
                for (type_path, change) in changes {
                    if let Some(value) = change.side(side) {
                        check(type_path, value)?;
                    }
                }
            }
        }
    }
    for (type_path, change) in &delta.resources {
        if let Some(value) = change.side(side) {
            check(type_path, value)?;
        }
    }
    Ok(true)
}
