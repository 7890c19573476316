/**
 * Tool calls written as text, in each format models really use: well-formed ones become calls, broken ones
 * whose intent is unmistakable become malformed calls (so the model hears why), and prose, answers with JSON
 * in them and reasoning blocks stay text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractTextToolCalls, scanJson, textToolResults, withoutThinking, type ToolCallFormatOption } from '../../server/src/runner/agents/tool-call-formats.ts';

const tools = new Set(['travel_search_flights', 'travel_hold_flight']);
const extract = (text: string, option: ToolCallFormatOption = 'auto') => extractTextToolCalls(text, option, tools);
const simple = (text: string, option: ToolCallFormatOption = 'auto') => {
  const found = extract(text, option);
  return found && { format: found.format, calls: found.calls.map((c) => (c.problem ? { name: c.name, problem: c.problem.code } : { name: c.name, arguments: c.arguments, ...(c.id ? { id: c.id } : {}) })) };
};

test('hermes / qwen: <tool_call> tags, several per message, text around them, an unclosed last tag, the Qwen3-Coder XML body', () => {
  assert.deepEqual(simple('Let me look.\n<tool_call>\n{"name": "travel_search_flights", "arguments": {"from": "AMS", "to": "LIS"}}\n</tool_call>'), {
    format: 'hermes',
    calls: [{ name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS' } }],
  });
  assert.deepEqual(simple('<tool_call>{"name": "travel_hold_flight", "arguments": {"flight_id": "A"}}</tool_call><tool_call>{"name": "travel_hold_flight", "arguments": "{\\"flight_id\\": \\"B\\"}"}'), {
    format: 'hermes',
    calls: [
      { name: 'travel_hold_flight', arguments: { flight_id: 'A' } },
      { name: 'travel_hold_flight', arguments: { flight_id: 'B' } },
    ],
  });
  assert.deepEqual(simple('<tool_call>\n<function=travel_hold_flight>\n<parameter=flight_id>\nAA-500\n</parameter>\n<parameter=seats>\n2\n</parameter>\n</function>\n</tool_call>'), {
    format: 'hermes',
    calls: [{ name: 'travel_hold_flight', arguments: { flight_id: 'AA-500', seats: 2 } }],
  });
});

test('hermes: broken JSON, no name and non-object arguments are malformed calls, the legible name kept', () => {
  assert.deepEqual(simple('<tool_call>{"name": "travel_hold_flight", "arguments": {"flight_id": "AA-5</tool_call>'), { format: 'hermes', calls: [{ name: 'travel_hold_flight', problem: 'bad-json' }] });
  assert.deepEqual(simple('<tool_call>{"arguments": {"flight_id": "AA-500"}}</tool_call>'), { format: 'hermes', calls: [{ name: undefined, problem: 'no-name' }] });
  assert.deepEqual(simple('<tool_call>{"name": "travel_hold_flight", "arguments": ["AA-500"]}</tool_call>'), { format: 'hermes', calls: [{ name: 'travel_hold_flight', problem: 'arguments-not-object' }] });
});

test('llama 3: a bare JSON call with parameters, several joined by ;, <|python_tag|> with JSON or a Python call, the 3.2 pythonic list', () => {
  assert.deepEqual(simple('{"name": "travel_search_flights", "parameters": {"from": "AMS", "to": "LIS"}}'), {
    format: 'llama3',
    calls: [{ name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS' } }],
  });
  assert.deepEqual(simple('{"type": "function", "name": "travel_hold_flight", "parameters": {"flight_id": "A"}}; {"name": "travel_hold_flight", "parameters": {"flight_id": "B"}}')!.calls.length, 2);
  assert.deepEqual(simple('<|python_tag|>{"name": "travel_hold_flight", "parameters": {"flight_id": "AA-500"}}<|eom_id|>'), {
    format: 'llama3',
    calls: [{ name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } }],
  });
  assert.deepEqual(simple("<|python_tag|>travel_search_flights.call(from='AMS', to=\"LIS\", flexible=True, days=[1, 2], extra=None)"), {
    format: 'llama3',
    calls: [{ name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS', flexible: true, days: [1, 2], extra: null } }],
  });
  assert.deepEqual(simple('[travel_search_flights(from="AMS", to="LIS"), travel_hold_flight(flight_id="AA-500")]'), {
    format: 'llama3',
    calls: [
      { name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS' } },
      { name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' } },
    ],
  });
  assert.deepEqual(simple('<|python_tag|>{"name": "travel_hold_flight", "parameters": {"flight_id": '), { format: 'llama3', calls: [{ name: 'travel_hold_flight', problem: 'bad-json' }] });
  assert.deepEqual(simple('<|python_tag|>???'), { format: 'llama3', calls: [{ name: undefined, problem: 'bad-json' }] });
  assert.deepEqual(simple('{"name": "travel_hold_flight", "parameters": {"flight_id": "AA'), { format: 'llama3', calls: [{ name: 'travel_hold_flight', problem: 'bad-json' }] });
});

test('mistral: [TOOL_CALLS] with a JSON list (ids kept), and the v11 name[ARGS]{...} form', () => {
  assert.deepEqual(simple('[TOOL_CALLS] [{"name": "travel_hold_flight", "arguments": {"flight_id": "AA-500"}, "id": "a1B2c3D4e"}]'), {
    format: 'mistral',
    calls: [{ name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' }, id: 'a1B2c3D4e' }],
  });
  assert.deepEqual(simple('[TOOL_CALLS]travel_search_flights[ARGS]{"from": "AMS", "to": "LIS"}[TOOL_CALLS]travel_hold_flight[CALL_ID]x9[ARGS]{"flight_id": "AA-500"}'), {
    format: 'mistral',
    calls: [
      { name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS' } },
      { name: 'travel_hold_flight', arguments: { flight_id: 'AA-500' }, id: 'x9' },
    ],
  });
  assert.deepEqual(simple('[TOOL_CALLS] [{"name": "travel_hold_flight", "arguments": {"flight_id": '), { format: 'mistral', calls: [{ name: 'travel_hold_flight', problem: 'bad-json' }] });
});

test('fenced JSON: a call object or a list of them in a ```json block; other JSON blocks are just the answer', () => {
  assert.deepEqual(simple('I will search.\n```json\n{"name": "travel_search_flights", "arguments": {"from": "AMS", "to": "LIS"}}\n```'), {
    format: 'fenced-json',
    calls: [{ name: 'travel_search_flights', arguments: { from: 'AMS', to: 'LIS' } }],
  });
  assert.deepEqual(simple('```\n{"tool": "travel_hold_flight", "flight_id": "AA-500"}\n```')!.calls[0], { name: 'travel_hold_flight', arguments: {} }, 'a known tool name counts without arguments');
  assert.equal(extract('Here are the flights:\n```json\n[{"id": "AA-500", "price": 300}]\n```'), undefined);
  assert.equal(extract('```python\nprint("hi")\n```'), undefined);
  assert.equal(extract('```json\n{"answer": 42\n```'), undefined, 'an unparseable block that is not a call stays text');
});

test('prose, answers with JSON, reasoning blocks and the native option find no text calls', () => {
  assert.equal(extract('I put a hold on AA-500 (300 EUR).'), undefined);
  assert.equal(extract('{"flight": "AA-500", "price": 300}'), undefined, 'a bare JSON answer is not a call');
  assert.equal(extract('<think>maybe <tool_call>{"name": "travel_hold_flight", "arguments": {}}</tool_call></think>Done.'), undefined);
  assert.equal(extract('<tool_call>{"name": "travel_hold_flight", "arguments": {}}</tool_call>', 'native'), undefined);
  assert.equal(extract('<tool_call>{"name": "travel_hold_flight", "arguments": {}}</tool_call>', 'mistral'), undefined, 'a chosen format reads only itself');
  assert.equal(withoutThinking('<think>\nplan\n</think>\nThe answer is 4.'), 'The answer is 4.');
});

test('results of text calls go back in the convention of their format', () => {
  assert.equal(textToolResults('hermes', [{ name: 'a', content: 'ok', isError: false }]), '<tool_response>\n{"name":"a","content":"ok"}\n</tool_response>');
  assert.equal(textToolResults('mistral', [{ name: 'a', content: 'ok', isError: false }, { name: 'b', content: 'no', isError: true }]), 'Result of a:\nok\n\nError from b:\nno');
  assert.equal(scanJson('{"a": "}"} tail', 0), 10);
  assert.equal(scanJson('{"a": 1', 0), -1);
});
