//! Stage registers (contract §3): per pipe a valid bit and a value, with the
//! safe default that a pipe neither written nor retained in a tick is invalid
//! at the next edge.

/// One stage register of `pipes` pipes, each `width` words wide.
#[derive(Debug)]
pub(crate) struct StageReg {
    pub(crate) name: String,
    width: usize,
    valid: Vec<bool>,
    values: Vec<u64>,
    next_valid: Vec<bool>,
    next_values: Vec<u64>,
    /// Whether each pipe was written or retained in this tick.
    touched: Vec<bool>,
}

/// What a write or retain did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StageWrite {
    /// Accepted.
    Done,
    /// The pipe was already written or retained in this tick: a runtime fault.
    Twice,
}

impl StageReg {
    pub(crate) fn new(name: String, pipes: u32, width: usize) -> Self {
        let pipes = pipes as usize;
        StageReg {
            name,
            width,
            valid: vec![false; pipes],
            values: vec![0; pipes * width],
            next_valid: vec![false; pipes],
            next_values: vec![0; pipes * width],
            touched: vec![false; pipes],
        }
    }

    /// The number of pipes.
    pub(crate) fn pipes(&self) -> usize {
        self.valid.len()
    }

    /// `valid(p)` as of before the edge.
    #[inline]
    pub(crate) fn valid(&self, pipe: usize) -> bool {
        self.valid[pipe]
    }

    /// `read(p)` as of before the edge.
    #[inline]
    pub(crate) fn read(&self, pipe: usize) -> &[u64] {
        &self.values[pipe * self.width..(pipe + 1) * self.width]
    }

    /// `write(p, v)`.
    #[inline]
    pub(crate) fn write(&mut self, pipe: usize, value: &[u64]) -> StageWrite {
        if std::mem::replace(&mut self.touched[pipe], true) {
            return StageWrite::Twice;
        }
        self.next_valid[pipe] = true;
        self.next_values[pipe * self.width..(pipe + 1) * self.width].copy_from_slice(value);
        StageWrite::Done
    }

    /// `retain(p)`: the pipe keeps its contents (valid or not) for one more edge.
    #[inline]
    pub(crate) fn retain(&mut self, pipe: usize) -> StageWrite {
        if std::mem::replace(&mut self.touched[pipe], true) {
            return StageWrite::Twice;
        }
        self.next_valid[pipe] = self.valid[pipe];
        let range = pipe * self.width..(pipe + 1) * self.width;
        self.next_values[range.clone()].copy_from_slice(&self.values[range]);
        StageWrite::Done
    }

    /// Commits an edge of the owning domain.
    #[inline]
    pub(crate) fn commit(&mut self) {
        for pipe in 0..self.valid.len() {
            let touched = std::mem::replace(&mut self.touched[pipe], false);
            self.valid[pipe] = touched && self.next_valid[pipe];
            if touched {
                let range = pipe * self.width..(pipe + 1) * self.width;
                self.values[range.clone()].copy_from_slice(&self.next_values[range]);
            }
        }
    }
}
