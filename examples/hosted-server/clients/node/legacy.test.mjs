// The TypeScript SDK most clients use today, @modelcontextprotocol/sdk 1.x (Client +
// StreamableHTTPClientTransport), speaks the 2025 revisions: it initializes a session on the
// same endpoint the 2026-07-28 tests use. book_table asks through classic elicitation; the
// bookings report is subscribed with resources/subscribe and its update arrives on the
// session's GET stream; after a revocation the session is retired (HTTP 404) and the client
// starts over with a new session.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const url = process.env.MRTR_SERVER_URL;
const adminToken = process.env.MRTR_ADMIN_TOKEN;
if (!url || !adminToken) throw new Error('MRTR_SERVER_URL / MRTR_ADMIN_TOKEN not set: run through ci/suites/60-peers.sh');
const REPORT = 'mrtr://reports/bookings';

/** A connected 2025-era client; answers elicitations from `answers` (none: no capability). */
async function connect(token, answers) {
  const questions = [];
  const updates = [];
  const capabilities = answers ? { elicitation: {} } : {};
  const client = new Client({ name: 'mrtr-ts-sdk1', version: '1.0.0' }, { capabilities });
  if (answers) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      questions.push(request.params.message);
      const content = answers.shift();
      return content ? { action: 'accept', content } : { action: 'decline' };
    });
  }
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport, questions, updates };
}

const text = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

async function book(token = 'alice-token') {
  const { client } = await connect(token, [{ date: '2026-12-24' }, { confirm: true }]);
  try {
    const result = await client.callTool({ name: 'book_table', arguments: { party_size: 2 } });
    assert.match(text(result), /^Booked /);
  } finally {
    await client.close();
  }
}

async function admin(path, subject) {
  const response = await fetch(url.replace('/mcp', path), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ subject }),
  });
  assert.equal(response.status, 200);
  return response.json();
}

async function until(predicate, ms = 15000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await predicate()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return predicate();
}

test('a session in 2025-11-25 with a session id', async () => {
  const { client, transport } = await connect('alice-token', []);
  try {
    assert.equal(transport.protocolVersion, '2025-11-25');
    assert.ok(transport.sessionId, 'Mcp-Session-Id');
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'book_table'));
  } finally {
    await client.close();
  }
});

test('book_table through classic elicitation (elicitation/create in the session)', async () => {
  const { client, questions } = await connect('alice-token', [{ date: '2026-12-31' }, { confirm: true }]);
  try {
    const result = await client.callTool({ name: 'book_table', arguments: { party_size: 6 } });
    assert.match(text(result), /Booked a table for 6 .* on 2026-12-31 for alice/);
    assert.equal(questions.length, 2);
    assert.match(questions[0], /Which date/);
    assert.match(questions[1], /2026-12-31/);
  } finally {
    await client.close();
  }
});

test('without the elicitation capability the call fails with -32021', async () => {
  const { client } = await connect('alice-token', null);
  try {
    await assert.rejects(
      client.callTool({ name: 'book_table', arguments: { party_size: 2 } }),
      (e) => e.code === -32021 && /elicitation/.test(JSON.stringify(e.data)),
    );
  } finally {
    await client.close();
  }
});

test('subscribe to the bookings report and receive its update', async () => {
  const { client, updates } = await connect('carol-token', []);
  try {
    await client.subscribeResource({ uri: REPORT });
    await book();
    assert.ok(await until(() => updates.length > 0), 'no notifications/resources/updated');
    assert.equal(updates[0], REPORT);
    await client.unsubscribeResource({ uri: REPORT });
  } finally {
    await client.close();
  }
});

test('a revocation retires the session (404); the client reinitializes', async () => {
  const { client, transport } = await connect('bob-token', []);
  const oldSession = transport.sessionId;
  await client.subscribeResource({ uri: REPORT });
  const revoked = await admin('/admin/revoke', 'bob');
  try {
    assert.equal(revoked.reconciling, 1);
    // The session ends: every request with its id now gets HTTP 404.
    let status;
    assert.ok(
      await until(async () => {
        try {
          await client.ping();
          return false;
        } catch (e) {
          status = e.code;
          return true;
        }
      }),
      'the session was not retired',
    );
    assert.equal(status, 404);
    await client.close().catch(() => {});
    // Start over: a new session; while revoked, a subscribe is refused (-32002) and the new
    // session lives on.
    const again = await connect('bob-token', []);
    try {
      assert.notEqual(again.transport.sessionId, oldSession);
      await assert.rejects(again.client.subscribeResource({ uri: REPORT }), (e) => e.code === -32002);
      await again.client.ping();
      await admin('/admin/restore', 'bob');
      await again.client.subscribeResource({ uri: REPORT });
    } finally {
      await again.client.close();
    }
  } finally {
    await admin('/admin/restore', 'bob');
  }
});
