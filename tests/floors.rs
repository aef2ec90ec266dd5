//! `benches/floors.py`, the checker `.ci/run` runs after the short benches:
//! it must fail on a ratio below its floor and on a benchmark the run did
//! not measure, and pass otherwise. Fed a criterion output directory made
//! here, so no benchmark runs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const FLOORS: &str = r#"
[[ratio]]
name = "fast against baseline"
subject = "gate/case/check"
baseline = "gate/case/baseline"
floor = 3.0

[[ratio]]
name = "linear"
subject = "gate/items/check/100"
baseline = "gate/items/check/10"
scale = 10.0
floor = 0.8
"#;

struct Criterion {
    dir: PathBuf,
}

impl Criterion {
    fn new(name: &str) -> Criterion {
        let dir =
            std::env::temp_dir().join(format!("mcpgate-floors-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("floors.toml"), FLOORS).unwrap();
        Criterion { dir }
    }

    /// One benchmark's result as criterion writes it: a slope of `slope`
    /// nanoseconds, a median of `median`.
    fn result(&self, full_id: &str, slope: Option<f64>, median: f64) -> &Self {
        let at = self
            .dir
            .join("criterion")
            .join(full_id.replace('/', "_"))
            .join("new");
        fs::create_dir_all(&at).unwrap();
        let described = serde_json::json!({"full_id": full_id, "directory_name": full_id});
        fs::write(at.join("benchmark.json"), described.to_string()).unwrap();
        let estimate =
            |value: f64| serde_json::json!({"point_estimate": value, "standard_error": 1.0});
        let estimates = serde_json::json!({
            "mean": estimate(median),
            "median": estimate(median),
            "slope": slope.map(estimate),
        });
        fs::write(at.join("estimates.json"), estimates.to_string()).unwrap();
        self
    }

    fn check(&self, since: Option<&Path>) -> Option<Output> {
        let mut command = Command::new("python3");
        command
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/floors.py"))
            .arg("--criterion")
            .arg(self.dir.join("criterion"))
            .arg("--floors")
            .arg(self.dir.join("floors.toml"));
        if let Some(since) = since {
            command.arg("--since").arg(since);
        }
        match command.output() {
            Ok(output) => Some(output),
            Err(error) => {
                assert!(
                    std::env::var_os("MCPGATE_REQUIRE_E2E").is_none(),
                    "python3 is needed for benches/floors.py: {error}"
                );
                eprintln!("SKIPPED: python3 not found ({error}); benches/floors.py not checked");
                None
            }
        }
    }
}

impl Drop for Criterion {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn ratios_at_or_above_their_floors_pass_and_the_times_are_printed() {
    let run = Criterion::new("pass");
    run.result("gate/case/check", Some(100.0), 120.0)
        .result("gate/case/baseline", Some(400.0), 380.0)
        .result("gate/items/check/10", Some(1000.0), 1000.0)
        .result("gate/items/check/100", Some(12_000.0), 12_000.0);
    let Some(output) = run.check(None) else {
        return;
    };
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(0), "{shown}");
    // The slope decides where there is one: 400 / 100, not 380 / 120.
    assert!(
        shown.contains("| fast against baseline | 100 ns | 400 ns | 4.00× | 3.0 | ok |"),
        "{shown}"
    );
    assert!(
        shown.contains("| linear | 12 µs | 1 µs | 0.83× | 0.8 | ok |"),
        "{shown}"
    );
}

#[test]
fn a_ratio_below_its_floor_fails_naming_it() {
    let run = Criterion::new("below");
    run.result("gate/case/check", None, 200.0)
        .result("gate/case/baseline", None, 400.0)
        .result("gate/items/check/10", Some(1000.0), 1000.0)
        .result("gate/items/check/100", Some(10_000.0), 10_000.0);
    let Some(output) = run.check(None) else {
        return;
    };
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("| fast against baseline | 200 ns | 400 ns | 2.00× | 3.0 | BELOW FLOOR |"),
        "{shown}"
    );
    assert!(shown.contains("1 of 2 ratios failed"), "{shown}");
}

#[test]
fn a_benchmark_not_measured_in_this_run_fails() {
    let run = Criterion::new("stale");
    run.result("gate/case/check", Some(100.0), 100.0)
        .result("gate/case/baseline", Some(400.0), 400.0)
        .result("gate/items/check/10", Some(1000.0), 1000.0);
    let Some(output) = run.check(None) else {
        return;
    };
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("not measured: gate/items/check/100"),
        "{shown}"
    );

    // Written before the run started: as good as absent.
    run.result("gate/items/check/100", Some(10_000.0), 10_000.0);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let start = run.dir.join("start");
    fs::write(&start, "").unwrap();
    let Some(output) = run.check(Some(&start)) else {
        return;
    };
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("not measured: gate/case/check, gate/case/baseline"),
        "{shown}"
    );
}

#[test]
fn a_floors_file_without_a_floor_is_refused() {
    let run = Criterion::new("malformed");
    fs::write(
        run.dir.join("floors.toml"),
        "[[ratio]]\nname = \"x\"\nsubject = \"a\"\nbaseline = \"b\"\n",
    )
    .unwrap();
    let Some(output) = run.check(None) else {
        return;
    };
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(2), "{shown}");
    assert!(shown.contains("a ratio has no 'floor'"), "{shown}");
}
