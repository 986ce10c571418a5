//! `resources`, `prompts`, `read URI` and `prompt NAME`: what a person
//! browses on servers besides their tools. The servers are the selected
//! ones (see [`crate::target`]), connected concurrently through the
//! catalog crate's runtime; `read` and `prompt` without `--server` first
//! find the one server that lists the URI or prompt, and connect nothing
//! more once a named server is given.
//!
//! A listing one server cannot give is reported for that server and the
//! rest of the verb goes on: a listing the server does not implement is a
//! note (the catalog reads it as empty), any other failure an error that
//! makes the exit status 1, with whatever else was listed still printed.

use futures::future::join_all;
use mcp_catalog::sessions::Browsed;
use mcp_catalog::{CatalogError, ServerSet, SessionRuntime};
use mcp_config::LoadedConfig;
use serde_json::{Map, Value, json};

use crate::cli::{ListArgs, NamingArg, PromptArgs, ProviderArg, ReadArgs, TargetArgs};
use crate::context::Context;
use crate::output::{self, Outcome, errln, outln, shown, shown_lines, usage};
use crate::{connecting, target, tools, wait};

/// What one server answered to a listing.
struct Listed {
    server: String,
    outcome: Result<Browsed, CatalogError>,
}

impl Listed {
    /// The items listed, after printing the notes beside them; `None`
    /// after printing the error when the listing failed.
    fn items(self) -> Option<(String, Vec<Value>)> {
        match self.outcome {
            Ok(browsed) => {
                for note in &browsed.notes {
                    errln!(
                        "note: {}",
                        shown(&format!("server {:?}: {note}", self.server))
                    );
                }
                Some((self.server, browsed.items))
            }
            Err(error) => {
                errln!("error: {}", shown(&error.to_string()));
                None
            }
        }
    }
}

/// The selected servers that may start, and the notes on those held back.
fn runnable(config: &LoadedConfig) -> (Vec<String>, Vec<String>) {
    let set = ServerSet::from_loaded_with_hint(config, &crate::approve::approve_step);
    let names = set
        .runnable()
        .iter()
        .filter(|server| server.enabled)
        .map(|server| server.name.clone())
        .collect();
    let notes = set
        .withheld()
        .iter()
        .map(|note| note.message.clone())
        .collect();
    (names, notes)
}

/// Runs `work` against a runtime over the selected servers, then closes it.
fn with_runtime<T>(
    context: &Context,
    config: LoadedConfig,
    work: impl AsyncFnOnce(&SessionRuntime) -> T,
) -> anyhow::Result<T> {
    let connecting = connecting::Connecting::new()?;
    let runtime = tools::open_runtime(
        context,
        connecting.open(),
        config,
        NamingArg::Claw,
        ProviderArg::Generic,
        None,
    );
    connecting.run(async {
        let output = work(&runtime).await;
        runtime.shutdown().await;
        output
    })
}

/// `list` on each of `servers` at once, in name order.
async fn list_each(
    runtime: &SessionRuntime,
    servers: &[String],
    list: impl AsyncFn(&SessionRuntime, &str) -> Result<Browsed, CatalogError>,
) -> Vec<Listed> {
    let lists = servers.iter().map(|server| {
        let list = &list;
        async move {
            Listed {
                server: server.clone(),
                outcome: list(runtime, server).await,
            }
        }
    });
    wait::showing(runtime, join_all(lists)).await
}

fn print_notes(notes: &[String]) {
    for note in notes {
        errln!("warning: {}", shown(note));
    }
}

/// `resources [SERVER]`: every resource and resource template of the
/// selected servers.
pub(crate) fn resources(context: &Context, args: &ListArgs) -> anyhow::Result<Outcome> {
    let config = target::select(context, &args.target, args.server.as_deref())?;
    let (servers, notes) = runnable(&config);
    print_notes(&notes);
    let (resources, templates) = with_runtime(context, config, async |runtime| {
        let resources = list_each(runtime, &servers, async |runtime, server| {
            runtime.list_resources(server).await
        })
        .await;
        let templates = list_each(runtime, &servers, async |runtime, server| {
            runtime.list_resource_templates(server).await
        })
        .await;
        (resources, templates)
    })?;
    let mut failed = false;
    let mut documents = Vec::new();
    let mut printed = false;
    for (resources, templates) in resources.into_iter().zip(templates) {
        let server = resources.server.clone();
        let (resources, templates) = (resources.items(), templates.items());
        if resources.is_none() || templates.is_none() {
            failed = true;
        }
        if resources.is_none() && templates.is_none() {
            continue;
        }
        let resources = resources.map(|(_, items)| items).unwrap_or_default();
        let templates = templates.map(|(_, items)| items).unwrap_or_default();
        if context.json {
            documents.push(json!({
                "server": server,
                "resources": resources,
                "resourceTemplates": templates,
            }));
            continue;
        }
        if resources.is_empty() && templates.is_empty() {
            continue;
        }
        printed = true;
        outln!("{}", shown(&server));
        for resource in &resources {
            print_item(resource, Some("uri"));
        }
        for template in &templates {
            print_item(template, Some("uriTemplate"));
        }
    }
    if context.json {
        output::print_json(&json!({ "servers": documents }))?;
    } else if !printed && !failed {
        outln!("no resources");
    }
    Ok(outcome(failed))
}

/// `prompts [SERVER]`: every prompt of the selected servers, with its
/// arguments.
pub(crate) fn prompts(context: &Context, args: &ListArgs) -> anyhow::Result<Outcome> {
    let config = target::select(context, &args.target, args.server.as_deref())?;
    let (servers, notes) = runnable(&config);
    print_notes(&notes);
    let listed = with_runtime(context, config, async |runtime| {
        list_each(runtime, &servers, async |runtime, server| {
            runtime.list_prompts(server).await
        })
        .await
    })?;
    let mut failed = false;
    let mut documents = Vec::new();
    let mut printed = false;
    for listed in listed {
        let Some((server, prompts)) = listed.items() else {
            failed = true;
            continue;
        };
        if context.json {
            documents.push(json!({ "server": server, "prompts": prompts }));
            continue;
        }
        if prompts.is_empty() {
            continue;
        }
        printed = true;
        outln!("{}", shown(&server));
        for prompt in &prompts {
            print_item(prompt, None);
            for argument in prompt
                .get("arguments")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = text_of(argument, "name");
                let required = argument.get("required").and_then(Value::as_bool) == Some(true);
                let mut line = format!("      --arg {}=…", shown(name));
                if required {
                    line.push_str(" (required)");
                }
                let description = first_line(text_of(argument, "description"));
                if !description.is_empty() {
                    line.push_str(" — ");
                    line.push_str(&shown(description));
                }
                outln!("{line}");
            }
        }
    }
    if context.json {
        output::print_json(&json!({ "servers": documents }))?;
    } else if !printed && !failed {
        outln!("no prompts");
    }
    Ok(outcome(failed))
}

/// `read URI`: the resource's contents, from the named server or the one
/// server that lists the URI.
pub(crate) fn read(context: &Context, args: &ReadArgs) -> anyhow::Result<Outcome> {
    let config = target::select(context, &args.target, None)?;
    let (servers, notes) = runnable(&config);
    print_notes(&notes);
    let named = named_server(&args.target, &config, &servers);
    let uri = args.uri.as_str();
    let answer = with_runtime(context, config, async |runtime| {
        let server = match named {
            Some(server) => server,
            None => {
                let listed = list_each(runtime, &servers, async |runtime, server| {
                    runtime.list_resources(server).await
                })
                .await;
                owner_of(&listed, "resource", uri, |item| text_of(item, "uri") == uri)?
            }
        };
        let result = wait::showing(runtime, runtime.read_resource(&server, uri)).await?;
        Ok::<_, anyhow::Error>((server, result))
    })??;
    let (server, result) = answer;
    if context.json {
        output::print_json(&json!({ "server": server, "uri": uri, "result": result }))?;
        return Ok(Outcome::Ok);
    }
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if contents.is_empty() {
        outln!("(no contents)");
    }
    for content in &contents {
        print_content(content);
    }
    Ok(Outcome::Ok)
}

/// `prompt NAME`: the prompt's messages, from the named server or the one
/// server that lists the prompt.
pub(crate) fn prompt(context: &Context, args: &PromptArgs) -> anyhow::Result<Outcome> {
    let mut arguments = Map::new();
    for pair in &args.arg {
        let Some((key, value)) = pair.split_once('=').filter(|(key, _)| !key.is_empty()) else {
            return Err(usage(format!("--arg `{pair}`: expected KEY=VALUE")));
        };
        if arguments
            .insert(key.to_owned(), Value::from(value))
            .is_some()
        {
            return Err(usage(format!("--arg {key} is given more than once")));
        }
    }
    let config = target::select(context, &args.target, None)?;
    let (servers, notes) = runnable(&config);
    print_notes(&notes);
    let named = named_server(&args.target, &config, &servers);
    let name = args.name.as_str();
    let answer = with_runtime(context, config, async |runtime| {
        let server = match named {
            Some(server) => server,
            None => {
                let listed = list_each(runtime, &servers, async |runtime, server| {
                    runtime.list_prompts(server).await
                })
                .await;
                owner_of(&listed, "prompt", name, |item| {
                    text_of(item, "name") == name
                })?
            }
        };
        let result = wait::showing(runtime, runtime.get_prompt(&server, name, arguments)).await?;
        Ok::<_, anyhow::Error>((server, result))
    })??;
    let (server, result) = answer;
    if context.json {
        output::print_json(&json!({ "server": server, "prompt": name, "result": result }))?;
        return Ok(Outcome::Ok);
    }
    let description = text_of(&result, "description");
    if !description.is_empty() {
        outln!("{}", shown_lines(description));
    }
    for message in result
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        outln!("[{}]", shown(text_of(message, "role")));
        if let Some(content) = message.get("content") {
            print_content(content);
        }
    }
    Ok(Outcome::Ok)
}

/// The one server the person named, when there is one.
fn named_server(target: &TargetArgs, config: &LoadedConfig, servers: &[String]) -> Option<String> {
    (target::single(target, None, config) || servers.len() == 1)
        .then(|| servers.first().cloned())
        .flatten()
}

/// The one server whose listing has an item `matches`; an error naming the
/// candidates when several do, and when none does.
fn owner_of(
    listed: &[Listed],
    what: &str,
    wanted: &str,
    matches: impl Fn(&Value) -> bool,
) -> anyhow::Result<String> {
    let owners: Vec<&str> = listed
        .iter()
        .filter(|listed| {
            listed
                .outcome
                .as_ref()
                .is_ok_and(|browsed| browsed.items.iter().any(&matches))
        })
        .map(|listed| listed.server.as_str())
        .collect();
    match owners.as_slice() {
        [one] => Ok((*one).to_owned()),
        [] => {
            let failed: Vec<String> = listed
                .iter()
                .filter_map(|listed| listed.outcome.as_ref().err())
                .map(ToString::to_string)
                .collect();
            let mut message = format!(
                "no server lists the {what} `{wanted}`; name its server with --server NAME"
            );
            if !failed.is_empty() {
                message.push_str(&format!(" (not answered: {})", failed.join("; ")));
            }
            Err(usage(message))
        }
        many => Err(usage(format!(
            "the {what} `{wanted}` is listed by {}; choose one with --server NAME",
            many.join(", ")
        ))),
    }
}

/// `  URI  NAME "TITLE"  (MIME) — description` for a resource or
/// template, `  NAME "TITLE" — description` for a prompt.
fn print_item(item: &Value, uri_field: Option<&str>) {
    // What the person types next comes first: the uri, else the name.
    let name = text_of(item, "name");
    let mut line = match uri_field.map_or("", |field| text_of(item, field)) {
        "" => format!("  {}", shown(name)),
        uri => format!("  {}  {}", shown(uri), shown(name)),
    };
    let title = text_of(item, "title");
    if !title.is_empty() && title != name {
        line.push_str(&format!(" \"{}\"", shown(title)));
    }
    let mime = text_of(item, "mimeType");
    if !mime.is_empty() {
        line.push_str(&format!("  ({})", shown(mime)));
    }
    let description = first_line(text_of(item, "description"));
    if !description.is_empty() {
        line.push_str(" — ");
        line.push_str(&shown(description));
    }
    outln!("{line}");
}

/// One content block of a resource or prompt message.
fn print_content(content: &Value) {
    if let Some(text) = content.get("text").and_then(Value::as_str) {
        outln!("{}", shown_lines(text.trim_end_matches('\n')));
    } else if let Some(resource) = content.get("resource") {
        print_content(resource);
    } else if let Some(data) = content
        .get("blob")
        .or_else(|| content.get("data"))
        .and_then(Value::as_str)
    {
        let kind = match content.get("blob") {
            Some(_) => "blob",
            None => text_of(content, "type"),
        };
        outln!(
            "[{} {}, {} bytes of base64]",
            shown(kind),
            shown(text_of(content, "mimeType")),
            data.len()
        );
    } else {
        outln!("{}", shown_lines(&content.to_string()));
    }
}

fn text_of<'a>(value: &'a Value, field: &str) -> &'a str {
    value.get(field).and_then(Value::as_str).unwrap_or_default()
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

fn outcome(failed: bool) -> Outcome {
    if failed { Outcome::Failed } else { Outcome::Ok }
}
