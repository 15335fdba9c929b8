//! Compiles the kernel-work tracer (`src/kwork/kwork.bpf.c`) with clang into a BPF object that
//! the crate embeds. clang, libelf and zlib are build requirements (`scripts/setup.sh`).

use libbpf_cargo::SkeletonBuilder;
use std::path::PathBuf;

const SOURCE: &str = "src/kwork/kwork.bpf.c";

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // The BPF target has no `asm/` headers of its own: the host's multiarch ones serve.
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_else(|_| "x86_64".into());
    let result = SkeletonBuilder::new()
        .source(SOURCE)
        .obj(out.join("kwork.bpf.o"))
        .clang_args([format!("-I/usr/include/{arch}-linux-gnu")])
        .build();
    if let Err(e) = result {
        panic!("building {SOURCE} (needs clang and the kernel headers: scripts/setup.sh): {e:#}");
    }
    println!("cargo:rerun-if-changed={SOURCE}");
}
