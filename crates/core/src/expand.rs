//! Expands a personality (params + filesets + roles with `$param` placeholders) into a [`Plan`].

use crate::job::{check_known, run_values, sync_mode, MAX_BS, RUN_KEYS};
use crate::plan::*;
use crate::settings::{value_text, Origin, Settings, SpecError};
use crate::values::{Lookup, Val};
use crate::workload::{PersonalityDef, Workload};
use std::collections::BTreeMap;

/// Reads fields of one table, substituting `$param` placeholders.
struct Ctx<'a> {
    settings: &'a Settings,
    workload: &'a str,
    /// The file a user's personality came from, and its text; `None` for built-ins.
    file: Option<(&'a str, &'a str)>,
}

impl Ctx<'_> {
    /// Where `section` (`role.NAME...`, `fileset.NAME`) was written: the line of its `name = `
    /// in a user's file, else the workload's defaults.
    fn origin(&self, section: &str) -> Origin {
        let Some((path, text)) = self.file else {
            return Origin::Default {
                workload: self.workload.to_string(),
            };
        };
        let name = section.split('.').nth(1).unwrap_or("");
        let name = name.split('[').next().unwrap_or(name);
        let wanted = [format!("name = \"{name}\""), format!("name=\"{name}\"")];
        let line = text
            .lines()
            .position(|l| wanted.iter().any(|w| l.trim() == w.as_str()))
            .map_or(1, |i| i + 1);
        Origin::File {
            path: path.to_string(),
            line,
        }
    }

    /// The value of `key` in `table` (`section` names the table in messages).
    fn field(
        &self,
        table: &toml::Table,
        section: &str,
        key: &str,
    ) -> Result<Option<Val>, SpecError> {
        let Some(raw) = table.get(key) else {
            return Ok(None);
        };
        let label = format!("{section}.{key}");
        let text = value_text(raw).ok_or_else(|| {
            SpecError::new(self.origin(section), &label, "expected a single value")
        })?;
        if let Some(param) = text.strip_prefix('$') {
            let s = self.settings.get(param).ok_or_else(|| {
                SpecError::new(
                    self.origin(section),
                    &label,
                    format!("refers to undeclared parameter ${param}"),
                )
            })?;
            return Ok(Some(Val {
                key: param.to_string(),
                text: s.value.clone(),
                origin: s.origin.clone(),
            }));
        }
        Ok(Some(Val {
            key: label,
            text,
            origin: self.origin(section),
        }))
    }

    fn field_or(
        &self,
        table: &toml::Table,
        section: &str,
        key: &str,
        default: &str,
    ) -> Result<Val, SpecError> {
        Ok(self.field(table, section, key)?.unwrap_or(Val {
            key: format!("{section}.{key}"),
            text: default.to_string(),
            origin: self.origin(section),
        }))
    }

    fn err(&self, key: &str, msg: impl Into<String>) -> SpecError {
        SpecError::new(self.origin(key), key, msg)
    }
}

pub(crate) fn plan_personality(
    w: &Workload,
    def: &PersonalityDef,
    user: &Settings,
) -> Result<Plan, SpecError> {
    let mut allowed: Vec<&str> = RUN_KEYS.iter().map(|k| k.key).collect();
    allowed.extend(def.params.iter().map(|p| p.name.as_str()));
    check_known(user, &allowed)?;
    let mut settings = Settings::default();
    let default = Origin::Default {
        workload: w.name.clone(),
    };
    for p in &def.params {
        settings.insert(&p.name, &p.default, default.clone());
    }
    for (k, s) in def.run.iter() {
        settings.insert(k, &s.value, default.clone());
    }
    settings.merge(user);
    let run = run_values(&Lookup {
        settings: &settings,
        workload: &w.name,
    })?;
    let ctx = Ctx {
        settings: &settings,
        workload: &w.name,
        file: w.path.as_deref().map(|p| (p, w.source.as_str())),
    };
    let filesets = def
        .filesets
        .iter()
        .map(|t| fileset(&ctx, t))
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<String> = def
        .roles
        .iter()
        .map(|t| {
            t.get("name")
                .and_then(|n| n.as_str())
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let mut roles = Vec::new();
    for table in &def.roles {
        roles.push(role(&ctx, table, &names, &filesets, run.engine)?);
    }
    check_links(&ctx, &roles)?;
    let mut resolved = BTreeMap::new();
    for (k, s) in settings.iter() {
        resolved.insert(k.clone(), s.value.clone());
    }
    Ok(Plan {
        workload: w.name.clone(),
        engine: run.engine,
        runtime: run.runtime,
        ramp_time: run.ramp_time,
        seed: run.seed,
        compress_pct: run.compress_pct,
        filesets,
        roles,
        settings: resolved,
    })
}

fn fileset(ctx: &Ctx, t: &toml::Table) -> Result<FilesetPlan, SpecError> {
    let name = t
        .get("name")
        .and_then(|n| n.as_str())
        .ok_or_else(|| ctx.err("fileset", "needs a name"))?;
    let section = format!("fileset.{name}");
    let nrfiles = ctx.field_or(t, &section, "nrfiles", "1")?.int(1, 100_000)? as u32;
    let file_size = match (
        ctx.field(t, &section, "filesize")?,
        ctx.field(t, &section, "size")?,
    ) {
        (Some(per_file), None) => per_file.size(4096, u64::MAX / 2)?,
        (None, Some(total)) => total.size(4096, u64::MAX / 2)? / u64::from(nrfiles),
        _ => {
            return Err(ctx.err(
                &section,
                "give exactly one of size (total) or filesize (per file)",
            ))
        }
    };
    Ok(FilesetPlan {
        name: name.to_string(),
        nrfiles,
        file_size,
    })
}

fn role(
    ctx: &Ctx,
    t: &toml::Table,
    names: &[String],
    filesets: &[FilesetPlan],
    engine: EngineKind,
) -> Result<RolePlan, SpecError> {
    let name = t
        .get("name")
        .and_then(|n| n.as_str())
        .ok_or_else(|| ctx.err("role", "needs a name"))?;
    let sec = format!("role.{name}");
    let fs_val = ctx.field_or(t, &sec, "fileset", "")?;
    let fileset = filesets
        .iter()
        .position(|f| f.name == fs_val.text)
        .ok_or_else(|| fs_val.invalid(format!("no fileset named '{}'", fs_val.text)))?;
    let kind = ctx.field_or(t, &sec, "kind", "worker")?;
    let log_writer = kind.choice(&["worker", "logwriter"])? == "logwriter";
    let direct = ctx.field_or(t, &sec, "direct", "false")?.boolean()?;
    let depth_val = ctx.field_or(t, &sec, "iodepth", "1")?;
    let iodepth = depth_val.int(1, 4096)? as u32;
    let offset = ctx
        .field_or(t, &sec, "offset", "0")?
        .size(0, filesets[fileset].file_size / 2)?;
    let steps = match t.get("steps") {
        None => Vec::new(),
        Some(toml::Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let st = s
                    .as_table()
                    .ok_or_else(|| ctx.err(&sec, "steps must be tables"))?;
                step(ctx, st, &format!("{sec}.steps[{i}]"), names, direct)
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(ctx.err(&sec, "steps must be a list of tables")),
    };
    if iodepth > 1 && engine == EngineKind::Psync {
        return Err(depth_val.invalid(format!(
            "iodepth={iodepth} needs engine=io_uring: psync has one I/O in flight per thread"
        )));
    }
    if direct && offset % 512 != 0 {
        return Err(ctx.err(&sec, "with direct I/O the offset must be a multiple of 512"));
    }
    let gate = match t.get("gate").and_then(|g| g.as_table()) {
        None => None,
        Some(g) => Some(Gate {
            value: ctx.field_or(g, &sec, "value", "1")?.int(1, 1 << 40)?,
            highwater: ctx.field_or(g, &sec, "highwater", "1")?.int(1, 1 << 40)?,
        }),
    };
    let rate = ctx.field_or(t, &sec, "rate_iops", "0")?;
    let rate_iops = if rate.text.trim() == "0" {
        None
    } else {
        Some(rate.rate(1e8)?)
    };
    let threads_val = ctx.field_or(t, &sec, "threads", "1")?;
    let threads = threads_val.int(0, 4096)? as u32;
    if log_writer && threads > 1 {
        return Err(threads_val.invalid("a logwriter role has exactly one thread"));
    }
    Ok(RolePlan {
        name: name.to_string(),
        threads,
        fileset,
        direct,
        sync_mode: sync_mode(&ctx.field_or(t, &sec, "sync", "none")?)?,
        iodepth,
        offset,
        rate_iops,
        steps,
        gate,
        sync_every: None,
        log: log_writer || ctx.field_or(t, &sec, "log", "false")?.boolean()?,
        log_writer,
    })
}

fn step(
    ctx: &Ctx,
    t: &toml::Table,
    sec: &str,
    names: &[String],
    direct: bool,
) -> Result<Step, SpecError> {
    let role_ref = |v: &toml::Value| -> Result<usize, SpecError> {
        let n = v.as_str().unwrap_or("");
        names
            .iter()
            .position(|x| x == n)
            .ok_or_else(|| ctx.err(sec, format!("no role named '{n}'")))
    };
    if let Some(io) = ctx.field(t, sec, "io")? {
        let kinds = [
            "read",
            "write",
            "randread",
            "randwrite",
            "update",
            "randupdate",
            "randrw",
        ];
        let choice = io.choice(&kinds)?;
        let mixread = ctx.field_or(t, sec, "rwmixread", "50")?.int(0, 100)? as u8;
        let mix = match choice {
            "read" | "randread" => IoMix::Read,
            "write" | "randwrite" => IoMix::Write,
            "update" | "randupdate" => IoMix::Update,
            _ => IoMix::Mixed { read_pct: mixread },
        };
        let pattern = if choice.starts_with("rand") {
            Pattern::Random
        } else {
            Pattern::Sequential
        };
        let bs_val = ctx.field_or(t, sec, "bs", "8k")?;
        let bs = bs_val.size(1, MAX_BS)?;
        if direct && bs % 512 != 0 {
            return Err(bs_val.invalid("with direct I/O the block size must be a multiple of 512"));
        }
        let count = match ctx.field(t, sec, "count")? {
            Some(c) => Some(c.int(1, 1 << 40)?),
            None => Some(1),
        };
        return Ok(Step::Io(IoStep {
            mix,
            pattern,
            bs,
            count,
        }));
    }
    if let Some(h) = ctx.field(t, sec, "hog")? {
        return Ok(Step::Hog(h.int(0, 1 << 40)?));
    }
    if let Some(targets) = t.get("post") {
        let list = targets
            .as_array()
            .ok_or_else(|| ctx.err(sec, "post takes a list of role names"))?;
        return Ok(Step::Post(
            list.iter().map(role_ref).collect::<Result<_, _>>()?,
        ));
    }
    if t.contains_key("wait") {
        return Ok(Step::Wait);
    }
    if let Some(c) = ctx.field(t, sec, "commit")? {
        let bytes = c.size(1, 64 << 20)?;
        let log = t
            .get("log")
            .ok_or_else(|| ctx.err(sec, "commit needs log = \"<logwriter role>\""))?;
        return Ok(Step::Commit {
            bytes,
            log_role: role_ref(log)?,
        });
    }
    if let Some(s) = ctx.field(t, sec, "sync")? {
        let kind = if s.choice(&["fsync", "fdatasync"])? == "fsync" {
            SyncKind::Fsync
        } else {
            SyncKind::Fdatasync
        };
        return Ok(Step::Sync(kind));
    }
    Err(ctx.err(
        sec,
        "unknown step (use io, hog, post, wait, commit or sync)",
    ))
}

/// Posts must target roles with gates, waits need a gate, commits need a log writer.
fn check_links(ctx: &Ctx, roles: &[RolePlan]) -> Result<(), SpecError> {
    for r in roles {
        let sec = format!("role.{}", r.name);
        for s in &r.steps {
            match s {
                Step::Post(targets) => {
                    for &t in targets {
                        if roles[t].gate.is_none() {
                            return Err(ctx.err(
                                &sec,
                                format!("posts to '{}', which has no gate", roles[t].name),
                            ));
                        }
                    }
                }
                Step::Wait if r.gate.is_none() => {
                    return Err(ctx.err(&sec, "has a wait step but no gate = { value, highwater }"));
                }
                Step::Commit { log_role, .. } if !roles[*log_role].log_writer => {
                    return Err(ctx.err(
                        &sec,
                        format!(
                            "commits to '{}', which is not kind = \"logwriter\"",
                            roles[*log_role].name
                        ),
                    ));
                }
                _ => {}
            }
        }
        if !r.log_writer && r.threads > 0 && !r.steps.iter().any(|s| matches!(s, Step::Io(_))) {
            return Err(ctx.err(&sec, "has no io step"));
        }
    }
    Ok(())
}
