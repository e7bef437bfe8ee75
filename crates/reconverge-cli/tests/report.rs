//! The HTML reports in a real browser: `reconverge report` and `compare --html` open in headless
//! Chromium without console errors, every plot and CFG has a non-empty bounding box and drawn marks, the
//! screenshot is not blank, and with every mechanism of the registry each series keeps one look (colour
//! and dash or hatching, as the browser resolves them) that no other series shares. Chromium comes from
//! `RECONVERGE_CHROMIUM` or the PATH (`.ci/run` installs the Debian package).

mod common;

use common::{ok, reconverge};

use reconverge_mechanism::Mechanism;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

fn chromium() -> String {
    if let Ok(c) = std::env::var("RECONVERGE_CHROMIUM") {
        return c;
    }
    for c in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return c.to_string();
        }
    }
    panic!("no Chromium found: install the Debian package `chromium` (.ci/run does) or set RECONVERGE_CHROMIUM");
}

/// Measures every plot in the page: a copy of it with a script appended that writes, for each
/// `figure.plot svg` and CFG `svg`, its rendered size and its count of drawn marks; and, per series, how
/// the browser draws its lines (stroke colour and dashes) and its bars (fill, or the hatched pattern's
/// colour and marks).
const PROBE: &str = r#"<script>
const plots = [...document.querySelectorAll('figure.plot svg, .cfg svg')].map(s => {
  const r = s.getBoundingClientRect();
  const data = s.closest('.cfg') ? 'rect, path, ellipse' : 'polyline.series, rect.bar, polygon.area';
  return [Math.round(r.width), Math.round(r.height), s.querySelectorAll(data).length];
});
const look = e => {
  const cs = getComputedStyle(e);
  if (e.tagName === 'polyline') return 'line ' + cs.stroke + ' ' + cs.strokeDasharray;
  const m = /url\("?#([^")]+)"?\)/.exec(cs.fill);
  if (!m) return 'bar ' + cs.fill;
  const p = document.getElementById(m[1]);
  if (!p) return 'bar missing pattern ' + m[1];
  return 'bar ' + getComputedStyle(p.querySelector('rect')).fill + ' ' + p.querySelector('g').innerHTML;
};
const series = {};
document.querySelectorAll('polyline.series[data-series], rect.bar[data-series]').forEach(e => {
  const n = e.dataset.series, l = look(e);
  series[n] = series[n] || [];
  if (!series[n].includes(l)) series[n].push(l);
});
const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify({plots, series});
document.body.appendChild(pre);
</script></body>"#;

struct Opened {
    /// `[width, height, data marks]` per plot (lines, bars and areas of a plot; blocks and edges of a CFG).
    plots: Vec<[u64; 3]>,
    /// Per series: the distinct looks of its marks (`line COLOUR DASHES`, `bar FILL [HATCHING]`).
    series: BTreeMap<String, Vec<String>>,
    /// Browser log lines that report page errors.
    errors: Vec<String>,
    /// Share of screenshot pixels that are not the white background.
    ink: f64,
    /// Whether the first palette colour (the first mechanism's) appears.
    palette: bool,
}

fn open(html: &Path, dir: &Path) -> Opened {
    let chrome = chromium();
    let text = std::fs::read_to_string(html).expect("report");
    assert!(!text.contains("<script"), "the report itself needs no JavaScript");
    let probed = dir.join("probed.html");
    std::fs::write(&probed, text.replace("</body>", PROBE)).expect("write");
    let url = format!("file://{}", probed.display());
    let common = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,2400"];
    let dom = Command::new(&chrome)
        .args(common)
        .args(["--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000", "--dump-dom", &url])
        .output()
        .expect("chromium runs");
    let stdout = String::from_utf8_lossy(&dom.stdout);
    let start = stdout.find("<pre id=\"probe\">").expect("the probe ran") + "<pre id=\"probe\">".len();
    let end = start + stdout[start..].find("</pre>").expect("probe end");
    let probe = stdout[start..end].replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    let v: serde_json::Value = serde_json::from_str(&probe).expect("probe json");
    let plots: Vec<[u64; 3]> = serde_json::from_value(v["plots"].clone()).expect("plots");
    let series: BTreeMap<String, Vec<String>> = serde_json::from_value(v["series"].clone()).expect("series");
    let errors = String::from_utf8_lossy(&dom.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("Failed to load"))
        .map(str::to_string)
        .collect();
    let shot = dir.join("shot.png");
    let s = Command::new(&chrome)
        .args(common)
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium runs");
    assert!(shot.exists(), "no screenshot: {}", String::from_utf8_lossy(&s.stderr));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).expect("png")));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    let px = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let n = pixels.len() / px;
    let mut ink = 0usize;
    let mut palette = false;
    for p in pixels.chunks(px) {
        if p[0] < 235 || p[1] < 235 || p[2] < 235 {
            ink += 1;
        }
        // #4e79a7, give or take antialiasing.
        palette |= p[0].abs_diff(0x4e) < 6 && p[1].abs_diff(0x79) < 6 && p[2].abs_diff(0xa7) < 6;
    }
    Opened { plots, series, errors, ink: ink as f64 / n as f64, palette }
}

fn check(o: &Opened, at_least: usize) {
    assert!(o.errors.is_empty(), "browser errors: {:?}", o.errors);
    assert!(o.plots.len() >= at_least, "{} plots, expected at least {at_least}", o.plots.len());
    for (i, [w, h, marks]) in o.plots.iter().enumerate() {
        assert!(*w >= 300 && *h >= 100, "plot {i} renders {w}x{h}");
        assert!(*marks >= 1, "plot {i} draws no data");
    }
    assert!(o.ink > 0.05, "the screenshot is {:.1}% non-background", 100.0 * o.ink);
    assert!(o.palette, "no mark in the first mechanism's colour");
}

/// Every series in `names` is drawn, each keeps one look for its lines and one for its bars in every plot
/// of the page, and no two series share a look.
fn check_distinct(o: &Opened, names: &[&str]) {
    let mut taken: BTreeMap<&str, &str> = BTreeMap::new();
    for n in names {
        let looks = o.series.get(*n).unwrap_or_else(|| panic!("{n} is drawn: {:?}", o.series.keys()));
        for kind in ["line ", "bar "] {
            let of_kind: Vec<&String> = looks.iter().filter(|l| l.starts_with(kind)).collect();
            assert!(of_kind.len() <= 1, "{n} is drawn in several looks: {of_kind:?}");
            if let Some(l) = of_kind.first() {
                assert!(!l.contains("missing pattern"), "{n}: {l}");
                if let Some(other) = taken.insert(l.as_str(), n) {
                    panic!("{n} and {other} look the same: {l}");
                }
            }
        }
    }
}

/// The `data-style` of each series named in `html` (every mark and legend key): one per series, no two
/// series alike.
fn page_styles(html: &str) -> BTreeMap<String, String> {
    let mut styles: BTreeMap<String, String> = BTreeMap::new();
    for part in html.split("data-series=\"").skip(1) {
        let name = &part[..part.find('"').expect("end of name")];
        let rest = part.strip_prefix(name).and_then(|r| r.strip_prefix("\" data-style=\"")).expect("a style");
        let style = &rest[..rest.find('"').expect("end of style")];
        let was = styles.insert(name.to_string(), style.to_string());
        assert!(was.is_none_or(|w| w == style), "{name} in two styles");
    }
    let distinct: BTreeSet<&String> = styles.values().collect();
    assert_eq!(distinct.len(), styles.len(), "two series share a style: {styles:?}");
    styles
}

/// The top y tick of each plot in the part of `html` from `from` to the next `<h2>`.
fn y_tops(html: &str, from: &str) -> Vec<String> {
    let start = html.find(from).expect("the section");
    let section = &html[start + from.len()..];
    let section = &section[..section.find("<h2>").unwrap_or(section.len())];
    section
        .split("<figure")
        .skip(1)
        .map(|f| {
            let ticks: Vec<&str> = f
                .split("text-anchor=\"end\">")
                .skip(1)
                .filter_map(|t| t.split('<').next())
                .filter(|t| t.ends_with('%') || t.parse::<f64>().is_ok())
                .collect();
            ticks.last().expect("y ticks").to_string()
        })
        .collect()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("reconverge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The files `report` left in `dir` besides the page and the test's own.
fn trace_files(dir: &Path) -> Vec<String> {
    let files = std::fs::read_dir(dir).expect("dir").flatten();
    let names = files.map(|e| e.file_name().to_string_lossy().into_owned());
    names.filter(|n| n.ends_with(".trace.json")).collect()
}

#[rustfmt::skip]
const MANDELBROT: [&str; 22] = [
    "report", "kernels/ptx/sm_80-nofma/mandelbrot.ptx", "--grid", "2,2", "--block", "20,12",
    "--arg", "zeros:i32:874", "--arg", "38", "--arg", "23", "--arg", "-2.0", "--arg", "-1.125",
    "--arg", "0.0625", "--arg", "0.09375", "--arg", "64",
];

#[test]
fn reports_render_in_a_real_browser() {
    let dir = temp_dir("report-test");
    let run_html = dir.join("mandelbrot.html");
    #[rustfmt::skip]
    let args = [&MANDELBROT[..], &[
        "--mechanism", "pdom", "--mechanism", "tbc", "--mechanism", "stackless-dcp",
        "--source", "kernels/src/mandelbrot.cu", "-o", run_html.to_str().expect("utf-8 path"),
    ]].concat();
    let (code, _, err) = reconverge(&args);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note:"), "the CUDA source was given: {err}");
    let html = std::fs::read_to_string(&run_html).expect("report");
    for m in ["pdom", "tbc", "stackless-dcp"] {
        assert!(html.contains(&format!(">{m}<")), "{m} named in the report");
    }
    assert!(html.contains("mandelbrot.cu"), "the heat map shows the CUDA source");
    // No timeline files unless --timeline asks for them.
    assert!(trace_files(&dir).is_empty(), "{:?}", trace_files(&dir));
    assert!(!html.contains("trace.json"));
    // Over cycles (a timed run); thread IPC beside IPC; the source line before its counts.
    assert!(html.contains("x: simulated cycles") && html.contains(">cycle</text>"));
    assert!(html.contains(">thread IPC</th>"));
    assert!(html.contains("<tr><th>line</th><th style=\"text-align:left\">source</th><th>pdom</th>"));
    assert!(html.contains("</td><td class=\"code\">"), "the source column comes second");
    // The heat map says what "divergent" means once threads exit, the CFG which lines it numbers.
    assert!(html.contains("Threads that have exited no longer count as live"));
    assert!(html.contains("Line numbers in the CFG are PTX lines") && html.contains("PTX line "));
    // One y scale for every active-lane histogram.
    let tops = y_tops(&html, "<h2>Active lanes per issued instruction</h2>");
    assert!(tops.len() == 3 && tops.iter().all(|t| *t == tops[0]), "{tops:?}");
    explains_its_numbers(&html, &args);
    // 2 time plots, 3 active-lane breakdowns, 3 histograms, the stall bars and 3 CFGs.
    let o = open(&run_html, &dir);
    check(&o, 12);
    check_distinct(&o, &["pdom", "tbc", "stackless-dcp"]);
    let cmp_html = dir.join("compare.html");
    #[rustfmt::skip]
    ok(&[
        "compare", "--kernel", "fir", "--kernel", "nested_loops", "--kernel", "bfs",
        "--mechanism", "pdom", "--mechanism", "stackless-dcp", "--mechanism", "dwf",
        "--html", cmp_html.to_str().expect("utf-8 path"),
    ]);
    let html = std::fs::read_to_string(&cmp_html).expect("compare");
    assert!(html.contains("Thread IPC (") && html.contains(">thread IPC</th>"));
    // Speedup, SIMD efficiency, IPC, thread IPC.
    let o = open(&cmp_html, &dir);
    check(&o, 4);
    check_distinct(&o, &["pdom", "stackless-dcp", "dwf"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The page explains its numbers (the report of `args`, timed on gtx480, under pdom, tbc and
/// stackless-dcp): the configuration, issues by active lanes over the cycles, the timing model's
/// statistics, each mechanism's counters, idle cycles per line summing to `run --json`'s stall cycles but
/// the no-warp ones, and the branches.
fn explains_its_numbers(html: &str, args: &[&str]) {
    assert!(html.contains("<summary>GPU configuration gtx480: 15 SMs") && html.contains("<pre class=\"config\">"));
    assert!(html.contains("num_sms = 15"), "the configuration as TOML");
    // The breakdown over time: eight classes of four lanes, a panel per mechanism over cycles.
    let lanes = html.find("<h2>Issued instructions by active lanes over the run</h2>").expect("the breakdown");
    let lanes = &html[lanes..];
    assert!(
        lanes.contains(">W1–4</span>")
            && lanes.contains(">W29–32</span>")
            && lanes.contains(">mechanism instructions</span>")
    );
    assert!(
        lanes.contains("warp instructions per cycle</text>") && lanes.contains("class=\"area\" data-layer=\"W29–32\"")
    );
    // The timing model's numbers side by side, and each mechanism's own counters (tbc compacts warps).
    assert!(html.contains("<h3>The timing model's statistics</h3>") && html.contains("<td>L1 hit rate</td>"));
    let cards = html.find("<h3>Each mechanism's own counters</h3>").expect("the counters");
    let tbc = &html[cards..][html[cards..].find("<th colspan=\"2\">tbc</th>").expect("tbc's card")..];
    assert!(tbc.contains(">compactions</td>"), "tbc counts its compactions");
    // Branches as `run --branches` prints them.
    assert!(html.contains("<h2>Branches</h2>") && html.contains("<th>reconverges at</th>"));
    // Idle cycles per line: pdom's column totals run --json's stall cycles but the no-warp ones.
    let mut run = vec!["run"];
    run.extend(args[1..].iter().take_while(|a| **a != "--mechanism").copied());
    run.extend(["--mechanism", "pdom", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&run)).expect("run --json");
    let s = &v["stall_cycles"];
    let waited: u64 = ["memory", "scoreboard", "pipeline", "barrier", "mechanism"]
        .iter()
        .map(|k| s[k].as_u64().expect("a stall count"))
        .sum();
    assert!(waited > 0, "{s}");
    let section = html.find("<h2>Idle cycles per line of").expect("the idle cycles per line");
    let total = &html[section..][html[section..].find("(total: every line, and no line)</td>").expect("the totals")..];
    let first = total.split("<td class=\"sb\"").nth(1).expect("pdom's total");
    let first = first.split_once('>').and_then(|(_, c)| c.split('<').next()).expect("a number");
    assert_eq!(first, waited.to_string(), "pdom's idle cycles per line sum to its stall cycles but no-warp ones");
}

/// Every mechanism of the registry (28) on one page: every series keeps one colour and pattern, no two
/// alike, both in the page's markup and as the browser draws them; the plots over the run become small
/// multiples with shared axes, and the histograms share their scale.
#[test]
fn every_mechanism_on_one_page_stays_distinct() {
    let dir = temp_dir("report-many");
    let names: Vec<&str> = Mechanism::ALL.iter().map(|m| m.name()).collect();
    assert!(names.len() >= 25);
    let mechs: Vec<&str> = names.iter().flat_map(|n| ["--mechanism", n]).collect();
    let run_html = dir.join("fig2.html");
    #[rustfmt::skip]
    let args = [&[
        "report", "kernels/handwritten/seed004_fig2.ptx", "--grid", "2", "--block", "64",
        "--arg", "zeros:i32:128", "--arg", "1", "-o", run_html.to_str().expect("utf-8 path"),
    ][..], &mechs].concat();
    ok(&args);
    let html = std::fs::read_to_string(&run_html).expect("report");
    let styles = page_styles(&html);
    assert_eq!(styles.len(), names.len(), "{styles:?}");
    assert!(html.contains("<div class=\"panels\">"), "small multiples");
    let tops = y_tops(&html, "<h2>Active lanes per issued instruction</h2>");
    assert!(tops.len() == names.len() && tops.iter().all(|t| *t == tops[0]), "{tops:?}");
    // 2 × 28 panels over the run, 28 histograms, the stall bars, 28 CFGs.
    let o = open(&run_html, &dir);
    check(&o, 3 * names.len());
    check_distinct(&o, &names);
    let cmp_html = dir.join("compare.html");
    let cmp = [&["compare", "--kernel", "fir", "--kernel", "nested_loops"][..], &mechs].concat();
    ok(&[&cmp[..], &["--html", cmp_html.to_str().expect("utf-8 path")]].concat());
    let html = std::fs::read_to_string(&cmp_html).expect("compare");
    assert_eq!(page_styles(&html).len(), names.len());
    let o = open(&cmp_html, &dir);
    check(&o, 4);
    check_distinct(&o, &names);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `report` without the `.cu` its PTX names says so on standard error and in the page, and shows PTX
/// lines; `--timeline` writes a trace file per mechanism and links it.
#[test]
fn report_says_when_it_shows_ptx_lines_and_writes_timelines_on_request() {
    let dir = temp_dir("report-notes");
    let html_path = dir.join("m.html");
    let out = html_path.to_str().expect("utf-8 path");
    // The PTX names a CUDA file that is nowhere to be found.
    let ptx = std::fs::read_to_string(common::root().join(MANDELBROT[1])).expect("the kernel");
    let moved = dir.join("mandelbrot.ptx");
    std::fs::write(&moved, ptx.replace("/kernels/src/mandelbrot.cu", "/nowhere/mandelbrot.cu")).expect("write");
    let mut args = MANDELBROT.to_vec();
    args[1] = moved.to_str().expect("utf-8 path");
    let args = [&args[..], &["--mechanism", "pdom", "--functional", "-o", out]].concat();
    let (code, _, err) = reconverge(&args);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("note:") && err.contains("--source FILE.cu") && err.contains("PTX lines"), "{err}");
    let html = std::fs::read_to_string(&html_path).expect("report");
    assert!(html.contains("<p class=\"warn\">") && html.contains("--source FILE.cu"), "the page says so too");
    assert!(html.contains("Lines are PTX lines."));
    // Functional: no cycles, and the axis says what it counts.
    assert!(html.contains("a functional run has no cycles") && html.contains(">issued warp instructions</text>"));
    assert!(trace_files(&dir).is_empty());
    #[rustfmt::skip]
    ok(&[
        "report", "kernels/handwritten/seed004_fig2.ptx", "--grid", "2", "--block", "64",
        "--arg", "zeros:i32:128", "--arg", "1", "--mechanism", "pdom", "--mechanism", "dwf:pc",
        "--timeline", "-o", out,
    ]);
    let mut files = trace_files(&dir);
    files.sort();
    assert_eq!(files, ["m.dwf-pc.trace.json", "m.pdom.trace.json"]);
    let html = std::fs::read_to_string(&html_path).expect("report");
    assert!(html.contains("<a href=\"m.pdom.trace.json\">"));
    let text = std::fs::read_to_string(dir.join(&files[1])).expect("timeline");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert!(v["traceEvents"].as_array().is_some_and(|e| e.len() > 100));
    assert_eq!(v["otherData"]["time_unit"], "cycle");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same report twice is the same bytes (the control-flow graphs' drawings included, whose layout
/// crate keeps its styles in a hash map).
#[test]
fn the_same_report_is_the_same_bytes() {
    let dir = temp_dir("report-same");
    // A drawing per mechanism, two style rules each: three pages of eight drawings would agree by chance
    // once in 65,536 runs, were their order left to the hash map.
    let mechanisms = ["pdom", "tbc", "dwf", "its", "minpc", "sbi", "harp", "stackless"];
    let pages: Vec<Vec<u8>> = ["a.html", "b.html", "c.html"]
        .iter()
        .map(|name| {
            let path = dir.join(name);
            let mut args = MANDELBROT.to_vec();
            for m in mechanisms {
                args.extend(["--mechanism", m]);
            }
            args.extend(["--functional", "-o", path.to_str().expect("utf-8 path")]);
            ok(&args);
            std::fs::read(&path).expect("report")
        })
        .collect();
    let styles = String::from_utf8_lossy(&pages[0]).matches("font-family: Times").count();
    assert!(styles >= 2 * mechanisms.len(), "the page draws a graph per mechanism ({styles} style rules)");
    assert!(pages.iter().all(|p| *p == pages[0]), "runs of one report differ");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `trace --perfetto`: a trace-event file with a process per SM, scheduler tracks with idle slices by
/// cause, warp tracks with one-cycle issue slices (pc, line, active lanes, structure size), a SIMD
/// counter; `--window` bounds the cycles and `--max-events` the size, with a message.
#[test]
fn timelines_in_the_chrome_trace_format() {
    let dir = std::env::temp_dir().join(format!("reconverge-perfetto-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("fig2.json");
    let path = file.to_str().expect("utf-8 path");
    #[rustfmt::skip]
    let base = [
        "trace", "kernels/handwritten/seed004_fig2.ptx", "--grid", "2", "--block", "64",
        "--arg", "zeros:i32:128", "--arg", "1", "--mechanism", "stackless-dcp", "--perfetto", path,
    ];
    let said = ok(&base);
    assert!(said.contains("events of kernel fig2 under stackless-dcp"), "{said}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("written")).expect("json");
    let ev = v["traceEvents"].as_array().expect("events");
    let count = |ph: &str| ev.iter().filter(|e| e["ph"] == ph).count();
    assert!(count("X") > 100 && count("C") >= 1 && count("M") >= 4);
    let names: Vec<&str> = ev.iter().filter(|e| e["ph"] == "M").filter_map(|e| e["args"]["name"].as_str()).collect();
    assert!(names.iter().any(|n| n.starts_with("SM ")) && names.iter().any(|n| n.starts_with("scheduler")));
    assert!(names.iter().any(|n| n.starts_with("CTA 0 warp 0")));
    let issue = ev.iter().find(|e| e["ph"] == "X" && e["args"]["pc"].is_u64()).expect("an issue slice");
    for k in ["line", "active_lanes", "structure"] {
        assert!(!issue["args"][k].is_null(), "issue slices carry {k}");
    }
    assert!(ev.iter().any(|e| e["ph"] == "X" && e["name"].as_str().is_some_and(|n| n.starts_with("idle: "))));
    // One trace microsecond is one cycle: no `displayTimeUnit` that says otherwise, the file says so, and
    // an open window's end is null (JavaScript cannot hold 2^64 - 1 exactly); no integer is unsafe.
    assert!(v.get("displayTimeUnit").is_none(), "{}", v["displayTimeUnit"]);
    assert_eq!(v["otherData"]["time_unit"], "cycle");
    assert!(v["otherData"]["time_note"].as_str().is_some_and(|n| n.contains("1 µs in the viewer is 1 cycle")));
    assert!(v["otherData"]["window"][1].is_null(), "{}", v["otherData"]["window"]);
    fn safe(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Number(n) => n.as_u64().is_none_or(|x| x < 1 << 53),
            serde_json::Value::Array(a) => a.iter().all(safe),
            serde_json::Value::Object(o) => o.values().all(safe),
            _ => true,
        }
    }
    assert!(safe(&v), "an integer above 2^53 - 1");
    // The same timeline on any number of host threads.
    let one = std::fs::read(&file).expect("written");
    ok(&[&base[..], &["--threads", "1"]].concat());
    assert!(one == std::fs::read(&file).expect("written"), "the timeline depends on --threads");
    // Bounds.
    let said = ok(&[&base[..], &["--window", "400:800", "--max-events", "50"]].concat());
    assert!(said.contains("were left out by --max-events 50"), "{said}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("written")).expect("json");
    let xs: Vec<u64> = v["traceEvents"].as_array().expect("events").iter().filter_map(|e| e["ts"].as_u64()).collect();
    assert!(!xs.is_empty() && xs.iter().all(|&t| (400..800).contains(&t)));
    let (code, _, err) = reconverge(&[&base[..], &["--window", "5:5"]].concat());
    assert_eq!(code, 2);
    assert!(err.contains("--window `5:5`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A timed report takes every number of a mechanism's summary row from its timed run: DWF forms other
/// warps there than in the functional run (on `nested_loops` about twice the warp instructions), and the
/// row shows the timed run's, the ones `run --json` reports with the same GPU (no browser needed).
#[test]
fn a_timed_reports_summary_row_is_the_timed_runs() {
    let json = |extra: &str| {
        let args = ["run", "--suite-kernel", "nested_loops", "--mechanism", "dwf", "--json", extra];
        let v: serde_json::Value = serde_json::from_str(&ok(&args)).expect("JSON");
        v["warp_instructions"].as_u64().expect("warp instructions")
    };
    let (timed, functional) = (json("--config=gtx480"), json("--functional"));
    assert_ne!(timed, functional, "the two runs form the same warps: the test shows nothing");
    let dir = temp_dir("timed-row");
    let html = dir.join("dwf.html");
    let html_arg = html.to_str().expect("a UTF-8 path");
    ok(&["report", "--suite-kernel", "nested_loops", "--mechanism", "dwf", "--config", "gtx480", "--output", html_arg]);
    let page = std::fs::read_to_string(&html).expect("the report");
    let row = page.split("<tr><td>dwf</td>").nth(1).and_then(|r| r.split("</tr>").next()).expect("dwf's row");
    let cells: Vec<&str> = row.split("<td>").map(|c| c.split('<').next().unwrap_or("")).collect();
    assert!(cells.contains(&timed.to_string().as_str()), "timed {timed} not in the row {cells:?}");
    assert!(!cells.contains(&functional.to_string().as_str()), "the functional run's {functional} in {cells:?}");
    assert!(page.contains("Every number of a row comes from the mechanism's timed run"));
}
