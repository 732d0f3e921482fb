//! Builds the run's [`ExecConfig`] from the environment and the command
//! line: the one place `chronc` reads its `CHRONON_*` switches. Each
//! `CHRONON_NO_<SWITCH>` variable turns a switch off (`CHRONON_JIT_DUMP`
//! turns `jit-dump` on); `--exec SWITCH=on|off` overrides the environment.

use chronon_compiler::config::ExecConfig;

/// The environment variable that sets each switch, and the value it sets.
const ENVIRONMENT: &[(&str, &str, bool)] = &[
    ("CHRONON_NO_IR_OPT", "ir-opt", false),
    ("CHRONON_NO_REROLL", "reroll", false),
    ("CHRONON_NO_INLINE_FIFO", "inline-fifo", false),
    ("CHRONON_NO_INLINE_CHANNEL", "inline-channel", false),
    ("CHRONON_NO_SIMD", "simd", false),
    ("CHRONON_NO_PACKED", "packed", false),
    ("CHRONON_JIT_DUMP", "jit-dump", true),
    ("CHRONON_NO_WIRE_CHANNELS", "wire-channels", false),
    (
        "CHRONON_NO_UNOBSERVED_VARIANTS",
        "unobserved-variants",
        false,
    ),
    ("CHRONON_NO_RUN_AHEAD", "run-ahead", false),
    ("CHRONON_NO_REPLAY_LOOP", "replay-loop", false),
    ("CHRONON_NO_BLIND_CALLS", "blind-calls", false),
    ("CHRONON_NO_FIFO_STAMPS", "fifo-stamps", false),
];

/// The configuration the environment and then `overrides` (each
/// `SWITCH=on|off`) ask for; `Err` says which override is wrong.
pub fn config(overrides: &[String]) -> Result<ExecConfig, String> {
    let mut config = ExecConfig::default();
    for (variable, switch, value) in ENVIRONMENT {
        if std::env::var_os(variable).is_some() {
            config.set(switch, *value)?;
        }
    }
    for item in overrides {
        let (name, value) = item
            .split_once('=')
            .ok_or_else(|| format!("`--exec {item}` is not SWITCH=on|off"))?;
        let on = match value.trim() {
            "on" | "true" | "1" => true,
            "off" | "false" | "0" => false,
            other => {
                return Err(format!("`--exec {item}`: `{other}` is not on or off"));
            }
        };
        config.set(name.trim(), on)?;
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chronon_compiler::config::SWITCHES;

    #[test]
    fn every_switch_has_one_environment_variable() {
        for switch in SWITCHES {
            let count = ENVIRONMENT.iter().filter(|(_, s, _)| s == switch).count();
            assert_eq!(count, 1, "{switch}");
        }
        assert_eq!(ENVIRONMENT.len(), SWITCHES.len());
    }

    #[test]
    fn overrides_set_switches_and_bad_ones_are_named() {
        let c = config(&["replay-loop=off".into(), "jit-dump=on".into()]).expect("valid");
        assert_eq!(c.get("replay-loop"), Some(false));
        assert_eq!(c.get("jit-dump"), Some(true));
        assert!(
            config(&["replay-loop".into()])
                .unwrap_err()
                .contains("SWITCH=on|off")
        );
        assert!(
            config(&["replay-loop=maybe".into()])
                .unwrap_err()
                .contains("maybe")
        );
        assert!(
            config(&["warp=on".into()])
                .unwrap_err()
                .contains("run-ahead")
        );
    }
}
