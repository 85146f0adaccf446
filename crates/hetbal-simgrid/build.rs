//! Links libsimgrid: the flags of `pkg-config --libs simgrid` when pkg-config knows
//! SimGrid, a plain `-lsimgrid` otherwise.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let probed = Command::new("pkg-config")
        .args(["--libs", "simgrid"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok());
    let Some(flags) = probed else {
        println!(
            "cargo:warning=pkg-config does not know simgrid: linking with -lsimgrid (install libsimgrid-dev)"
        );
        println!("cargo:rustc-link-lib=simgrid");
        return;
    };
    let mut linked = false;
    for flag in flags.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={lib}");
            linked |= lib == "simgrid";
        }
    }
    if !linked {
        println!("cargo:rustc-link-lib=simgrid");
    }
}
