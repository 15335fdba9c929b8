//! What a new user meets first: examples at the end of `--help`, shell completions and a man
//! page generated from the command line, one prefix on every error, plurals that read right.

mod common;
use common::bakeoff;
use predicates::prelude::*;
use std::io::Write;
use std::process::Stdio;

fn stdout_of(args: &[&str]) -> String {
    let out = bakeoff().args(args).output().unwrap();
    assert!(out.status.success(), "bakeoff {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn help_ends_with_three_or_four_examples() {
    for cmd in [
        &[][..],
        &["run"],
        &["exec"],
        &["workloads"],
        &["workloads", "list"],
        &["workloads", "show"],
        &["demo"],
        &["compare"],
        &["report"],
        &["stack"],
        &["stack", "list"],
        &["stack", "create"],
        &["stack", "destroy"],
        &["cleanup"],
        &["completions"],
        &["man"],
    ] {
        for help in ["-h", "--help"] {
            let mut args = cmd.to_vec();
            args.push(help);
            let text = stdout_of(&args);
            let (_, examples) = text
                .rsplit_once("\nExamples:\n")
                .unwrap_or_else(|| panic!("{args:?} has no examples:\n{text}"));
            let lines: Vec<&str> = examples.lines().filter(|l| !l.trim().is_empty()).collect();
            assert!((3..=4).contains(&lines.len()), "{args:?}: {lines:?}");
            let prefix = format!("  bakeoff {}", cmd.join(" "))
                .trim_end()
                .to_string();
            assert!(
                lines.iter().all(|l| l.starts_with(&prefix)),
                "{args:?}: {lines:?}"
            );
        }
    }
}

/// Feeds `input` to `program args` and returns whether it succeeded and what it printed.
fn pipe(program: &str, args: &[&str], input: &str) -> (bool, String) {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn bash_completions_parse_and_know_the_commands() {
    let script = stdout_of(&["completions", "bash"]);
    assert!(
        script.contains("compare") && script.contains("--dry-run"),
        "{script}"
    );
    let (ok, errors) = pipe("bash", &["-n"], &script);
    assert!(ok, "bash -n: {errors}");
    // Loaded into a shell, it registers a completion for bakeoff.
    let (ok, out) = pipe(
        "bash",
        &["-c", "source /dev/stdin; complete -p bakeoff"],
        &script,
    );
    assert!(ok && out.contains("bakeoff"), "{out}");
    for shell in ["zsh", "fish"] {
        assert!(
            stdout_of(&["completions", shell]).contains("dry-run"),
            "{shell}"
        );
    }
    bakeoff()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "bakeoff: error: invalid value 'tcsh'",
        ));
}

#[test]
fn the_man_page_is_roff_and_renders() {
    let page = stdout_of(&["man"]);
    assert!(page.contains("\n.TH bakeoff 1 "), "{page}");
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH DESCRIPTION",
        ".SH SUBCOMMANDS",
    ] {
        assert!(page.contains(section), "{section} missing");
    }
    assert!(page.contains("Exit codes"), "the exit codes are documented");
    // `man` itself, where installed (it is not part of the test setup), must render it.
    if std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_ok()
    {
        let (ok, text) = pipe("man", &["-l", "-"], &page);
        assert!(
            ok && text.contains("NAME") && text.contains("compare"),
            "{text}"
        );
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    bakeoff()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .assert()
        .success();
    for name in [
        "bakeoff.1",
        "bakeoff-run.1",
        "bakeoff-compare.1",
        "bakeoff-stack-create.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(
            text.contains(".TH bakeoff-") || name == "bakeoff.1",
            "{name}"
        );
    }
    let run = std::fs::read_to_string(dir.path().join("bakeoff-run.1")).unwrap();
    assert!(
        run.contains("dry\\-run") && run.contains(".SH EXAMPLES"),
        "{run}"
    );
}

#[test]
fn every_failure_has_one_prefix() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let t = d.path().to_str().unwrap();
    for args in [
        &["run", "--bogus"][..],
        &["run", "randread"],
        &["run", "nosuch", "--target", t],
        &["run", "randread", "--target", "/nonexistent"],
        &["report", "/nonexistent"],
        &["stack", "destroy", "nosuch"],
        &["workloads", "show", "nosuch"],
    ] {
        let out = bakeoff().args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("bakeoff: error: "), "{args:?}: {stderr}");
        assert_eq!(stderr.matches("error:").count(), 1, "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

#[test]
fn one_thread_reads_one_thread() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    bakeoff()
        .args([
            "run",
            "randread",
            "--quiet",
            "--warm",
            "--remove-data",
            "--target",
        ])
        .arg(d.path())
        .args(["--set", "engine=null,size=1m,ramp_time=0,runtime=1s,jobs=1"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains(", 1 thread, dataset")
                .and(predicate::str::contains("(user ").and(predicate::str::contains("%, sys "))),
        );
}

/// `--mpi` is refused with its reason where it cannot apply, in every build; a build without
/// the `mpi` feature says how to get one.
#[test]
fn mpi_says_what_it_needs() {
    let dir = common::tmp();
    let target = dir.path().to_str().unwrap();
    bakeoff()
        .args(["run", "randread", "--mpi", "--stack", "ext4"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "bakeoff does not build a stack per host",
        ));
    bakeoff()
        .args(["run", "tpcc", "--mpi", "--target", target])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "recipes and databases run on one host",
        ));
    if cfg!(feature = "mpi") {
        return;
    }
    bakeoff()
        .args(["run", "randread", "--mpi", "--target", target])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("built without MPI")
                .and(predicate::str::contains(
                    "cargo build --release --features mpi",
                ))
                .and(predicate::str::contains("libopenmpi-dev")),
        );
    assert_eq!(
        std::fs::read_dir(target).unwrap().count(),
        0,
        "nothing written"
    );
}

/// Every page `man --out-dir` writes, by file name.
fn man_pages() -> Vec<(String, String)> {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    bakeoff()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .assert()
        .success();
    let mut pages: Vec<(String, String)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect();
    pages.sort();
    pages
}

#[test]
fn man_prints_each_commands_page_with_examples_and_docs() {
    let run = stdout_of(&["man", "run"]);
    assert!(run.contains("\n.TH bakeoff-run 1 "), "{run}");
    let examples = run
        .split_once(".SH EXAMPLES\n")
        .expect("an EXAMPLES section")
        .1;
    assert!(examples.starts_with(".nf\n  bakeoff run "), "{examples}");
    assert!(run.contains(".SH \"SEE ALSO\"") && run.contains("docs/workloads.md"));
    let create = stdout_of(&["man", "stack", "create"]);
    assert!(create.contains("\n.TH bakeoff-stack-create 1 "), "{create}");
    assert!(create.contains("bakeoff\\-stack\\fR(1)"), "{create}");
    bakeoff()
        .args(["man", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the commands are run, exec"));
    // Every page has its examples and SEE ALSO, `bakeoff man CMD` prints the page `--out-dir`
    // writes, and every document a page names is in docs/.
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    let pages = man_pages();
    assert!(
        pages.len() >= 13,
        "{:?}",
        pages.iter().map(|p| &p.0).collect::<Vec<_>>()
    );
    for (name, text) in &pages {
        assert!(
            text.contains(".SH EXAMPLES\n.nf\n"),
            "{name} has no examples"
        );
        assert!(text.contains(".SH \"SEE ALSO\""), "{name} has no SEE ALSO");
        for doc in text.split("\\fBdocs/").skip(1) {
            let file = doc.split_once("\\fR").unwrap().0.replace("\\-", "-");
            assert!(docs.join(&file).is_file(), "{name} names docs/{file}");
        }
        let words: Vec<&str> = name.trim_end_matches(".1").split('-').skip(1).collect();
        let mut args = vec!["man"];
        args.extend(&words);
        assert_eq!(&stdout_of(&args), text, "bakeoff {args:?}");
    }
    if std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_ok()
    {
        let (ok, text) = pipe("man", &["-l", "-"], &run);
        assert!(
            ok && text.contains("EXAMPLES") && text.contains("docs/stacks.md"),
            "{text}"
        );
    }
}
