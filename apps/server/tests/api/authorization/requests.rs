//! Requests made from the OpenAPI document: path parameters and every
//! id-like query or body field are filled with tenant A's records, other
//! required fields with plain sample values of their schema.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use serde_json::{Map, Value, json};

use super::seed::Records;

/// One documented operation, ready to send.
#[derive(Clone, Debug)]
pub struct Call {
    pub method: Method,
    pub uri: String,
    pub body: Option<Body>,
}

#[derive(Clone, Debug)]
pub enum Body {
    Json(Value),
    Form(String),
    /// Field name and value; `None` marks a file part (a few bytes of text).
    Multipart(Vec<(String, Option<String>)>),
    /// Bytes sent as `application/json` that are not JSON.
    NotJson(&'static str),
}

impl Call {
    pub fn request(&self) -> TestRequest {
        let req = TestRequest::default()
            .method(self.method.clone())
            .uri(&self.uri);
        match &self.body {
            None => req,
            Some(Body::Json(body)) => req.set_json(body),
            Some(Body::NotJson(bytes)) => req
                .insert_header(("content-type", "application/json"))
                .set_payload(*bytes),
            Some(Body::Form(body)) => req
                .insert_header(("content-type", "application/x-www-form-urlencoded"))
                .set_payload(body.clone()),
            Some(Body::Multipart(fields)) => fields
                .iter()
                .fold(
                    stoa_testkit::requests::Multipart::new(),
                    |form, (name, value)| match value {
                        Some(text) => form.text(name, text),
                        None => form.file(name, "matrix.txt", "text/plain", b"matrix"),
                    },
                )
                .into_request(req),
        }
    }
}

/// Which fields to fill beyond the path and the required ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// Also every optional id-like field (`tenantId`, `roleIds`, ...): the
    /// cross-tenant probe.
    Ids,
    /// Only what the operation requires.
    Required,
}

/// The request for `method path` of `doc`.
pub fn call(doc: &Value, path: &str, method: &str, records: &Records, fill: Fill) -> Call {
    let op = &doc["paths"][path][method];
    let mut uri = path.to_string();
    let mut query = Vec::new();
    for param in op["parameters"].as_array().into_iter().flatten() {
        let param = resolve(doc, param);
        let name = param["name"].as_str().unwrap_or_default();
        let required = param["required"].as_bool().unwrap_or(false);
        let id = id_for(name, path, records, fill);
        let value = match (id, required, fill) {
            (Some(id), _, Fill::Ids) | (Some(id), true, Fill::Required) => id,
            (None, true, _) => sample(doc, &param["schema"], name, path, records),
            _ => continue,
        };
        match param["in"].as_str() {
            Some("path") => uri = uri.replace(&format!("{{{name}}}"), &plain(&value)),
            Some("query") => match value {
                Value::Array(items) => query.extend(items.iter().map(|v| (name, plain(v)))),
                other => query.push((name, plain(&other))),
            },
            _ => {}
        }
    }
    if !query.is_empty() {
        let pairs: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        uri = format!("{uri}?{}", pairs.join("&"));
    }
    let content = &op["requestBody"]["content"];
    let body = if let Some(schema) = content.get("application/json").map(|c| &c["schema"]) {
        Some(Body::Json(object(doc, schema, path, records, fill)))
    } else if let Some(schema) = content
        .get("application/x-www-form-urlencoded")
        .map(|c| &c["schema"])
    {
        let fields = object(doc, schema, path, records, fill);
        let pairs: Vec<String> = fields
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("{k}={}", plain(v)))
            .collect();
        Some(Body::Form(pairs.join("&")))
    } else if let Some(schema) = content.get("multipart/form-data").map(|c| &c["schema"]) {
        // Binary properties are file parts; the rest are text fields.
        let schema = concrete(doc, schema);
        let fields = object(doc, schema, path, records, fill);
        let parts = fields
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, value)| {
                let binary = concrete(doc, &schema["properties"][name])["format"] == "binary";
                (name.clone(), (!binary).then(|| plain(value)))
            })
            .collect();
        Some(Body::Multipart(parts))
    } else {
        None
    };
    Call {
        method: Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
        uri,
        body,
    }
}

/// A value as it appears in a path or a query (uuids and sample words need
/// no escaping).
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Follows a `$ref` into `components`.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(reference) => {
            let pointer = reference.trim_start_matches('#');
            resolve(doc, doc.pointer(pointer).unwrap_or(&Value::Null))
        }
        None => schema,
    }
}

/// The schema itself, or its first alternative that is not `null`.
fn concrete<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    let schema = resolve(doc, schema);
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(first) = schema[key]
            .as_array()
            .and_then(|alts| alts.iter().find(|s| s["type"] != "null"))
        {
            return concrete(doc, first);
        }
    }
    schema
}

fn object(doc: &Value, schema: &Value, path: &str, records: &Records, fill: Fill) -> Value {
    // `allOf` (a flattened struct beside its own fields): every member's
    // fields, so ids beside the flattened part are filled too.
    if let Some(members) = resolve(doc, schema)["allOf"].as_array() {
        let mut out = Map::new();
        for member in members {
            if let Value::Object(fields) = object(doc, member, path, records, fill) {
                out.extend(fields);
            }
        }
        return Value::Object(out);
    }
    let schema = concrete(doc, schema);
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut out = Map::new();
    for (name, prop) in schema["properties"].as_object().into_iter().flatten() {
        let needed = required.contains(&name.as_str());
        match (id_for(name, path, records, fill), needed, fill) {
            (Some(id), _, Fill::Ids) | (Some(id), true, Fill::Required) => {
                out.insert(name.clone(), id);
            }
            (None, true, _) => {
                out.insert(name.clone(), sample(doc, prop, name, path, records));
            }
            _ => {}
        }
    }
    Value::Object(out)
}

/// A plain value of `schema`'s type.
fn sample(doc: &Value, schema: &Value, name: &str, path: &str, records: &Records) -> Value {
    let schema = concrete(doc, schema);
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::Array(types) => types.iter().find(|t| *t != "null").cloned(),
        other => Some(other.clone()),
    };
    match kind.as_ref().and_then(Value::as_str) {
        Some("integer" | "number") => json!(1),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") => object(doc, schema, path, records, Fill::Required),
        _ => match schema["format"].as_str() {
            Some("uuid") => json!(records.user),
            Some("email") => json!(format!("matrix-{name}@example.com")),
            Some("date-time") => json!("2030-01-01T00:00:00Z"),
            _ => json!("matrix"),
        },
    }
}

/// Tenant A's record a field names, when its name says it is an id.
pub fn id_for(name: &str, path: &str, records: &Records, fill: Fill) -> Option<Value> {
    let key = name.to_ascii_lowercase().replace('_', "");
    let value = match key.as_str() {
        // Sending only what an operation requires leaves out the checks that
        // depend on the input: a file attached to a record no module
        // declares asks for no entity's features (a deal would add
        // `customers.deals.view`).
        "entityid" if fill == Fill::Required => json!("customers:person"),
        "recordid" | "torecordid" | "fromrecordid" if fill == Fill::Required => {
            json!("alpha-person")
        }
        "id" => json!(records.id_of(path)),
        "ids" => json!([records.id_of(path)]),
        "actoruserid" => json!(records.user),
        // Action-log filter: the record an action touched.
        "resourceid" => json!(records.device),
        "tenantid" => json!(records.tenant),
        "organizationid" | "orgid" | "parentid" | "rootid" => json!(records.organization),
        "organizationids" | "childids" | "organizations" => json!([records.organization]),
        "userid" => json!(records.user),
        "roleid" => json!(records.role),
        "roleids" | "applytoroles" | "clearroleids" => json!([records.role]),
        "parentjobid" | "jobid" => json!(records.job),
        "variantid" => json!(records.variant),
        "keyid" | "apikeyid" => json!(records.api_key),
        "logid" | "actionlogid" => json!(records.action_log),
        "undotoken" | "redotoken" => json!(records.undo_token),
        "owneruserid" => json!(records.user),
        "pipelineid" => json!(records.pipeline),
        "pipelinestageid" => json!(records.stage),
        // Business rules: a rule (its uuid; also fills the string keys
        // `ruleId` / `setId` of create bodies), a set, a membership.
        "ruleid" => json!(records.rule),
        "setid" => json!(records.rule_set),
        "memberid" => json!(records.rule_member),
        // The record tenant A's seeded attachment belongs to: its deal (the
        // entity id attachments give deals).
        "entityid" => json!("customers:customer_deal"),
        "recordid" | "torecordid" | "fromrecordid" => json!(records.deal),
        "attachmentids" => json!([records.attachment]),
        // The client's own identifier of a device, not a uuid.
        "deviceid" => json!(records.device_key),
        // An item of a dashboard layout.
        "itemid" => json!(records.layout_item),
        // Registry ids of dashboard widgets, not records.
        "widgetid" => json!("dashboards.welcome"),
        "widgetids" => json!(["dashboards.welcome"]),
        // Registry ids of AI agents, not records.
        "agentid" => json!("customers.deal_analyzer"),
        // Registry ids of AI providers and their models.
        "providerid" => json!("openai"),
        "modelid" => json!("gpt-4o"),
        // Tenant A's seeded AI conversation (a client-chosen key, not a uuid).
        "conversationid" => json!("alpha-conversation"),
        // An AI chat session (a client-chosen uuid, no record of its own).
        "sessionid" => json!(records.deal),
        other if other.ends_with("id") || other.ends_with("ids") => panic!(
            "the matrix does not know which of tenant A's records `{name}` of {path} names: \
             map it in authorization/requests.rs (id_for) and seed the record"
        ),
        _ => return None,
    };
    Some(value)
}
