//! Plain data that the store, the clouds and the pure rules share. It imports no other module of
//! the crate, so every layer above can use it without reaching into another layer.

pub mod cloud;
