//! What a subscription is: a listen request (its id and filter) or a session's resource URI,
//! and the tagged completion result that ends a listen stream.

use std::fmt::{self, Write};
use std::sync::Arc;

/// A JSON-RPC request id: the id of a `subscriptions/listen` request is its subscription id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A numeric id.
    Number(i64),
    /// A string id.
    String(String),
}

impl RequestId {
    /// The id as JSON (`7` or `"abc"`, escaped).
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        match self {
            Self::Number(n) => {
                let _ = write!(out, "{n}");
            }
            Self::String(s) => json_string(&mut out, s),
        }
        out
    }

    /// Bytes identifying the id (for the renewal stagger).
    pub(crate) fn seed_bytes(&self) -> Vec<u8> {
        match self {
            Self::Number(n) => n.to_be_bytes().to_vec(),
            Self::String(s) => s.as_bytes().to_vec(),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// The tagged completion result that gracefully ends a 2026-07-28 listen stream: the JSON-RPC
/// `result` for the listen request.
///
/// ```
/// use mrtr_subscriptions::{RequestId, completion_result_json};
///
/// assert_eq!(
///     completion_result_json(&RequestId::Number(7)),
///     r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":7}}"#
/// );
/// ```
pub fn completion_result_json(id: &RequestId) -> String {
    format!(
        r#"{{"resultType":"complete","_meta":{{"io.modelcontextprotocol/subscriptionId":{}}}}}"#,
        id.to_json()
    )
}

fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The notifications a listen asks for (`params.notifications`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NotificationFilter {
    /// `toolsListChanged`.
    pub tools_list_changed: bool,
    /// `promptsListChanged`.
    pub prompts_list_changed: bool,
    /// `resourcesListChanged`.
    pub resources_list_changed: bool,
    /// `resourceSubscriptions`: resource URIs whose updates are wanted.
    pub resource_subscriptions: Vec<String>,
}

/// The subscription a check is about.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// A 2026-07-28 `subscriptions/listen` stream.
    Listen(RequestId),
    /// A 2025-era `resources/subscribe` grant owned by a session.
    Resource {
        /// The `Mcp-Session-Id`.
        session: Arc<str>,
        /// The subscribed resource URI.
        uri: Arc<str>,
    },
}

impl Target {
    /// The `target` label of the subscription metrics: `listen` or `resource`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Self::Listen(_) => "listen",
            Self::Resource { .. } => "resource",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_ids_are_escaped_in_the_completion() {
        let id = RequestId::String("a\"b\\c\n\u{1}".into());
        assert_eq!(
            completion_result_json(&id),
            "{\"resultType\":\"complete\",\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":\
             \"a\\\"b\\\\c\\n\\u0001\"}}"
        );
    }
}
