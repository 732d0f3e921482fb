//! Source files and byte spans.

use serde::Serialize;

/// Index of a source file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
pub struct FileId(pub u32);

/// A byte range `start..end` in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
pub struct Span {
    /// The file the range belongs to.
    pub file: FileId,
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// A span of `start..end` in `file`.
    pub fn new(file: FileId, start: usize, end: usize) -> Self {
        let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        Span {
            file,
            start: clamp(start),
            end: clamp(end),
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the span covers no bytes.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// One loaded source file.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Name shown in diagnostics (a path, or `std/NAME.chr`).
    pub name: String,
    /// Full text.
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// A file with its line index.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// The zero-based line that holds byte `offset`.
    pub fn line_index(&self, offset: usize) -> usize {
        self.line_starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// The byte range of zero-based lines `first..=last` (clamped to the
    /// file), without the last line's newline.
    pub fn lines_range(&self, first: usize, last: usize) -> std::ops::Range<usize> {
        let start = self
            .line_starts
            .get(first)
            .copied()
            .unwrap_or(self.text.len());
        let end = self
            .line_starts
            .get(last + 1)
            .map_or(self.text.len(), |&next| next - 1);
        start..end.max(start)
    }

    /// One-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self
            .line_starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.line_starts[line];
        let end = offset.min(self.text.len());
        let col = self
            .text
            .get(start..end)
            .map_or(end - start, |s| s.chars().count());
        (line + 1, col + 1)
    }
}

/// Every source file of a compilation, indexed by [`FileId`].
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
    /// The user modules among the files (`lib::fifo` and its file): a
    /// module is compiled when a `use` names it, not as part of the design.
    modules: Vec<(String, FileId)>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let id = FileId(u32::try_from(self.files.len()).expect("fewer than 2^32 source files"));
        self.files.push(SourceFile::new(name, text));
        id
    }

    /// Adds the file of user module `name` (its path, `::`-separated:
    /// `lib::fifo` for `lib/fifo.chr`), which `use lib::fifo;` and `use
    /// lib::fifo::Item;` import; returns its id. `chronc` reads such files
    /// from the design's folder and its `-L` folders; the front end reads
    /// nothing itself.
    pub fn add_module(
        &mut self,
        name: impl Into<String>,
        path: impl Into<String>,
        text: impl Into<String>,
    ) -> FileId {
        let id = self.add(path, text);
        self.modules.push((name.into(), id));
        id
    }

    /// The file of user module `name`, if one was added.
    pub fn module(&self, name: &str) -> Option<FileId> {
        self.modules
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| *f)
    }

    /// Whether `file` is a user module's (not part of the design itself).
    pub fn is_module(&self, file: FileId) -> bool {
        self.modules.iter().any(|(_, f)| *f == file)
    }

    /// The file with this id.
    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    /// The id of the file with this name, if loaded.
    pub fn find(&self, name: &str) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.name == name)
            .map(|i| FileId(i as u32))
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file is loaded.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}
