//! What `/proc` says of a process: the executable it runs, its state, whether it is alive; and
//! the pid a pid file names. The daemons' start and checks and the undos that stop them ask here.

use std::path::Path;

/// The pid in the first line of `pidfile`, once that line is complete.
pub fn pid_in(pidfile: &Path) -> Option<i32> {
    let text = std::fs::read_to_string(pidfile).ok()?;
    let (first, _) = text.split_once('\n')?;
    first.trim().parse().ok()
}

/// The executable of `pid`, if it runs.
pub fn exe_of(pid: i32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .map(|p| {
            p.to_string_lossy()
                .trim_end_matches(" (deleted)")
                .to_string()
        })
}

/// The command line of `pid` (its arguments), if it runs.
pub fn command_line(pid: i32) -> Option<Vec<String>> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    // Each argument ends with a NUL; an empty argument is kept (`--set ""` is two).
    let cmdline = cmdline.strip_suffix(&[0]).unwrap_or(&cmdline);
    let args: Vec<String> = (cmdline.split(|b| *b == 0))
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    (!cmdline.is_empty()).then_some(args)
}

/// The state letter of `pid` (`R`, `S`, `T` stopped, `Z` zombie...), if it exists.
pub fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name in parentheses may hold spaces: the state follows the last ')'.
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// True while `pid` exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    state(pid).is_some_and(|s| s != 'Z')
}
