//! TCP: the sans-IO connection machine.
