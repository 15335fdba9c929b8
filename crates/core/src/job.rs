//! Plain jobs in fio's vocabulary. A plain job is a personality with one fileset (`data`) and
//! one role (`job`): it is planned through [`crate::planner`] like any personality's role.

use crate::keys::{check_known, names};
pub use crate::keys::{default_of, KeyDoc, JOB_KEYS, RUN_KEYS};
use crate::plan::Plan;
pub use crate::planner::MAX_BS;
use crate::planner::{build, run_values, FileSize, FilesetInput, RoleInput, StepInput, StepKind};
use crate::settings::{SettingError, Settings};
use crate::values::{Lookup, Val};
use std::collections::BTreeMap;

/// Resolves a plain job into a one-role plan.
pub(crate) fn plan_job(name: &str, settings: &Settings) -> Result<Plan, SettingError> {
    check_known(settings, &names(&[RUN_KEYS, JOB_KEYS]))?;
    let look = Lookup {
        settings,
        workload: name,
    };
    let run = run_values(&look)?;
    let g = |k: &str| look.get(k, default_of(JOB_KEYS, k));
    let fixed = |k: &str, text: &str| Val::fixed(k, text, name);
    let fileset = FilesetInput {
        name: "data".into(),
        nrfiles: g("nrfiles"),
        size: FileSize::Total(g("size")),
        tree: None,
    };
    let rw = g("rw");
    let role = RoleInput {
        name: "job".into(),
        label: "job".into(),
        origin: rw.origin.clone(),
        threads: g("jobs"),
        threads_via_param: false,
        fileset: fixed("fileset", "data"),
        kind: fixed("kind", "worker"),
        direct: g("direct"),
        sync: g("sync"),
        iodepth: g("iodepth"),
        offset: g("offset"),
        rate_iops: g("rate_iops"),
        fsync: g("fsync"),
        fdatasync: g("fdatasync"),
        log: fixed("log", "false"),
        engine: fixed("engine", ""),
        dirty_limit: None,
        gate: None,
        mix: fixed("mix", "false"),
        steps: vec![StepInput {
            weight: None,
            at: rw.clone(),
            kind: StepKind::Io {
                io: rw,
                bs: g("bs"),
                rwmixread: g("rwmixread"),
                count: fixed("count", "1"),
                async_io: fixed("async", "false"),
            },
        }],
    };
    let mut resolved = BTreeMap::new();
    for k in RUN_KEYS.iter().chain(JOB_KEYS) {
        resolved.insert(k.key.to_string(), look.get(k.key, k.default).text);
    }
    build(name, run, &[fileset], &[role], resolved)
}

#[cfg(test)]
mod tests {
    use crate::settings::Settings;
    use crate::workload::builtin;

    fn plan(name: &str, set: &str) -> Result<crate::plan::Plan, crate::settings::SettingError> {
        builtin(name)
            .unwrap()
            .plan(&Settings::parse_set(set).unwrap())
    }

    #[test]
    fn randread_takes_fio_keys() {
        let p = plan("randread", "bs=8k,direct=true,jobs=4,runtime=30s").unwrap();
        assert_eq!(p.roles[0].threads, 4);
        assert!(p.roles[0].direct);
        assert_eq!(p.runtime.as_secs(), 30);
        assert_eq!(p.settings["bs"], "8k");
    }

    #[test]
    fn errors_name_key_origin_and_range() {
        let e = plan("randread", "jobs=0").unwrap_err().to_string();
        assert_eq!(e, "--set: jobs: '0' is out of range (allowed 1 to 4096)");
        let e = plan("randread", "colour=blue").unwrap_err().to_string();
        assert!(e.contains("unknown key") && e.contains("bs"), "{e}");
        let e = plan("randread", "iodepth=8").unwrap_err().to_string();
        assert!(e.contains("io_uring"), "{e}");
        let e = plan("randread", "direct=1,bs=1000")
            .unwrap_err()
            .to_string();
        assert!(e.contains("multiple of 512"), "{e}");
        let e = plan("randread", "fsync=1,fdatasync=1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not both"), "{e}");
    }

    #[test]
    fn file_errors_carry_line_numbers() {
        let w = crate::workload::Workload::parse(
            "mine",
            "rw = \"randread\"\nbs = \"0\"\n",
            "mine.toml",
        )
        .unwrap();
        let e = w.plan(&Settings::default()).unwrap_err().to_string();
        assert!(e.starts_with("mine.toml:2: bs:"), "{e}");
    }
}
