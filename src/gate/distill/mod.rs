//! Distilled errors (placeholder, being written).
