//! Reading one configuration file: regular files only, capped, UTF-8, a
//! missing file not an error, every failure a diagnostic naming the file.

use std::path::Path;

use crate::types::{Diagnostic, Level};

/// Largest config, settings or manifest file read; real ones are a few
/// KiB, and anything past this is refused with an error diagnostic.
pub const MAX_CONFIG_FILE_BYTES: usize = 8 << 20;

/// Reads `path` as UTF-8: `Ok(None)` when it does not exist, a diagnostic
/// when it cannot be read.
pub(crate) fn read_text(path: &Path) -> Result<Option<String>, Diagnostic> {
    let refuse = |message: String| file_error(path, message);
    // A hostile project can make a config path a FIFO or a link to
    // /dev/zero: opening it must not block and reading it must not grow
    // without bound, so only regular files are opened, and read capped.
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return Err(refuse("not a regular file".into())),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refuse(format!("cannot read file: {e}"))),
    }
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refuse(format!("cannot read file: {e}"))),
    };
    let mut bytes = Vec::new();
    let limit = MAX_CONFIG_FILE_BYTES as u64 + 1;
    if let Err(e) = std::io::Read::read_to_end(&mut std::io::Read::take(file, limit), &mut bytes) {
        return Err(refuse(format!("cannot read file: {e}")));
    }
    if bytes.len() > MAX_CONFIG_FILE_BYTES {
        return Err(refuse(format!(
            "file is larger than {} MiB",
            MAX_CONFIG_FILE_BYTES >> 20
        )));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| refuse("file is not valid UTF-8".into()))
}

/// An error diagnostic about a whole file (no position).
pub(crate) fn file_error(path: &Path, message: String) -> Diagnostic {
    Diagnostic {
        level: Level::Error,
        message,
        file: Some(path.to_path_buf()),
        line: None,
        column: None,
        server: None,
        field: None,
    }
}
