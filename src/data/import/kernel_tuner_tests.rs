//! Tests of the Kernel Tuner cache importer (`kernel_tuner.rs`), kept apart so
//! the importer's file stays readable.

use super::*;

fn n(v: f64) -> ParamValue {
    ParamValue::Number(v)
}
fn p(name: &str, v: ParamValue) -> (String, ParamValue) {
    (name.to_string(), v)
}

#[test]
fn canonical_key_sorts_by_byte_order_and_formats_numbers() {
    let k = canonical_key(&[
        p("b", n(2.0)),
        p("MWG", n(64.0)),
        p("a", n(0.5)),
        p("Z", ParamValue::Text("  x y ".into())),
        p("c", n(-0.0)),
        p("d", n(0.1 + 0.2)),
    ]);
    // Upper case sorts before lower case in byte order.
    assert_eq!(k, "MWG=64,Z=x y,a=0.5,b=2,c=0,d=0.30000000000000004");
    assert_eq!(
        canonical_key(&[p("x", n(1e21))]),
        "x=1000000000000000000000"
    );
    assert_eq!(canonical_key(&[]), "");
}

#[test]
fn key_fields_parse_as_numbers_or_trimmed_text() {
    assert_eq!(ParamValue::from_key_field(" 32 "), n(32.0));
    assert_eq!(ParamValue::from_key_field("1.50"), n(1.5));
    assert_eq!(
        ParamValue::from_key_field(" abc "),
        ParamValue::Text("abc".into())
    );
    assert_eq!(
        ParamValue::from_key_field("inf"),
        ParamValue::Text("inf".into())
    );
}

#[test]
fn sample_std_uses_n_minus_one() {
    assert_eq!(sample_std(&[1.0, 3.0]), Some(2.0_f64.sqrt()));
    assert_eq!(sample_std(&[1.0]), None);
}

#[test]
fn failed_times_are_classified() {
    let e = |v: Value| {
        let mut m = Map::new();
        m.insert("time".into(), v);
        time_of(&m)
    };
    assert_eq!(e(Value::from(1.5)), Ok(1.5));
    assert_eq!(
        e(Value::from("RuntimeFailedConfig")),
        Err("RuntimeFailedConfig".into())
    );
    assert_eq!(
        e(Value::from(" InvalidConfig ")),
        Err("InvalidConfig".into())
    );
    assert_eq!(e(Value::from("1.5 ms?")), Err("non_number_time".into()));
    assert_eq!(e(Value::from(1e20)), Err("absurd_time".into()));
    assert_eq!(e(Value::from(0.0)), Err("absurd_time".into()));
    assert_eq!(e(Value::from(-2.0)), Err("absurd_time".into()));
    assert_eq!(e(Value::Null), Err("no_time".into()));
    assert_eq!(e(Value::Array(vec![])), Err("non_number_time".into()));
    assert_eq!(time_of(&Map::new()), Err("no_time".into()));
}

#[test]
fn an_empty_device_name_takes_the_gpu_given_and_is_an_error_without_one() {
    // SYNTHETIC cache text (made up for the test, not a measurement).
    let text =
        synthetic("k", "\"1,2\": {\"time\": 1.0, \"GFLOP/s\": 10.0}").replace("Test GPU", " ");
    let e = import_text(&text, "t.json", &Workloads::default(), "s", None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t.json: line 1, column 2: 'device_name' is empty: name the GPU with --gpu"
    );
    let imp = import_text(&text, "t.json", &Workloads::default(), "s", Some("MI250X")).unwrap();
    assert_eq!(imp.table.runs.len(), 1);
    assert_eq!(imp.table.runs[0].gpu, "MI250X");
    // A cache that names its device keeps its name.
    let named = synthetic("k", "\"1,2\": {\"time\": 1.0, \"GFLOP/s\": 10.0}");
    let imp = import_text(&named, "t.json", &Workloads::default(), "s", Some("MI250X")).unwrap();
    assert_eq!(imp.table.runs[0].gpu, "Test GPU");
}

/// SYNTHETIC cache text (made up for the test, not a measurement).
fn synthetic(kernel: &str, entries: &str) -> String {
    format!(
        "{{\"device_name\": \"Test GPU\", \"kernel_name\": \"{kernel}\",\n\"tune_params_keys\": [\"b\", \"a\"],\n\"cache\": {{\n{entries}\n}}}}"
    )
}

#[test]
fn unknown_kernel_uses_cache_metrics_or_leaves_rows_out() {
    let text = synthetic(
        "mystery",
        "\"1,2\": {\"b\": 1, \"a\": 2, \"time\": 2.0, \"GFLOP/s\": 10.0},\n\
         \"3,4\": {\"b\": 3, \"a\": 4, \"time\": 4.0},\n\
         \"5,6\": {\"b\": 5, \"a\": 6, \"time\": \"InvalidConfig\"}",
    );
    let imp = import_text(&text, "t.json", &Workloads::default(), "test", None).unwrap();
    let r = &imp.report.files[0];
    assert_eq!(r.rows, 1);
    assert_eq!(r.failed.get("InvalidConfig"), Some(&1));
    assert_eq!(r.left_out.get("no_work_measure"), Some(&1));
    let run = &imp.table.runs[0];
    assert_eq!(run.kernel, "mystery");
    assert_eq!(run.config, "a=2,b=1");
    // 10 GFLOP/s for 2 ms = 2e7 FLOPs.
    assert_eq!(run.flops, 2e7);
    assert_eq!(run.dram_bytes, 0.0);
    let bytes = r
        .missing
        .iter()
        .find(|m| m.feature == "dram_bytes")
        .unwrap();
    assert_eq!(bytes.rows, 1);
}

#[test]
fn entry_errors_name_line_and_column() {
    let text = synthetic("k", "\"1,2\": {\"time\": 1.0},\n  \"3\": {\"time\": 1.0}");
    let e = import_text(&text, "t.json", &Workloads::default(), "s", None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t.json: line 5, column 3: cache entry '3': no value for parameter 'b': the entry lacks it and the key has 1 fields for 2 tune_params_keys"
    );
    let e = import_text(
        "{\"cache\": {}, \"device_name\": 7}",
        "t.json",
        &Workloads::default(),
        "s",
        None,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "t.json: line 1, column 15: 'device_name' is missing or not a string"
    );
    let e = import_text(
        "{\"cache\": [1,}",
        "t.json",
        &Workloads::default(),
        "s",
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("t.json: line 1, column 14: not valid JSON"),
        "{e}"
    );
}

#[test]
fn an_unclosed_cache_is_read_to_its_last_entry() {
    let full = synthetic(
        "k",
        "\"1,2\": {\"time\": 1.0, \"GB/s\": 1.0},\n\"3,4\": {\"time\": 2.0, \"GB/s\": 1.0},",
    );
    let cut = full.trim_end_matches('}');
    let imp = import_text(cut, "t.json", &Workloads::default(), "s", None).unwrap();
    assert_eq!(imp.report.files[0].rows, 2);
    assert!(imp.report.files[0].notes[0].contains("not closed"));
}

/// Repeated keys are found at any depth, by their decoded text, and only within
/// one object: the same key in two objects, or a key's text as a value, is fine.
#[test]
fn repeated_keys_in_one_object() {
    let found = repeated_key;
    assert_eq!(
        found(r#"{"a": 1, "b": {"a": 2}, "c": [{"a": 3}, {"a": 4}]}"#),
        None
    );
    assert_eq!(
        found(r#"{"a": "a", "b": ["a", "a"], "s": "{\"a\": 1, \"a\": 2}"}"#),
        None
    );
    assert_eq!(found(r#"{"a": 1, "a": 2}"#), Some((9, 1, "\"a\"".into())));
    assert_eq!(
        found(r#"{"x": [{"k": {"t": 1, "u": 2, "t": 3}}]}"#),
        Some((30, 14, "\"t\"".into()))
    );
    assert_eq!(
        found(r#"{"time": 1, "\u0074ime": 2}"#),
        Some((12, 1, "\"\\u0074ime\"".into()))
    );
    // linear: a cache of 200k distinct entries is scanned in one pass
    let big: String = (0..200_000)
        .map(|i| format!("\"{i},1\": {{\"time\": 1.0}}"))
        .collect::<Vec<_>>()
        .join(",");
    assert_eq!(found(&format!("{{\"cache\": {{{big}}}}}")), None);
}

/// A key's field and the entry's own value must agree; numbers compare as
/// numbers, integers beyond 2^53 by their digits.
#[test]
fn key_fields_against_entry_values() {
    let names = vec!["a".to_string(), "b".to_string()];
    let entry = |j: &str| serde_json::from_str::<Map<String, Value>>(j).unwrap();
    let none = |_: &str| None;
    assert!(entry_params(&entry(r#"{"a": 32, "b": "x"}"#), "32.0,x", &names, none).is_ok());
    assert!(entry_params(&entry(r#"{"a": true}"#), "True,1", &names, none).is_ok());
    let e = entry_params(&entry(r#"{"a": 64}"#), "32,1", &names, none).unwrap_err();
    assert_eq!(
        e,
        "the key says a=32 (field 1 of the key) but the entry's 'a' is 64"
    );
    let e = entry_params(
        &entry(r#"{"b": 9007199254740992}"#),
        "1,9007199254740993",
        &names,
        none,
    )
    .unwrap_err();
    assert!(
        e.ends_with(
            "b=9007199254740993 (field 2 of the key) but the entry's 'b' is 9007199254740992"
        ),
        "{e}"
    );
    // a key of another shape (values holding commas) is not compared
    assert!(entry_params(&entry(r#"{"a": 1, "b": 2}"#), "(1,2),3,4", &names, none).is_ok());
}
