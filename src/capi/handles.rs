//! The handles C holds (contexts, models, collections), registered while
//! alive, so a call with a closed or made-up handle is refused with a
//! message instead of touching freed memory.

use std::collections::HashSet;
use std::sync::Mutex;

use super::error::{invalid, CResult};

static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut HashSet<usize>) -> R) -> R {
    let mut guard = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(HashSet::new))
}

/// Boxes `value` and registers the pointer handed to C.
pub fn hand_out<T>(value: T) -> *mut T {
    let ptr = Box::into_raw(Box::new(value));
    with(|live| live.insert(ptr as usize));
    ptr
}

/// The object behind a handle C passed in.
///
/// # Safety
/// A registered pointer was made by [`hand_out`] with this `T`, and C uses
/// each handle from one thread at a time (libvmaf's rule).
pub unsafe fn get<'a, T>(ptr: *mut T, what: &str) -> CResult<&'a mut T> {
    if ptr.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    if !with(|live| live.contains(&(ptr as usize))) {
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
pub unsafe fn take_back<T>(ptr: *mut T, what: &str) -> CResult<Box<T>> {
    if ptr.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    if !with(|live| live.remove(&(ptr as usize))) {
        return Err(invalid(format!(
            "{what} {ptr:p} is not a live handle (closed or destroyed already, or not made by this library)"
        )));
    }
    // SAFETY: was registered, so made by Box::into_raw in hand_out::<T>.
    Ok(unsafe { Box::from_raw(ptr) })
}
