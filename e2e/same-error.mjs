// The official MCP TypeScript client (v2) making the same mistakes against
// any target (an MCP server, or the gateway in front of it); prints one JSON
// line per case, {"case","class","code"}, for tests/same_error.rs to compare:
//
//   node same-error.mjs --url URL [--mode modern|legacy]
//
// class: the error's class (ProtocolError, SdkHttpError, ...) with its code
// (a JSON-RPC code, or the SDK's own error code), or "isError" for a tool
// result with isError: true (code null), "result" for any other result.
//
// Cases (tools of e2e/upstream.mjs):
//   unknown_tool      a tool no one has
//   integer_name      `name` an integer
//   wrong_type        `add` with a string for a number
//   missing_argument  `add` without its required `b`

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const CASES = [
    ['unknown_tool', { name: 'no_such_tool', arguments: {} }],
    ['integer_name', { name: 5, arguments: {} }],
    ['wrong_type', { name: 'add', arguments: { a: 'two', b: 40 } }],
    ['missing_argument', { name: 'add', arguments: { a: 1 } }]
];

function parseArgs(argv) {
    const options = { url: undefined, mode: 'modern' };
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === '--url') options.url = argv[++i];
        else if (argv[i] === '--mode') options.mode = argv[++i];
    }
    if (!options.url || !['modern', 'legacy'].includes(options.mode)) {
        console.error('usage: same-error.mjs --url URL [--mode modern|legacy]');
        process.exit(2);
    }
    return options;
}

const print = value => process.stdout.write(`${JSON.stringify(value)}\n`);

async function main() {
    const options = parseArgs(process.argv.slice(2));
    const client = new Client(
        { name: 'mcpgate-same-error', version: '1.0.0' },
        {
            capabilities: {},
            versionNegotiation: options.mode === 'modern' ? { mode: { pin: '2026-07-28' } } : { mode: 'legacy' }
        }
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(options.url)), { timeout: 30_000 });
    for (const [name, params] of CASES) {
        try {
            const result = await client.callTool(params, { timeout: 30_000 });
            print({ case: name, class: result.isError === true ? 'isError' : 'result', code: null });
        } catch (error) {
            const code = error?.code ?? null;
            print({ case: name, class: error?.constructor?.name ?? typeof error, code, message: String(error?.message ?? error) });
        }
    }
    await client.close();
}

main().catch(error => {
    console.error(`same-error.mjs: ${error?.stack ?? error}`);
    process.exit(1);
});
