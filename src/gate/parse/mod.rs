//! Stage 2: parse (placeholder, being written).
