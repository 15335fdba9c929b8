//! `bakeoff stack list|create|destroy`, and the stack options shared with `run` and `demo`.

use crate::cli::{StackAction, StackArgs, StackOpts};
use crate::exit::{failure, stack_failure, Code, Failure};
use bakeoff_core::units::format_bytes;
use bakeoff_stack::backing::BackingOptions;
use bakeoff_stack::fs::missing_tool;
use bakeoff_stack::ledger::{kept_stacks, replay_file, state_dir};
use bakeoff_stack::{Options, Stack, StackKind, StackSpec};

/// Stack options from the command line, for `spec` holding `dataset` bytes (which sizes an
/// `auto` stack).
pub fn options(
    spec: &StackSpec,
    opts: &StackOpts,
    name: Option<String>,
    dataset: u64,
) -> Result<Options, Failure> {
    super::preflight::check_device_flags(opts)?;
    let size = super::preflight::device_size(spec, opts, dataset)?;
    Ok(Options {
        images: opts.images.clone(),
        backing: BackingOptions {
            size,
            devices: opts.devices.clone(),
            destroy_data_on: opts.destroy_data_on.clone(),
            logged: None,
        },
        name,
        // Its own flag: Ctrl-C raises every registered flag, so the wait ends on it.
        wait: match opts.wait {
            true => Some(super::measure::interrupt_flag()?),
            false => None,
        },
    })
}

/// Builds `spec` to hold `dataset` bytes, after undoing anything killed runs left behind;
/// unless `quiet`, says on stderr when building and tearing down start.
pub fn build(
    spec: &StackSpec,
    opts: &StackOpts,
    name: Option<String>,
    dataset: u64,
    quiet: bool,
) -> Result<Stack, Failure> {
    build_from(spec, options(spec, opts, name, dataset)?, quiet)
}

/// Builds `spec` with `options` made by [`options`] (and changed: a crash-state run's images
/// served by its write log), as [`build`] does.
pub fn build_from(spec: &StackSpec, options: Options, quiet: bool) -> Result<Stack, Failure> {
    if !rustix::process::geteuid().is_root() && spec.kind.needs_root() {
        return Err(failure(
            Code::Environment,
            format!(
                "building {} needs root (loop devices, mkfs, mount)",
                spec.text
            ),
        ));
    }
    super::cleanup::replay_stale(false)?;
    if !quiet {
        eprintln!("bakeoff: building stack {}", spec.text);
    }
    let mut stack = Stack::create(spec, &options).map_err(stack_failure)?;
    stack.announce_teardown(!quiet);
    Ok(stack)
}

/// One block describing a built stack.
pub fn describe(stack: &Stack) -> String {
    let i = &stack.info;
    let mut s = format!(
        "stack {} ({}), {} on {}\n",
        i.name, i.spec, i.backend, i.target
    );
    for b in &i.backing {
        let dio = b.loop_dio.map_or(String::new(), |d| {
            format!(", loop dio {}", if d { "on" } else { "OFF" })
        });
        let img = b
            .image
            .as_deref()
            .map_or(String::new(), |p| format!(" over {p}"));
        let wiped = match b.wiped_signatures.as_slice() {
            [] => String::new(),
            sigs => format!(", wiped {}", sigs.join(", ")),
        };
        s += &format!(
            "  {} {} {}{img}{dio}{wiped}\n",
            b.role,
            b.device,
            format_bytes(b.size_bytes)
        );
    }
    for (k, v) in &i.properties {
        s += &format!("  {k} = {v}\n");
    }
    s
}

/// Runs the command.
pub fn run(args: StackArgs) -> Result<Code, Failure> {
    match args.action {
        StackAction::List { keys: Some(name) } => {
            let kind = StackKind::named(&name).ok_or_else(|| {
                let names: Vec<&str> = StackKind::all().map(StackKind::name).collect();
                let names = names.join(", ");
                failure(
                    Code::Usage,
                    format!("--keys: unknown stack type '{name}' (allowed: {names})"),
                )
            })?;
            println!("Keys of {name} specs ({name}:key=value,...):");
            for k in kind.keys() {
                println!("  {:<19} default {:<8} {}", k.key, k.default, k.help);
            }
        }
        StackAction::List { keys: None } => {
            for kind in StackKind::all() {
                let status = match missing_tool(kind) {
                    None => "available".to_string(),
                    Some((tool, package)) => format!("missing {tool}: apt-get install {package}"),
                };
                println!("{:<6} {status}", kind.name());
            }
            let kept = kept_stacks(&state_dir());
            if !kept.is_empty() {
                println!(
                    "\nkept stacks: {}",
                    kept.iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        StackAction::Create {
            spec,
            opts,
            keep,
            name,
        } => {
            // The same checks as a run's, so what cannot be built is refused before building.
            let spec = super::preflight::spec(&spec)?;
            super::preflight::stack(&spec, &opts, 0)?;
            let stack = build(&spec, &opts, name, 0, false)?;
            print!("{}", describe(&stack));
            if keep {
                let (name, target) = (stack.name().to_string(), stack.info.target.clone());
                stack.keep().map_err(stack_failure)?;
                println!("kept: run with --target {target}; remove it with `bakeoff stack destroy {name}`");
            } else {
                stack.destroy().map_err(stack_failure)?;
                println!("destroyed (use --keep to keep it)");
            }
        }
        StackAction::Destroy { name } => {
            let (_, path) = kept_stacks(&state_dir())
                .into_iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| {
                    failure(
                        Code::Usage,
                        format!("no kept stack named '{name}' (see `bakeoff stack list`)"),
                    )
                })?;
            let failures = replay_file(&path, &mut bakeoff_stack::exec::Exec::default())
                .map_err(stack_failure)?;
            if !failures.is_empty() {
                return Err(failure(
                    Code::Environment,
                    format!("destroying {name} left: {}", failures.join("; ")),
                ));
            }
            println!("destroyed {name}");
        }
    }
    Ok(Code::Ok)
}
