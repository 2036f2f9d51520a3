//! Mobility: where a mobile node is (`motion`) and what it hears (`propagation`).
