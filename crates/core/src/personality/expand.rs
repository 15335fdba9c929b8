//! Expands a personality: merges its parameters with the user's settings, substitutes `$param`
//! placeholders, and hands filesets and roles to the one planner.

use super::{Field, Fields, FilesetDef, PersonalityDef, RoleDef, StepDef};
use crate::keys::{
    check_known, default_of, names, FILESET_KEYS, GATE_KEYS, ROLE_KEYS, RUN_KEYS, STEP_KEYS,
    TREE_ONLY_KEYS,
};
use crate::plan::Plan;
use crate::planner::{
    build, run_values, FileSize, FilesetInput, RoleInput, StepInput, StepKind, TreeInput,
};
use crate::settings::{Origin, SettingError, Settings};
use crate::values::{Lookup, Val};

/// Validates `user` settings against the personality `name` and resolves its plan.
pub(crate) fn plan_personality(
    name: &str,
    def: &PersonalityDef,
    user: &Settings,
) -> Result<Plan, SettingError> {
    let mut allowed = names(&[RUN_KEYS]);
    allowed.extend(def.params.iter().map(|p| p.name.as_str()));
    check_known(user, &allowed)?;
    let mut settings = Settings::default();
    let default = Origin::Default {
        workload: name.to_string(),
    };
    for p in &def.params {
        settings.insert(&p.name, &p.default, default.clone());
    }
    settings.merge(&def.run);
    settings.merge(user);
    let run = run_values(&Lookup {
        settings: &settings,
        workload: name,
    })?;
    let x = Expander {
        settings: &settings,
        def,
    };
    let filesets = def
        .filesets
        .iter()
        .map(|f| x.fileset(f))
        .collect::<Result<Vec<_>, _>>()?;
    let roles = def
        .roles
        .iter()
        .map(|r| x.role(r))
        .collect::<Result<Vec<_>, _>>()?;
    let resolved = settings
        .iter()
        .map(|(k, s)| (k.clone(), s.value.clone()))
        .collect();
    build(name, run, &filesets, &roles, resolved)
}

/// Reads fields of a personality's tables with its parameters substituted.
struct Expander<'a> {
    settings: &'a Settings,
    def: &'a PersonalityDef,
}

impl Expander<'_> {
    /// The value of `field` of `fields`: a parameter's value (named by the parameter, located
    /// where it was set) or the literal (named `section.key`, located where it was written).
    fn resolve(&self, fields: &Fields, key: &str, field: &Field) -> Result<Val, SettingError> {
        let label = format!("{}.{key}", fields.section);
        let Some(param) = field.param() else {
            return Ok(Val {
                key: label,
                text: field.text.clone(),
                origin: field.origin.clone(),
            });
        };
        let declared = self.def.params.iter().any(|p| p.name == param);
        match self.settings.get(param).filter(|_| declared) {
            Some(s) => Ok(Val {
                key: param.to_string(),
                text: s.value.clone(),
                origin: s.origin.clone(),
            }),
            None => Err(SettingError::new(
                field.origin.clone(),
                &label,
                format!("refers to undeclared parameter ${param}"),
            )),
        }
    }

    /// The value of `key`, or `default` located at the table.
    fn get(&self, fields: &Fields, key: &str, default: &str) -> Result<Val, SettingError> {
        match fields.get(key) {
            Some(f) => self.resolve(fields, key, f),
            None => Ok(Val {
                key: format!("{}.{key}", fields.section),
                text: default.to_string(),
                origin: fields.origin.clone(),
            }),
        }
    }

    fn opt(&self, fields: &Fields, key: &str) -> Result<Option<Val>, SettingError> {
        fields
            .get(key)
            .map(|f| self.resolve(fields, key, f))
            .transpose()
    }

    fn fileset(&self, f: &FilesetDef) -> Result<FilesetInput, SettingError> {
        let size = match (
            self.opt(&f.fields, "filesize")?,
            self.opt(&f.fields, "size")?,
        ) {
            (Some(per_file), None) => FileSize::PerFile(per_file),
            (None, Some(total)) => FileSize::Total(total),
            _ => {
                return Err(SettingError::new(
                    f.fields.origin.clone(),
                    &f.fields.section,
                    "give exactly one of size (total) or filesize (per file)",
                ))
            }
        };
        Ok(FilesetInput {
            name: f.name.clone(),
            nrfiles: self.get(&f.fields, "nrfiles", "1")?,
            size,
            tree: self.tree(f)?,
        })
    }

    /// The tree keys of a fileset: a tree if `entries` or `data_per_ops` is written; a flat
    /// fileset refuses the keys only trees take, and a tree refuses `nrfiles`.
    fn tree(&self, f: &FilesetDef) -> Result<Option<TreeInput>, SettingError> {
        let fields = &f.fields;
        let (entries, data_per_ops) = (
            self.opt(fields, "entries")?,
            self.opt(fields, "data_per_ops")?,
        );
        if entries.is_none() && data_per_ops.is_none() {
            if let Some(key) = TREE_ONLY_KEYS.iter().find(|k| fields.get(k).is_some()) {
                let v = self.get(fields, key, "")?;
                return Err(v.invalid(
                    "applies to a directory tree: give the fileset entries (or data_per_ops)",
                ));
            }
            return Ok(None);
        }
        if let Some(n) = self.opt(fields, "nrfiles")? {
            return Err(n.invalid(
                "a tree counts its files in entries (or data_per_ops): nrfiles is for flat \
                 filesets",
            ));
        }
        let g = |key: &str| self.get(fields, key, default_of(FILESET_KEYS, key));
        Ok(Some(TreeInput {
            entries,
            data_per_ops,
            rate_hint: self.opt(fields, "rate_hint")?,
            dirwidth: g("dirwidth")?,
            prealloc: g("prealloc")?,
            size_dist: g("size_dist")?,
            working_set: g("working_set")?,
        }))
    }

    fn role(&self, r: &RoleDef) -> Result<RoleInput, SettingError> {
        let f = &r.fields;
        let g = |key: &str| self.get(f, key, default_of(ROLE_KEYS, key));
        let gate = match &r.gate {
            None => None,
            Some(gate) => Some((
                self.get(gate, "value", default_of(GATE_KEYS, "value"))?,
                self.get(gate, "highwater", default_of(GATE_KEYS, "highwater"))?,
            )),
        };
        let fileset = g("fileset")?;
        Ok(RoleInput {
            name: r.name.clone(),
            label: f.section.clone(),
            origin: f.origin.clone(),
            threads: g("threads")?,
            threads_via_param: f.get("threads").is_some_and(|t| t.param().is_some()),
            kind: g("kind")?,
            direct: g("direct")?,
            sync: g("sync")?,
            iodepth: g("iodepth")?,
            offset: g("offset")?,
            rate_iops: g("rate_iops")?,
            fsync: g("fsync")?,
            fdatasync: g("fdatasync")?,
            log: g("log")?,
            engine: g("engine")?,
            dirty_limit: self.opt(f, "dirty_limit")?,
            gate,
            mix: g("mix")?,
            steps: r
                .steps
                .iter()
                .map(|s| self.step(s, &fileset))
                .collect::<Result<_, _>>()?,
            fileset,
        })
    }

    /// One step; a file step works on `role_fileset` unless it names its own.
    fn step(&self, s: &StepDef, role_fileset: &Val) -> Result<StepInput, SettingError> {
        let f = &s.fields;
        let g = |key: &str| self.get(f, key, default_of(STEP_KEYS, key));
        let at = match s.kind {
            "post" => Val {
                key: format!("{}.post", f.section),
                text: String::new(),
                origin: f.origin.clone(),
            },
            kind => g(kind)?,
        };
        let kind = match s.kind {
            "io" => StepKind::Io {
                io: at.clone(),
                bs: g("bs")?,
                rwmixread: g("rwmixread")?,
                count: g("count")?,
                async_io: g("async")?,
            },
            "file" => StepKind::File {
                op: at.clone(),
                fileset: self
                    .opt(f, "fileset")?
                    .unwrap_or_else(|| role_fileset.clone()),
                bs: g("bs")?,
                random: g("random")?,
            },
            "hog" => StepKind::Hog(at.clone()),
            "post" => StepKind::Post(
                s.targets
                    .iter()
                    .map(|t| self.resolve(f, "post", t))
                    .collect::<Result<_, _>>()?,
            ),
            "wait" => StepKind::Wait,
            "aiowait" => StepKind::AioWait,
            "dirty" => StepKind::Dirty {
                role: at.clone(),
                pct: g("pct")?,
            },
            "commit" => StepKind::Commit {
                bytes: at.clone(),
                log: self
                    .opt(f, "log")?
                    .ok_or_else(|| at.invalid("a commit step needs log = \"<logwriter role>\""))?,
            },
            _ => StepKind::Sync(at.clone()),
        };
        Ok(StepInput {
            at,
            kind,
            weight: self.opt(f, "weight")?,
        })
    }
}
