//! The ranking behind `search_tools`: Okapi BM25 over each tool's name,
//! description and parameter names, with name and parameter words
//! weighted up. Plain arithmetic over the catalog's own text, no model and
//! no randomness, so the same catalog and query always rank the same way.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::tool::CatalogTool;

/// BM25's term-frequency saturation: a word said ten times counts little
/// more than one said three times.
const K1: f64 = 1.2;
/// BM25's length normalisation: a long description does not win by
/// saying more words.
const B: f64 = 0.75;

/// How much one occurrence counts, by where it is. A word of the name
/// says most about what a tool does; parameter names come next.
const NAME_WEIGHT: f64 = 3.0;
const PARAMETER_WEIGHT: f64 = 2.0;
const DESCRIPTION_WEIGHT: f64 = 1.0;

/// Words too common to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on",
    "or", "that", "the", "this", "to", "with",
];

/// Lowercase words of `text`: split at every character that is not a
/// letter or digit and at a lower-to-upper case change (`createIssue` is
/// `create issue`, `list_repos` is `list repo`), stop words left out, and
/// one final `s` dropped from words over three letters not ending in `ss`,
/// so a plural finds its singular (both sides are folded the same way,
/// so a word like `status` still finds itself).
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    let mut flush = |current: &mut String| {
        if !current.is_empty() && !STOP_WORDS.contains(&current.as_str()) {
            if current.len() > 3 && current.ends_with('s') && !current.ends_with("ss") {
                current.pop();
            }
            words.push(std::mem::take(current));
        }
        current.clear();
    };
    for c in text.chars() {
        if !c.is_alphanumeric() {
            flush(&mut current);
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            flush(&mut current);
        }
        previous_lower = c.is_lowercase() || c.is_numeric();
        current.extend(c.to_lowercase());
    }
    flush(&mut current);
    words
}

/// One tool as the ranking reads it: weighted counts of its words.
struct Document {
    counts: BTreeMap<String, f64>,
    length: f64,
}

impl Document {
    fn of(tool: &CatalogTool) -> Self {
        let mut counts: BTreeMap<String, f64> = BTreeMap::new();
        let mut length = 0.0;
        let mut add = |text: &str, weight: f64| {
            for word in words(text) {
                *counts.entry(word).or_default() += weight;
                length += weight;
            }
        };
        add(tool.name(), NAME_WEIGHT);
        add(tool.description(), DESCRIPTION_WEIGHT);
        if let Some(Value::Object(properties)) = tool.input_schema().get("properties") {
            for name in properties.keys() {
                add(name, PARAMETER_WEIGHT);
            }
        }
        Document { counts, length }
    }
}

/// The most distinct words of a query the ranking reads. A query is the
/// model's text, and the model may have been steered by a server's
/// output: past this, ranking would cost words × tools for nothing a
/// search needs.
pub(crate) const MAX_QUERY_TERMS: usize = 32;

/// The distinct words of `query`, the first [`MAX_QUERY_TERMS`] of them in
/// the order the query says them.
fn query_terms(query: &str) -> BTreeSet<String> {
    let mut terms = BTreeSet::new();
    for word in words(query) {
        if terms.len() == MAX_QUERY_TERMS {
            break;
        }
        terms.insert(word);
    }
    terms
}

/// The indices of `candidates` (into `tools`) matching `query`, best
/// first, at most `limit`; a tool matching no word of the query is never
/// returned. Equal scores keep catalog order.
pub(crate) fn rank(
    tools: &[CatalogTool],
    candidates: &[usize],
    query: &str,
    limit: usize,
) -> Vec<usize> {
    let terms = query_terms(query);
    if terms.is_empty() || candidates.is_empty() || limit == 0 {
        return Vec::new();
    }
    let documents: Vec<Document> = candidates
        .iter()
        .map(|&i| Document::of(&tools[i]))
        .collect();
    let total = documents.len() as f64;
    let average = (documents.iter().map(|d| d.length).sum::<f64>() / total).max(1.0);
    // Inverse document frequency, BM25's form (never negative): a word
    // few tools use counts more than one most of them use.
    let idf: Vec<(&str, f64)> = terms
        .iter()
        .map(|term| {
            let with = documents
                .iter()
                .filter(|d| d.counts.contains_key(term))
                .count() as f64;
            (
                term.as_str(),
                (1.0 + (total - with + 0.5) / (with + 0.5)).ln(),
            )
        })
        .collect();
    let mut scored: Vec<(f64, usize)> = documents
        .iter()
        .zip(candidates)
        .filter_map(|(document, &index)| {
            let norm = K1 * (1.0 - B + B * document.length / average);
            let score: f64 = idf
                .iter()
                .filter_map(|(term, idf)| {
                    let tf = *document.counts.get(*term)?;
                    Some(idf * tf * (K1 + 1.0) / (tf + norm))
                })
                .sum();
            (score > 0.0).then_some((score, index))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(limit);
    scored.into_iter().map(|(_, index)| index).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_at_case_and_punctuation() {
        let check = |text: &str, expect: &[&str]| assert_eq!(words(text), expect, "{text}");
        check("github__create_issue", &["github", "create", "issue"]);
        check("listRepos", &["list", "repo"]);
        check("Read the HTML files.", &["read", "html", "file"]);
        check("status process its", &["statu", "process", "its"]);
        check("v2Upload s3-bucket", &["v2", "upload", "s3", "bucket"]);
        check("", &[]);
        check("the of", &[]);
    }

    #[test]
    fn a_query_is_read_up_to_its_first_distinct_words() {
        let many: Vec<String> = (0..10_000).map(|i| format!("w{i}")).collect();
        let query = format!("repeat repeat {}", many.join(" "));
        let terms = query_terms(&query);
        assert_eq!(terms.len(), MAX_QUERY_TERMS);
        assert!(terms.contains("repeat"));
        assert!(terms.contains("w30"));
        assert!(!terms.contains("w31"));
    }
}
