//! A fast, non-cryptographic hasher for the checker's small string-keyed
//! maps (the Firefox/rustc "Fx" hash). The front end hashes names for every
//! identifier it resolves; SipHash's per-call cost showed in profiles.
//! Inputs are source files, not a network, so flooding resistance is not
//! needed; iteration order is deterministic.

use std::hash::{BuildHasherDefault, Hasher};

/// The hasher: one rotate, xor and multiply per word.
#[derive(Clone, Copy, Default)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A `HashSet` with [`FxHasher`].
pub type FxHashSet<T> = std::collections::HashSet<T, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_names_hash_apart_and_maps_work() {
        let mut m: FxHashMap<String, usize> = FxHashMap::default();
        for i in 0..1000 {
            m.insert(format!("name{i}"), i);
        }
        assert!((0..1000).all(|i| m[&format!("name{i}")] == i));
        let h = |s: &str| {
            use std::hash::Hash;
            let mut x = FxHasher::default();
            s.hash(&mut x);
            x.finish()
        };
        assert_ne!(h("ab"), h("ba"));
        assert_ne!(h("free0"), h("free1"));
    }
}
