//! Jobs shared out among threads that each own something (a connection): the loaders of
//! TPC-C and TPC-H.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `jobs` in order on up to `threads` threads: each thread makes its state with `start`
/// (a connection), then takes the next job until none is left, a job failed, or `stop` is
/// raised. Returns the first error.
pub(crate) fn for_each_job<J, S, E>(
    jobs: &[J],
    threads: usize,
    stop: &AtomicBool,
    start: impl Fn() -> Result<S, E> + Sync,
    work: impl Fn(&mut S, &J) -> Result<(), E> + Sync,
) -> Result<(), E>
where
    J: Sync,
    E: Send,
{
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<E>> = Mutex::new(None);
    let threads = threads.clamp(1, jobs.len().max(1));
    let worker = || -> Result<(), E> {
        let mut state = start()?;
        while !failed.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
            let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) else {
                return Ok(());
            };
            work(&mut state, job)?;
        }
        Ok(())
    };
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                if let Err(e) = worker() {
                    failed.store(true, Ordering::Relaxed);
                    first_error
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get_or_insert(e);
                }
            });
        }
    });
    match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_runs_once_and_the_first_error_stops_the_rest() {
        let done = Mutex::new(Vec::new());
        let jobs: Vec<u32> = (0..50).collect();
        let ok: Result<(), String> = for_each_job(
            &jobs,
            4,
            &AtomicBool::new(false),
            || Ok(()),
            |_, &j| {
                done.lock().unwrap().push(j);
                Ok(())
            },
        );
        assert!(ok.is_ok());
        let mut done = done.into_inner().unwrap();
        done.sort();
        assert_eq!(done, jobs);

        let ran = AtomicUsize::new(0);
        let failed = for_each_job(
            &jobs,
            1,
            &AtomicBool::new(false),
            || Ok(()),
            |_, &j| {
                ran.fetch_add(1, Ordering::Relaxed);
                if j == 3 {
                    Err(format!("job {j}"))
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(failed.unwrap_err(), "job 3");
        assert_eq!(
            ran.load(Ordering::Relaxed),
            4,
            "no job after the failed one"
        );
        let refused: Result<(), String> = for_each_job(
            &jobs,
            2,
            &AtomicBool::new(true),
            || Err::<(), _>("no connection".to_string()),
            |_, _| Ok(()),
        );
        assert_eq!(refused.unwrap_err(), "no connection");
    }
}
