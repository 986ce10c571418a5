//! The crate's one error type: the server (or the step, for the host's
//! prompt and listener) named once, an [`AuthErrorKind`] saying what went
//! wrong, and the error underneath kept as its source. Messages never
//! contain secrets.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

/// An error from an auth provider. Messages never contain secrets.
///
/// Cheap to clone (the source is shared), so a transport can keep it in
/// its own cloneable error.
#[derive(Debug, Clone)]
pub struct AuthError {
    server: String,
    kind: AuthErrorKind,
    source: Option<Arc<dyn StdError + Send + Sync>>,
}

/// What went wrong in an [`AuthError`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthErrorKind {
    /// A step of the authorization flow failed.
    Failed {
        /// What failed, lowercase, without secrets.
        message: String,
    },
    /// The server's OAuth settings are unusable.
    Config {
        /// The setting, as written in the config (`oauth.callbackPort`).
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// An HTTP exchange with a metadata, registration or token endpoint failed.
    Http {
        /// The endpoint that was asked.
        url: String,
        /// What went wrong: the status, a refusal, a body that does not parse.
        message: String,
    },
    /// The protected-resource metadata names a different resource than the server.
    ResourceMismatch {
        /// The resource the metadata names.
        resource: String,
        /// The server's url, which the resource must match.
        url: String,
    },
    /// A URL a server or an authorization server named was refused by the
    /// [`UrlPolicy`](crate::UrlPolicy); nothing was sent to it.
    RefusedUrl {
        /// What the URL is for (`token endpoint`, `authorization page`).
        what: String,
        /// The URL as it was named.
        url: String,
        /// Why it was refused.
        reason: crate::Refusal,
    },
    /// Reading or writing stored credentials failed.
    Store {
        /// The credentials file or its folder.
        path: String,
        /// What the file system said.
        message: String,
    },
}

impl AuthError {
    /// An error about `server` (or the step that failed, when no server is
    /// known yet).
    pub fn new(server: impl Into<String>, kind: AuthErrorKind) -> AuthError {
        AuthError {
            server: server.into(),
            kind,
            source: None,
        }
    }

    /// A failed step of the flow.
    pub fn failed(server: impl Into<String>, message: impl Into<String>) -> AuthError {
        AuthError::new(
            server,
            AuthErrorKind::Failed {
                message: message.into(),
            },
        )
    }

    /// Unusable settings: `field` names the setting.
    pub fn config(
        server: impl Into<String>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> AuthError {
        AuthError::new(
            server,
            AuthErrorKind::Config {
                field: field.into(),
                message: message.into(),
            },
        )
    }

    /// A failed exchange with the endpoint at `url`.
    pub fn http(
        server: impl Into<String>,
        url: impl Into<String>,
        message: impl Into<String>,
    ) -> AuthError {
        AuthError::new(
            server,
            AuthErrorKind::Http {
                url: url.into(),
                message: message.into(),
            },
        )
    }

    /// A URL refused by the [`UrlPolicy`](crate::UrlPolicy).
    pub fn refused_url(
        server: impl Into<String>,
        what: impl Into<String>,
        url: impl Into<String>,
        reason: crate::Refusal,
    ) -> AuthError {
        AuthError::new(
            server,
            AuthErrorKind::RefusedUrl {
                what: what.into(),
                url: url.into(),
                reason,
            },
        )
    }

    /// Keeps `source` as the error underneath.
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> AuthError {
        self.source = Some(Arc::new(source));
        self
    }

    /// The same error about `server`: a host's prompt does not know which
    /// server it is signing in to, the flow that called it does.
    pub fn for_server(mut self, server: impl Into<String>) -> AuthError {
        self.server = server.into();
        self
    }

    /// The server the error is about.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// What went wrong.
    pub fn kind(&self) -> &AuthErrorKind {
        &self.kind
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let server = &self.server;
        match &self.kind {
            AuthErrorKind::Failed { message } => {
                write!(f, "authorization for {server} failed: {message}")
            }
            AuthErrorKind::Config { field, message } => {
                write!(f, "oauth settings for {server}: {field}: {message}")
            }
            AuthErrorKind::Http { url, message } => {
                write!(f, "request to {url} for {server} failed: {message}")
            }
            AuthErrorKind::ResourceMismatch { resource, url } => write!(
                f,
                "protected resource metadata for {server} names resource {resource}, which does not match {url}"
            ),
            AuthErrorKind::RefusedUrl { what, url, reason } => {
                write!(
                    f,
                    "authorization for {server} refused the {what} {url}: {reason}"
                )
            }
            AuthErrorKind::Store { path, message } => {
                write!(f, "credential store for {server} at {path}: {message}")
            }
        }
    }
}

impl StdError for AuthError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn StdError + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_is_kept_and_the_message_names_the_server_once() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let err = AuthError::new(
            "gh",
            AuthErrorKind::Store {
                path: "/s".into(),
                message: io.to_string(),
            },
        )
        .with_source(io);
        assert_eq!(err.to_string(), "credential store for gh at /s: denied");
        assert_eq!(err.server(), "gh");
        let source = StdError::source(&err).expect("a source");
        assert_eq!(source.to_string(), "denied");
        assert!(source.downcast_ref::<std::io::Error>().is_some());
    }
}
