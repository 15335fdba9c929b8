//! `bakeoff stack list|create|destroy`, and the stack options shared with `run` and `demo`.

use crate::cli::{StackAction, StackArgs, StackOpts};
use crate::exit::{failure, stack_failure, Code, Failure};
use bakeoff_core::units::{format_bytes, parse_size};
use bakeoff_stack::backing::BackingOptions;
use bakeoff_stack::fs::missing_tool;
use bakeoff_stack::ledger::{kept_stacks, replay_file, state_dir};
use bakeoff_stack::{Options, Stack, StackKind, StackSpec};

/// Refuses a `--destroy-data-on` that confirms no `--device`: ignoring it would let a user
/// believe the device was used (or protected) when the stack went on loop devices.
pub fn check_device_flags(opts: &StackOpts) -> Result<(), Failure> {
    let rdev = |p: &std::path::Path| rustix::fs::stat(p).ok().map(|s| s.st_rdev);
    let devices: Vec<_> = opts.devices.iter().map(|d| rdev(d)).collect();
    for d in &opts.destroy_data_on {
        let named = match rdev(d) {
            Some(r) => devices.contains(&Some(r)),
            None => opts.devices.contains(d),
        };
        if !named {
            let d = crate::exit::clip(&d.display().to_string());
            return Err(failure(
                Code::Usage,
                format!(
                    "--destroy-data-on {d} confirms a --device, and no --device names it: \
                     add --device {d} to build on it, or drop --destroy-data-on"
                ),
            ));
        }
    }
    Ok(())
}

/// Stack options from the command line.
pub fn options(opts: &StackOpts, name: Option<String>) -> Result<Options, Failure> {
    check_device_flags(opts)?;
    let size = parse_size(&opts.size).map_err(|m| failure(Code::Usage, format!("--size: {m}")))?;
    Ok(Options {
        images: opts.images.clone(),
        backing: BackingOptions {
            size,
            devices: opts.devices.clone(),
            destroy_data_on: opts.destroy_data_on.clone(),
        },
        name,
        // Its own flag: Ctrl-C raises every registered flag, so the wait ends on it.
        wait: match opts.wait {
            true => Some(super::measure::interrupt_flag()?),
            false => None,
        },
    })
}

/// Parses a spec and builds it, after undoing anything killed runs left behind.
pub fn build(spec: &str, opts: &StackOpts, name: Option<String>) -> Result<Stack, Failure> {
    let spec = StackSpec::parse_arg(spec).map_err(|e| failure(Code::Usage, e))?;
    let options = options(opts, name)?;
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
    eprintln!("bakeoff: building stack {}", spec.text);
    Stack::create(&spec, &options).map_err(stack_failure)
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
            let stack = build(&spec, &opts, name)?;
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
