//! The in-memory cloud: placeholder.
