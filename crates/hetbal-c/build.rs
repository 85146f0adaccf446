//! The shared library answers to the name it is installed under.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhetbal.so");
}
