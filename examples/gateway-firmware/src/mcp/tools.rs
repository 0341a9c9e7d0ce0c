//! The gateway's own tools: `set_output` and `calibrate` (which ask before they act) and
//! `get_outputs`; and the `tools/list` / `prompts/list` results.

use embedded_hal::pwm::SetDutyCycle;
use mrtr_core::cipher::Cipher;
use mrtr_json::{Value, Writer};

use super::Call;
use super::conformance::{self, PROMPT};
use super::flow::{CONFIRM_SCHEMA, Ctx, State};
use super::input::{Answer, answer};
use super::pwm::Outputs;
use super::reply::{Failure, Text, with_str};
use super::request::Needs;

/// Every tool the gateway serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// `set_output {channel, duty}`.
    SetOutput,
    /// `get_outputs {}`.
    GetOutputs,
    /// `calibrate {sensor}`.
    Calibrate,
    /// A conformance tool.
    Conformance(conformance::Tool),
}

const REFERENCE_FORM: &str =
    r#"{"type":"object","properties":{"reference":{"type":"number"}},"required":["reference"]}"#;
const OFFSET_FORM: &str =
    r#"{"type":"object","properties":{"offset":{"type":"number"}},"required":["offset"]}"#;

impl Tool {
    /// The tool named `name`.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "set_output" => Some(Self::SetOutput),
            "get_outputs" => Some(Self::GetOutputs),
            "calibrate" => Some(Self::Calibrate),
            other => conformance::Tool::named(other).map(Self::Conformance),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Self::SetOutput => "set_output",
            Self::GetOutputs => "get_outputs",
            Self::Calibrate => "calibrate",
            Self::Conformance(t) => t.name(),
        }
    }

    /// The request's own checks, before its token is spent: arguments (a tool error), then
    /// the capabilities it needs (`-32021`). `Ok(Some(message))` is a tool error.
    pub fn check(self, call: &Call<'_>) -> Result<Option<&'static str>, Failure> {
        let needs = match self {
            Self::SetOutput => {
                if channel_duty(call.args).is_none() {
                    return Ok(Some(
                        "channel must be an integer from 0 to 3 and duty an integer from 0 to 100",
                    ));
                }
                Needs::Form
            }
            Self::GetOutputs => Needs::Nothing,
            Self::Calibrate => {
                if sensor(call.args).is_none() {
                    return Ok(Some(
                        "sensor must be a non-empty string of at most 32 bytes",
                    ));
                }
                Needs::Form
            }
            Self::Conformance(t) => t.needs(),
        };
        needs.check(call.declared).map(|()| None)
    }

    /// One round (after [`Tool::check`] passed and the token was spent).
    pub fn run<C: Cipher>(
        self,
        call: &Call<'_>,
        ctx: &mut Ctx<'_, '_, '_, C>,
        outputs: &mut Outputs,
    ) -> Result<(), Failure> {
        match self {
            Self::SetOutput => set_output(call, ctx, outputs),
            Self::GetOutputs => ctx.done(|t| {
                let [a, b, c, d] = outputs.percent();
                t.str("duty: [")
                    .u64(a.into())
                    .str(", ")
                    .u64(b.into())
                    .str(", ")
                    .u64(c.into())
                    .str(", ")
                    .u64(d.into())
                    .str("]");
            }),
            Self::Calibrate => calibrate(call, ctx),
            Self::Conformance(t) => t.run(call, ctx),
        }
    }
}

fn channel_duty(args: Option<Value<'_>>) -> Option<(u64, u64)> {
    let args = args?;
    let channel = args.get("channel")?.as_u64().filter(|c| *c <= 3)?;
    let duty = args.get("duty")?.as_u64().filter(|d| *d <= 100)?;
    Some((channel, duty))
}

fn sensor(args: Option<Value<'_>>) -> Option<Value<'_>> {
    let s = args?.get("sensor")?;
    with_str(s, |t| !t.is_empty() && t.len() <= 32)
        .unwrap_or(false)
        .then_some(s)
}

fn set_output<C: Cipher>(
    call: &Call<'_>,
    ctx: &mut Ctx<'_, '_, '_, C>,
    outputs: &mut Outputs,
) -> Result<(), Failure> {
    let (channel, duty) = channel_duty(call.args).ok_or(Failure::internal("Internal error"))?;
    let ask = |ctx: &mut Ctx<'_, '_, '_, C>| {
        ctx.pause(br#"{"step":"confirm"}"#, |q| {
            q.form(
                "confirm",
                |t| {
                    t.str("Set channel ")
                        .u64(channel)
                        .str(" to ")
                        .u64(duty)
                        .str(" %?");
                },
                CONFIRM_SCHEMA,
            )
        })
    };
    if call.state.is_none() {
        return ask(ctx);
    }
    match answer(call.responses, "confirm") {
        Answer::Accepted(form) => match form.get("confirm").and_then(|v| v.as_bool()) {
            Some(true) => {
                let set = outputs
                    .channel(channel as usize)
                    .map(|mut ch| ch.set_duty_cycle_percent(duty as u8));
                if set != Some(Ok(())) {
                    return Err(Failure::internal(
                        "Internal error: the output refused the duty cycle",
                    ));
                }
                defmt::info!("set_output: channel {=u64} at {=u64} %", channel, duty);
                ctx.done(|t| {
                    t.str("channel ")
                        .u64(channel)
                        .str(" set to ")
                        .u64(duty)
                        .str(" %");
                })
            }
            Some(false) => nothing_changed(ctx),
            None => ask(ctx),
        },
        Answer::Refused => nothing_changed(ctx),
        Answer::Missing => ask(ctx),
    }
}

fn nothing_changed<C: Cipher>(ctx: &mut Ctx<'_, '_, '_, C>) -> Result<(), Failure> {
    ctx.done(|t| {
        t.str("nothing changed");
    })
}

/// A finite number answered in the form under `key` (its field of the same name); `Err`
/// when the user declined or cancelled.
fn number(call: &Call<'_>, key: &str) -> Result<Option<f64>, ()> {
    match answer(call.responses, key) {
        Answer::Accepted(form) => Ok(form
            .get(key)
            .and_then(|v| v.as_f64())
            .filter(|x| x.is_finite())),
        Answer::Refused => Err(()),
        Answer::Missing => Ok(None),
    }
}

fn calibrate<C: Cipher>(call: &Call<'_>, ctx: &mut Ctx<'_, '_, '_, C>) -> Result<(), Failure> {
    let sensor = sensor(call.args).ok_or(Failure::internal("Internal error"))?;
    let unreadable = Failure::internal("Internal error: cannot read the paused state");
    let Some(state) = call.state else {
        return ask(ctx, sensor, None, None);
    };
    let step = state.get("step").ok_or(unreadable)?;
    let reference = state.get("reference").and_then(|v| v.as_f64());
    let offset = state.get("offset").and_then(|v| v.as_f64());
    if step.str_eq("reference") {
        match number(call, "reference") {
            Ok(Some(r)) => ask(ctx, sensor, Some(r), None),
            Ok(None) => ask(ctx, sensor, None, None),
            Err(()) => nothing_changed(ctx),
        }
    } else if step.str_eq("offset") {
        let r = reference.ok_or(unreadable)?;
        match number(call, "offset") {
            Ok(Some(o)) => ask(ctx, sensor, Some(r), Some(o)),
            Ok(None) => ask(ctx, sensor, Some(r), None),
            Err(()) => nothing_changed(ctx),
        }
    } else if step.str_eq("confirm") {
        let (r, o) = reference.zip(offset).ok_or(unreadable)?;
        match answer(call.responses, "confirm") {
            Answer::Accepted(form) => match form.get("confirm").and_then(|v| v.as_bool()) {
                Some(true) => ctx.done(|t| {
                    t.str("calibrated ")
                        .value(sensor, false)
                        .str(": reference ")
                        .number(r)
                        .str(", offset ")
                        .number(o);
                }),
                Some(false) => nothing_changed(ctx),
                None => ask(ctx, sensor, Some(r), Some(o)),
            },
            Answer::Refused => nothing_changed(ctx),
            Answer::Missing => ask(ctx, sensor, Some(r), Some(o)),
        }
    } else {
        Err(unreadable)
    }
}

/// Asks the next of calibrate's three questions: the reference, the offset, or the
/// confirmation, with the answers so far sealed in the state.
fn ask<C: Cipher>(
    ctx: &mut Ctx<'_, '_, '_, C>,
    sensor: Value<'_>,
    reference: Option<f64>,
    offset: Option<f64>,
) -> Result<(), Failure> {
    let mut state = State::new();
    let bytes = state
        .build(|w: &mut Writer<'_>| {
            let step: &[u8] = match (reference, offset) {
                (None, _) => b"reference",
                (Some(_), None) => b"offset",
                (Some(_), Some(_)) => b"confirm",
            };
            w.raw(br#"{"step":""#).raw(step).raw(b"\"");
            for (name, x) in [(&b"reference"[..], reference), (b"offset", offset)] {
                if let Some(x) = x {
                    w.raw(b",\"").raw(name).raw(b"\":");
                    let _ = mrtr_json::write_number(x, &mut *w);
                }
            }
            w.raw(b"}");
        })
        .ok_or(Failure::internal(
            "Internal error: cannot encode the paused state",
        ))?;
    let name = |t: &mut Text<'_, '_>| {
        t.value(sensor, false);
    };
    ctx.pause(bytes, |q| match (reference, offset) {
        (None, _) => q.form(
            "reference",
            |t| {
                t.str("Reference reading for sensor ");
                name(t);
                t.str("?");
            },
            REFERENCE_FORM,
        ),
        (Some(r), None) => q.form(
            "offset",
            |t| {
                t.str("Offset for sensor ");
                name(t);
                t.str(" (reference ").number(r).str(")?");
            },
            OFFSET_FORM,
        ),
        (Some(r), Some(o)) => q.form(
            "confirm",
            |t| {
                t.str("Calibrate sensor ");
                name(t);
                t.str(" with reference ")
                    .number(r)
                    .str(" and offset ")
                    .number(o)
                    .str("?");
            },
            CONFIRM_SCHEMA,
        ),
    })
}

/// Writes the `tools/list` result.
pub fn list(w: &mut Writer<'_>) {
    w.raw(br#"{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":["#);
    let own: [(&str, &str, &str); 3] = [
        (
            "set_output",
            "Sets a PWM output's duty cycle, after the user confirms",
            r#"{"type":"object","properties":{"channel":{"type":"integer","minimum":0,"maximum":3},"duty":{"type":"integer","minimum":0,"maximum":100}},"required":["channel","duty"]}"#,
        ),
        (
            "get_outputs",
            "Reads the four PWM outputs' duty cycles",
            r#"{"type":"object","properties":{}}"#,
        ),
        (
            "calibrate",
            "Calibrates a sensor: asks for a reference, an offset, then confirmation",
            r#"{"type":"object","properties":{"sensor":{"type":"string"}},"required":["sensor"]}"#,
        ),
    ];
    let conformance = conformance::Tool::ALL
        .into_iter()
        .map(|t| (t.name(), t.description(), r#"{"type":"object"}"#));
    for (i, (name, description, schema)) in own.into_iter().chain(conformance).enumerate() {
        if i > 0 {
            w.raw(b",");
        }
        w.raw(br#"{"name":"#)
            .string(name)
            .raw(br#","description":"#)
            .string(description)
            .raw(br#","inputSchema":"#)
            .raw(schema.as_bytes())
            .raw(b"}");
    }
    w.raw(b"]}");
}

/// Writes the `prompts/list` result.
pub fn prompts(w: &mut Writer<'_>) {
    w.raw(br#"{"resultType":"complete","ttlMs":0,"cacheScope":"private","prompts":[{"name":"#)
        .string(PROMPT)
        .raw(br#","description":"Asks for context before building the prompt"}]}"#);
}
