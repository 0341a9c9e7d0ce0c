//! The envelope reader for bodies that are JSON but that serde_json cannot read (`1e400`, a
//! lone surrogate): [`unreadable`] reads a message's `id`, `method` and the shape of its
//! `params.requestState` while skipping every other value, and answers the message as
//! [`refuse_unreadable`] decides.

use std::fmt;

use http::{Response, StatusCode};
use mrtr_std::core::ErrorDetail;
use mrtr_std::ijson::Violation;
use mrtr_std::jsonrpc::{RequestState, refuse_unreadable};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

use super::{ResponseBody, respond};

/// The answer to a message whose text is JSON that serde_json cannot read (`1e400`, a lone
/// surrogate: rmcp would refuse the whole body with HTTP 415), as
/// [`refuse_unreadable`] decides from the envelope read by [`Envelope`]; `None` when the
/// text is not JSON at all (rmcp answers it).
pub(super) fn unreadable<B>(
    raw: &[u8],
    violation: &Violation,
    detail: ErrorDetail,
) -> Option<Response<ResponseBody<B>>> {
    let (id, error) = match serde_json::from_slice::<Envelope>(raw) {
        Ok(envelope) => {
            let state = match &envelope.params.request_state {
                Shape::Absent => RequestState::Absent,
                Shape::Text(token) => RequestState::Token(token),
                Shape::Other => RequestState::NotAString,
            };
            let method = envelope.method.as_deref();
            let error = refuse_unreadable(method, state, violation, detail);
            (envelope.id.unwrap_or(Value::Null), error)
        }
        // The violation is in the envelope itself (the method, the requestState, the id, a
        // name): still JSON, still answered, without an id to answer to.
        Err(_) => {
            serde_json::from_slice::<IgnoredAny>(raw).ok()?;
            let error = refuse_unreadable(None, RequestState::Absent, violation, detail);
            (Value::Null, error)
        }
    };
    Some(respond(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": id, "error": error.to_value()}),
    ))
}

/// A JSON-RPC message's envelope, read so that values serde_json cannot hold (`1e400`, a
/// lone surrogate) are skipped wherever they are not one of these members.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Params,
}

/// The part of `params` that [`refuse_unreadable`] needs.
#[derive(Default, Deserialize)]
struct Params {
    #[serde(default, rename = "requestState")]
    request_state: Shape,
}

/// The shape of a `requestState` member.
#[derive(Default)]
enum Shape {
    /// No such member.
    #[default]
    Absent,
    /// A string.
    Text(String),
    /// Anything else, `null` included (skipped unread).
    Other,
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Shape, E> {
        Ok(Shape::Text(v.to_owned()))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Shape::Other)
    }
}
