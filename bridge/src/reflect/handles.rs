//! Asset handles as JSON, the same wherever values are read or written (components, resources,
//! world files, history, schemas).
//!
//! A handle reads as its asset path when the asset came from a file (`"models/tree.glb#Scene0"`),
//! and otherwise as a reference, `{"asset": "<id>", "type": "<asset type>"}`. A write takes a
//! path (loaded through the `AssetServer`, inside the asset folder only), a reference to an asset
//! that exists, or `{"new": value}`: a reflected asset type's value over its `Default`, or, for a
//! mesh, one of Bevy's primitive shapes (`{"new": {"Cuboid": {"half_size": [0.5, 0.5, 0.5]}}}`).
//!
//! New assets get a UUID id and are made only when the write is applied ([`make_new_assets`]):
//! a refused write makes nothing. Assets keyed by UUID are never freed on their own, so the bridge
//! counts them ([`MadeAssets`], at most [`crate::WriteLimits::max_made_assets`]) and
//! `manage_asset.release` frees them; until then every value that names one (in the history, a
//! checkpoint) can be given back.

use std::any::TypeId;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use bevy::asset::uuid::Uuid;
use bevy::asset::{
    AssetPath, AssetServer, ReflectAsset, ReflectHandle, UntypedAssetId, UntypedHandle,
};
use bevy::ecs::reflect::ReflectComponent;
use bevy::prelude::{Entity, Resource, World};
use bevy::reflect::enums::VariantInfo;
use bevy::reflect::serde::ReflectDeserializerProcessor;
use bevy::reflect::{PartialReflect, Reflect, TypeInfo, TypeRegistration, TypeRegistry};
use bevy::tasks::{block_on, poll_once};
use parking_lot::Mutex;
use serde::Deserialize;
use serde::de::Error as _;
use serde_json::{Value, json};

use crate::error::{BridgeError, HandleHelp};
use crate::reflect::files::{MissingFolders, relative_path, resolve_inside};
use crate::reflect::handle_form::{
    IMAGE_TYPE, as_handle, asset_type_path, is_handle_type, is_mesh_type, parse_asset_id,
};
use crate::reflect::policy::WritePolicy;
use crate::reflect::values;
use crate::reflect::walk::{Step, walk};

/// The asset folder, as the app's `AssetPlugin` resolves it.
#[derive(Resource, Debug, Clone)]
pub struct AssetRoot(pub PathBuf);

/// Assets the bridge made from values (`{"new": ...}`), oldest first: their id, type and the
/// JSON they were made from.
#[derive(Resource, Debug, Default)]
pub struct MadeAssets(pub Vec<MadeAsset>);

/// One asset the bridge made.
#[derive(Debug, Clone)]
pub struct MadeAsset {
    /// Its id (a UUID: it lives until released).
    pub id: UntypedAssetId,
    /// Its type path.
    pub type_path: String,
    /// What it was made from: the `new` value of its handle.
    pub made_from: Value,
}

/// Assets the history names only by id, held so that an undo or restore can give them back after
/// the game dropped its own handles (an entity it despawned took its mesh and material with it):
/// the newest [`MAX_KEPT_BY_HISTORY`], by id.
#[derive(Resource, Debug, Default)]
pub struct KeptByHistory(Mutex<KeptHandles>);

/// The handles of [`KeptByHistory`], oldest first.
#[derive(Debug, Default)]
pub struct KeptHandles {
    order: std::collections::VecDeque<UntypedAssetId>,
    handles: std::collections::HashMap<UntypedAssetId, UntypedHandle>,
}

/// Most assets the history keeps alive.
pub const MAX_KEPT_BY_HISTORY: usize = 4_096;

impl KeptByHistory {
    /// Keeps `handles` (the newest win beyond [`MAX_KEPT_BY_HISTORY`]).
    pub(crate) fn keep(&self, handles: Vec<UntypedHandle>) {
        if handles.is_empty() {
            return;
        }
        let mut kept = self.0.lock();
        for handle in handles {
            let id = handle.id();
            if kept.handles.insert(id, handle).is_none() {
                kept.order.push_back(id);
            }
        }
        while kept.order.len() > MAX_KEPT_BY_HISTORY {
            if let Some(oldest) = kept.order.pop_front() {
                kept.handles.remove(&oldest);
            }
        }
    }

    /// A handle to `id`, if the history keeps it.
    fn get(&self, id: UntypedAssetId) -> Option<UntypedHandle> {
        self.0.lock().handles.get(&id).cloned()
    }
}

/// An asset a write asks for, made when the write is applied.
pub(crate) struct NewAsset {
    id: UntypedAssetId,
    uuid: Uuid,
    type_path: String,
    made_from: Value,
    value: NewValue,
}

impl std::fmt::Debug for NewAsset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewAsset")
            .field("id", &self.id)
            .field("type", &self.type_path)
            .finish()
    }
}

enum NewValue {
    /// A reflected asset type's value, added through its `ReflectAsset`.
    Reflected {
        value: Box<dyn Reflect>,
        asset: ReflectAsset,
    },
    /// A mesh built from a primitive shape (a mesh's reflection leaves out its vertices, so it
    /// is added as itself).
    #[cfg(feature = "render")]
    Mesh(bevy::mesh::Mesh),
}

/// Reads handles in their JSON form while a value is deserialized (a
/// [`ReflectDeserializerProcessor`]): loads paths, finds referenced assets and prepares new ones,
/// which [`make_new_assets`] adds once the write is applied.
pub(crate) struct HandleReader<'w> {
    world: &'w World,
    /// Whether the value comes from a caller (its paths are checked, and it may ask for new
    /// assets, which the caller makes once it writes) or from the world (the history).
    from_caller: bool,
    /// New assets the value asks for.
    made: Vec<NewAsset>,
    /// The typed error behind the deserializer's message, when a handle was refused.
    refused: Option<BridgeError>,
}

impl<'w> HandleReader<'w> {
    /// A reader for values written into `world`, which may ask for new assets: the caller makes
    /// them with [`make_new_assets`] once the write is applied.
    pub(crate) fn new(world: &'w World) -> HandleReader<'w> {
        HandleReader {
            world,
            from_caller: true,
            made: Vec::new(),
            refused: None,
        }
    }

    /// A reader for values the world held (the history gives them back): paths and references,
    /// never `{"new": ...}`. A path is loaded as the game had it, unchecked: the game may have
    /// loaded it from another asset source, or its file may be gone since.
    pub(crate) fn naming(world: &'w World) -> HandleReader<'w> {
        HandleReader {
            from_caller: false,
            ..HandleReader::new(world)
        }
    }

    /// The new assets read so far, to make with [`make_new_assets`] when the write is applied.
    pub(crate) fn into_new_assets(self) -> Vec<NewAsset> {
        self.made
    }

    /// [`HandleReader::read_new`], the asset keeping the UUID it had (a world file's).
    pub(crate) fn read_new_as(
        &mut self,
        uuid: Uuid,
        asset_type: &TypeRegistration,
        registry: &TypeRegistry,
        value: &Value,
    ) -> Result<UntypedHandle, BridgeError> {
        self.read_new(asset_type, registry, value)?;
        let made = self
            .made
            .last_mut()
            .ok_or_else(|| BridgeError::InvalidValue {
                type_path: asset_type.type_info().type_path().to_owned(),
                reason: "no asset was made from the value".to_owned(),
            })?;
        made.id = UntypedAssetId::Uuid {
            type_id: asset_type.type_id(),
            uuid,
        };
        made.uuid = uuid;
        Ok(UntypedHandle::Uuid {
            type_id: asset_type.type_id(),
            uuid,
        })
    }

    /// A new asset of the registered type `asset_type` from `value` (`manage_asset.create_asset`).
    pub(crate) fn read_new(
        &mut self,
        asset_type: &TypeRegistration,
        registry: &TypeRegistry,
        value: &Value,
    ) -> Result<UntypedHandle, BridgeError> {
        let type_path = asset_type.type_info().type_path();
        let whole = json!({ "new": value });
        self.new_asset(asset_type.type_id(), type_path, registry, value, &whole)
    }

    /// The handle `given` asks for, as a handle of `reflect_handle`'s asset type (or, for an
    /// `UntypedHandle`, of the type `given` names).
    fn read(
        &mut self,
        reflect_handle: Option<&ReflectHandle>,
        registry: &TypeRegistry,
        given: &Value,
    ) -> Result<UntypedHandle, BridgeError> {
        let named_type = given.get("type").and_then(Value::as_str);
        let asset_type = match (reflect_handle, named_type) {
            (Some(reflect_handle), _) => reflect_handle.asset_type_id(),
            (None, Some(name)) => registry
                .get_with_type_path(name)
                .or_else(|| registry.get_with_short_type_path(name))
                .map(TypeRegistration::type_id)
                .ok_or_else(|| {
                    refuse(
                        name,
                        given,
                        "no asset type of that name is registered",
                        HandleHelp::ListLoaded,
                    )
                })?,
            (None, None) => {
                return Err(refuse(
                    "any asset",
                    given,
                    "an untyped handle needs the asset's \"type\" beside its path or id",
                    HandleHelp::DescribeType,
                ));
            }
        };
        let type_path = asset_type_path(registry, asset_type);
        if let (Some(_), Some(name)) = (reflect_handle, named_type)
            && name != type_path
            && !type_path.ends_with(&format!("::{name}"))
        {
            return Err(refuse(
                &type_path,
                given,
                &format!("it names a {name}, and this handle holds a {type_path}"),
                HandleHelp::DescribeType,
            ));
        }
        match given {
            Value::String(path) => self.load(asset_type, &type_path, path, given),
            Value::Object(object) => {
                match (object.get("path"), object.get("asset"), object.get("new")) {
                    (Some(Value::String(path)), None, None) => {
                        self.load(asset_type, &type_path, path, given)
                    }
                    (None, Some(Value::String(id)), None) => {
                        self.find(asset_type, &type_path, registry, id, given)
                    }
                    (None, None, Some(value)) if reflect_handle.is_some() && self.from_caller => {
                        self.new_asset(asset_type, &type_path, registry, value, given)
                    }
                    (None, None, Some(_)) if reflect_handle.is_some() => Err(refuse(
                        &type_path,
                        given,
                        "new assets are made only by writes (spawn, insert, mutate, resources, manage_asset.create_asset)",
                        HandleHelp::DescribeType,
                    )),
                    _ => Err(refuse(
                        &type_path,
                        given,
                        "give a path (\"textures/grass.png\"), {\"asset\": \"<id>\"} or {\"new\": value}",
                        HandleHelp::DescribeType,
                    )),
                }
            }
            _ => Err(refuse(
                &type_path,
                given,
                "give a path (\"textures/grass.png\"), {\"asset\": \"<id>\"} or {\"new\": value}",
                HandleHelp::DescribeType,
            )),
        }
    }

    /// Starts loading `given` (inside the asset folder, with a loader for its extension that
    /// makes this asset type) and returns its handle.
    fn load(
        &self,
        asset_type: TypeId,
        type_path: &str,
        given: &str,
        whole: &Value,
    ) -> Result<UntypedHandle, BridgeError> {
        let server = self.world.get_resource::<AssetServer>().ok_or_else(|| {
            refuse(
                type_path,
                whole,
                "this app has no AssetServer (add AssetPlugin)",
                HandleHelp::DescribeType,
            )
        })?;
        if !self.from_caller {
            let path = AssetPath::try_parse(given)
                .map_err(|error| {
                    refuse(type_path, whole, &error.to_string(), HandleHelp::ListFiles)
                })?
                .into_owned();
            return Ok(server.load_builder().load_erased(asset_type, path));
        }
        let (file, label) = match given.split_once('#') {
            Some((file, label)) => (file, Some(label)),
            None => (given, None),
        };
        let relative = relative_path(file)?;
        if let Some(root) = self.world.get_resource::<AssetRoot>() {
            let root = root.0.canonicalize().map_err(|_| {
                refuse(
                    type_path,
                    whole,
                    "the asset folder does not exist",
                    HandleHelp::ListFiles,
                )
            })?;
            let resolved = resolve_inside(&root, file, &relative, MissingFolders::Refuse)?;
            if !resolved.exists {
                return Err(refuse(
                    type_path,
                    whole,
                    &format!("no file {relative} is in the asset folder"),
                    HandleHelp::ListFiles,
                ));
            }
        }
        // Loaders are registered when the app is built, so asking once answers.
        match block_on(poll_once(
            server.get_path_asset_loader(AssetPath::from(relative.clone())),
        )) {
            Some(Err(_)) => {
                return Err(refuse(
                    type_path,
                    whole,
                    &format!("no asset loader of this app reads {relative}'s extension"),
                    HandleHelp::ListFiles,
                ));
            }
            Some(Ok(loader)) if label.is_none() && loader.asset_type_id() != asset_type => {
                return Err(refuse(
                    type_path,
                    whole,
                    &format!(
                        "{relative} loads as a {}, not a {type_path}",
                        loader.asset_type_name()
                    ),
                    HandleHelp::ListFiles,
                ));
            }
            _ => {}
        }
        let path = match label {
            Some(label) => format!("{relative}#{label}"),
            None => relative,
        };
        Ok(server.load_builder().load_erased(asset_type, path))
    }

    /// A handle to the asset with id `text`, which must exist: a UUID handle as it is, an
    /// indexed asset through a handle someone holds (the bridge, the asset server, a component
    /// or resource of the world).
    fn find(
        &self,
        asset_type: TypeId,
        type_path: &str,
        registry: &TypeRegistry,
        text: &str,
        whole: &Value,
    ) -> Result<UntypedHandle, BridgeError> {
        let Some(id) = parse_asset_id(text, asset_type) else {
            return Err(refuse(
                type_path,
                whole,
                "an asset id is a UUID or a number, as values and manage_asset.list_loaded show it",
                HandleHelp::ListLoaded,
            ));
        };
        let missing = || {
            refuse(
                type_path,
                whole,
                &format!("no {type_path} has id {text} (it may have been freed)"),
                HandleHelp::ListLoaded,
            )
        };
        if !asset_exists(self.world, registry, id) {
            return Err(missing());
        }
        if let UntypedAssetId::Uuid { uuid, .. } = id {
            return Ok(UntypedHandle::Uuid {
                type_id: asset_type,
                uuid,
            });
        }
        strong_handle(self.world, registry, id).ok_or_else(missing)
    }

    /// A new asset of `asset_type` from `value`, made when the write is applied.
    fn new_asset(
        &mut self,
        asset_type: TypeId,
        type_path: &str,
        registry: &TypeRegistry,
        value: &Value,
        whole: &Value,
    ) -> Result<UntypedHandle, BridgeError> {
        let policy = WritePolicy::of(self.world);
        let made = self
            .world
            .get_resource::<MadeAssets>()
            .map_or(0, |made| made.0.len());
        let limit = policy.limits().max_made_assets;
        if made + self.made.len() >= limit {
            return Err(BridgeError::LimitExceeded {
                what: "the assets the bridge made".to_owned(),
                limit: limit as u64,
                unit: "assets",
                advice: "release some with manage_asset.release, or reuse one by its {\"asset\": id}",
            });
        }
        let registration = registry.get(asset_type).ok_or_else(|| {
            refuse(
                type_path,
                whole,
                "the asset type is not registered for reflection",
                HandleHelp::DescribeType,
            )
        })?;
        let new = if is_mesh_type(type_path) {
            self.new_mesh(type_path, registry, value, whole)?
        } else {
            if type_path == IMAGE_TYPE {
                return Err(refuse(
                    type_path,
                    whole,
                    "images come from files: give the image's path in the asset folder",
                    HandleHelp::ListFiles,
                ));
            }
            let asset = registration.data::<ReflectAsset>().cloned().ok_or_else(|| {
                refuse(
                    type_path,
                    whole,
                    "this asset type is not reflected as an asset (#[reflect(Asset)]), so it cannot be made from a value; give a path",
                    HandleHelp::ListFiles,
                )
            })?;
            if !collection_exists(self.world, &asset) {
                return Err(refuse(
                    type_path,
                    whole,
                    "the app holds no assets of this type",
                    HandleHelp::DescribeType,
                ));
            }
            let value = values::concrete_from_json(registration, registry, value, self)?;
            policy.check_asset_write(
                self.world,
                registry,
                registration,
                value.as_partial_reflect(),
                None,
            )?;
            NewValue::Reflected { value, asset }
        };
        let uuid = Uuid::new_v4();
        self.made.push(NewAsset {
            id: UntypedAssetId::Uuid {
                type_id: asset_type,
                uuid,
            },
            uuid,
            type_path: type_path.to_owned(),
            made_from: value.clone(),
            value: new,
        });
        Ok(UntypedHandle::Uuid {
            type_id: asset_type,
            uuid,
        })
    }

    #[cfg(feature = "render")]
    fn new_mesh(
        &mut self,
        type_path: &str,
        registry: &TypeRegistry,
        value: &Value,
        whole: &Value,
    ) -> Result<NewValue, BridgeError> {
        use bevy::asset::Assets;
        if self
            .world
            .get_resource::<Assets<bevy::mesh::Mesh>>()
            .is_none()
        {
            return Err(refuse(
                type_path,
                whole,
                "the app holds no meshes (no MeshPlugin)",
                HandleHelp::DescribeType,
            ));
        }
        let mesh =
            crate::reflect::primitive_meshes::mesh_from_json(self.world, registry, value, self)
                .map_err(|reason| refuse(type_path, whole, &reason, HandleHelp::DescribeType))?;
        Ok(NewValue::Mesh(mesh))
    }

    #[cfg(not(feature = "render"))]
    fn new_mesh(
        &mut self,
        type_path: &str,
        _registry: &TypeRegistry,
        _value: &Value,
        whole: &Value,
    ) -> Result<NewValue, BridgeError> {
        Err(refuse(
            type_path,
            whole,
            "meshes are made from shapes only when the bridge's render feature is on",
            HandleHelp::DescribeType,
        ))
    }
}

impl values::ValueReader for HandleReader<'_> {
    fn take_refusal(&mut self) -> Option<BridgeError> {
        self.refused.take()
    }
}

impl ReflectDeserializerProcessor for HandleReader<'_> {
    fn try_deserialize<'de, D>(
        &mut self,
        registration: &TypeRegistration,
        registry: &TypeRegistry,
        deserializer: D,
    ) -> Result<Result<Box<dyn PartialReflect>, D>, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        let reflect_handle = registration.data::<ReflectHandle>();
        let untyped = registration.type_id() == TypeId::of::<UntypedHandle>();
        if reflect_handle.is_none() && !untyped {
            return Ok(Err(deserializer));
        }
        let given = Value::deserialize(deserializer)?;
        match self.read(reflect_handle, registry, &given) {
            Ok(handle) => Ok(Ok(match reflect_handle {
                Some(reflect_handle) => reflect_handle.typed(handle).into_partial_reflect(),
                None => Box::new(handle),
            })),
            Err(error) => {
                let message = error.to_string();
                // The first refusal is the one to report; an outer handle's may follow it.
                self.refused.get_or_insert(error);
                Err(D::Error::custom(message))
            }
        }
    }
}

/// Adds the new assets a write read (after the write is applied) and counts them as made by the
/// bridge.
pub(crate) fn make_new_assets(world: &mut World, new: Vec<NewAsset>) {
    for asset in new {
        let made = match asset.value {
            NewValue::Reflected {
                value,
                asset: reflect_asset,
            } => {
                // The collection was there when the value was read, in this same call.
                if !collection_exists(world, &reflect_asset) {
                    continue;
                }
                reflect_asset
                    .insert(world, asset.id, value.as_partial_reflect())
                    .is_ok()
            }
            #[cfg(feature = "render")]
            NewValue::Mesh(mesh) => {
                let Some(mut meshes) =
                    world.get_resource_mut::<bevy::asset::Assets<bevy::mesh::Mesh>>()
                else {
                    continue;
                };
                meshes
                    .insert(
                        bevy::asset::AssetId::<bevy::mesh::Mesh>::Uuid { uuid: asset.uuid },
                        mesh,
                    )
                    .is_ok()
            }
        };
        if made {
            world
                .get_resource_or_init::<MadeAssets>()
                .0
                .push(MadeAsset {
                    id: asset.id,
                    type_path: asset.type_path,
                    made_from: asset.made_from,
                });
        }
    }
}

/// The error for a handle that cannot be read.
fn refuse(asset_type: &str, given: &Value, reason: &str, help: HandleHelp) -> BridgeError {
    BridgeError::HandleRefused {
        asset_type: asset_type.to_owned(),
        given: given.to_string(),
        reason: reason.to_owned(),
        help,
    }
}

/// Whether the world holds the asset collection `asset` reads (its `Assets<T>` resource).
pub(crate) fn collection_exists(world: &World, asset: &ReflectAsset) -> bool {
    world
        .components()
        .get_id(asset.assets_resource_type_id())
        .is_some_and(|id| world.contains_resource_by_id(id))
}

/// Whether the asset with this id is in the world now.
pub(crate) fn asset_exists(world: &World, registry: &TypeRegistry, id: UntypedAssetId) -> bool {
    let Some(asset) = registry
        .get(id.type_id())
        .and_then(|registration| registration.data::<ReflectAsset>())
    else {
        // An asset type without reflection: only the asset server can tell.
        return world
            .get_resource::<AssetServer>()
            .is_some_and(|server| server.get_id_handle_untyped(id).is_some());
    };
    collection_exists(world, asset) && asset.get(world, id).is_some()
}

/// A strong handle to the indexed asset `id`, found where handles are held: the bridge's loads,
/// the asset server's, the world's reflected components and resources.
fn strong_handle(
    world: &World,
    registry: &TypeRegistry,
    id: UntypedAssetId,
) -> Option<UntypedHandle> {
    if let Some(held) = world.get_resource::<HeldAssets>().and_then(|held| {
        held.0
            .iter()
            .find(|(_, handle)| handle.id() == id)
            .map(|(_, handle)| handle.clone())
    }) {
        return Some(held);
    }
    if let Some(handle) = world
        .get_resource::<AssetServer>()
        .and_then(|server| server.get_id_handle_untyped(id))
    {
        return Some(handle);
    }
    if let Some(handle) = world
        .get_resource::<KeptByHistory>()
        .and_then(|kept| kept.get(id))
    {
        return Some(handle);
    }
    let mut found = None;
    for_each_held_handle(world, registry, &mut |_, _, handle| {
        if handle.id() == id {
            found = Some(handle.clone());
            return Seen::Enough;
        }
        Seen::More
    });
    found
}

/// Whether a scan goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Look further.
    More,
    /// Stop here.
    Enough,
}

/// Calls `seen` with every handle inside a reflected component of the world (resources
/// included): the entity, the component's type path and the handle, until it says
/// [`Seen::Enough`].
pub(crate) fn for_each_held_handle(
    world: &World,
    registry: &TypeRegistry,
    seen: &mut dyn FnMut(Entity, &str, &UntypedHandle) -> Seen,
) {
    // Only components whose type can hold a handle are read, decided once per type: a world of
    // 100,000 entities without a mesh is passed over archetype by archetype.
    let mut can_hold = HashMap::new();
    let mut path = String::new();
    for archetype in world.archetypes().iter() {
        let holders: Vec<(&str, &ReflectComponent)> = archetype
            .components()
            .iter()
            .filter_map(|id| world.components().get_info(*id)?.type_id())
            .filter_map(|type_id| registry.get(type_id))
            .filter(|registration| {
                *can_hold.entry(registration.type_id()).or_insert_with(|| {
                    may_hold_handle(registry, registration.type_info(), &mut HashSet::new())
                })
            })
            .filter_map(|registration| {
                let component = registration.data::<ReflectComponent>()?;
                Some((registration.type_info().type_path(), component))
            })
            .collect();
        if holders.is_empty() {
            continue;
        }
        for found in archetype.entities() {
            let Ok(entity) = world.get_entity(found.id()) else {
                continue;
            };
            for (type_path, component) in &holders {
                let Some(value) = component.reflect(entity) else {
                    continue;
                };
                let mut look =
                    |value: &dyn PartialReflect, _: &str, _: usize| -> Result<Step, ()> {
                        let Some(handle) = value
                            .try_as_reflect()
                            .and_then(|reflect| Some((reflect, registry.get(reflect.type_id())?)))
                            .and_then(|(reflect, registration)| as_handle(reflect, registration))
                        else {
                            return Ok(Step::Descend);
                        };
                        match seen(found.id(), type_path, &handle) {
                            Seen::More => Ok(Step::Skip),
                            Seen::Enough => Err(()),
                        }
                    };
                if walk(value.as_partial_reflect(), &mut path, 0, &mut look).is_err() {
                    return;
                }
            }
        }
    }
}

/// Whether a value of this type may hold an asset handle anywhere inside it. `visiting` holds
/// the types on the way down: a type met again inside itself adds nothing the outer one does
/// not already look at.
fn may_hold_handle(
    registry: &TypeRegistry,
    info: &TypeInfo,
    visiting: &mut HashSet<TypeId>,
) -> bool {
    let type_id = info.type_id();
    if registry.get(type_id).is_some_and(is_handle_type) {
        return true;
    }
    if !visiting.insert(type_id) {
        return false;
    }
    let mut inner = |id: TypeId, info: Option<&'static TypeInfo>| {
        info.or_else(|| registry.get(id).map(TypeRegistration::type_info))
            // A type reflection cannot describe may hold anything.
            .is_none_or(|info| may_hold_handle(registry, info, visiting))
    };
    let holds = match info {
        TypeInfo::Struct(info) => info
            .iter()
            .any(|field| inner(field.type_id(), field.type_info())),
        TypeInfo::TupleStruct(info) => info
            .iter()
            .any(|field| inner(field.type_id(), field.type_info())),
        TypeInfo::Tuple(info) => info
            .iter()
            .any(|field| inner(field.type_id(), field.type_info())),
        TypeInfo::List(info) => inner(info.item_ty().id(), info.item_info()),
        TypeInfo::Array(info) => inner(info.item_ty().id(), info.item_info()),
        TypeInfo::Set(info) => inner(info.value_ty().id(), None),
        TypeInfo::Map(info) => {
            inner(info.key_ty().id(), info.key_info())
                || inner(info.value_ty().id(), info.value_info())
        }
        TypeInfo::Enum(info) => info.iter().any(|variant| match variant {
            VariantInfo::Struct(fields) => fields
                .iter()
                .any(|field| inner(field.type_id(), field.type_info())),
            VariantInfo::Tuple(fields) => fields
                .iter()
                .any(|field| inner(field.type_id(), field.type_info())),
            VariantInfo::Unit(_) => false,
        }),
        TypeInfo::Opaque(_) => false,
        #[allow(unreachable_patterns)] // reflect kinds behind features (functions)
        _ => true,
    };
    visiting.remove(&type_id);
    holds
}

/// Assets loaded through the bridge, kept alive so they are not dropped as soon as they load;
/// oldest first, at most [`crate::WriteLimits::max_held_assets`] (the oldest is let go beyond it).
#[derive(Resource, Debug, Default)]
pub struct HeldAssets(pub Vec<(String, UntypedHandle)>);

impl HeldAssets {
    /// Holds `handle`, loaded from `path`, letting go of the oldest beyond `max`.
    pub(crate) fn hold(&mut self, path: String, handle: UntypedHandle, max: usize) {
        self.0.retain(|(_, held)| held.id() != handle.id());
        self.0.push((path, handle));
        let excess = self.0.len().saturating_sub(max);
        self.0.drain(..excess);
    }
}
