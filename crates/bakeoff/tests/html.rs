//! The HTML report in a real browser. A study of two `dir=` stacks and three repetitions runs
//! here; its report (and a run's `--export-html` page) is loaded by headless Chromium with
//! every network request sent to a proxy that does not exist. The DOM it rendered must hold
//! every chart with drawn data, Chromium's network log must show no request, the page must
//! load in under 2 s, and a screenshot is kept under target/ (CI keeps it as an artifact).
//! Without Chromium the browser checks skip; under `CI=true` they fail.

mod common;
use common::{bakeoff, quick_compare, tmp};
use predicates::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Debian's headless Chromium, or the full browser, if installed.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["chromium-headless-shell", "chromium"]
        .iter()
        .find_map(|name| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
}

/// Chromium, or `None` when the test skips (under `CI=true` a missing browser fails).
fn browser() -> Option<PathBuf> {
    let found = chromium();
    let what = "chromium-headless-shell or chromium (apt-get install chromium-headless-shell)";
    bakeoff_testkit::require(found.is_some(), what).then(|| found.unwrap())
}

/// The target directory, where the screenshot is kept.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the tmp directory is inside the target directory")
        .to_path_buf()
}

/// What Chromium did with a page.
struct Loaded {
    /// The DOM after loading (`--dump-dom`).
    dom: String,
    /// The URLs of every request in Chromium's network log.
    requests: Vec<String>,
}

/// Runs Chromium on `page` with `mode` (`--dump-dom`, `--screenshot=...`), no network (a dead
/// proxy) and a network log; its stdout and the URLs the log names. Fails after 60 s.
fn run_chromium(chrome: &Path, page: &Path, mode: &[&str]) -> Loaded {
    let scratch = tmp();
    let netlog = scratch.path().join("netlog.json");
    let mut child = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.path().join("profile").display()
        ))
        .args([
            "--proxy-server=127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
        ])
        .arg(format!("--log-net-log={}", netlog.display()))
        .args(mode)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", chrome.display()));
    // Read the DOM while Chromium writes it: a page larger than the pipe's buffer would block
    // Chromium (and this loop) otherwise.
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut dom = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut dom).map(|_| dom)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{} did not finish {mode:?} in 60 s", chrome.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let dom = reader
        .join()
        .expect("the reader thread")
        .expect("Chromium's output");
    assert!(status.success(), "{} {mode:?}: {status}", chrome.display());
    let log: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&netlog).unwrap_or_else(|e| panic!("no network log: {e}")),
    )
    .expect("the network log is JSON");
    let requests = log["events"]
        .as_array()
        .expect("the network log has events")
        .iter()
        .filter_map(|e| e["params"]["url"].as_str().map(String::from))
        .collect();
    Loaded {
        dom: String::from_utf8_lossy(&dom).into_owned(),
        requests,
    }
}

/// Widths Chromium laid `page` out with at a 1,400 px wide window: `probe` is a script
/// expression giving an array of numbers, read after the page loaded.
fn widths_at_1400(chrome: &Path, page: &Path, probe: &str) -> Vec<f64> {
    let copy = page.with_extension("widths.html");
    let script = format!(
        "<script>addEventListener('load', () => \
         document.body.dataset.widths = ({probe}).join(','))</script></body>"
    );
    let html = std::fs::read_to_string(page).unwrap();
    std::fs::write(&copy, html.replace("</body>", &script)).unwrap();
    let loaded = run_chromium(chrome, &copy, &["--dump-dom", "--window-size=1400,3000"]);
    let widths = loaded
        .dom
        .split("data-widths=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("the widths were not recorded: {:.2000}", loaded.dom));
    widths.split(',').map(|w| w.parse().unwrap()).collect()
}

/// The page as written holds nothing a browser would fetch: no `src`/`href`/`url(` and no URL
/// but the SVG namespace.
fn assert_self_contained(html: &str) {
    for needle in ["src=", "href=", "url(", "@import", "<link"] {
        assert!(!html.contains(needle), "the page contains {needle}");
    }
    let namespaces = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
    assert_eq!(
        html.matches("http").count(),
        namespaces,
        "a URL in the page"
    );
}

/// How many charts the DOM holds, checking that each is an `<svg>` with drawn data: a bar
/// (a `<rect>` beside the background) or a line (a `<polyline>` of several points).
fn drawn_charts(dom: &str) -> usize {
    let vdom = tl::parse(dom, tl::ParserOptions::default()).expect("the DOM parses");
    let parser = vdom.parser();
    let figures = vdom
        .query_selector("figure.chart")
        .expect("a selector")
        .collect::<Vec<_>>();
    for (i, handle) in figures.iter().enumerate() {
        let tag = handle.get(parser).unwrap().as_tag().unwrap();
        let count = |sel: &str, ok: &dyn Fn(&tl::HTMLTag) -> bool| {
            tag.query_selector(parser, sel)
                .expect("a selector")
                .filter_map(|h| h.get(parser)?.as_tag().cloned())
                .filter(|t| ok(t))
                .count()
        };
        let attr = |t: &tl::HTMLTag, name: &str| -> String {
            let v = t.attributes().get(name).flatten();
            v.map(|b| b.as_utf8_str().into_owned()).unwrap_or_default()
        };
        let number = |t: &tl::HTMLTag, name: &str| attr(t, name).parse::<f64>().unwrap_or(0.0);
        assert_eq!(count("svg", &|_| true), 1, "figure {i} holds one svg");
        let bars = count("rect", &|t| {
            number(t, "width") > 0.0 && number(t, "height") > 0.0
        });
        let lines = count("polyline", &|t| {
            attr(t, "points").split_whitespace().count() >= 2
        });
        assert!(bars > 1 || lines > 0, "figure {i} draws no data");
    }
    figures.len()
}

/// A quick study into `root/results`: randread on two `dir=` stacks, three repetitions.
fn study(root: &Path) -> PathBuf {
    let (a, b, out) = (root.join("a"), root.join("b"), root.join("results"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    quick_compare(&a, &b, 3, &["--out", out.to_str().unwrap()]).success();
    out
}

/// `bakeoff report RESULTS --format FORMAT --out OUT`, which prints nothing on success.
fn report_to(format: &str, out: &Path, results: &Path) -> assert_cmd::assert::Assert {
    bakeoff()
        .args(["report", "--format", format, "--out"])
        .args([out, results])
        .assert()
}

/// Files in `dir`.
fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

#[test]
fn a_real_studys_report_renders_its_charts_in_a_browser_without_the_network() {
    let d = tmp();
    let results = study(d.path());
    let page = d.path().join("report.html");
    let charts = d.path().join("charts");
    report_to("html", &page, &results).success().stdout("");
    report_to("svg", &charts, &results).success().stdout("");
    let expected = count_files(&charts);
    assert!(
        charts.join("read_iops.svg").is_file() && charts.join("relative_read_iops.svg").is_file()
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    assert!(html.len() < 2 << 20, "{} bytes", html.len());
    assert_eq!(
        html.matches("<figure class=\"chart\"").count(),
        expected,
        "the svg format's charts"
    );
    assert!(html.contains("(baseline)") && html.contains("id=\"comparison-table\""));
    let Some(chrome) = browser() else { return };

    // Loading time as the browser measures it, on a copy that records it (the report itself
    // needs no script).
    let timed = d.path().join("timed.html");
    let probe = "<script>addEventListener('load', () => \
                 document.body.dataset.loadMs = performance.now())</script></body>";
    std::fs::write(&timed, html.replace("</body>", probe)).unwrap();
    let loaded = run_chromium(&chrome, &timed, &["--dump-dom"]);
    assert_eq!(
        drawn_charts(&loaded.dom),
        expected,
        "every chart rendered with its data"
    );
    assert!(
        loaded.requests.is_empty(),
        "requests: {:?}",
        loaded.requests
    );
    let ms: f64 = loaded
        .dom
        .split("data-load-ms=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|v| v.parse().ok())
        .expect("the load time was recorded");
    assert!(ms < 2000.0, "the page took {ms:.0} ms to load");
    eprintln!(
        "report: {} bytes, {expected} charts, loaded in {ms:.0} ms",
        html.len()
    );

    // It opens with the answer, and at a 1,400 px window nothing is wider than the window,
    // the comparison table included (its box would scroll otherwise).
    assert!(
        html.contains("<p class=\"answer\" id=\"answer\">"),
        "no answer first"
    );
    let w = widths_at_1400(
        &chrome,
        &page,
        "[document.documentElement.scrollWidth, \
          document.getElementById('comparison-table').parentElement.scrollWidth, \
          document.getElementById('comparison-table').parentElement.clientWidth]",
    );
    assert!(w[0] <= 1400.0, "the page is {} px wide", w[0]);
    assert!(
        w[1] <= w[2],
        "the table is {} px in a box of {} px",
        w[1],
        w[2]
    );

    let shot = target_dir().join("html-report.png");
    let _ = std::fs::remove_file(&shot);
    let screenshot = format!("--screenshot={}", shot.display());
    let loaded = run_chromium(&chrome, &page, &[&screenshot, "--window-size=1400,3000"]);
    assert!(
        loaded.requests.is_empty(),
        "requests: {:?}",
        loaded.requests
    );
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("{}: {e}", shot.display()));
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
}

#[test]
fn a_runs_export_html_renders_its_charts_and_provenance_in_a_browser() {
    let d = tmp();
    let (data, page) = (d.path().join("data"), d.path().join("run.html"));
    std::fs::create_dir(&data).unwrap();
    bakeoff()
        .args(["run", "randread", "--quiet", "--warm", "--target"])
        .arg(&data)
        .args(["--set", "engine=null,size=1m,runtime=2s,ramp_time=1s"])
        .arg("--export-html")
        .arg(&page)
        .assert()
        .success()
        .stdout(predicate::str::contains("randread on"));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    for part in [
        "id=\"summary\"",
        "<details id=\"settings\">",
        "<details id=\"environment\">",
    ] {
        assert!(html.contains(part), "{part}");
    }
    let charts = html.matches("<figure class=\"chart\"").count();
    assert!(
        charts >= 4,
        "throughput, latency, CPU busy and by mode at least: {charts}"
    );
    assert!(html.contains("id=\"chart-latency_percentiles\""));
    let Some(chrome) = browser() else { return };
    assert_renders(&chrome, &page, charts);
    // The summary is not clipped: its block holds all of its text at a 1,400 px window.
    let w = widths_at_1400(
        &chrome,
        &page,
        "[document.documentElement.scrollWidth, document.querySelector('pre.summary').scrollWidth, \
          document.querySelector('pre.summary').clientWidth]",
    );
    assert!(w[0] <= 1400.0, "the page is {} px wide", w[0]);
    assert!(
        w[1] <= w[2],
        "the summary is {} px in a block of {} px",
        w[1],
        w[2]
    );
    let shot = target_dir().join("html-run.png");
    let screenshot = format!("--screenshot={}", shot.display());
    run_chromium(&chrome, &page, &[&screenshot, "--window-size=1400,1600"]);
    assert!(std::fs::read(&shot).is_ok_and(|png| png.starts_with(b"\x89PNG")));
}

/// Chromium renders `page` with `charts` charts drawn and asks for nothing.
fn assert_renders(chrome: &Path, page: &Path, charts: usize) {
    let loaded = run_chromium(chrome, page, &["--dump-dom"]);
    assert_eq!(drawn_charts(&loaded.dom), charts, "charts drawn");
    assert!(
        loaded.requests.is_empty(),
        "requests: {:?}",
        loaded.requests
    );
}

/// A comparison of a recipe of three phases (a write, a sync, a tar of what was written) on
/// two `dir=` stacks, two repetitions, into `root/results`.
fn phase_study(root: &Path) -> PathBuf {
    let (a, b, out) = (root.join("a"), root.join("b"), root.join("results"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let recipe = root.join("tiny.toml");
    let text = "[[phase]]\nname = \"write\"\nrun = \"head -c 2m /dev/urandom > f\"\n\
                [[phase]]\nname = \"flush\"\naction = \"sync\"\n\
                [[phase]]\nname = \"tar\"\nrun = \"tar cf f.tar f\"\n";
    std::fs::write(&recipe, text).unwrap();
    bakeoff()
        .env("BAKEOFF_STATE_DIR", root.join("state"))
        .args(["compare", "--warm", "--repeat", "2", "--workload"])
        .arg(&recipe)
        .arg("--images")
        .arg(root.join("images"))
        .arg("--stack")
        .arg(format!("dir={}", a.display()))
        .arg("--stack")
        .arg(format!("dir={}", b.display()))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    out
}

#[test]
fn a_recipe_comparisons_report_shows_its_phases_as_grouped_bars_in_a_browser() {
    let d = tmp();
    let results = phase_study(d.path());
    let (page, charts) = (d.path().join("phases.html"), d.path().join("charts"));
    report_to("html", &page, &results).success().stdout("");
    report_to("svg", &charts, &results).success().stdout("");
    let expected = count_files(&charts);
    let svg = std::fs::read_to_string(charts.join("phases_real_s.svg")).unwrap();
    for phase in ["write", "flush", "tar", "(baseline)"] {
        assert!(svg.contains(phase), "{phase} in the time chart");
    }
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("id=\"phase-table-1\"") && !html.contains("comparison-table"));
    assert_eq!(html.matches("<figure class=\"chart\"").count(), expected);
    assert!(
        (1..=3).contains(&expected),
        "time, and device writes and CPU where measured: {expected}"
    );
    let Some(chrome) = browser() else { return };
    assert_renders(&chrome, &page, expected);
    let shot = target_dir().join("html-phases.png");
    let _ = std::fs::remove_file(&shot);
    let screenshot = format!("--screenshot={}", shot.display());
    run_chromium(&chrome, &page, &[&screenshot, "--window-size=1400,2000"]);
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("{}: {e}", shot.display()));
    assert!(png.starts_with(b"\x89PNG"), "{}", shot.display());
}

#[test]
fn report_out_checks_its_path_before_reading_and_markdown_links_its_charts() {
    let d = tmp();
    let results = study(d.path());
    let missing = d.path().join("no/such/dir/r.html");
    report_to("html", &missing, &results)
        .code(2)
        .stderr(predicate::str::contains("there is no directory"));
    report_to("html", d.path(), &results)
        .code(2)
        .stderr(predicate::str::contains("is a directory"));
    bakeoff()
        .args(["report", "--format", "svg"])
        .arg(&results)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--out CHARTS_DIR"));
    // Markdown on stdout has no charts; with --out its charts are files beside it, linked.
    let md = d.path().join("study.md");
    let printed = bakeoff()
        .args(["report", "--format", "markdown"])
        .arg(&results)
        .assert()
        .success();
    assert!(!String::from_utf8_lossy(&printed.get_output().stdout).contains("!["));
    report_to("markdown", &md, &results).success().stdout("");
    let text = std::fs::read_to_string(&md).unwrap();
    let links: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("![")?.split("](").nth(1)?.strip_suffix(')'))
        .collect();
    assert!(links.contains(&"study-read_iops.svg"), "{links:?}");
    for link in &links {
        let svg = std::fs::read_to_string(d.path().join(link)).unwrap();
        assert!(svg.starts_with("<svg"), "{link}");
    }
    // The answer first, then the table. (Which answer is the null engine's A/A comparison's
    // on a busy machine: a CI run beside the database lane said ×1.78 once.)
    let (answer, table) = text.split_once("\n\n").unwrap();
    assert!(
        answer.starts_with("**") && answer.contains("read IOPS"),
        "{answer}"
    );
    assert!(table.starts_with("| cell | runs |"), "{text:.300}");
    // compare refuses --format svg before running anything.
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    quick_compare(
        &a,
        &b,
        1,
        &[
            "--format",
            "svg",
            "--out",
            d.path().join("r2").to_str().unwrap(),
        ],
    )
    .code(2)
    .stderr(predicate::str::contains(
        "--format svg writes one file per chart",
    ));
    assert!(!d.path().join("r2").exists());
}
