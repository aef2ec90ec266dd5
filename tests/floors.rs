//! `benches/floors.py`, the checker `.ci/run` runs after the short benches:
//! it must fail on a ratio below its floor and on a benchmark the run did
//! not measure, and pass otherwise. Fed a criterion output directory and
//! `gate_paired` results made here, so no benchmark runs. The checker is a
//! Python script: these tests need `python3`, like `.ci/run` itself, and
//! fail without it.

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

/// Two `gate_paired` ratios: one whose subject is the first of its pair,
/// one whose subject is the second.
const FLOORS_PAIRED: &str = r#"
[[paired]]
name = "check against baseline, paired"
paired = "gate/case/paired"
subject = "check"
baseline = "baseline"
floor = 3.0

[[paired]]
name = "refusal against check, paired"
paired = "gate/refusal/paired"
subject = "refusal"
baseline = "check"
floor = 0.5
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

    fn floors(&self, floors: &str) -> &Self {
        fs::write(self.dir.join("floors.toml"), floors).unwrap();
        self
    }

    /// One `gate_paired` ratio as the bench writes it: the median times of
    /// its two calls and the median of the pairs' ratios `second / first`.
    fn paired(&self, name: &str, first: (&str, f64), second: (&str, f64), median: f64) -> &Self {
        let at = self.dir.join("paired").join(name);
        fs::create_dir_all(&at).unwrap();
        let result = serde_json::json!({
            "name": name,
            "pairs": 201,
            "first": {"name": first.0, "median_ns": first.1},
            "second": {"name": second.0, "median_ns": second.1},
            "second_over_first": {"median": median, "q1": median * 0.98, "q3": median * 1.02},
        });
        fs::write(at.join("ratio.json"), result.to_string()).unwrap();
        self
    }

    fn check(&self, since: Option<&Path>) -> Output {
        let mut command = Command::new("python3");
        command
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/floors.py"))
            .arg("--criterion")
            .arg(self.dir.join("criterion"))
            .arg("--paired")
            .arg(self.dir.join("paired"))
            .arg("--floors")
            .arg(self.dir.join("floors.toml"));
        if let Some(since) = since {
            command.arg("--since").arg(since);
        }
        command
            .output()
            .unwrap_or_else(|error| panic!("python3 is needed for benches/floors.py: {error}"))
    }
}

impl Drop for Criterion {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// What the checker printed, its exit code asserted to be `code`.
fn checked(run: &Criterion, since: Option<&Path>, code: i32) -> String {
    let output = run.check(since);
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(code), "{shown}");
    shown
}

#[test]
fn ratios_at_or_above_their_floors_pass_and_the_times_are_printed() {
    let run = Criterion::new("pass");
    run.result("gate/case/check", Some(100.0), 120.0)
        .result("gate/case/baseline", Some(400.0), 380.0)
        .result("gate/items/check/10", Some(1000.0), 1000.0)
        .result("gate/items/check/100", Some(12_000.0), 12_000.0);
    let shown = checked(&run, None, 0);
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
    let shown = checked(&run, None, 1);
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
    let shown = checked(&run, None, 1);
    assert!(
        shown.contains("not measured: gate/items/check/100"),
        "{shown}"
    );

    // Written before the run started: as good as absent.
    run.result("gate/items/check/100", Some(10_000.0), 10_000.0);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let start = run.dir.join("start");
    fs::write(&start, "").unwrap();
    let shown = checked(&run, Some(&start), 1);
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
    let shown = checked(&run, None, 2);
    assert!(shown.contains("a ratio has no 'floor'"), "{shown}");
}

#[test]
fn a_paired_ratio_is_the_median_of_the_pairs_read_from_the_subject() {
    let run = Criterion::new("paired");
    run.floors(FLOORS_PAIRED)
        // The pairs' median, not the ratio of the medians: 4.2, not 4.0.
        .paired(
            "gate/case/paired",
            ("check", 100.0),
            ("baseline", 400.0),
            4.2,
        )
        // The subject second: the inverse of the pairs' median, 1 / 2.5.
        .paired(
            "gate/refusal/paired",
            ("check", 100.0),
            ("refusal", 250.0),
            2.5,
        );
    let shown = checked(&run, None, 1);
    assert!(
        shown.contains("| check against baseline, paired | 100 ns | 400 ns | 4.20× | 3.0 | ok |"),
        "{shown}"
    );
    assert!(
        shown.contains(
            "| refusal against check, paired | 250 ns | 100 ns | 0.40× | 0.5 | BELOW FLOOR |"
        ),
        "{shown}"
    );
    assert!(shown.contains("1 of 2 ratios failed"), "{shown}");

    run.paired(
        "gate/refusal/paired",
        ("check", 100.0),
        ("refusal", 180.0),
        1.8,
    );
    let shown = checked(&run, None, 0);
    assert!(shown.contains("| 0.56× | 0.5 | ok |"), "{shown}");
}

#[test]
fn a_scaled_paired_ratio_holds_linearity_and_fails_a_superlinear_walk() {
    let run = Criterion::new("paired-scaled");
    run.floors(
        r#"
[[paired]]
name = "linear, paired"
paired = "gate/items/paired"
subject = "check/100"
baseline = "check/10"
scale = 10.0
floor = 0.8
"#,
    )
    // Ten times the items in 9.5 times the time: 10 / 9.5.
    .paired(
        "gate/items/paired",
        ("check/10", 1_000.0),
        ("check/100", 9_500.0),
        9.5,
    );
    let shown = checked(&run, None, 0);
    assert!(
        shown.contains("| linear, paired | 9.5 µs | 1 µs | 1.05× | 0.8 | ok |"),
        "{shown}"
    );

    // Twenty times the time: a walk that grows faster than its items.
    run.paired(
        "gate/items/paired",
        ("check/10", 1_000.0),
        ("check/100", 20_000.0),
        20.0,
    );
    let shown = checked(&run, None, 1);
    assert!(
        shown.contains("| linear, paired | 20 µs | 1 µs | 0.50× | 0.8 | BELOW FLOOR |"),
        "{shown}"
    );
}

#[test]
fn a_paired_ratio_not_written_in_this_run_or_without_its_call_fails() {
    let run = Criterion::new("paired-missing");
    run.floors(FLOORS_PAIRED).paired(
        "gate/refusal/paired",
        ("check", 100.0),
        ("refused", 180.0),
        1.8,
    );
    let shown = checked(&run, None, 1);
    assert!(
        shown.contains("not measured: gate/case/paired |"),
        "{shown}"
    );
    // The pair holds `refused`, the floor names `refusal`.
    assert!(
        shown.contains("not measured: gate/refusal/paired refusal |"),
        "{shown}"
    );

    // Written before the run started: as good as absent.
    run.paired(
        "gate/case/paired",
        ("check", 100.0),
        ("baseline", 400.0),
        4.0,
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    let start = run.dir.join("start");
    fs::write(&start, "").unwrap();
    run.paired(
        "gate/refusal/paired",
        ("check", 100.0),
        ("refusal", 180.0),
        1.8,
    );
    let shown = checked(&run, Some(&start), 1);
    assert!(
        shown.contains("not measured: gate/case/paired |"),
        "{shown}"
    );
    assert!(shown.contains("1 of 2 ratios failed"), "{shown}");
}

#[test]
fn a_paired_entry_without_its_pair_is_refused() {
    let run = Criterion::new("paired-malformed");
    run.floors("[[paired]]\nname = \"x\"\nsubject = \"a\"\nbaseline = \"b\"\nfloor = 1.0\n");
    let shown = checked(&run, None, 2);
    assert!(shown.contains("a paired has no 'paired'"), "{shown}");

    run.floors(
        "[[paired]]\nname = \"x\"\npaired = \"p\"\nsubject = \"a\"\nbaseline = \"a\"\nfloor = 1.0\n",
    );
    let shown = checked(&run, None, 2);
    assert!(
        shown.contains("a paired compares 'a' with itself"),
        "{shown}"
    );
}
