"""The official Python SDK (mcp 2.x, mode="2026-07-28") drives every pausable flow of the
hosted server through all its rounds; its client runs the MRTR retry loop itself."""

import pytest
from mcp import types
from mcp.shared.exceptions import MCPError

from conftest import connect

pytestmark = pytest.mark.anyio


class Answers:
    """An elicitation callback answering from a script, recording every question."""

    def __init__(self, *answers: dict | None):
        self.answers = list(answers)
        self.questions: list[str] = []

    async def __call__(self, context, params):
        self.questions.append(params.message)
        answer = self.answers.pop(0)
        if answer is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=answer)


def text_of(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def test_book_table_takes_two_rounds_of_elicitation(server_url):
    answers = Answers({"date": "2026-12-24"}, {"confirm": True})
    async with connect(server_url, elicitation_callback=answers) as client:
        result = await client.call_tool("book_table", {"party_size": 4})
    assert not result.is_error
    text = text_of(result)
    # The date came back from the sealed state: round 3 only answered "confirm".
    assert "on 2026-12-24" in text and "for alice" in text and "for 4" in text, text
    assert len(answers.questions) == 2
    assert "Which date" in answers.questions[0]
    assert "2026-12-24" in answers.questions[1] and "for 4" in answers.questions[1]


async def test_book_table_reasks_an_invalid_date_then_cancels_when_not_confirmed(server_url):
    answers = Answers({"date": "tomorrow"}, {"date": "2027-01-02"}, {"confirm": False})
    async with connect(server_url, elicitation_callback=answers) as client:
        result = await client.call_tool("book_table", {"party_size": 2, "restaurant": "Rustacean"})
    assert "Booking cancelled" in text_of(result)
    assert '"tomorrow" is not a date' in answers.questions[1]
    assert "Rustacean on 2027-01-02" in answers.questions[2]


async def test_declining_the_date_cancels_the_booking(server_url):
    answers = Answers(None)
    async with connect(server_url, elicitation_callback=answers) as client:
        result = await client.call_tool("book_table", {"party_size": 2})
    assert text_of(result) == "Booking cancelled: no date was chosen."


async def test_prompt_pauses_once_and_filters_the_menu_chosen_in_round_one(server_url):
    answers = Answers({"restrictions": "dairy"})
    async with connect(server_url, elicitation_callback=answers) as client:
        result = await client.get_prompt("plan_dinner", {"cuisine": "italian"})
    text = result.messages[0].content.text
    assert "caponata" in text and "pizza" not in text and "risotto" not in text, text
    assert "Avoid: dairy" in text
    assert len(answers.questions) == 1


async def test_resource_pauses_once_and_keeps_who_asked(server_url):
    answers = Answers({"month": "2026-11"})
    async with connect(server_url, token="bob-token", elicitation_callback=answers) as client:
        result = await client.read_resource("mrtr://reports/bookings")
    text = result.contents[0].text
    assert text.startswith("Bookings report for 2026-11") and "requested by bob" in text, text
    assert len(answers.questions) == 1


async def test_state_only_rounds_are_retried_by_the_client(server_url):
    async with connect(server_url) as client:
        result = await client.call_tool("countdown", {"pauses": 3})
    assert text_of(result) == "countdown finished after 3 pauses"


async def test_a_client_without_elicitation_gets_missing_capability(server_url):
    async with connect(server_url) as client:
        with pytest.raises(MCPError) as err:
            await client.call_tool("book_table", {"party_size": 2})
    assert err.value.code == -32021
