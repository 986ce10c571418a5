//! The catalog's diagnostics on stderr: errors and warnings always, info
//! notes (a filter at work, a description cut, a server with no resources)
//! with `-v`, and one summary line that counts them, so a user sees what
//! the catalog left out even when nothing went wrong. Also the warnings a
//! tool call carries.

use mcp_catalog::{Catalog, CatalogCounts, ModelResult};
use mcp_config::Level;

use crate::output::{errln, shown};

/// Prints the catalog's errors and warnings, its info notes when
/// `verbose` is at least 1, and the summary line (what `tools` shows).
pub(crate) fn report(catalog: &Catalog, verbose: u8) {
    report_notes(catalog, verbose);
    errln!("{}", summary(&catalog.counts(), verbose));
}

/// [`report`] without the summary line, for verbs whose answer is not
/// the catalog (a `call` of a name the catalog lacks).
pub(crate) fn report_notes(catalog: &Catalog, verbose: u8) {
    for diagnostic in catalog.diagnostics() {
        let level = match diagnostic.level {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Info if verbose > 0 => "info",
            Level::Info => continue,
        };
        // Most messages already name the server; do not name it twice.
        if diagnostic
            .message
            .contains(&format!("\"{}\"", diagnostic.server))
        {
            errln!("{level}: {}", shown(&diagnostic.message));
        } else {
            errln!(
                "{level}: server `{}`: {}",
                shown(&diagnostic.server),
                shown(&diagnostic.message)
            );
        }
    }
}

/// Prints the warnings a call's result carries (arguments the tool's
/// schema does not describe).
pub(crate) fn report_call(result: &ModelResult) {
    for warning in &result.warnings {
        errln!("warning: {}", shown(warning));
    }
}

/// `3 servers, 41 tools (12 filtered by toolFilter, 2 descriptions cut);
/// 1 server withheld; 1 warning`: what is not zero, in a fixed order.
fn summary(counts: &CatalogCounts, verbose: u8) -> String {
    let mut line = format!(
        "{}, {}",
        plural(counts.servers, "server", "servers"),
        plural(counts.tools, "tool", "tools")
    );
    let mut hidden = Vec::new();
    if counts.filtered > 0 {
        hidden.push(format!("{} filtered by toolFilter", counts.filtered));
    }
    if counts.descriptions_cut > 0 {
        hidden.push(plural(
            counts.descriptions_cut,
            "description cut",
            "descriptions cut",
        ));
    }
    if !hidden.is_empty() {
        line.push_str(&format!(" ({})", hidden.join(", ")));
    }
    let mut servers = Vec::new();
    if counts.unavailable > 0 {
        servers.push(format!(
            "{} unavailable",
            plural(counts.unavailable, "server", "servers")
        ));
    }
    if counts.withheld > 0 {
        servers.push(format!(
            "{} withheld",
            plural(counts.withheld, "server", "servers")
        ));
    }
    let mut notes = Vec::new();
    if counts.errors > 0 {
        notes.push(plural(counts.errors, "error", "errors"));
    }
    if counts.warnings > 0 {
        notes.push(plural(counts.warnings, "warning", "warnings"));
    }
    if counts.infos > 0 {
        let infos = plural(counts.infos, "info note", "info notes");
        notes.push(match verbose {
            0 => format!("{infos} (-v shows them)"),
            _ => infos,
        });
    }
    for part in [servers, notes] {
        if !part.is_empty() {
            line.push_str("; ");
            line.push_str(&part.join(", "));
        }
    }
    line
}

fn plural(count: usize, one: &str, many: &str) -> String {
    match count {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(counts: CatalogCounts, verbose: u8, expect: &str) {
        assert_eq!(summary(&counts, verbose), expect, "{counts:?}");
    }

    #[test]
    fn summary_lines() {
        check(CatalogCounts::default(), 0, "0 servers, 0 tools");
        let one = CatalogCounts {
            servers: 1,
            tools: 1,
            ..CatalogCounts::default()
        };
        check(one, 0, "1 server, 1 tool");
        let busy = CatalogCounts {
            servers: 3,
            tools: 41,
            filtered: 12,
            descriptions_cut: 2,
            unavailable: 1,
            withheld: 2,
            errors: 1,
            warnings: 3,
            infos: 4,
        };
        check(
            busy,
            0,
            "3 servers, 41 tools (12 filtered by toolFilter, 2 descriptions cut); 1 server unavailable, 2 servers withheld; 1 error, 3 warnings, 4 info notes (-v shows them)",
        );
        check(
            busy,
            1,
            "3 servers, 41 tools (12 filtered by toolFilter, 2 descriptions cut); 1 server unavailable, 2 servers withheld; 1 error, 3 warnings, 4 info notes",
        );
        let cut = CatalogCounts {
            servers: 2,
            tools: 5,
            descriptions_cut: 1,
            warnings: 1,
            ..CatalogCounts::default()
        };
        check(cut, 0, "2 servers, 5 tools (1 description cut); 1 warning");
    }
}
