//! The test runner shared by the integration tests of the `hetbal` command: each
//! test gets its own folder, and a failure prints the whole story: command,
//! folder, exit status, stdout, stderr.
#![allow(dead_code)] // each test file uses part of it

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A temporary folder for one test, removed when the test passes.
pub struct TestDir {
    pub path: PathBuf,
}

impl TestDir {
    pub fn new(name: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let id = COUNTER.fetch_add(1, Ordering::SeqCst);
        let path =
            std::env::temp_dir().join(format!("hetbal-test-{}-{name}-{id}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create test folder");
        TestDir { path }
    }

    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path.join(name);
        std::fs::write(&p, contents).expect("write test file");
        p
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path.join(name)).expect("read test file")
    }

    /// Runs `hetbal ARGS` in this folder.
    pub fn run(&self, args: &[&str]) -> Run {
        let output = Command::new(env!("CARGO_BIN_EXE_hetbal"))
            .args(args)
            .current_dir(&self.path)
            .output()
            .expect("start hetbal");
        Run {
            args: args.iter().map(|s| s.to_string()).collect(),
            dir: self.path.clone(),
            output,
        }
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

pub struct Run {
    pub args: Vec<String>,
    pub dir: PathBuf,
    pub output: Output,
}

impl Run {
    pub fn story(&self) -> String {
        format!(
            "\n--- command: hetbal {}\n--- folder: {}\n--- status: {:?}\n--- stdout:\n{}\n--- stderr:\n{}\n",
            self.args.join(" "),
            self.dir.display(),
            self.output.status.code(),
            String::from_utf8_lossy(&self.output.stdout),
            String::from_utf8_lossy(&self.output.stderr)
        )
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    pub fn expect_status(&self, code: i32) -> &Self {
        assert_eq!(self.output.status.code(), Some(code), "{}", self.story());
        assert!(
            !self.stderr().contains("panicked"),
            "hetbal panicked{}",
            self.story()
        );
        self
    }
    pub fn expect_stdout(&self, needle: &str) -> &Self {
        assert!(
            self.stdout().contains(needle),
            "stdout lacks {needle:?}{}",
            self.story()
        );
        self
    }
    pub fn expect_stderr(&self, needle: &str) -> &Self {
        assert!(
            self.stderr().contains(needle),
            "stderr lacks {needle:?}{}",
            self.story()
        );
        self
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}){}", self.story()))
    }
    /// The message of a refused input: `needle` in it, on one line.
    pub fn expect_error_line(&self, needle: &str) -> &Self {
        self.expect_stderr(needle);
        assert_eq!(
            self.stderr().lines().count(),
            1,
            "one line of error{}",
            self.story()
        );
        self
    }
}

/// Every prefix of `valid` (one in `prefix_step` bytes) and `corruptions` one-byte
/// corruptions of it, drawn from `seed` by the project's generator: the mangled files
/// a reader must survive.
pub fn mangled(valid: &str, prefix_step: usize, corruptions: usize, seed: u64) -> Vec<Vec<u8>> {
    let bytes = valid.as_bytes();
    let mut rng = hetbal::random::SplitMix64::new(seed);
    let mut inputs: Vec<Vec<u8>> = (0..bytes.len())
        .step_by(prefix_step)
        .map(|k| bytes[..k].to_vec())
        .collect();
    for _ in 0..corruptions {
        let mut v = bytes.to_vec();
        let i = rng.below(v.len());
        let alphabet = b"0123456789-.e\"{}[],:x \xff";
        v[i] = alphabet[rng.below(alphabet.len())];
        inputs.push(v);
    }
    inputs
}

impl Run {
    /// Exit status 0, or 2 with a message starting with `error: `; never a panic.
    pub fn expect_answer_or_refusal(&self) {
        let code = self.output.status.code();
        assert!(code == Some(0) || code == Some(2), "{}", self.story());
        assert!(!self.stderr().contains("panicked"), "{}", self.story());
        if code == Some(2) {
            assert!(self.stderr().starts_with("error: "), "{}", self.story());
        }
    }
}

/// A .npy file as NumPy writes it (version 1), with `fields` inside its
/// header's braces (`'descr': '<f8', 'fortran_order': False, 'shape': (4,), `),
/// then `data`.
pub fn npy_file(fields: &str, data: &[u8]) -> Vec<u8> {
    let mut header = format!("{{{fields}}}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}
