// The official MCP TypeScript client (v2) driven from the command line;
// prints one JSON object per line on stdout for the Rust tests to read.
//
//   node client.mjs --url URL [--mode modern|legacy] [--ack-url URL] [--bearer TOKEN] OP...
//
// --mode modern  versionNegotiation pinned to 2026-07-28 (the default)
// --mode legacy  the 2025 initialize handshake (sessions, SSE)
// --bearer TOKEN every request carries `Authorization: Bearer TOKEN`
//
// OPs, run in order:
//   list                        {"op":"list","tools":[names...]}
//   tools                       {"op":"tools","tools":[the full tool definitions]}
//   call:NAME:JSON              {"op":"call","name":..,"result":{..}} or
//                               {"op":"call","name":..,"error":{"code","message","data","status"}}
//   add-many:N                  N calls of `add` {a:i, b:1000}; one line per
//                               call ({"op":"add","i","sum","ok"}) then
//                               {"op":"add-many","calls":N,"correct":K,"failed":F}
//   progress:NAME:JSON          calls NAME with a progress callback; one line
//                               per notification as it arrives
//                               ({"op":"progress","seq","progress","total","ms"})
//                               then the call's line. With --ack-url, each
//                               notification is acknowledged (POST
//                               ACK_URL?gate=G&step=P, G from the arguments'
//                               `gate`) before the callback returns, which is
//                               what lets upstream.mjs send the next step.
//   session                     {"op":"session","id": the Mcp-Session-Id or null}
//
// Exit code 0 when every op ran (a tool or JSON-RPC error is a result, not a
// failure of the script); 1 when the connection itself failed.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

function parseArgs(argv) {
    const options = { url: undefined, mode: 'modern', ackUrl: undefined, bearer: undefined, timeoutMs: 30_000, ops: [] };
    for (let i = 0; i < argv.length; i++) {
        const arg = argv[i];
        if (arg === '--url') options.url = argv[++i];
        else if (arg === '--mode') options.mode = argv[++i];
        else if (arg === '--ack-url') options.ackUrl = argv[++i];
        else if (arg === '--bearer') options.bearer = argv[++i];
        else if (arg === '--timeout-ms') options.timeoutMs = Number(argv[++i]);
        else options.ops.push(arg);
    }
    if (!options.url || !['modern', 'legacy'].includes(options.mode)) {
        console.error('usage: client.mjs --url URL [--mode modern|legacy] [--ack-url URL] [--bearer TOKEN] OP...');
        process.exit(2);
    }
    return options;
}

const print = value => process.stdout.write(`${JSON.stringify(value)}\n`);
const started = performance.now();
const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;

/** `call:NAME:JSON` → [NAME, args]; the JSON may hold colons. */
function splitOp(op) {
    const first = op.indexOf(':');
    const second = op.indexOf(':', first + 1);
    if (second < 0) return [op.slice(first + 1), {}];
    return [op.slice(first + 1, second), JSON.parse(op.slice(second + 1))];
}

function describeError(error) {
    const out = { message: String(error?.message ?? error) };
    if (typeof error?.code === 'number') out.code = error.code;
    if (typeof error?.code === 'string') out.kind = error.code;
    if (error?.data !== undefined) out.data = error.data;
    const status = typeof error?.status === 'number' ? error.status : error?.data?.status;
    if (typeof status === 'number') out.status = status;
    if (error?.constructor?.name) out.type = error.constructor.name;
    return out;
}

async function main() {
    const options = parseArgs(process.argv.slice(2));
    const client = new Client(
        { name: 'mcpgate-e2e-client', version: '1.0.0' },
        {
            capabilities: {},
            versionNegotiation: options.mode === 'modern' ? { mode: { pin: '2026-07-28' } } : { mode: 'legacy' }
        }
    );
    const requestInit = options.bearer ? { headers: { Authorization: `Bearer ${options.bearer}` } } : undefined;
    const transport = new StreamableHTTPClientTransport(new URL(options.url), { requestInit });
    try {
        await client.connect(transport, { timeout: options.timeoutMs });
    } catch (error) {
        print({ op: 'connect', error: describeError(error) });
        process.exit(1);
    }
    print({ op: 'connect', mode: options.mode, ms: elapsed() });

    for (const op of options.ops) {
        if (op === 'list') {
            const { tools } = await client.listTools();
            print({ op: 'list', tools: tools.map(t => t.name) });
        } else if (op === 'tools') {
            const { tools } = await client.listTools();
            print({ op: 'tools', tools });
        } else if (op === 'session') {
            print({ op: 'session', id: transport.sessionId ?? null });
        } else if (op.startsWith('call:')) {
            const [name, args] = splitOp(op);
            try {
                const result = await client.callTool({ name, arguments: args }, { timeout: options.timeoutMs });
                print({ op: 'call', name, result });
            } catch (error) {
                print({ op: 'call', name, error: describeError(error) });
            }
        } else if (op.startsWith('add-many:')) {
            const n = Number(op.slice('add-many:'.length));
            let correct = 0;
            let failed = 0;
            for (let i = 0; i < n; i++) {
                try {
                    const result = await client.callTool({ name: 'add', arguments: { a: i, b: 1000 } });
                    const sum = result.structuredContent?.sum;
                    const ok = sum === i + 1000 && result.isError !== true;
                    if (ok) correct++;
                    else failed++;
                    print({ op: 'add', i, sum, ok });
                } catch (error) {
                    failed++;
                    print({ op: 'add', i, ok: false, error: describeError(error) });
                }
            }
            print({ op: 'add-many', calls: n, correct, failed });
        } else if (op.startsWith('progress:')) {
            const [name, args] = splitOp(op);
            let seq = 0;
            const onprogress = async progress => {
                seq += 1;
                print({ op: 'progress', seq, progress: progress.progress, total: progress.total, ms: elapsed() });
                if (options.ackUrl && typeof args.gate === 'string') {
                    const url = `${options.ackUrl}?gate=${encodeURIComponent(args.gate)}&step=${progress.progress}`;
                    const answer = await fetch(url, { method: 'POST' });
                    await answer.text();
                }
            };
            try {
                const result = await client.callTool(
                    { name, arguments: args },
                    { onprogress, resetTimeoutOnProgress: true, timeout: options.timeoutMs }
                );
                print({ op: 'call', name, result, ms: elapsed() });
            } catch (error) {
                print({ op: 'call', name, error: describeError(error), ms: elapsed() });
            }
        } else {
            console.error(`client.mjs: unknown op ${op}`);
            process.exit(2);
        }
    }
    await client.close();
}

main().catch(error => {
    print({ op: 'fatal', error: describeError(error) });
    process.exit(1);
});
