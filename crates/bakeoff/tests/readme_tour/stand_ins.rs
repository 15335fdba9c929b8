//! The stand-ins for what a user of the README's tour would have: a scratch directory for
//! `/mnt/x`, a loop device for `/dev/loop3`, the workload file, what the `exec` lines run, the
//! `build` recipe's source repository and the results the `report` lines read.

use bakeoff_testkit::loop_device::LoopDevice;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the test prepared for the tour's paths.
pub struct StandIns {
    scratch: PathBuf,
    /// Where the tour's commands run: it holds a link to `studies/` and what they write.
    pub cwd: PathBuf,
    state: PathBuf,
    mnt_x: PathBuf,
    loop3: LoopDevice,
}

impl StandIns {
    /// `line` as arguments, with the stand-ins' paths and the kept stack's `name`.
    pub fn argv(&self, line: &str, name: &str) -> Vec<String> {
        let line = line
            .replace("[--resume]", "--resume")
            .replace("[--dry-run]", "--dry-run");
        let words = shell_words::split(&line).unwrap();
        words
            .into_iter()
            .map(|w| match w.as_str() {
                "/mnt/x" => self.mnt_x.to_string_lossy().into_owned(),
                "/dev/loop3" => self.loop3.node().to_string(),
                "NAME" => name.to_string(),
                _ => self.in_scratch(&w),
            })
            .collect()
    }

    /// `text` with `SCRATCH` naming the scratch directory.
    pub fn in_scratch(&self, text: &str) -> String {
        text.replace("SCRATCH", &self.scratch.to_string_lossy())
    }

    /// Runs `argv` (`bakeoff ...`) in the scratch directory; its output.
    pub fn run(&self, argv: &[String]) -> std::process::Output {
        let bin = assert_cmd::cargo::cargo_bin("bakeoff");
        let mut cmd = if argv.iter().any(|a| a.contains("zfs")) {
            let mut c = Command::new("flock");
            c.arg(bakeoff_testkit::ZFS_LOCK).arg(&bin);
            c
        } else {
            Command::new(&bin)
        };
        cmd.args(&argv[1..])
            .current_dir(&self.cwd)
            .env("BAKEOFF_STATE_DIR", &self.state)
            // The other lane's tests would mark the tour's comparison runs disturbed.
            .env("BAKEOFF_DISTURBANCE_LIMIT", "0");
        cmd.output().unwrap()
    }
}

/// Inserts `extra` before a `--` (the command of `exec`), else at the end.
pub fn with_args(mut argv: Vec<String>, extra: &[String]) -> Vec<String> {
    let at = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
    argv.splice(at..at, extra.iter().cloned());
    argv
}

/// The test's stand-ins: directories, a loop device, the workload file, what the `exec` lines
/// run and the source repository of the `build` recipe.
pub fn prepare(dir: &Path) -> StandIns {
    let cwd = dir.join("cwd");
    let mnt_x = dir.join("mnt-x");
    for d in [&cwd, &mnt_x] {
        std::fs::create_dir_all(d).unwrap();
    }
    // The PostgreSQL lines' server runs as `postgres`, and a scratch directory is private.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let studies = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies");
    std::os::unix::fs::symlink(studies.canonicalize().unwrap(), cwd.join("studies")).unwrap();
    let s = StandIns {
        scratch: dir.to_path_buf(),
        cwd,
        state: dir.join("state"),
        mnt_x,
        loop3: LoopDevice::new(512 << 20),
    };
    let show = s.run(&s.argv("bakeoff workloads show oltp", ""));
    assert!(show.status.success());
    std::fs::write(s.cwd.join("my-workload.toml"), &show.stdout).unwrap();
    // `make -j2`'s makefile: two targets built at once, in the stack's directory.
    let makefile = "all: a b\na b:\n\techo compiled $@ > $@.o\n\tcat $@.o\n";
    std::fs::write(dir.join("tour.mk"), makefile).unwrap();
    let script = dir.join("build.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"built in $PWD\" > built\ncat built\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    build_source(dir);
    s
}

/// `SCRATCH/build-src.git` for the `build` recipe's `BUILD_SRC`: a one-crate workspace with no
/// dependencies, locked, with the file the recipe's `rebuild` phase touches
/// (`crates/core/src/units.rs`), so each of its builds takes a second instead of minutes.
fn build_source(dir: &Path) {
    let tree = dir.join("build-tree");
    std::fs::create_dir_all(tree.join("crates/core/src")).unwrap();
    let manifest = "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                    [lib]\npath = \"crates/core/src/units.rs\"\n";
    std::fs::write(tree.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(
        tree.join("crates/core/src/units.rs"),
        "/// One.\npub fn one() -> u32 {\n    1\n}\n",
    )
    .unwrap();
    let git = ["-c", "user.name=tour", "-c", "user.email=tour@localhost"];
    let steps: [&[&str]; 5] = [
        &["cargo", "generate-lockfile", "--offline"],
        &["git", "init", "-q"],
        &["git", "add", "."],
        &[
            "git", git[0], git[1], git[2], git[3], "commit", "-qm", "tiny",
        ],
        &["git", "clone", "-q", "--bare", ".", "../build-src.git"],
    ];
    for step in steps {
        let out = Command::new(step[0])
            .args(&step[1..])
            .current_dir(&tree)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{step:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `results/seed000` for the `report` lines, made before the first of them (after the tour's
/// own `compare --out results/seed000 --resume --dry-run`, which must find no other study
/// there): a comparison of one run on tmpfs and one on `/mnt/x`.
pub fn results_stand_in(s: &StandIns) {
    if s.cwd.join("results/seed000").exists() {
        return;
    }
    let compare = format!(
        "bakeoff compare --stack tmpfs --stack dir={} --workload randread \
         --set engine=null,size=1m,runtime=1s --out results/seed000",
        s.mnt_x.display()
    );
    let results = s.run(&s.argv(&compare, ""));
    assert!(
        results.status.success(),
        "{}",
        String::from_utf8_lossy(&results.stderr)
    );
}
