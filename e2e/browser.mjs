// The official MCP TypeScript client (v2) in a browser page: bundled with
// esbuild into one file by tests/browser.rs, which serves it with a page and
// opens that page in headless Chromium.
//
//   /?gateway=URL&sessions=URL   MCP endpoints on another origin than the page's
//
// Pinned to 2026-07-28, against `gateway` (in front of e2e/upstream.mjs), it
// lists the tools and calls `add`, then `get_account`, whose argument is
// annotated `x-mcp-header` (in a browser the SDK does not mirror it in
// `Mcp-Param-Account`, so the gateway refuses that call: what the page gets
// is the refusal, read across origins). Then, in the 2025 handshake against
// `sessions` (in front of server-everything: a session id the page must be
// let read, and answers as event streams), it lists the tools and calls
// `echo`. The outcome is POSTed as JSON to the page's own `/outcome`:
//
//   {"ok":true,"modern":{"tools":[..],"call":{..},"account":{..}},"legacy":{"tools":[..],"call":{..},"session":ID}}
//   {"ok":false,"stage":"modern"|"legacy","error":{"name","message"},"probe":{"name","message"}}
//
// On a failure, `probe` is what a bare `fetch` of the same endpoint with a
// JSON body raised (a refused preflight: the browser's `TypeError`, which
// the SDK reports in words of its own).

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const query = new URLSearchParams(location.search);
const endpoints = { modern: new URL(query.get('gateway')), legacy: new URL(query.get('sessions')) };

/** A call's result, or the error it raised as the page sees it. */
async function attempt(client, call) {
    try {
        return { result: await client.callTool(call, { timeout: 20_000 }) };
    } catch (error) {
        return { error: { name: String(error?.name), code: error?.code, message: String(error?.message ?? error) } };
    }
}

async function run(mode, call) {
    const client = new Client(
        { name: 'mcpgate-browser', version: '1.0.0' },
        {
            capabilities: {},
            versionNegotiation: mode === 'modern' ? { mode: { pin: '2026-07-28' } } : { mode: 'legacy' }
        }
    );
    const transport = new StreamableHTTPClientTransport(endpoints[mode]);
    await client.connect(transport, { timeout: 20_000 });
    const { tools } = await client.listTools();
    const result = await client.callTool(call, { timeout: 20_000 });
    const account = mode === 'modern' ? await attempt(client, { name: 'get_account', arguments: { account_id: 'acct-7' } }) : undefined;
    const session = transport.sessionId ?? null;
    await client.close();
    return { tools: tools.map(t => t.name), call: result, account, session };
}

async function probe(endpoint) {
    try {
        const answer = await fetch(endpoint, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
            body: '{"jsonrpc":"2.0","id":1,"method":"ping"}'
        });
        return { status: answer.status };
    } catch (error) {
        return { name: String(error?.name), message: String(error?.message ?? error) };
    }
}

async function main() {
    const outcome = { ok: true };
    for (const [stage, call] of [
        ['modern', { name: 'add', arguments: { a: 2, b: 40 } }],
        ['legacy', { name: 'echo', arguments: { message: 'from a page' } }]
    ]) {
        try {
            outcome[stage] = await run(stage, call);
        } catch (error) {
            return {
                ok: false,
                stage,
                error: { name: String(error?.name), message: String(error?.message ?? error) },
                probe: await probe(endpoints[stage])
            };
        }
    }
    return outcome;
}

main().then(outcome =>
    fetch('/outcome', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(outcome) })
);
