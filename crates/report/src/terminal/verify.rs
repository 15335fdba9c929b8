//! The terminal summary's lines of a verified run (`verify=`): what carried headers, what was
//! checked during the run and in the final pass, and the mismatches found.

use crate::fmt::{duration, group};
use bakeoff_core::record::RunRecord;
use bakeoff_core::units::format_bytes;
use std::fmt::Write;

/// The `verify` lines, or nothing for a run without `verify=`.
pub fn lines(r: &RunRecord) -> String {
    let Some(v) = &r.verify else {
        return String::new();
    };
    let filesets: Vec<String> = (v.filesets.iter())
        .map(|f| {
            format!(
                "{} ({} blocks of {})",
                f.name,
                group(f.blocks),
                format_bytes(f.block_bytes)
            )
        })
        .collect();
    let mut s = format!(
        "verify   {}: {}; {} blocks written, {} reads checked ({} raced a write to their block)\n",
        v.mode,
        filesets.join(", "),
        group(v.blocks_written),
        group(v.reads_checked),
        group(v.reads_raced),
    );
    if !v.unverified_filesets.is_empty() {
        let _ = writeln!(
            s,
            "         not verified: {} (a log writer's redo is not written in blocks)",
            v.unverified_filesets.join(", ")
        );
    }
    let _ = match &v.final_pass {
        Some(p) => writeln!(
            s,
            "         final pass after the run: {} blocks in {}{}",
            group(p.blocks_checked),
            duration(p.elapsed_ns as f64),
            if p.complete { "" } else { " (interrupted)" }
        ),
        None => writeln!(
            s,
            "         final pass: not run (the run failed or was interrupted)"
        ),
    };
    let _ = match v.mismatches {
        0 => writeln!(s, "         no mismatch"),
        n => writeln!(
            s,
            "         {} MISMATCH{}, the first: {}",
            group(n),
            if n == 1 { "" } else { "ES" },
            v.first_mismatches
                .first()
                .map_or("", |m| m.message.as_str())
        ),
    };
    s
}

#[cfg(test)]
mod tests {
    use bakeoff_core::record::verify::{FinalPass, VerifiedFileset, VerifyMismatch, VerifyRecord};

    fn verified(mismatches: u64, pass: Option<FinalPass>) -> bakeoff_core::record::RunRecord {
        let mut r = crate::fixture::record();
        r.verify = Some(VerifyRecord {
            mode: "crc32c".into(),
            header_bytes: 64,
            filesets: vec![VerifiedFileset {
                name: "data".into(),
                block_bytes: 8192,
                offset_bytes: 0,
                blocks: 256,
            }],
            unverified_filesets: vec!["redo".into()],
            layout_blocks: 256,
            blocks_written: 12_345,
            reads_checked: 678,
            reads_raced: 9,
            final_pass: pass,
            mismatches,
            first_mismatches: (0..mismatches.min(1))
                .map(|_| VerifyMismatch {
                    message: "block at offset 8192 of /d/bakeoff-data.0 (found by ...)".into(),
                    ..VerifyMismatch::default()
                })
                .collect(),
        });
        r
    }

    #[test]
    fn a_clean_run_says_what_was_checked() {
        let pass = FinalPass {
            blocks_checked: 256,
            elapsed_ns: 12_000_000,
            complete: true,
        };
        let text = super::lines(&verified(0, Some(pass)));
        assert!(
            text.starts_with("verify   crc32c: data (256 blocks of 8 KiB)"),
            "{text}"
        );
        assert!(
            text.contains("12,345 blocks written, 678 reads checked (9 raced"),
            "{text}"
        );
        assert!(text.contains("not verified: redo"), "{text}");
        assert!(
            text.contains("final pass after the run: 256 blocks in"),
            "{text}"
        );
        assert!(text.contains("no mismatch"), "{text}");
        assert!(crate::terminal::render(&verified(0, None)).contains("verify   crc32c"));
    }

    #[test]
    fn mismatches_are_counted_and_the_first_described() {
        let text = super::lines(&verified(3, None));
        assert!(text.contains("final pass: not run"), "{text}");
        assert!(
            text.contains("3 MISMATCHES, the first: block at offset 8192"),
            "{text}"
        );
        assert_eq!(super::lines(&crate::fixture::record()), "");
    }
}
