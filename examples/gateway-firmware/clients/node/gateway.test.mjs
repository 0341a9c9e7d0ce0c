// The official TypeScript client (@modelcontextprotocol/client 2.x, pinned to 2026-07-28)
// against the m4f gateway over Streamable HTTP, with a bearer. Its packages are the hosted
// server's pinned ones: ci/suites/35-gateway.sh links ../../../hosted-server/clients/node/
// node_modules here after `npm ci` there.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const url = process.env.MRTR_GW_URL;
const token = process.env.MRTR_GW_TOKEN;
if (!url || !token) throw new Error('MRTR_GW_URL / MRTR_GW_TOKEN not set: run through ci/suites/35-gateway.sh');

/** A connected client answering forms from `answers` (by property name; null declines). */
async function connect(answers) {
  const questions = [];
  const capabilities = answers ? { elicitation: { form: {} } } : {};
  const client = new Client(
    { name: 'mrtr-ts-gateway-peer', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  if (answers) {
    client.setRequestHandler('elicitation/create', async (request) => {
      questions.push(request.params.message);
      const answer = answers.shift();
      if (answer === null) return { action: 'decline' };
      const props = Object.keys(request.params.requestedSchema?.properties ?? {});
      const content = Object.fromEntries(props.filter((p) => p in answer).map((p) => [p, answer[p]]));
      assert.ok(Object.keys(content).length > 0, `form asks ${props}, script has ${Object.keys(answer)}`);
      return { action: 'accept', content };
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, questions };
}

const text = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('');

test('set_output: confirmed, then declined and refused (nothing changed)', async () => {
  const { client, questions } = await connect([{ confirm: true }, null, { confirm: false }]);
  try {
    const tools = await client.listTools();
    const names = tools.tools.map((t) => t.name);
    for (const n of ['set_output', 'get_outputs', 'calibrate']) assert.ok(names.includes(n), names.join());
    assert.equal(text(await client.callTool({ name: 'set_output', arguments: { channel: 3, duty: 21 } })),
      'channel 3 set to 21 %');
    assert.equal(text(await client.callTool({ name: 'set_output', arguments: { channel: 3, duty: 80 } })),
      'nothing changed');
    assert.equal(text(await client.callTool({ name: 'set_output', arguments: { channel: 3, duty: 81 } })),
      'nothing changed');
    const outputs = text(await client.callTool({ name: 'get_outputs', arguments: {} }));
    const m = outputs.match(/^duty: \[(\d+), (\d+), (\d+), (\d+)\]$/);
    assert.ok(m, outputs);
    assert.equal(Number(m[4]), 21);
    assert.equal(questions.length, 3);
  } finally {
    await client.close();
  }
});

test('calibrate: three rounds; multi_round: two', async () => {
  const { client, questions } = await connect([
    { reference: 30 }, { offset: 4 }, { confirm: true }, { name: 'Ferris' }, { color: 'orange' },
  ]);
  try {
    const cal = text(await client.callTool({ name: 'calibrate', arguments: { sensor: 'h2' } }));
    assert.match(cal, /^calibrated h2: reference 30(\.0+)?, offset 4(\.0+)?$/);
    const mr = text(await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} }));
    assert.equal(mr, "Ferris's favorite color is orange.");
    assert.equal(questions.length, 5);
  } finally {
    await client.close();
  }
});

test('a client without elicitation gets -32021', async () => {
  const { client } = await connect(null);
  try {
    await assert.rejects(client.callTool({ name: 'set_output', arguments: { channel: 0, duty: 2 } }),
      (err) => err.code === -32021);
  } finally {
    await client.close();
  }
});
