-- wrk script for ci/bench-e2e.sh: the resume round trip of `book_table` over Streamable HTTP
-- (protocol 2026-07-28, stateless, JSON responses), chained.
--
-- Each connection sends either a fresh call (round 1: the server pauses and returns a
-- requestState asking for a date) or the resume of a requestState an earlier response
-- returned (round 2: the token is opened, checked and spent, and a new one is sealed asking
-- for confirmation). Every token is resumed exactly once, so a server with a replay cache
-- accepts every resume. Responses are checked: anything but the expected input_required
-- result counts as a failure, and `done` prints one tab-separated line for the script.

local version = "2026-07-28"
local meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. version .. '",'
    .. '"io.modelcontextprotocol/clientInfo":{"name":"bench-e2e","version":"1"},'
    .. '"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}'
local head = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"book_table",'
    .. '"arguments":{"party_size":4},' .. meta
local fresh_body = head .. '}}'
local answer = ',"inputResponses":{"date":{"action":"accept","content":{"date":"2026-12-24"}}}'
local headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = version,
    ["Mcp-Method"] = "tools/call",
    ["Mcp-Name"] = "book_table",
}

-- Per thread: tokens waiting for their resume (a FIFO), and the counts.
local queue, first, last = {}, 1, 0
fresh_ok, resumed_ok, failed = 0, 0, 0
local failure_shown = false

request = function()
    if last >= first then
        local token = queue[first]
        queue[first] = nil
        first = first + 1
        local body = head .. ',"requestState":"' .. token .. '"' .. answer .. '}}'
        return wrk.format("POST", nil, headers, body)
    end
    return wrk.format("POST", nil, headers, fresh_body)
end

response = function(status, _, body)
    if status == 200 and body:find('"resultType":"input_required"', 1, true) then
        local token = body:match('"requestState":"([^"]+)"')
        if token and body:find("Which date would you like", 1, true) then
            last = last + 1
            queue[last] = token
            fresh_ok = fresh_ok + 1
            return
        elseif token and body:find("Book a table for 4", 1, true) then
            resumed_ok = resumed_ok + 1
            return
        end
    end
    failed = failed + 1
    if not failure_shown then
        failure_shown = true
        io.stderr:write("unexpected response (" .. status .. "): " .. body:sub(1, 300) .. "\n")
    end
end

local threads = {}

setup = function(thread)
    table.insert(threads, thread)
end

done = function(summary, latency, _)
    local f, r, x = 0, 0, 0
    for _, t in ipairs(threads) do
        f = f + t:get("fresh_ok")
        r = r + t:get("resumed_ok")
        x = x + t:get("failed")
    end
    local secs = summary.duration / 1e6
    local errors = summary.errors.connect + summary.errors.read + summary.errors.write
        + summary.errors.status + summary.errors.timeout
    -- requests/s, round trips/s (resumes answered), p50 and p99 latency in µs (every request),
    -- failed responses, socket errors.
    io.write(string.format("E2E\t%.1f\t%.1f\t%.0f\t%.0f\t%d\t%d\n",
        summary.requests / secs, r / secs, latency:percentile(50), latency:percentile(99),
        x, errors))
end
