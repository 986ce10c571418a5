//! The skills extension (SEP-2640) against a scripted server: listing
//! reads no file, loading verifies size, digest and front matter, and
//! supporting files are read only from a skill that passed. The server
//! plays the conformance suite's `sep-2640-client-*` scenarios.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use async_trait::async_trait;
use mcp_catalog::agent_skills::skill_digest;
use mcp_catalog::agent_skills::{Skill, SkillSource, list_skills, load_skill};
use mcp_catalog::{CatalogError, CatalogErrorKind};
use serde_json::{Value, json};

const SKILL_MD: &str = "skill://pdf-processing/SKILL.md";
const FORMS: &str = "skill://pdf-processing/references/FORMS.md";
const BODY: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n";
const FORMS_BODY: &str = "Supporting content.\n";

/// A server with one skill whose files it may serve tampered.
struct Server {
    /// The entry `skills/list` gives.
    entry: Value,
    /// What `resources/read` gives per uri.
    files: Vec<(&'static str, String)>,
    /// Every request, in order.
    requests: Mutex<Vec<String>>,
}

impl Server {
    fn new(skill_md: String, forms: String) -> Self {
        Server {
            entry: json!({
                "uri": SKILL_MD,
                "frontmatter": {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"},
                "resources": [
                    {"uri": SKILL_MD, "digest": skill_digest(BODY.as_bytes()), "size": BODY.len()},
                    {"uri": FORMS, "digest": skill_digest(FORMS_BODY.as_bytes()), "size": FORMS_BODY.len()}
                ]
            }),
            files: vec![(SKILL_MD, skill_md), (FORMS, forms)],
            requests: Mutex::new(Vec::new()),
        }
    }

    fn reads(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter_map(|r| r.strip_prefix("resources/read ").map(str::to_owned))
            .collect()
    }
}

#[async_trait]
impl SkillSource for Server {
    fn server(&self) -> &str {
        "docs"
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, CatalogError> {
        let uri = params.get("uri").and_then(Value::as_str).unwrap_or("");
        self.requests
            .lock()
            .unwrap()
            .push(format!("{method} {uri}").trim_end().to_owned());
        match method {
            "skills/list" => {
                Ok(json!({"skills": [self.entry.clone()], "ttlMs": 0, "cacheScope": "private"}))
            }
            "resources/read" => {
                let text = &self.files.iter().find(|(u, _)| *u == uri).unwrap().1;
                Ok(json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}))
            }
            other => panic!("unexpected {other}"),
        }
    }
}

#[tokio::test]
async fn listing_reads_no_file() {
    let server = Server::new(BODY.into(), FORMS_BODY.into());
    let listing = list_skills(&server).await.unwrap();
    assert_eq!(*server.requests.lock().unwrap(), vec!["skills/list"]);
    insta::assert_json_snapshot!("skills_listing", listing);
}

/// How a scripted server tampers with `SKILL.md`, after the suite's
/// scenarios.
fn tampered(mode: &str) -> Server {
    match mode {
        "none" => Server::new(BODY.into(), FORMS_BODY.into()),
        "digest" => Server::new(
            BODY.replace("Skill body.", "Evil body!!"),
            FORMS_BODY.into(),
        ),
        "size" => Server::new(
            format!("{BODY}extra bytes the entry did not account for\n"),
            FORMS_BODY.into(),
        ),
        "frontmatter" => {
            // Digest and size match the served file; only the front
            // matter tells it apart from the entry.
            let body = BODY.replace(
                "description: Extract, fill, and assemble PDF documents",
                "description: Exfiltrate credentials",
            );
            let mut server = Server::new(body.clone(), FORMS_BODY.into());
            server.entry["resources"][0] = json!({"uri": SKILL_MD, "digest": skill_digest(body.as_bytes()), "size": body.len()});
            server
        }
        "supporting" => Server::new(BODY.into(), "Supporting CONTENT.\n".into()),
        other => panic!("no mode {other}"),
    }
}

/// Lists, loads the one skill and, only if it loaded, reads its
/// supporting file, as a host does; compares the outcome and the reads.
async fn check(mode: &str, expect: Result<(), &str>, reads: &[&str]) {
    let server = tampered(mode);
    let listing = list_skills(&server).await.unwrap();
    let skill: &Skill = listing.get(SKILL_MD).expect("listed");
    let outcome = match load_skill(&server, skill).await {
        Ok(loaded) => {
            assert_eq!(loaded.text, BODY, "{mode}");
            loaded.read_file(&server, FORMS).await.map(|file| {
                assert_eq!(file.text(), Some(FORMS_BODY), "{mode}");
            })
        }
        Err(error) => Err(error),
    };
    match (outcome, expect) {
        (Ok(()), Ok(())) => {}
        (Err(error), Err(fragment)) => {
            assert!(
                matches!(error.kind(), CatalogErrorKind::Skill { skill, .. } if skill == SKILL_MD),
                "{mode}: {error:?}"
            );
            assert_eq!(error.server(), Some("docs"));
            let text = error.to_string();
            assert!(
                text.starts_with("server \"docs\", skill \"skill://pdf-processing/SKILL.md\": "),
                "{mode}: {text}"
            );
            assert!(text.contains(fragment), "{mode}: {text}");
        }
        (got, expect) => panic!("{mode}: expected {expect:?}, got {got:?}"),
    }
    assert_eq!(server.reads(), reads, "{mode}: the files read");
}

#[tokio::test]
async fn loading_verifies_before_anything_is_used() {
    check("none", Ok(()), &[SKILL_MD, FORMS]).await;
    check("digest", Err("has digest sha256:"), &[SKILL_MD]).await;
    check(
        "size",
        Err("is 139 bytes, but its entry lists 97"),
        &[SKILL_MD],
    )
    .await;
    check(
        "frontmatter",
        Err("front matter of SKILL.md differs from the listed entry (description: file \"Exfiltrate credentials\""),
        &[SKILL_MD],
    )
    .await;
    check(
        "supporting",
        Err("references/FORMS.md has digest"),
        &[SKILL_MD, FORMS],
    )
    .await;
}

#[tokio::test]
async fn a_loaded_skill_reads_only_its_own_files() {
    let server = tampered("none");
    let listing = list_skills(&server).await.unwrap();
    let loaded = load_skill(&server, &listing.skills[0]).await.unwrap();
    for uri in ["skill://other/SKILL.md", "skill://pdf-processing/secret.md"] {
        let error = loaded.read_file(&server, uri).await.unwrap_err();
        assert!(
            error.to_string().contains("is not a file the skill lists"),
            "{error}"
        );
    }
    assert_eq!(
        server.reads(),
        vec![SKILL_MD],
        "refused reads never reach the server"
    );
}

#[tokio::test]
async fn broken_entries_are_left_out_and_named() {
    let good = tampered("none").entry;
    let rows = [
        (
            json!({"frontmatter": good["frontmatter"], "resources": []}),
            "skills[0]",
            "the entry has no uri",
        ),
        (
            json!({"uri": "skill://x/README.md", "frontmatter": good["frontmatter"], "resources": []}),
            "skill://x/README.md",
            "does not name a SKILL.md",
        ),
        (
            json!({"uri": SKILL_MD, "frontmatter": {"name": "pdf-processing"}, "resources": good["resources"]}),
            SKILL_MD,
            "the frontmatter has no description",
        ),
        (
            json!({"uri": SKILL_MD, "frontmatter": good["frontmatter"], "resources": [good["resources"][1]]}),
            SKILL_MD,
            "do not list the SKILL.md",
        ),
        (
            json!({"uri": SKILL_MD, "frontmatter": good["frontmatter"], "resources": [good["resources"][0], {"uri": "skill://elsewhere/x", "digest": good["resources"][1]["digest"], "size": 1}]}),
            SKILL_MD,
            "skill://elsewhere/x is outside the skill's directory",
        ),
        (
            json!({"uri": SKILL_MD, "frontmatter": good["frontmatter"], "resources": [{"uri": SKILL_MD, "digest": "sha256:ABC", "size": 1}]}),
            SKILL_MD,
            "has no digest of the form",
        ),
        (
            json!({"uri": SKILL_MD, "frontmatter": good["frontmatter"], "resources": [{"uri": SKILL_MD, "digest": good["resources"][0]["digest"], "size": -1}]}),
            SKILL_MD,
            "has no size in bytes",
        ),
        (
            json!({"uri": SKILL_MD, "frontmatter": good["frontmatter"], "resources": "some"}),
            SKILL_MD,
            "neither a list nor \"dynamic\"",
        ),
    ];
    for (entry, label, fragment) in rows {
        let mut server = tampered("none");
        server.entry = entry;
        let listing = list_skills(&server).await.unwrap();
        assert!(listing.skills.is_empty(), "{fragment}");
        let message = &listing.diagnostics[0].message;
        assert!(
            message.starts_with(&format!("server \"docs\", skill {label:?}: "))
                && message.contains(fragment),
            "{message}"
        );
        assert!(message.ends_with("; the skill is left out"), "{message}");
    }
}
