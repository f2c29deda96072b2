//! The handles C holds (contexts, models, collections), registered while
//! alive, so a call with a closed or made-up handle is refused with a
//! message instead of touching freed memory.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Mutex;

use super::error::{invalid, CResult};

/// Each live handle's address and the type behind it (so a handle of one
/// kind passed where another is expected is refused too).
static LIVE: Mutex<Option<HashMap<usize, TypeId>>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut HashMap<usize, TypeId>) -> R) -> R {
    let mut guard = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(HashMap::new))
}

fn is_live<T: 'static>(ptr: *mut T) -> bool {
    with(|live| live.get(&(ptr as usize)) == Some(&TypeId::of::<T>()))
}

/// Boxes `value` and registers the pointer handed to C.
pub fn hand_out<T: 'static>(value: T) -> *mut T {
    let ptr = Box::into_raw(Box::new(value));
    with(|live| live.insert(ptr as usize, TypeId::of::<T>()));
    ptr
}

/// The object behind a handle C passed in.
///
/// # Safety
/// A pointer registered with this `T` was made by [`hand_out`], and C uses
/// each handle from one thread at a time (libvmaf's rule).
pub unsafe fn get<'a, T: 'static>(ptr: *mut T, what: &str) -> CResult<&'a mut T> {
    if ptr.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    if !is_live(ptr) {
        return Err(invalid(format!(
            "{what} {ptr:p} is not a live handle (closed or destroyed already, or not made by this library)"
        )));
    }
    // SAFETY: registered, so made by hand_out::<T> and not yet taken back.
    Ok(unsafe { &mut *ptr })
}

/// Takes back a handle: unregisters it and returns the object to drop.
///
/// # Safety
/// As [`get`].
pub unsafe fn take_back<T: 'static>(ptr: *mut T, what: &str) -> CResult<Box<T>> {
    if ptr.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    let removed = with(|live| match live.get(&(ptr as usize)) {
        Some(t) if *t == TypeId::of::<T>() => live.remove(&(ptr as usize)).is_some(),
        _ => false,
    });
    if !removed {
        return Err(invalid(format!(
            "{what} {ptr:p} is not a live handle (closed or destroyed already, or not made by this library)"
        )));
    }
    // SAFETY: was registered, so made by Box::into_raw in hand_out::<T>.
    Ok(unsafe { Box::from_raw(ptr) })
}
