//! Designs split into files: `use` of the user's own modules, found beside
//! the design and in `-L` folders, from `check` and `run`; a missing
//! module and a cycle as diagnostics, in JSON too.

mod common;

use common::{all_output, chronc};

const TOP: &str = "compiler/tests/modules/design/top.chr";
const VENDOR: &str = "compiler/tests/modules/vendor";

/// Runs `design` for five edges with `extra` arguments; the final value
/// of a register by unit path and name.
fn registers_after_five_edges(
    label: &str,
    design: &str,
    extra: &[&str],
) -> impl Fn(&str, &str) -> u64 {
    let dump = common::scratch("modules", label).join("state.json");
    let dump_arg = dump.display().to_string();
    let mut args = vec![
        "run",
        design,
        "--cycles",
        "5",
        "-q",
        "--dump-state",
        &dump_arg,
    ];
    args.extend_from_slice(extra);
    let out = chronc(&args);
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).expect("the dump")).expect("JSON");
    move |unit: &str, name: &str| {
        state["registers"]
            .as_array()
            .expect("registers")
            .iter()
            .find(|r| r["unit"] == unit && r["name"] == name)
            .and_then(|r| r["value"].as_u64())
            .unwrap_or_else(|| panic!("{unit}.{name} in {state}"))
    }
}

#[test]
fn modules_come_from_the_design_folder_and_search_folders() {
    let value = registers_after_five_edges("dump", TOP, &["-L", VENDOR]);
    // The library's `bump` adds 1, the design's 2: each unit got its own.
    assert_eq!(value("top.a", "n"), 5);
    assert_eq!(value("top.t", "n"), 10);
    assert_eq!(value("top.b", "lit"), 1);
    let out = chronc(&["check", TOP, "-L", VENDOR]);
    assert_eq!(out.status.code(), Some(0), "{}", all_output(&out));
}

#[test]
fn a_missing_module_and_a_cycle_are_diagnostics() {
    // Without the `-L` folder, `ip::blink` has no file.
    let out = chronc(&["check", "--format", "json", TOP]);
    assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
    let diags: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let codes: Vec<&str> = diags
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert!(codes.contains(&"E0208"), "{codes:?}");
    let out = chronc(&["check", "compiler/tests/modules/design/cycle.chr"]);
    assert_eq!(out.status.code(), Some(1));
    let text = all_output(&out);
    assert!(text.contains("E0209"), "{text}");
    assert!(
        text.contains("lib::loop_a -> lib::loop_b -> lib::loop_a"),
        "{text}"
    );
    assert!(
        text.contains("E0208") && text.contains("lib/missing/Thing.chr"),
        "{text}"
    );
    // `run` reports them the same way, before running anything.
    let out = chronc(&["run", "compiler/tests/modules/design/cycle.chr", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", all_output(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("E0209"));
}

#[test]
fn two_modules_may_define_one_name_and_qualified_names_pick_one() {
    let value = registers_after_five_edges(
        "qualified",
        "compiler/tests/modules/design/qualified.chr",
        &[],
    );
    // Five edges of each module's own `step` and `GAIN`.
    assert_eq!(value("top.f", "n"), 5 * 3);
    assert_eq!(value("top.s", "n"), 5 * (7 + 5));
    assert_eq!(value("top.t", "p.a"), 5);
    assert_eq!(value("top.t", "p.b"), 5 * 3);
    assert_eq!(value("top.t", "q.a"), 5 * 5);
    assert_eq!(value("top.t", "q.b"), 5 * 7);
    assert_eq!(value("top.t", "g"), 5 * 2);
    // Used alone, a name both modules define is E0210; an unknown module
    // is an unknown name.
    let out = chronc(&[
        "check",
        "--format",
        "json",
        "compiler/tests/modules/design/ambiguous.chr",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", all_output(&out));
    let diags: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let codes: Vec<&str> = diags
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == "E0210").count(),
        1,
        "{codes:?}"
    );
    assert_eq!(
        codes.iter().filter(|c| **c == "E0201").count(),
        1,
        "{codes:?}"
    );
}
