//! Paths of a plugin's entries, confined to the plugin's root: every
//! path field is resolved against it and refused when it leaves it,
//! symlinks followed.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::{PluginPaths, is_explicitly_relative, normalize, path_text};

/// Decides whether paths stay inside one canonical plugin root, following
/// symlinks. It remembers what it learnt about each folder, so checking the
/// many paths of one plugin costs a few `lstat`s, not a full walk each.
#[derive(Debug)]
pub(crate) struct RootGuard {
    root: PathBuf,
    seen: RefCell<HashMap<PathBuf, PathKind>>,
    /// Answers already given: a plugin's entries repeat the same few paths.
    verdicts: RefCell<HashMap<PathBuf, bool>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathKind {
    Missing,
    Plain,
    Symlink,
}

impl RootGuard {
    /// A guard for `root`, which must already be canonical.
    pub(crate) fn new(root: PathBuf) -> RootGuard {
        RootGuard {
            root,
            seen: RefCell::new(HashMap::new()),
            verdicts: RefCell::new(HashMap::new()),
        }
    }

    /// The canonical root.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the normalised `path` is inside the root, also after
    /// following every symlink on the way. A path that does not exist (yet)
    /// cannot escape through a symlink past its last existing folder.
    pub(crate) fn contains(&self, path: &Path) -> bool {
        if let Some(inside) = self.verdicts.borrow().get(path) {
            return *inside;
        }
        let inside = self.walk(path);
        self.verdicts
            .borrow_mut()
            .insert(path.to_path_buf(), inside);
        inside
    }

    fn walk(&self, path: &Path) -> bool {
        let Ok(rest) = path.strip_prefix(&self.root) else {
            return false;
        };
        let mut prefix = self.root.clone();
        for component in rest.components() {
            prefix.push(component);
            match self.kind(&prefix) {
                PathKind::Plain => {}
                PathKind::Missing => return true,
                PathKind::Symlink => return self.resolves_inside(path),
            }
        }
        true
    }

    fn kind(&self, path: &Path) -> PathKind {
        if let Some(kind) = self.seen.borrow().get(path) {
            return *kind;
        }
        let kind = match path.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => PathKind::Symlink,
            Ok(_) => PathKind::Plain,
            Err(_) => PathKind::Missing,
        };
        self.seen.borrow_mut().insert(path.to_path_buf(), kind);
        kind
    }

    /// The deepest existing ancestor of `path`, resolved, is inside the root.
    fn resolves_inside(&self, path: &Path) -> bool {
        path.ancestors()
            .find_map(|a| a.canonicalize().ok())
            .is_some_and(|real| real.starts_with(&self.root))
    }

    /// Whether the absolute `path`, *not* normalised, stays inside the root
    /// when the system resolves it: a `..` after a symlink climbs from the
    /// link's target, not from the link (`linkdir/../x` with `linkdir ->
    /// ../outside` is `<root>/../x`), so lexical normalisation cannot judge
    /// a path that is passed on as written. The longest prefix that exists
    /// is resolved; the missing rest cannot hold a symlink and is joined
    /// lexically.
    pub(crate) fn contains_as_resolved(&self, path: &Path) -> bool {
        // A relative path would resolve against this process's directory.
        if !path.is_absolute() {
            return false;
        }
        let components: Vec<Component<'_>> = path.components().collect();
        for end in (0..=components.len()).rev() {
            let prefix: PathBuf = components[..end].iter().collect();
            if prefix.as_os_str().is_empty() {
                break;
            }
            if let Ok(real) = prefix.canonicalize() {
                let rest: PathBuf = components[end..].iter().collect();
                return normalize(&real.join(rest)).starts_with(&self.root);
            }
        }
        false
    }
}

/// Which path field of a plugin entry [`PluginPaths::resolve`] resolves.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PathField<'a> {
    Command,
    /// One arg; `cwd` is the child's working directory as resolved so far.
    Arg {
        cwd: Option<&'a Path>,
    },
    Cwd,
    /// A remote entry's `headersHelper`: a command line whose program is
    /// judged like a `command`.
    HeadersHelper,
    /// The program of another command the entry names (an OAuth assertion
    /// source), judged like a `command`; `field` names it in diagnostics.
    Program {
        /// The field as diagnostics name it.
        field: &'static str,
    },
    /// A file the entry names (an OAuth private key), judged like a `cwd`:
    /// a relative path is resolved against the file that wrote it.
    File {
        /// The field as diagnostics name it.
        field: &'static str,
    },
}

impl PathField<'_> {
    /// The field's name in diagnostics.
    pub(crate) fn name(self) -> &'static str {
        match self {
            PathField::Command => "command",
            PathField::Arg { .. } => "args",
            PathField::Cwd => "cwd",
            PathField::HeadersHelper => "headersHelper",
            PathField::Program { field } | PathField::File { field } => field,
        }
    }
}

impl PluginPaths<'_> {
    /// Resolves one path of a plugin entry, `expanded` being `raw` after
    /// variable expansion (see the module docs for the rules). `Err` gives
    /// `expanded` back when the path leaves the plugin root.
    pub(crate) fn resolve(
        &self,
        field: PathField<'_>,
        raw: &str,
        expanded: String,
    ) -> Result<String, String> {
        let names_root = raw.contains("${CLAUDE_PLUGIN_ROOT}") || raw.contains("${PLUGIN_ROOT}");
        let relative = Path::new(&expanded).is_relative();
        let has_separator = expanded.contains(std::path::is_separator);
        let (base, rewrite) = match field {
            PathField::HeadersHelper => return self.resolve_helper(expanded),
            PathField::Command | PathField::Program { .. } => (
                self.command_base,
                relative && (has_separator || is_explicitly_relative(&expanded)),
            ),
            PathField::Cwd | PathField::File { .. } => (self.cwd_base, relative),
            PathField::Arg { cwd } => {
                if relative && is_explicitly_relative(&expanded) {
                    (self.args_base, true)
                } else {
                    return self
                        .check_arg(&expanded, names_root, cwd)
                        .then_some(expanded.clone())
                        .ok_or(expanded);
                }
            }
        };
        let path = if rewrite {
            base.join(&expanded)
        } else if names_root {
            PathBuf::from(&expanded)
        } else {
            return Ok(expanded);
        };
        // The normalised path is what is passed on, so it is what is checked.
        let normal = normalize(&path);
        if self.guard.contains(&normal) {
            Ok(path_text(&normal))
        } else {
            Err(expanded)
        }
    }

    /// A `headersHelper` command line with its program resolved like a
    /// `command` (it runs in the host's working directory, so a relative
    /// program would otherwise be looked up in the user's project). A line
    /// that does not split is passed on for the transport to refuse.
    fn resolve_helper(&self, line: String) -> Result<String, String> {
        let Ok(mut argv) = shell_words::split(&line) else {
            return Ok(line);
        };
        let Some(program) = argv.first() else {
            return Ok(line);
        };
        let relative = Path::new(program).is_relative()
            && (program.contains(std::path::is_separator) || is_explicitly_relative(program));
        if !relative {
            return Ok(line);
        }
        let normal = normalize(&self.helper_base.join(program));
        if !self.guard.contains(&normal) {
            return Err(line);
        }
        argv[0] = path_text(&normal);
        Ok(shell_words::join(argv))
    }

    /// Whether an arg passed on as written stays inside the root where the
    /// child resolves it: the arg itself, and the value of a
    /// `--flag=value`.
    fn check_arg(&self, arg: &str, names_root: bool, cwd: Option<&Path>) -> bool {
        let value = arg
            .strip_prefix('-')
            .and_then(|flag| flag.split_once('='))
            .map(|(_, value)| value);
        [Some(arg), value].into_iter().flatten().all(|text| {
            let path = Path::new(text);
            if path.is_absolute() {
                return !names_root || self.guard.contains_as_resolved(path);
            }
            if !(text.contains(std::path::is_separator) || is_explicitly_relative(text)) {
                return true;
            }
            // A `cwd` that was refused is still relative: judge from the
            // default instead (the entry is invalid anyway).
            let cwd = cwd.filter(|c| c.is_absolute()).unwrap_or(self.command_base);
            // Relative to a folder the plugin named outside its root: that
            // absolute folder was the author's explicit choice.
            if !self.guard.contains_as_resolved(cwd) {
                return true;
            }
            self.guard.contains_as_resolved(&cwd.join(path))
        })
    }
}
