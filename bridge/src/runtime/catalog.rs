//! The catalog the bridge serves: the generated actions, then the app's own.

use bevy::prelude::Resource;
use mcp_vocabulary::catalog::Catalog;

/// The catalog the bridge serves: the generated actions, then the app's own ([`crate::game`]).
#[derive(Resource, Debug, Clone, Copy)]
pub struct ServedCatalog(pub &'static Catalog);
