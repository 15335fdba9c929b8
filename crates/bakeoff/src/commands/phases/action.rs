//! The built-in actions a phase can name instead of a command (`action = "sync"`): each is a
//! check of its `with` arguments, made before any stack is built, and an arm that runs it
//! inside bakeoff on the live stack. Adding one: its entry in `bakeoff_core::recipe::ACTIONS`
//! and an arm in [`check`] and [`run`].

use bakeoff_stack::Stack;
use std::collections::BTreeMap;

/// Refuses arguments the action does not take (before anything is built).
pub fn check(name: &str, with: &BTreeMap<String, String>) -> Result<(), String> {
    match name {
        "sync" | "cold" => match with.keys().next() {
            None => Ok(()),
            Some(k) => Err(format!("action {name} takes no arguments (with.{k})")),
        },
        other => Err(format!("this bakeoff has no action '{other}'")),
    }
}

/// Runs the action on the stack.
pub fn run(name: &str, with: &BTreeMap<String, String>, stack: &mut Stack) -> Result<(), String> {
    check(name, with)?;
    match name {
        "sync" => {
            rustix::fs::sync();
            Ok(())
        }
        "cold" => stack.prepare_run(false).map_err(|e| e.to_string()),
        other => Err(format!("this bakeoff has no action '{other}'")),
    }
}
