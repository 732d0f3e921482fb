//! Stage registers written or retained twice on one path (E0321): the
//! pipes a statement touches, provable through constant pipes and
//! unrolled loop variables.

use super::*;

impl<'e> BodyCx<'e> {
    pub(super) fn note_stage(&mut self, stage: usize, pipe: &Expr, span: Span) {
        let key = match pipe.kind {
            ExprKind::Const(Value::Int(p)) => PipeKey::Const(p),
            _ => match self.loop_pipe(pipe) {
                Some(k) => k,
                None => return,
            },
        };
        if let Some(first) = self.stage_writes.insert((stage, key.clone()), span) {
            let pipe = self.pipe_value(&key, None).unwrap_or(0);
            self.stage_twice(stage, span, first, "first here", pipe);
        }
    }

    pub(super) fn stage_twice(
        &mut self,
        stage: usize,
        span: Span,
        first: Span,
        label: &'static str,
        pipe: i128,
    ) {
        let name = self
            .unit
            .as_ref()
            .map_or(String::new(), |u| u.stages[stage].name.clone());
        self.err(TypeError::StageTwice {
            span,
            first,
            first_label: label,
            stage: name,
            pipe,
        });
    }

    /// The key of a pipe that depends on one loop variable, if E0321 can
    /// follow it: the loop is short and never assigns the variable.
    pub(super) fn loop_pipe(&mut self, pipe: &Expr) -> Option<PipeKey> {
        let mut var = None;
        let mut shape = String::new();
        if !pipe_shape(pipe, &mut var, &mut shape) {
            return None;
        }
        let var = var?;
        let lv = self.loops.iter().find(|l| l.slot == var)?;
        if lv.assigned || lv.end - lv.start > MAX_UNROLL_PROOF {
            return None;
        }
        self.pipe_exprs
            .entry(shape.clone())
            .or_insert_with(|| pipe.clone());
        Some(PipeKey::OfLoop { var, shape })
    }

    /// The pipe a key names in iteration `k` of its loop (default: the
    /// loop's first iteration).
    pub(super) fn pipe_value(&self, key: &PipeKey, k: Option<i128>) -> Option<i128> {
        match key {
            PipeKey::Const(p) => Some(*p),
            PipeKey::OfLoop { var, shape } => {
                let k = match k {
                    Some(k) => k,
                    None => self.loops.iter().find(|l| l.slot == *var)?.start,
                };
                let mut e = self.pipe_exprs.get(shape)?.clone();
                substitute(&mut e, *var, k);
                eval(&e).ok()?.as_int()
            }
        }
    }
}
