"""Talk to the gateway as a person would: the official Python MCP client (mcp 2.x,
protocol 2026-07-28) lists the gateway's tools, asks it to set an output, answers the
gateway's confirmation question at this terminal, and reads the outputs back.

    python talk.py http://127.0.0.1:8080/mcp [--token BEARER] [--channel 1 --duty 40]
    python talk.py stdio m0                   # starts the gateway itself (serve.sh m0 stdio)

Answers come from standard input: `y` confirms, anything else declines. With `--yes` every
question is answered yes without asking (for scripts).
"""

import argparse
import asyncio
import os
import sys

from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO_TOKEN = "gateway-demo-token"


def text_of(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


class Terminal:
    """The elicitation callback: shows the gateway's question, reads the answer."""

    def __init__(self, always_yes: bool):
        self.always_yes = always_yes
        self.asked = 0

    async def __call__(self, context, params):
        self.asked += 1
        fields = list((params.requested_schema or {}).get("properties", {}))
        print(f"gateway asks: {params.message}", flush=True)
        if self.always_yes:
            answer = "y"
            print("  answer: y (--yes)", flush=True)
        else:
            print("  [y/N] ", end="", flush=True)
            answer = sys.stdin.readline().strip().lower()
            if not sys.stdin.isatty():
                # The answer came from a pipe, unechoed: show it and end the prompt's line.
                print(answer or "(none)", flush=True)
        if answer not in ("y", "yes"):
            return types.ElicitResult(action="decline")
        # The gateway's confirmation forms hold one boolean field.
        return types.ElicitResult(action="accept", content={name: True for name in fields})


def client_for(args) -> Client:
    terminal = Terminal(args.yes)
    if args.target == "stdio":
        params = StdioServerParameters(
            command="bash", args=[os.path.join(HERE, "serve.sh"), args.family, "stdio"]
        )
        return Client(params, mode="2026-07-28", elicitation_callback=terminal)
    headers = {"Authorization": f"Bearer {args.token}"}
    transport = streamable_http_client(args.target, http_client=create_mcp_http_client(headers=headers))
    return Client(transport, mode="2026-07-28", elicitation_callback=terminal)


async def talk(args) -> int:
    async with client_for(args) as client:
        tools = await client.list_tools()
        print("tools:", ", ".join(t.name for t in tools.tools if not t.name.startswith("test_")))
        result = await client.call_tool("set_output", {"channel": args.channel, "duty": args.duty})
        print("set_output:", text_of(result))
        outputs = await client.call_tool("get_outputs", {})
        print("get_outputs:", text_of(outputs))
        return 1 if result.is_error else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", help="the gateway's /mcp URL, or 'stdio'")
    parser.add_argument("family", nargs="?", default="m4f", help="with stdio: m0, m3, m4f or rv32")
    parser.add_argument("--token", default=os.environ.get("GATEWAY_TOKEN", DEMO_TOKEN),
                        help="bearer token for HTTP (default: the demo token)")
    parser.add_argument("--channel", type=int, default=1)
    parser.add_argument("--duty", type=int, default=40)
    parser.add_argument("--yes", action="store_true", help="answer every question yes")
    args = parser.parse_args()
    if args.target != "stdio" and not args.target.startswith("http://"):
        parser.error("target is an http:// URL or 'stdio'")
    return asyncio.run(talk(args))


if __name__ == "__main__":
    sys.exit(main())
