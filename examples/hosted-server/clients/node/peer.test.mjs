// The official TypeScript client (@modelcontextprotocol/client 2.x), pinned to protocol
// 2026-07-28, drives every pausable flow of the hosted server through all its rounds.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const url = process.env.MRTR_SERVER_URL;
if (!url) throw new Error('MRTR_SERVER_URL is not set: run through ci/suites/60-peers.sh');

/** A connected client answering elicitations from `answers`, recording each question. */
async function connect(answers, token = 'alice-token') {
  const questions = [];
  const capabilities = answers ? { elicitation: { form: {} } } : {};
  const client = new Client(
    { name: 'mrtr-ts-peer', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  if (answers) {
    client.setRequestHandler('elicitation/create', async (request) => {
      questions.push(request.params.message);
      const content = answers.shift();
      return content ? { action: 'accept', content } : { action: 'decline' };
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, questions };
}

const text = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

test('book_table: two elicitation rounds, the date carried in sealed state', async () => {
  const { client, questions } = await connect([{ date: '2026-12-31' }, { confirm: true }]);
  try {
    const result = await client.callTool({ name: 'book_table', arguments: { party_size: 6 } });
    assert.match(text(result), /Booked a table for 6 .* on 2026-12-31 for alice/);
    assert.equal(questions.length, 2);
    assert.match(questions[0], /Which date/);
    assert.match(questions[1], /for 6 .* on 2026-12-31/);
  } finally {
    await client.close();
  }
});

test('plan_dinner prompt pauses once', async () => {
  const { client, questions } = await connect([{ restrictions: 'fish, soy' }], 'bob-token');
  try {
    const result = await client.getPrompt({ name: 'plan_dinner', arguments: { cuisine: 'japanese' } });
    const message = result.messages[0].content.text;
    assert.match(message, /vegetable tempura/);
    assert.doesNotMatch(message, /nigiri|tofu/);
    assert.equal(questions.length, 1);
  } finally {
    await client.close();
  }
});

test('bookings report resource pauses once', async () => {
  const { client, questions } = await connect([{ month: '2026-10' }], 'carol-token');
  try {
    const result = await client.readResource({ uri: 'mrtr://reports/bookings' });
    assert.match(result.contents[0].text, /^Bookings report for 2026-10\nrequested by carol/);
    assert.equal(questions.length, 1);
  } finally {
    await client.close();
  }
});

test('state-only rounds are retried', async () => {
  const { client } = await connect(null);
  try {
    const result = await client.callTool({ name: 'countdown', arguments: { pauses: 2 } });
    assert.equal(text(result), 'countdown finished after 2 pauses');
  } finally {
    await client.close();
  }
});

test('a client without elicitation gets -32021', async () => {
  const { client } = await connect(null);
  try {
    await assert.rejects(
      client.callTool({ name: 'book_table', arguments: { party_size: 2 } }),
      (err) => err.code === -32021,
    );
  } finally {
    await client.close();
  }
});
