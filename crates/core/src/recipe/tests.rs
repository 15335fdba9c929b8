//! Recipes: the built-ins parse, a user's file is read phase by phase, and every error names
//! the key and the `file:line` it was written on.

use crate::recipe::{builtin, builtins, is_recipe_text, PhaseWork, Recipe};
use crate::settings::Settings;
use std::time::Duration;

fn parse(text: &str) -> Result<Recipe, String> {
    Recipe::parse("r", text, "r.toml").map_err(|e| e.to_string())
}

/// The error of `text`, which must not parse.
fn error(text: &str) -> String {
    parse(text).expect_err("this recipe must be refused")
}

#[test]
fn every_builtin_parses_and_plans_with_defaults() {
    for r in builtins() {
        assert!(
            !r.phases.is_empty() && !r.description.is_empty(),
            "{}",
            r.name
        );
        let plan = r.plan(&Settings::default()).unwrap();
        assert_eq!(plan.phases, r.phases);
        assert_eq!(plan.params.len(), r.params.len());
        assert!(is_recipe_text(&r.source));
    }
    let build = builtin("build").unwrap();
    let names: Vec<&str> = build.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "bringover",
            "build-1",
            "build-2",
            "build-3",
            "rebuild",
            "bringover-2x",
            "build-2x"
        ]
    );
    let par = &build.phases[6];
    assert_eq!((par.parallel, par.stagger), (2, Duration::from_secs(10)));
    assert!(builtin("slob").is_none());
}

#[test]
fn a_recipe_file_reads_every_key() {
    let r = parse(
        "description = \"d\"\n[params]\nN = 3\n\n[[phase]]\nname = \"make\"\nrun = \"make -j$N\"\n\
         cwd = \"src/x\"\nparallel = 2\nstagger = \"1s\"\ntimeout = \"2m\"\nenv = { CC = \"gcc\" }\n\n\
         [[phase]]\nname = \"flush\"\naction = \"sync\"\n",
    )
    .unwrap();
    assert_eq!(r.params, [("N".to_string(), "3".to_string())]);
    let make = &r.phases[0];
    assert_eq!(make.work, PhaseWork::Shell("make -j$N".into()));
    assert_eq!(make.cwd.as_deref(), Some("src/x"));
    assert_eq!((make.parallel, make.stagger), (2, Duration::from_secs(1)));
    assert_eq!(make.timeout, Some(Duration::from_secs(120)));
    assert_eq!(make.env, [("CC".to_string(), "gcc".to_string())]);
    assert_eq!(r.phases[1].work.describe(), "action sync");
    let plan = r.plan(&Settings::parse_set("N=8").unwrap()).unwrap();
    assert_eq!(plan.params["N"], "8");
}

#[test]
fn errors_name_the_key_and_the_line() {
    let cases: &[(&str, &str)] = &[
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\nbogus = 1\n",
            "r.toml:4: phase.bogus: unknown key",
        ),
        ("[[phase]]\nrun = \"x\"\n", "r.toml:1: phase: needs a name"),
        (
            "[[phase]]\nname = \"a b\"\nrun = \"x\"\n",
            "r.toml:2: phase.name:",
        ),
        ("[[phase]]\nname = \"a\"\n", "r.toml:1: phase.a: needs run"),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\naction = \"sync\"\n",
            "r.toml:3: phase.a.run: give run or action, not both",
        ),
        (
            "[[phase]]\nname = \"a\"\naction = \"fly\"\n",
            "r.toml:3: phase.a.action: unknown action \"fly\" (known: sync, cold",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\nparallel = 0\n",
            "r.toml:4: phase.a.parallel: 0 is out of range",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\nparallel = \"2\"\n",
            "r.toml:4: phase.a.parallel: expected a whole number",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\nstagger = \"1s\"\n",
            "r.toml:4: phase.a.stagger: needs parallel = 2",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\nparallel = 2\nstagger = \"soon\"\n",
            "r.toml:5: phase.a.stagger: 'soon' is not a duration",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\ncwd = \"../etc\"\n",
            "r.toml:4: phase.a.cwd: \"../etc\" must be a relative directory",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\ncwd = \"/etc\"\n",
            "r.toml:4: phase.a.cwd:",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\ntimeout = \"0s\"\n",
            "r.toml:4: phase.a.timeout: must be above 0",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\nenv = { 1X = \"y\" }\n",
            "r.toml:4: phase.a.env.1X: not an environment variable name",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\nwith = { q = 1 }\n",
            "r.toml:4: phase.a.with: is for actions",
        ),
        (
            "[[phase]]\nname = \"a\"\naction = \"sync\"\nparallel = 2\n",
            "r.toml:4: phase.a.parallel: applies to commands",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"  \"\n",
            "r.toml:3: phase.a.run: is empty",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\n[[phase]]\nname = \"a\"\nrun = \"y\"\n",
            "r.toml:4: phase.name: \"a\" names two phases",
        ),
        (
            "[params]\nx-y = 1\n[[phase]]\nname = \"a\"\nrun = \"x\"\n",
            "r.toml:2: params.x-y: not an environment variable name",
        ),
        (
            "description = \"d\"\n",
            "r.toml:1: phase: a recipe needs at least one [[phase]]",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = [\"ls\"]\n",
            "r.toml:3: phase.a.run: expected a string, found a list",
        ),
        (
            "[[phase]]\nname = \"a\"\nrun = \"x\"\nrun = \"y\"\n",
            "r.toml:4: syntax:",
        ),
        (
            "phases = 1\n",
            "r.toml:1: phases: unknown key (allowed: description, params, phase)",
        ),
    ];
    for (text, expected) in cases {
        let e = error(text);
        assert!(
            e.starts_with(expected),
            "{text:?}\n  gave: {e}\n  want: {expected}"
        );
    }
}

#[test]
fn a_set_of_an_undeclared_parameter_names_the_declared_ones() {
    let r = parse("[params]\nJOBS = \"\"\n[[phase]]\nname = \"a\"\nrun = \"x\"\n").unwrap();
    let e = r.plan(&Settings::parse_set("jobs=2").unwrap()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--set: jobs: unknown parameter (recipe 'r' declares: JOBS)"
    );
    let bare = parse("[[phase]]\nname = \"a\"\nrun = \"x\"\n").unwrap();
    let e = bare.plan(&Settings::parse_set("x=1").unwrap()).unwrap_err();
    assert!(e.to_string().contains("declares no parameters"), "{e}");
}

#[test]
fn an_argv_is_shown_as_a_shell_would_need_it() {
    let argv = ["sh", "-c", "echo 'hi' $X", "plain/path=1"].map(String::from);
    assert_eq!(
        PhaseWork::Argv(argv.to_vec()).describe(),
        r#"sh -c 'echo '\''hi'\'' $X' plain/path=1"#
    );
}

#[test]
fn only_files_with_phases_are_recipes() {
    assert!(is_recipe_text("[[phase]]\nname = \"a\"\n"));
    assert!(!is_recipe_text("rw = \"read\"\n"));
    assert!(!is_recipe_text("[[phase]\n"));
}
