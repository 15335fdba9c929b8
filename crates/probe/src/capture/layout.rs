//! The syscall tracepoints' context as `capture.bpf.c` reads it (`struct sys_enter_ctx`,
//! `struct sys_exit_ctx`), checked against the kernel's own description
//! (`events/syscalls/sys_{enter,exit}_*/format` in tracefs): a kernel that laid them out
//! otherwise fails the capture's start with a message, not the capture's numbers.

use crate::tracefs::TRACEFS;

/// One `field:` line of a tracepoint's format: name, byte offset, size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// Its name (`fd`, `__syscall_nr`, `ret`).
    pub name: String,
    /// Byte offset in the context.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

/// The fields of a `format` file, in order.
pub fn parse_format(text: &str) -> Vec<Field> {
    text.lines().filter_map(parse_field).collect()
}

/// `\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;`
fn parse_field(line: &str) -> Option<Field> {
    let mut parts = line.trim().split(';').map(str::trim);
    let decl = parts.next()?.strip_prefix("field:")?;
    let name = decl.rsplit([' ', '*']).next()?.to_string();
    let mut offset = None;
    let mut size = None;
    for part in parts {
        if let Some(v) = part.strip_prefix("offset:") {
            offset = v.parse().ok();
        } else if let Some(v) = part.strip_prefix("size:") {
            size = v.parse().ok();
        }
    }
    Some(Field {
        name,
        offset: offset?,
        size: size?,
    })
}

/// Checks that `fields` hold the syscall number at 8, and either the arguments as 8-byte slots
/// from 16 (enter) or `ret` at 16 (exit).
pub fn check(call: &str, fields: &[Field], enter: bool) -> Result<(), String> {
    let wrong = |what: &str| {
        Err(format!(
            "the kernel's syscalls:sys_{}_{call} tracepoint lays out {what} otherwise than the \
             capture reads it (struct sys_{}_ctx in capture.bpf.c)",
            if enter { "enter" } else { "exit" },
            if enter { "enter" } else { "exit" },
        ))
    };
    let nr = fields.iter().find(|f| f.name == "__syscall_nr");
    if nr.is_none_or(|f| f.offset != 8 || f.size != 4) {
        return wrong("__syscall_nr");
    }
    let rest: Vec<&Field> = fields.iter().filter(|f| f.offset >= 16).collect();
    if enter {
        for (i, f) in rest.iter().enumerate() {
            if f.offset != 16 + 8 * i || f.size != 8 {
                return wrong(&format!("argument {}", f.name));
            }
        }
    } else if rest.len() != 1 || rest[0].name != "ret" || rest[0].offset != 16 || rest[0].size != 8
    {
        return wrong("ret");
    }
    Ok(())
}

/// Reads and checks the format of `call`'s enter and exit tracepoints (tracefs mounted).
pub fn check_call(call: &str) -> Result<(), String> {
    for enter in [true, false] {
        let dir = if enter { "enter" } else { "exit" };
        let path = format!("{TRACEFS}/events/syscalls/sys_{dir}_{call}/format");
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!("cannot read {path} (a kernel without CONFIG_FTRACE_SYSCALLS?): {e}")
        })?;
        check(call, &parse_format(&text), enter)?;
    }
    Ok(())
}

/// A field a program reads: name, byte offset, size.
pub type Expected = (&'static str, usize, usize);

/// The fields of the io_uring tracepoints the capture reads (`uring.bpf.h`), for
/// `io_uring_submit_req` and `io_uring_complete`.
pub const URING_FIELDS: [(&str, &[Expected]); 2] = [
    (
        "io_uring_submit_req",
        &[("req", 16, 8), ("opcode", 32, 1), ("flags", 40, 8)],
    ),
    ("io_uring_complete", &[("req", 16, 8), ("res", 32, 4)]),
];

/// Checks that `fields` hold each of `want` (name, offset, size).
pub fn check_fields(
    event: &str,
    fields: &[Field],
    want: &[(&str, usize, usize)],
) -> Result<(), String> {
    for (name, offset, size) in want {
        let found = fields.iter().find(|f| f.name == *name);
        if found.is_none_or(|f| f.offset != *offset || f.size != *size) {
            return Err(format!(
                "the kernel's {event} tracepoint lays out {name} otherwise than the capture \
                 reads it (uring.bpf.h)"
            ));
        }
    }
    Ok(())
}

/// Reads and checks the io_uring tracepoints' formats (tracefs mounted).
pub fn check_uring() -> Result<(), String> {
    for (event, want) in URING_FIELDS {
        let path = format!("{TRACEFS}/events/io_uring/{event}/format");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {path} (a kernel without io_uring?): {e}"))?;
        check_fields(event, &parse_format(&text), want)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTER: &str = "name: sys_enter_pwrite64\nID: 836\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\n\
\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n\
\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n\
\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n\
\tfield:loff_t pos;\toffset:40;\tsize:8;\tsigned:1;\n";

    #[test]
    fn a_format_file_gives_its_fields() {
        let fields = parse_format(ENTER);
        assert_eq!(fields.len(), 9);
        assert_eq!(
            fields[5],
            Field {
                name: "fd".into(),
                offset: 16,
                size: 8
            }
        );
        assert_eq!(fields[6].name, "buf");
        check("pwrite64", &fields, true).unwrap();
    }

    #[test]
    fn io_uring_fields_are_checked_by_name() {
        let text = "\tfield:void * req;\toffset:16;\tsize:8;\tsigned:0;\n\
\tfield:int res;\toffset:32;\tsize:4;\tsigned:1;\n";
        let (event, want) = URING_FIELDS[1];
        check_fields(event, &parse_format(text), want).unwrap();
        let moved = text.replace("offset:32", "offset:36");
        assert!(check_fields(event, &parse_format(&moved), want).is_err());
    }

    #[test]
    fn a_moved_field_is_refused() {
        let moved = ENTER.replace("offset:40", "offset:48");
        let err = check("pwrite64", &parse_format(&moved), true).unwrap_err();
        assert!(err.contains("argument pos"), "{err}");
        let exit = "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield:long ret;\toffset:24;\tsize:8;\tsigned:1;\n";
        assert!(check("pwrite64", &parse_format(exit), false).is_err());
        let good = exit.replace("offset:24", "offset:16");
        check("pwrite64", &parse_format(&good), false).unwrap();
    }
}
