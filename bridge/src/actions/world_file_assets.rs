//! What a world file carries of the assets the bridge made: the assets its entities use, written
//! into the file as a resource entry, and made again (with their ids) when it loads into an app
//! that lacks them.

use std::collections::HashSet;

use bevy::asset::uuid::Uuid;
use bevy::asset::{ReflectAsset, UntypedAssetId};
use bevy::ecs::reflect::ReflectResource;
use bevy::prelude::{ReflectDefault, Resource, World};
use bevy::reflect::{PartialReflect, Reflect, TypeRegistry};
use serde_json::Value;

use crate::error::BridgeError;
use crate::reflect::handle_form::{as_handle, asset_id_text, is_mesh};
use crate::reflect::handles::{
    HandleReader, MadeAsset, MadeAssets, asset_exists, collection_exists, make_new_assets,
};
use crate::reflect::json;
use crate::reflect::walk::{Step, walk};

/// The assets the bridge made that a world file's entities use, written into the file as a
/// resource so that the file loads back with them in another app: each asset's id, type and the
/// JSON of the `new` value it was made from.
#[derive(Resource, Reflect, Default, Debug, Clone, PartialEq)]
#[reflect(Resource, Default)]
pub struct WorldFileAssets {
    /// The assets.
    pub assets: Vec<WorldFileAsset>,
}

/// One asset of [`WorldFileAssets`].
#[derive(Reflect, Default, Debug, Clone, PartialEq)]
pub struct WorldFileAsset {
    /// Its id (a UUID), which the file's handles name.
    pub id: String,
    /// Its type path.
    pub asset_type: String,
    /// The `new` value that makes it again, as JSON text.
    pub value: String,
}

impl WorldFileAssets {
    /// The assets the bridge made that `values` hold handles to.
    pub(crate) fn used_by<'v>(
        world: &World,
        registry: &TypeRegistry,
        values: impl Iterator<Item = &'v dyn PartialReflect>,
    ) -> WorldFileAssets {
        let Some(made) = world
            .get_resource::<MadeAssets>()
            .filter(|made| !made.0.is_empty())
        else {
            return WorldFileAssets::default();
        };
        let mut used = HashSet::new();
        let mut path = String::new();
        for value in values {
            let mut look = |value: &dyn PartialReflect, _: &str, _: usize| -> Result<Step, ()> {
                let handle = value
                    .try_as_reflect()
                    .and_then(|reflect| Some((reflect, registry.get(reflect.type_id())?)))
                    .and_then(|(reflect, registration)| as_handle(reflect, registration));
                match handle {
                    Some(handle) => {
                        used.insert(handle.id());
                        Ok(Step::Skip)
                    }
                    None => Ok(Step::Descend),
                }
            };
            let _ = walk(value, &mut path, 0, &mut look);
        }
        WorldFileAssets {
            assets: made
                .0
                .iter()
                .filter(|asset| used.contains(&asset.id))
                .map(|asset| WorldFileAsset {
                    id: asset_id_text(asset.id),
                    asset_type: asset.type_path.clone(),
                    value: value_now(world, registry, asset).to_string(),
                })
                .collect(),
        }
    }

    /// Makes again, with their ids, the assets of a file this world does not hold; returns how
    /// many it made. Nothing is made unless every one can be.
    pub(crate) fn make_missing(
        &self,
        world: &mut World,
        registry: &TypeRegistry,
    ) -> Result<usize, BridgeError> {
        let new_assets = {
            let mut reader = HandleReader::new(world);
            for asset in &self.assets {
                let invalid = |reason: String| BridgeError::InvalidValue {
                    type_path: asset.asset_type.clone(),
                    reason,
                };
                let registration =
                    registry
                        .get_with_type_path(&asset.asset_type)
                        .ok_or_else(|| {
                            invalid("the asset type is not registered in this app".to_owned())
                        })?;
                let uuid = Uuid::parse_str(&asset.id).map_err(|_| {
                    invalid(format!(
                        "{} is not the id of an asset the bridge made",
                        asset.id
                    ))
                })?;
                let id = UntypedAssetId::Uuid {
                    type_id: registration.type_id(),
                    uuid,
                };
                if asset_exists(world, registry, id) {
                    continue;
                }
                let value: Value = serde_json::from_str(&asset.value)
                    .map_err(|error| invalid(format!("its value is not JSON: {error}")))?;
                reader.read_new_as(uuid, registration, registry, &value)?;
            }
            reader.into_new_assets()
        };
        let count = new_assets.len();
        make_new_assets(world, new_assets);
        Ok(count)
    }
}

/// What a made asset is now, as a `new` value: a reflected asset's fields that differ from its
/// default (it may have been changed since), or, for a mesh, the shape it was made from.
fn value_now(world: &World, registry: &TypeRegistry, asset: &MadeAsset) -> Value {
    let now = registry.get(asset.id.type_id()).and_then(|registration| {
        let reflect_asset = registration.data::<ReflectAsset>()?;
        if is_mesh(asset.id.type_id()) || !collection_exists(world, reflect_asset) {
            return None;
        }
        let value = json::to_json(
            reflect_asset.get(world, asset.id)?.as_partial_reflect(),
            registry,
        )
        .ok()?;
        let default = registration.data::<ReflectDefault>().and_then(|default| {
            json::to_json(default.default().as_partial_reflect(), registry).ok()
        });
        match (value, default) {
            (Value::Object(mut fields), Some(Value::Object(default))) => {
                fields.retain(|name, value| default.get(name) != Some(value));
                Some(Value::Object(fields))
            }
            (value, _) => Some(value),
        }
    });
    now.unwrap_or_else(|| asset.made_from.clone())
}
