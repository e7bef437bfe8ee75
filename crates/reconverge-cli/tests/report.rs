//! The HTML reports in a real browser: `reconverge report` and `compare --html` open in headless
//! Chromium without console errors, every plot and CFG has a non-empty bounding box and drawn marks, and
//! the screenshot is not blank. Chromium comes from `RECONVERGE_CHROMIUM` or the PATH (`.ci/run`
//! installs the Debian package).

mod common;

use common::{ok, reconverge};

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
/// `figure.plot svg` and CFG `svg`, its rendered size and its count of drawn marks.
const PROBE: &str = r#"<script>
const out = [...document.querySelectorAll('figure.plot svg, .cfg svg')].map(s => {
  const r = s.getBoundingClientRect();
  const data = s.closest('.cfg') ? 'rect, path, ellipse' : 'polyline.series, rect.bar';
  return [Math.round(r.width), Math.round(r.height), s.querySelectorAll(data).length];
});
const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script></body>"#;

struct Opened {
    /// `[width, height, data marks]` per plot (lines and bars of a plot; blocks and edges of a CFG).
    plots: Vec<[u64; 3]>,
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
    let plots: Vec<[u64; 3]> = serde_json::from_str(&stdout[start..end]).expect("probe json");
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
    Opened { plots, errors, ink: ink as f64 / n as f64, palette }
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

#[test]
fn reports_render_in_a_real_browser() {
    let dir = std::env::temp_dir().join(format!("reconverge-report-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let run_html = dir.join("mandelbrot.html");
    #[rustfmt::skip]
    ok(&[
        "report", "kernels/ptx/sm_80-nofma/mandelbrot.ptx", "--grid", "2,2", "--block", "20,12",
        "--arg", "zeros:i32:874", "--arg", "38", "--arg", "23", "--arg", "-2.0", "--arg", "-1.125",
        "--arg", "0.0625", "--arg", "0.09375", "--arg", "64",
        "--mechanism", "pdom", "--mechanism", "tbc", "--mechanism", "stackless-dcp",
        "--source", "kernels/src/mandelbrot.cu", "-o", run_html.to_str().expect("utf-8 path"),
    ]);
    let html = std::fs::read_to_string(&run_html).expect("report");
    for m in ["pdom", "tbc", "stackless-dcp"] {
        assert!(html.contains(&format!(">{m}<")), "{m} named in the report");
    }
    assert!(html.contains("mandelbrot.cu"), "the heat map shows the CUDA source");
    for m in ["pdom", "tbc", "stackless-dcp"] {
        let t = dir.join(format!("mandelbrot.{m}.trace.json"));
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&t).expect("timeline")).expect("json");
        assert!(v["traceEvents"].as_array().is_some_and(|e| e.len() > 100), "{m}'s timeline");
    }
    // 2 time plots, 3 histograms, the stall bars and 3 CFGs.
    check(&open(&run_html, &dir), 9);
    let cmp_html = dir.join("compare.html");
    #[rustfmt::skip]
    ok(&[
        "compare", "--kernel", "fir", "--kernel", "nested_loops", "--kernel", "bfs",
        "--mechanism", "pdom", "--mechanism", "stackless-dcp", "--mechanism", "dwf",
        "--html", cmp_html.to_str().expect("utf-8 path"),
    ]);
    // Speedup, SIMD efficiency, IPC.
    check(&open(&cmp_html, &dir), 3);
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
    // One trace microsecond is one cycle: no `displayTimeUnit` that says otherwise, and an open window's
    // end is null (JavaScript cannot hold 2^64 - 1 exactly).
    assert!(v.get("displayTimeUnit").is_none(), "{}", v["displayTimeUnit"]);
    assert!(v["otherData"]["window"][1].is_null(), "{}", v["otherData"]["window"]);
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
