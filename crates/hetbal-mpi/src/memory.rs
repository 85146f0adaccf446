//! A rank's memory, as the system counts it: its peak resident set size.

/// The peak resident set size of this process in bytes (Linux: `VmHWM` of
/// `/proc/self/status`, the largest resident memory since the process started),
/// or `None` where the system does not tell.
///
/// Complexity: reads one small file.
///
/// # Example
/// ```
/// use hetbal_mpi::memory::peak_resident_bytes;
/// if let Some(peak) = peak_resident_bytes() {
///     let block = vec![1u8; 64 << 20]; // 64 MiB, touched
///     assert!(peak_resident_bytes().unwrap() >= block.len() as u64);
/// }
/// ```
pub fn peak_resident_bytes() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// The resident set size of this process now, in bytes (Linux: `VmRSS` of
/// `/proc/self/status`), or `None` where the system does not tell.
///
/// Complexity: reads one small file.
pub fn resident_bytes() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// A size of `/proc/self/status` given in kB, in bytes.
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix(field))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kib.checked_mul(1024)
}
