//! What the tests under `mpirun` share: starting it, with a time limit, so that
//! a hang fails a test instead of blocking CI.

use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a run may last.
pub const LIMIT: Duration = Duration::from_secs(120);

/// Starts `mpirun --oversubscribe -np RANKS PROGRAM ARGS...` as the tests run
/// it (allowed as root, idle ranks yielding their core), its output `piped` or
/// inherited, and waits for its end at most [`LIMIT`] (then kills it: `None`).
pub fn mpirun_at_most(
    ranks: usize,
    program: &str,
    args: &[&str],
    piped: bool,
) -> (Child, Option<ExitStatus>) {
    let output = || {
        if piped {
            Stdio::piped()
        } else {
            Stdio::inherit()
        }
    };
    let mut child = Command::new("mpirun")
        .args(["--oversubscribe", "-np", &ranks.to_string(), program])
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .stdout(output())
        .stderr(output())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start mpirun ({e}): install OpenMPI (./test.sh does)"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > LIMIT {
            child.kill().ok();
            child.wait().ok();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (child, status)
}

/// For a test that runs itself under `mpirun` (`harness = false`): started
/// without MPI, runs this test's program under `mpirun -np ranks`, fails unless
/// every rank passes, and gives `None`; as one of the ranks, initialises MPI.
/// A failed check then ends the rank at once (abort), so that mpirun ends the
/// others instead of leaving them waiting in a collective.
#[allow(dead_code)] // not every test runs itself
pub fn as_ranks(ranks: usize) -> Option<mpi::environment::Universe> {
    if std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none() {
        run_self(ranks);
        return None;
    }
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        std::process::abort();
    }));
    Some(mpi::initialize().expect("MPI"))
}

/// Starts this test's program under `mpirun -np ranks` and fails unless every
/// rank passes.
fn run_self(ranks: usize) {
    let me = std::env::current_exe().expect("the test's path");
    let program = me.to_str().expect("a path in UTF-8");
    match mpirun_at_most(ranks, program, &[], false).1 {
        Some(s) if s.success() => {}
        Some(s) => panic!("mpirun -np {ranks} {program}: {s}"),
        None => panic!("mpirun -np {ranks} {program}: no end after {LIMIT:?}"),
    }
}
