//! Plan handles through the C ABI: freed, stale and foreign handles are
//! refused (never dereferenced), a double free does nothing, and a handle
//! stays valid for a call even when another thread frees it meanwhile.

use std::ffi::CStr;
use std::ptr::{null, null_mut};

use hetbal_c::plan::{
    hetbal_plan, hetbal_plan_free, hetbal_plan_makespan, hetbal_plan_optimal,
    hetbal_plan_transfer_count, hetbal_plan_transfers, hetbal_ring_plan,
};
use hetbal_c::{hetbal_last_error, HETBAL_ERROR_INPUT, HETBAL_OK};

fn last_error() -> String {
    unsafe { CStr::from_ptr(hetbal_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// A plan of 3 items from processor 0 to 1 (makespan 3).
fn plan() -> *mut hetbal_plan {
    let (loads, targets, costs) = ([4u64, 1], [1u64, 4], [1.0f64, 1.0]);
    let mut plan = null_mut();
    let s = unsafe {
        hetbal_ring_plan(
            2,
            loads.as_ptr(),
            targets.as_ptr(),
            costs.as_ptr(),
            null(),
            &mut plan,
        )
    };
    assert_eq!(s, HETBAL_OK, "{}", last_error());
    plan
}

#[test]
fn freed_and_stale_handles_are_refused() {
    unsafe {
        let first = plan();
        assert_eq!(hetbal_plan_makespan(first), 3.0);
        hetbal_plan_free(first);
        // A double free does nothing.
        hetbal_plan_free(first);
        // A new plan never takes the freed handle's value: the old one stays dead.
        let plans: Vec<_> = (0..100).map(|_| plan()).collect();
        assert!(!plans.contains(&first));
        assert!(hetbal_plan_makespan(first).is_nan());
        assert!(last_error().contains("not a live plan"), "{}", last_error());
        assert_eq!(hetbal_plan_optimal(first), -1);
        assert_eq!(hetbal_plan_transfer_count(first), 0);
        let mut out = [Default::default(); 4];
        assert_eq!(
            hetbal_plan_transfers(first, out.as_mut_ptr(), 4),
            HETBAL_ERROR_INPUT
        );
        for p in plans {
            assert_eq!(hetbal_plan_makespan(p), 3.0);
            hetbal_plan_free(p);
        }
    }
}

#[test]
fn made_up_handles_are_refused() {
    unsafe {
        let mut x = 0u64;
        for bogus in [
            null_mut(),
            &mut x as *mut u64 as *mut hetbal_plan,
            usize::MAX as *mut hetbal_plan,
            16 as *mut hetbal_plan,
        ] {
            assert!(hetbal_plan_makespan(bogus).is_nan());
            assert_eq!(hetbal_plan_transfer_count(bogus), 0);
            hetbal_plan_free(bogus);
        }
        assert_eq!(x, 0);
    }
}

#[test]
fn a_free_on_another_thread_never_pulls_a_plan_from_under_a_call() {
    // Many threads read and free plans at once: every read sees a live plan
    // (3.0) or a dead handle (NaN), never freed memory.
    let plans: Vec<usize> = (0..200).map(|_| plan() as usize).collect();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let plans = &plans;
            scope.spawn(move || {
                for (i, &p) in plans.iter().enumerate() {
                    let p = p as *mut hetbal_plan;
                    let m = unsafe { hetbal_plan_makespan(p) };
                    assert!(m == 3.0 || m.is_nan());
                    if i % 4 == t {
                        unsafe { hetbal_plan_free(p) };
                    }
                }
            });
        }
    });
    for p in plans {
        assert!(unsafe { hetbal_plan_makespan(p as *mut hetbal_plan) }.is_nan());
    }
}
