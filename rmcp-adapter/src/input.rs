//! Building the input requests a paused call embeds, reading the client's answers, and
//! checking that the client declared what a request needs.

#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but part of 2026-07-28 MRTR

use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, ElicitRequest,
    ElicitRequestParams, ElicitationSchema, ErrorData, InputRequest, InputRequests, InputResponses,
    ListRootsRequest, SamplingMessage,
};
use serde_json::{Map, Value, json};

/// The input request kinds a client declared for one request (per request in 2026-07-28).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    /// Form elicitation (`elicitation: {}` or `elicitation.form`).
    pub form: bool,
    /// `sampling/createMessage`.
    pub sampling: bool,
    /// `roots/list`.
    pub roots: bool,
}

impl Declared {
    /// Reads the capabilities a request declared (`None`: nothing).
    pub fn from_capabilities(caps: Option<&ClientCapabilities>) -> Self {
        let Some(caps) = caps else {
            return Self::default();
        };
        Self {
            form: caps
                .elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some() || e.url.is_none()),
            sampling: caps.sampling.is_some(),
            roots: caps.roots.is_some(),
        }
    }

    /// `-32021` (MissingRequiredClientCapability) unless form elicitation was declared.
    pub fn require_form(&self) -> Result<(), ErrorData> {
        if self.form {
            Ok(())
        } else {
            Err(missing(json!({"elicitation": {"form": {}}})))
        }
    }
}

/// The `-32021` MissingRequiredClientCapability error naming what is required (a
/// `ClientCapabilities` object as JSON).
pub fn missing(required: Value) -> ErrorData {
    match serde_json::from_value::<ClientCapabilities>(required) {
        Ok(caps) => ErrorData::missing_required_client_capability(caps),
        Err(e) => ErrorData::internal_error(format!("capability description: {e}"), None),
    }
}

/// A form elicitation asking `message`, with `properties` (JSON Schema) all required unless
/// listed in `optional`. The schema is read through serde on every call; for a schema fixed
/// in the code, build it with rmcp's typed builder and pass it to [`form_with`], which skips
/// that conversion.
pub fn form(message: &str, properties: Value, optional: &[&str]) -> InputRequest {
    let required: Vec<&String> = properties
        .as_object()
        .map(|p| {
            p.keys()
                .filter(|k| !optional.contains(&k.as_str()))
                .collect()
        })
        .unwrap_or_default();
    let schema = json!({"type": "object", "properties": properties, "required": required});
    // A schema that does not parse still gives the client a valid (empty) form rather than
    // a panic.
    let requested_schema = serde_json::from_value(schema).unwrap_or_else(|e| {
        tracing::error!(error = %e, "invalid elicitation schema");
        ElicitationSchema::new(Default::default())
    });
    form_with(message, requested_schema)
}

/// A form elicitation asking `message` with a typed `schema`, built with rmcp's
/// [`ElicitationSchema::builder`]: the cheap way to ask. [`form`] reads its schema from JSON
/// through serde, which is costly even for one property (rmcp's schema types are untagged
/// enums, and serde_json formats an error string for every alternative it tries and refuses);
/// this converts nothing.
///
/// ```
/// use mrtr_rmcp::input;
/// use rmcp::model::{ElicitationSchema, StringFormat};
///
/// let schema = ElicitationSchema::builder()
///     .required_string_with("date", |s| s.format(StringFormat::Date))
///     .build()
///     .expect("a static schema");
/// let question = input::form_with("Which date?", schema);
/// let typed = serde_json::to_value(&question).unwrap();
/// let from_json = input::form("Which date?", serde_json::json!({"date": {"type": "string", "format": "date"}}), &[]);
/// assert_eq!(typed, serde_json::to_value(&from_json).unwrap());
/// ```
pub fn form_with(message: &str, schema: ElicitationSchema) -> InputRequest {
    InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_owned(),
            requested_schema: schema,
        },
    ))
}

/// A sampling request with one user message.
pub fn sampling(prompt: &str, max_tokens: u32) -> InputRequest {
    InputRequest::CreateMessage(CreateMessageRequest::new(CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(prompt)],
        max_tokens,
    )))
}

/// A `roots/list` request.
pub fn roots() -> InputRequest {
    InputRequest::ListRoots(ListRootsRequest::default())
}

/// One request under `key`.
pub fn one(key: &str, request: InputRequest) -> InputRequests {
    let mut map = InputRequests::new();
    map.insert(key.to_owned(), request);
    map
}

/// What the client answered to one elicitation.
#[derive(Debug, PartialEq)]
pub enum Answer<'a> {
    /// `action: "accept"` with object content.
    Accepted(&'a Map<String, Value>),
    /// `action: "decline"` or `"cancel"`.
    Refused,
    /// No answer under that key, or not an elicitation result.
    Missing,
}

/// The client's answer to the elicitation under `key`.
pub fn answer<'a>(responses: Option<&'a InputResponses>, key: &str) -> Answer<'a> {
    let Some(resp) = responses.and_then(|r| r.get(key)) else {
        return Answer::Missing;
    };
    match resp.get("action").and_then(Value::as_str) {
        Some("accept") => match resp.get("content").and_then(Value::as_object) {
            Some(content) => Answer::Accepted(content),
            None => Answer::Missing,
        },
        Some("decline") | Some("cancel") => Answer::Refused,
        _ => Answer::Missing,
    }
}

/// A non-empty string field of an accepted form.
pub fn text_field<'a>(content: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    content
        .get(field)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The text of a sampling result under `key`.
pub fn sampled_text<'a>(responses: Option<&'a InputResponses>, key: &str) -> Option<&'a str> {
    let content = responses?.get(key)?.get("content")?;
    // A single content block, or (2026-07-28) an array of blocks.
    let block = match content {
        Value::Array(blocks) => blocks.iter().find(|b| b["type"] == "text")?,
        other => other,
    };
    if block.get("type")?.as_str()? != "text" {
        return None;
    }
    block.get("text")?.as_str()
}

/// The root URIs of a `roots/list` result under `key`.
pub fn root_uris<'a>(responses: Option<&'a InputResponses>, key: &str) -> Option<Vec<&'a str>> {
    let roots = responses?.get(key)?.get("roots")?.as_array()?;
    roots
        .iter()
        .map(|r| r.get("uri").and_then(Value::as_str))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn responses(v: Value) -> InputResponses {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn answers_are_read_by_action() {
        let r = responses(json!({
            "a": {"action": "accept", "content": {"date": " 2026-12-24 "}},
            "d": {"action": "decline"},
            "n": 12345,
            "x": {"action": "accept"}
        }));
        let Answer::Accepted(content) = answer(Some(&r), "a") else {
            panic!("accepted")
        };
        assert_eq!(text_field(content, "date"), Some("2026-12-24"));
        assert_eq!(answer(Some(&r), "d"), Answer::Refused);
        assert_eq!(answer(Some(&r), "n"), Answer::Missing);
        assert_eq!(answer(Some(&r), "x"), Answer::Missing);
        assert_eq!(answer(Some(&r), "absent"), Answer::Missing);
        assert_eq!(answer(None, "a"), Answer::Missing);
    }

    #[test]
    fn sampling_and_roots_results() {
        let r = responses(json!({
            "s": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"},
            "img": {"role": "assistant", "content": {"type": "image", "data": "", "mimeType": "image/png"}},
            "roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]},
            "bad": {"roots": [{"name": "no uri"}]}
        }));
        assert_eq!(sampled_text(Some(&r), "s"), Some("Paris"));
        assert_eq!(sampled_text(Some(&r), "img"), None);
        assert_eq!(
            root_uris(Some(&r), "roots"),
            Some(vec!["file:///a", "file:///b"])
        );
        assert_eq!(root_uris(Some(&r), "bad"), None);
    }

    #[test]
    fn capabilities_from_meta() {
        let caps: ClientCapabilities = serde_json::from_value(json!({"sampling": {}})).unwrap();
        let c = Declared::from_capabilities(Some(&caps));
        assert!(c.sampling && !c.form && !c.roots);
        assert!(c.require_form().is_err());
        let caps: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {}, "roots": {}})).unwrap();
        let c = Declared::from_capabilities(Some(&caps));
        assert!(c.form && c.roots && !c.sampling);
        let url_only: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"url": {}}})).unwrap();
        assert!(!Declared::from_capabilities(Some(&url_only)).form);
        assert_eq!(Declared::from_capabilities(None), Declared::default());
    }
}
