//! The diagnostics `chronc check` reports: the front end's and, where the
//! design elaborates without error, the limits only lowering can see (a
//! tick that unrolls too far, E0328; one that needs too many scalar locals,
//! E0329), so `check` passes exactly the designs `run` can build.

use chronon_lang::diag::Diagnostic;
use chronon_lang::span::SourceMap;
use chronon_lang::{CompileOptions, compile};

use crate::lower::{LowerError, lower_for_run, random::DEFAULT_SEED};

/// Every diagnostic of `sources` under `options`.
pub fn check(sources: &mut SourceMap, options: &CompileOptions) -> Vec<Diagnostic> {
    let compiled = compile(sources, options);
    let mut diags = compiled.diagnostics;
    let clean = !diags.iter().any(Diagnostic::is_error);
    if let Some(design) = compiled.design.filter(|_| clean)
        // Limits come before the optimizer, which check needs not run.
        && let Err(LowerError::Limit(limit)) = lower_for_run(&design, sources, DEFAULT_SEED, (false, true))
    {
        diags.push(limit);
    }
    diags
}
