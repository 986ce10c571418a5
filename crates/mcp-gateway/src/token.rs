//! The bearer token of a gateway reachable beyond loopback: 256 random
//! bits, kept in a file only its owner can read (0600, created so, never
//! widened), read again on the next start so clients keep working. The
//! token never appears in a message; the file's path does.

use std::fs;
use std::io::Write as _;
use std::path::Path;

use rand::RngCore as _;

use crate::error::{GatewayError, GatewayErrorKind};

/// The token stored at `path`, made and stored first when there is none.
pub fn bearer_token(path: &Path) -> Result<String, GatewayError> {
    let failed =
        |source| GatewayError::io(GatewayErrorKind::Token(path.display().to_string()), source);
    match fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_owned()),
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(failed(error)),
    }
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let token: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(failed)?;
    }
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(failed)?;
    file.write_all(token.as_bytes()).map_err(failed)?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_made_once_private_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("gateway-token");
        let first = bearer_token(&path).unwrap();
        assert_eq!(first.len(), 64);
        assert_eq!(bearer_token(&path).unwrap(), first);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let other = dir.path().join("other");
        assert_ne!(bearer_token(&other).unwrap(), first);
    }
}
