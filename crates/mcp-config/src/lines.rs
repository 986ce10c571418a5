//! Byte offsets to 1-based lines and columns, for every positioned reader
//! of the crate (JSON and JSONC documents, Codex's TOML; Goose's YAML
//! parser reports lines and columns itself).
//!
//! A column counts characters, as editors show them, so it cannot be the
//! byte distance from the line's start. Counting the characters from the
//! line's start for every position makes a file of many values on one
//! line quadratic (400,000 array items on one line took seconds per
//! thousand values), so the index is built once per file: the start of
//! every line, and the number of characters before every block of
//! [`BLOCK`] bytes. One position is then a binary search over the lines
//! and a count within at most one block: `O(log n)`, whatever the line's
//! length.

/// Bytes per checkpoint of the character count.
const BLOCK: usize = 64;

/// Where the lines of one text start and how many characters lie before
/// each block of it. Holds no copy of the text: [`LineIndex::position`]
/// takes the text it was built from.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineIndex {
    /// Byte offset of each line's first byte; the first is 0.
    starts: Vec<usize>,
    /// Characters in `text[..i * BLOCK]`, for each block `i`.
    chars_before: Vec<usize>,
    /// Bytes examined by every position computed so far (tests count the
    /// work instead of timing it).
    #[cfg(test)]
    examined: Examined,
}

/// A count of bytes examined; a clone starts again from zero.
#[cfg(test)]
#[derive(Debug, Default)]
struct Examined(std::sync::atomic::AtomicUsize);

#[cfg(test)]
impl Clone for Examined {
    fn clone(&self) -> Self {
        Examined::default()
    }
}

impl LineIndex {
    /// The index of `text`, in one pass.
    pub(crate) fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        // One checkpoint per block start, the end included when it is one.
        let mut chars_before = Vec::with_capacity(text.len() / BLOCK + 1);
        let mut count = 0usize;
        for block in text.as_bytes().chunks(BLOCK) {
            chars_before.push(count);
            count += char_starts(block);
        }
        if text.len().is_multiple_of(BLOCK) {
            chars_before.push(count);
        }
        LineIndex {
            starts,
            chars_before,
            #[cfg(test)]
            examined: Examined::default(),
        }
    }

    /// 1-based line and column (in characters) of byte `offset` of `text`,
    /// the text the index was built from. An offset past the end is the
    /// end.
    pub(crate) fn position(&self, text: &str, offset: usize) -> (u32, u32) {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&s| s <= offset).max(1) - 1;
        let start = self.starts.get(line).copied().unwrap_or(0);
        let column = self
            .chars_until(text, offset)
            .saturating_sub(self.chars_until(text, start));
        (to_u32(line + 1), to_u32(column + 1))
    }

    /// Characters in `text[..offset]` (`offset <= text.len()`): the
    /// block's checkpoint plus the characters of the block before
    /// `offset`.
    fn chars_until(&self, text: &str, offset: usize) -> usize {
        let block = offset / BLOCK;
        let within = text.as_bytes().get(block * BLOCK..offset).unwrap_or(&[]);
        #[cfg(test)]
        self.examined
            .0
            .fetch_add(within.len(), std::sync::atomic::Ordering::Relaxed);
        self.chars_before.get(block).copied().unwrap_or(0) + char_starts(within)
    }

    #[cfg(test)]
    pub(crate) fn examined(&self) -> usize {
        self.examined.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Characters starting in `bytes` (every byte but UTF-8 continuations).
fn char_starts(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The position as the definition says: lines split at `\n`, the
    /// column the characters before `offset` on its line.
    fn naive(text: &str, offset: usize) -> (u32, u32) {
        let before = &text.as_bytes()[..offset.min(text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count();
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let column = char_starts(&before[start..]);
        (to_u32(line + 1), to_u32(column + 1))
    }

    /// Every character boundary of `text` (and the end, and past it) is
    /// where the definition puts it.
    fn check(text: &str) {
        let index = LineIndex::new(text);
        let mut offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        offsets.extend([text.len(), text.len() + 1, usize::MAX]);
        for offset in offsets {
            assert_eq!(
                index.position(text, offset),
                naive(text, offset),
                "offset {offset} of {text:?}"
            );
        }
    }

    #[test]
    fn positions_match_the_definition() {
        let long_ascii = "x".repeat(3 * BLOCK + 5);
        let long_wide = "é€😀".repeat(BLOCK);
        let mixed = format!("{long_ascii}\n{long_wide}\n\n{long_ascii}é");
        let block_edge = format!("{}é\n{}😀", "a".repeat(BLOCK - 1), "b".repeat(BLOCK - 2));
        for text in [
            "",
            "\n",
            "a",
            "a\nb\r\nc",
            "\n\n\n",
            "é",
            "😀x\n€",
            &"a".repeat(BLOCK),
            &"a".repeat(2 * BLOCK),
            &long_ascii,
            &long_wide,
            &mixed,
            &block_edge,
        ] {
            check(text);
        }
    }

    /// The work of a position does not grow with the line's length: each
    /// examines at most two blocks, so 400,000 positions on one 2.4 MB
    /// line examine under 2 × 64 bytes each, not the ~10^12 bytes of
    /// counting from the line's start.
    #[test]
    fn a_position_examines_at_most_two_blocks_whatever_the_line() {
        for (items, wide) in [(1_000, false), (400_000, false), (100_000, true)] {
            let item = if wide { "\"é€\"," } else { "\"ab\"," };
            let text = format!("[{}]", item.repeat(items));
            let index = LineIndex::new(&text);
            let offsets: Vec<usize> = (0..items).map(|i| 1 + i * item.len()).collect();
            for &offset in &offsets {
                let (line, column) = index.position(&text, offset);
                assert_eq!(line, 1);
                assert!(column >= 1);
            }
            let last = *offsets.last().unwrap_or(&0);
            assert_eq!(index.position(&text, last), naive(&text, last));
            assert!(
                index.examined() <= 2 * BLOCK * offsets.len(),
                "{} positions examined {} bytes",
                offsets.len(),
                index.examined()
            );
        }
    }
}
