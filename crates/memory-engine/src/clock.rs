//! Injected time. Staleness, gates and schedules read the time through a [`Clock`] so tests use a
//! fixed clock instead of sleeping.

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> SystemTime;
}

#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that stays where it is set; cloning shares the same instant.
#[derive(Debug, Clone)]
pub struct FixedClock(Arc<Mutex<SystemTime>>);

impl FixedClock {
    pub fn new(at: SystemTime) -> Self {
        FixedClock(Arc::new(Mutex::new(at)))
    }

    pub fn set(&self, at: SystemTime) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = at;
    }

    pub fn advance(&self, by: std::time::Duration) {
        let mut now = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *now += by;
    }
}

impl Clock for FixedClock {
    fn now(&self) -> SystemTime {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}
