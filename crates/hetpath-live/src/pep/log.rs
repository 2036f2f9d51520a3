//! The daemon's log: one line per event on stderr (journald adds the time), filtered by
//! the configured level.

use super::config::LogLevel;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

static LEVEL: AtomicU8 = AtomicU8::new(LogLevel::Info as u8);

pub fn set_level(l: LogLevel) {
    LEVEL.store(l as u8, Relaxed);
}

pub fn enabled(l: LogLevel) -> bool {
    l as u8 <= LEVEL.load(Relaxed)
}

pub fn log(l: LogLevel, msg: std::fmt::Arguments<'_>) {
    if enabled(l) {
        let name = match l {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
        };
        eprintln!("hetpath-live pep: {name}: {msg}");
    }
}
