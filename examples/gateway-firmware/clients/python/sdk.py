"""What the SDK-driven tests share: a scripted elicitation callback and the flows."""

import re

from mcp import types


class Answers:
    """An elicitation callback answering each form from a script (a dict of values by property
    name, or None to decline, or "cancel"), recording every question."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.questions: list[str] = []

    async def __call__(self, context, params):
        self.questions.append(params.message)
        assert self.answers, f"unexpected question: {params.message}"
        answer = self.answers.pop(0)
        if answer is None:
            return types.ElicitResult(action="decline")
        if answer == "cancel":
            return types.ElicitResult(action="cancel")
        props = (params.requested_schema or {}).get("properties", {})
        content = {k: v for k, v in answer.items() if k in props}
        assert content, f"the form asks {list(props)}, the script answers {list(answer)}"
        return types.ElicitResult(action="accept", content=content)


def text_of(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def duties(text: str) -> list[int]:
    m = re.fullmatch(r"duty: \[(\d+), (\d+), (\d+), (\d+)\]", text.strip())
    assert m, f"get_outputs: {text!r}"
    return [int(x) for x in m.groups()]


CALIBRATED = re.compile(r"calibrated (\S+): reference (-?[\d.]+), offset (-?[\d.]+)")


def assert_calibrated(text: str, sensor: str, reference: float, offset: float) -> None:
    m = CALIBRATED.fullmatch(text.strip())
    assert m, f"calibrate: {text!r}"
    assert m.group(1) == sensor and float(m.group(2)) == reference \
        and float(m.group(3)) == offset, text


# The script `run_flows` answers from, in order.
SCRIPT = (
    {"confirm": True},                 # set_output 1 -> 42 %: confirmed
    {"confirm": False},                # set_output 1 -> 99 %: accepted, but "no"
    None,                              # set_output 1 -> 98 %: declined
    "cancel",                          # set_output 1 -> 97 %: cancelled
    {"reference": 25},                 # calibrate: reference
    {"offset": -3},                    # calibrate: offset
    {"confirm": True},                 # calibrate: confirm
    {"name": "Ferris"},                # multi_round: step 1
    {"color": "orange"},               # multi_round: step 2
)


async def run_flows(client, answers: Answers) -> list[str]:
    """The confirm flow (yes, no, decline, cancel), get_outputs, calibrate's three rounds and
    the conformance multi-round tool, in one session answered from SCRIPT. Returns what was
    checked."""
    done = []
    tools = await client.list_tools()
    names = {t.name for t in tools.tools}
    assert {"set_output", "get_outputs", "calibrate"} <= names, names
    done.append(f"tools/list: {len(names)} tools")

    result = await client.call_tool("set_output", {"channel": 1, "duty": 42})
    assert not result.is_error and text_of(result) == "channel 1 set to 42 %", text_of(result)
    for duty in (99, 98, 97):
        result = await client.call_tool("set_output", {"channel": 1, "duty": duty})
        assert text_of(result) == "nothing changed", (duty, text_of(result))
    result = await client.call_tool("get_outputs", {})
    assert duties(text_of(result))[1] == 42, text_of(result)
    done.append("set_output: yes sets 42 %; no, decline and cancel change nothing")

    result = await client.call_tool("calibrate", {"sensor": "t1"})
    assert_calibrated(text_of(result), "t1", 25, -3)
    done.append("calibrate: three rounds")

    result = await client.call_tool("test_input_required_result_multi_round", {})
    assert text_of(result) == "Ferris's favorite color is orange.", text_of(result)
    done.append("test_input_required_result_multi_round: two rounds")
    assert len(answers.questions) == len(SCRIPT), answers.questions
    return done
