//! What the tests under `mpirun` share: starting it, with a time limit, so that
//! a hang fails a test instead of blocking CI.

use std::io::Read;
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

/// Output of one mpirun of the `hetbal-mpi` binary.
#[allow(dead_code)] // not every test runs the binary
pub struct Run {
    pub command: String,
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

#[allow(dead_code)]
impl Run {
    /// The whole story, for assertion messages.
    pub fn story(&self) -> String {
        format!(
            "\n--- command\n{}\n--- status {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.command, self.status, self.stdout, self.stderr
        )
    }
}

/// Runs `mpirun -np ranks hetbal-mpi args...`, killed after [`LIMIT`].
#[allow(dead_code)]
pub fn mpirun(ranks: usize, args: &[&str]) -> Run {
    let binary = env!("CARGO_BIN_EXE_hetbal-mpi");
    let np = ranks.to_string();
    let mut all: Vec<&str> = vec!["--oversubscribe", "-np", &np, binary];
    all.extend_from_slice(args);
    let command = format!("mpirun {}", all.join(" "));
    let (mut child, status) = mpirun_at_most(ranks, binary, args, true);
    let status = status.and_then(|s| s.code());
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Run {
        command,
        status,
        stdout,
        stderr,
    }
}

/// Runs `hetbal-mpi args...` without mpirun: a single rank (as root too). Its
/// exit status and its error output; its standard output must be empty.
#[allow(dead_code)]
pub fn alone(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_hetbal-mpi"))
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        output.stdout.is_empty(),
        "output on a refusal; error: {stderr}"
    );
    (output.status.code(), stderr)
}

/// Bad input: every rank exits with status 2; mpirun passes on that status, or its
/// own non-zero status when it aborts the other ranks first (it varies with timing).
/// Either way, not 0 and not a hang; the callers check the message too.
#[allow(dead_code)]
pub fn assert_refused(run: &Run) {
    assert!(
        matches!(run.status, Some(code) if code != 0),
        "expected a refusal{}",
        run.story()
    );
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

/// The items of a rank holding `count` items from global position `first`, of
/// a ring of `total` items: each item is its position and a tag (16 bytes), so
/// that a lost, misplaced or corrupted item shows.
#[allow(dead_code)] // not every test moves these items
pub fn items(first: u64, count: u64, total: u64) -> Vec<[u64; 2]> {
    (0..count)
        .map(|k| {
            let g = (first + k) % total;
            [g, g.wrapping_mul(0x9e37_79b9_7f4a_7c15)]
        })
        .collect()
}
