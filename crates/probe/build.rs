//! Compiles the BPF programs (the kernel-work tracer `src/kwork/kwork.bpf.c`, the file-system
//! call capture `src/capture/capture.bpf.c`) with clang into BPF objects that the crate embeds.
//! clang, libelf and zlib are build requirements (`scripts/setup.sh`).

use libbpf_cargo::SkeletonBuilder;
use std::path::PathBuf;

/// Each source and the object it becomes in `OUT_DIR`.
const SOURCES: [(&str, &str); 2] = [
    ("src/kwork/kwork.bpf.c", "kwork.bpf.o"),
    ("src/capture/capture.bpf.c", "capture.bpf.o"),
];

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // The BPF target has no `asm/` headers of its own: the host's multiarch ones serve.
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_else(|_| "x86_64".into());
    for (source, object) in SOURCES {
        let result = SkeletonBuilder::new()
            .source(source)
            .obj(out.join(object))
            .clang_args([format!("-I/usr/include/{arch}-linux-gnu")])
            .build();
        if let Err(e) = result {
            panic!(
                "building {source} (needs clang and the kernel headers: scripts/setup.sh): {e:#}"
            );
        }
        println!("cargo:rerun-if-changed={source}");
    }
    // The capture's parts included by capture.bpf.c.
    for header in ["task", "cpu", "enter", "aio", "uring"].map(|h| format!("src/capture/{h}.bpf.h"))
    {
        println!("cargo:rerun-if-changed={header}");
    }
}
