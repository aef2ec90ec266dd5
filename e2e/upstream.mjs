// A 2026-07-28 MCP server (official TypeScript SDK v2) used as the upstream
// of the end-to-end tests. Stateless, JSON answers unless a tool streams.
//
//   node upstream.mjs [--port N]      (or UPSTREAM_PORT=N; 0: ephemeral)
//                     [--tls-cert FILE --tls-key FILE]   (HTTPS, PEM files)
//
// Prints `listening on 127.0.0.1:PORT` as its first stdout line.
//
// Routes on 127.0.0.1 only:
//   /mcp         the MCP endpoint (createMcpHandler through toNodeHandler)
//   GET /calls   {"posts": N, "tools": {"add": 2, ...}}: every POST to /mcp
//                counted before the SDK sees it, tools/call by tool name, so a
//                test can prove that a call never reached this server
//   POST /ack?gate=G&step=I
//                releases step I of a `slow_count` call started with gate G
//   GET /healthz 200
//
// Tools:
//   add            two numbers
//   search_orders  nested filters (enum region), tags (maxItems), a `date`
//                  field and an optional bounded integer
//   slow_count     sends `steps` progress notifications over SSE; with `gate`
//                  it sends step I+1 only after POST /ack?gate=..&step=I, so a
//                  client that must ack each step before the next is sent
//                  proves that progress arrives incrementally (no ack within
//                  `ack_timeout_ms`, default 20 s: the call ends isError)
//   get_account    `account_id` annotated `x-mcp-header: Account`, so clients
//                  mirror it in `Mcp-Param-Account`
// and the fixture tools, resources and prompts the official conformance suite
// calls (test_*), so that it has something to check.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import {
    completable,
    createMcpHandler,
    createRequestStateCodec,
    fromJsonSchema,
    inputRequired,
    McpServer,
    ResourceTemplate
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';

const HOST = '127.0.0.1';
const MAX_BODY = 4 * 1024 * 1024;
const ACK_TIMEOUT_MS = 20_000;

function portFromArgs() {
    const i = process.argv.indexOf('--port');
    const raw = i >= 0 ? process.argv[i + 1] : (process.env.UPSTREAM_PORT ?? '0');
    const port = Number(raw);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
        console.error(`upstream: bad port ${raw}`);
        process.exit(2);
    }
    return port;
}

/** `--tls-cert FILE --tls-key FILE`: the options of an HTTPS server, or null. */
function tlsFromArgs() {
    const value = name => {
        const i = process.argv.indexOf(name);
        return i >= 0 ? process.argv[i + 1] : undefined;
    };
    const [cert, key] = [value('--tls-cert'), value('--tls-key')];
    return cert && key ? { cert: readFileSync(cert), key: readFileSync(key) } : null;
}

// ---- counters and the progress side channel -------------------------------

const counts = { posts: 0, tools: {} };

function countPost(body) {
    counts.posts += 1;
    if (body && typeof body === 'object' && body.method === 'tools/call') {
        const name = typeof body.params?.name === 'string' ? body.params.name : '<none>';
        counts.tools[name] = (counts.tools[name] ?? 0) + 1;
    }
}

// gate -> { acked: Set<number>, waiters: Map<step, resolve> }
const gates = new Map();

function gateOf(name) {
    let gate = gates.get(name);
    if (!gate) {
        gate = { acked: new Set(), waiters: new Map() };
        gates.set(name, gate);
    }
    return gate;
}

function ack(name, step) {
    const gate = gateOf(name);
    gate.acked.add(step);
    const waiter = gate.waiters.get(step);
    if (waiter) {
        gate.waiters.delete(step);
        waiter(true);
    }
}

function waitForAck(name, step, timeoutMs, signal) {
    const gate = gateOf(name);
    if (gate.acked.has(step)) return Promise.resolve(true);
    return new Promise(resolve => {
        const timer = setTimeout(() => {
            gate.waiters.delete(step);
            resolve(false);
        }, timeoutMs);
        const done = ok => {
            clearTimeout(timer);
            resolve(ok);
        };
        gate.waiters.set(step, done);
        signal?.addEventListener('abort', () => done(false), { once: true });
    });
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

// ---- schemas ---------------------------------------------------------------

const ADD = {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b']
};

const SEARCH_ORDERS = {
    type: 'object',
    properties: {
        filters: {
            type: 'object',
            properties: {
                region: { type: 'string', enum: ['NA', 'EU', 'FE'] },
                status: { type: 'string', enum: ['open', 'shipped', 'cancelled'] }
            },
            required: ['region']
        },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 5 },
        since: { type: 'string', format: 'date' },
        limit: { type: 'integer', minimum: 1, maximum: 100 }
    },
    required: ['filters']
};

const SLOW_COUNT = {
    type: 'object',
    properties: {
        steps: { type: 'integer', minimum: 1, maximum: 50 },
        gate: { type: 'string', minLength: 1, maxLength: 64 },
        delay_ms: { type: 'integer', minimum: 0, maximum: 10000 },
        ack_timeout_ms: { type: 'integer', minimum: 1, maximum: 60000 }
    },
    required: ['steps']
};

const GET_ACCOUNT = {
    type: 'object',
    properties: {
        account_id: { type: 'string', minLength: 1, 'x-mcp-header': 'Account' },
        verbose: { type: 'boolean' }
    },
    required: ['account_id']
};

// The arguments a model often gets wrong in case or shape: the gateway's
// normalization puts them right before they arrive here.
const LIST_ORDERS = {
    type: 'object',
    properties: {
        marketplaceIds: { type: 'array', items: { type: 'string' }, minItems: 1 },
        status: { type: 'string' }
    },
    required: ['marketplaceIds']
};

const EMPTY = { type: 'object', properties: {} };

const text = value => ({ type: 'text', text: value });

// Multi-round-trip state (2026-07-28 input_required results), HMAC-signed so
// that a tampered state is refused (-32602) before a handler runs.
const stateCodec = createRequestStateCodec({ key: 'mcpgate-e2e-upstream: request state key, test only' });

const NAME_SCHEMA = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };

// A 1x1 PNG and a minimal WAV, for the conformance fixtures.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

// ---- the server ------------------------------------------------------------

function buildServer() {
    const server = new McpServer(
        { name: 'mcpgate-e2e-upstream', version: '1.0.0' },
        {
            capabilities: { tools: { listChanged: true }, resources: {}, prompts: { listChanged: true }, completions: {} },
            requestState: { verify: (state, ctx) => stateCodec.verify(state, ctx) }
        }
    );

    server.registerTool(
        'add',
        { description: 'Adds two numbers.', inputSchema: fromJsonSchema(ADD) },
        async ({ a, b }) => ({ content: [text(String(a + b))], structuredContent: { sum: a + b } })
    );

    server.registerTool(
        'search_orders',
        { description: 'Searches orders by region, tags and date.', inputSchema: fromJsonSchema(SEARCH_ORDERS) },
        async args => {
            const limit = args.limit ?? 10;
            const found = { region: args.filters.region, tags: args.tags ?? [], since: args.since ?? null, limit };
            return { content: [text(JSON.stringify(found))], structuredContent: found };
        }
    );

    server.registerTool(
        'slow_count',
        {
            description: 'Counts to `steps`, one progress notification per step.',
            inputSchema: fromJsonSchema(SLOW_COUNT)
        },
        async ({ steps, gate, delay_ms, ack_timeout_ms }, ctx) => {
            const token = ctx.mcpReq._meta?.progressToken;
            for (let step = 1; step <= steps; step++) {
                if (token !== undefined) {
                    await ctx.mcpReq.notify({
                        method: 'notifications/progress',
                        params: { progressToken: token, progress: step, total: steps, message: `step ${step}` }
                    });
                }
                if (step === steps) break;
                if (gate !== undefined) {
                    const acked = await waitForAck(gate, step, ack_timeout_ms ?? ACK_TIMEOUT_MS, ctx.mcpReq.signal);
                    if (!acked) {
                        return { isError: true, content: [text(`no ack for step ${step} of gate ${gate}`)] };
                    }
                } else if (delay_ms) {
                    await sleep(delay_ms);
                }
            }
            return { content: [text(`counted to ${steps}`)], structuredContent: { counted: steps } };
        }
    );

    server.registerTool(
        'list_orders',
        {
            description: 'Lists the orders of marketplaces; answers with the arguments it received.',
            inputSchema: fromJsonSchema(LIST_ORDERS)
        },
        async args => ({ content: [text(JSON.stringify(args))], structuredContent: { received: args } })
    );

    server.registerTool(
        'get_account',
        {
            description: 'Reads an account; the id travels in the Mcp-Param-Account header too.',
            inputSchema: fromJsonSchema(GET_ACCOUNT)
        },
        async ({ account_id, verbose }) => {
            const account = { account_id, owner: `owner of ${account_id}`, verbose: verbose === true };
            return { content: [text(JSON.stringify(account))], structuredContent: account };
        }
    );

    // Conformance fixtures.
    const fixture = (name, description, result) =>
        server.registerTool(name, { description, inputSchema: fromJsonSchema(EMPTY) }, async () => result());
    fixture('test_simple_text', 'Simple text content.', () => ({
        content: [text('This is a simple text response for testing.')]
    }));
    fixture('test_image_content', 'Image content.', () => ({
        content: [{ type: 'image', data: PNG, mimeType: 'image/png' }]
    }));
    fixture('test_audio_content', 'Audio content.', () => ({
        content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }]
    }));
    fixture('test_embedded_resource', 'Embedded resource content.', () => ({
        content: [
            {
                type: 'resource',
                resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' }
            }
        ]
    }));
    fixture('test_multiple_content_types', 'Text, image and resource content.', () => ({
        content: [
            text('Multiple content types test:'),
            { type: 'image', data: PNG, mimeType: 'image/png' },
            {
                type: 'resource',
                resource: {
                    uri: 'test://mixed-content-resource',
                    mimeType: 'application/json',
                    text: JSON.stringify({ test: 'data', value: 123 })
                }
            }
        ]
    }));
    fixture('test_error_handling', 'Always fails.', () => ({
        isError: true,
        content: [text('This tool intentionally returns an error for testing')]
    }));
    server.registerTool(
        'test_tool_with_progress',
        { description: 'Reports progress 0, 50, 100.', inputSchema: fromJsonSchema(EMPTY) },
        async (_args, ctx) => {
            const token = ctx.mcpReq._meta?.progressToken ?? 0;
            for (const progress of [0, 50, 100]) {
                await ctx.mcpReq.notify({
                    method: 'notifications/progress',
                    params: { progressToken: token, progress, total: 100, message: `Completed step ${progress} of 100` }
                });
                if (progress < 100) await sleep(50);
            }
            return { content: [text(String(token))] };
        }
    );

    server.registerResource(
        'static-text',
        'test://static-text',
        { description: 'A static text resource.', mimeType: 'text/plain' },
        async uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] })
    );
    server.registerResource(
        'static-binary',
        'test://static-binary',
        { description: 'A static binary resource.', mimeType: 'image/png' },
        async uri => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }] })
    );
    server.registerResource(
        'template',
        new ResourceTemplate('test://template/{id}/data', { list: undefined }),
        { description: 'A resource template.', mimeType: 'application/json' },
        async (uri, { id }) => ({
            contents: [
                {
                    uri: uri.href,
                    mimeType: 'application/json',
                    text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` })
                }
            ]
        })
    );

    server.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments.' }, async () => ({
        messages: [{ role: 'user', content: text('This is a simple prompt for testing.') }]
    }));
    server.registerPrompt(
        'test_prompt_with_arguments',
        {
            description: 'A prompt with arguments (arg1 completes).',
            argsSchema: z.object({
                arg1: completable(z.string(), value => ['paris', 'park', 'parse'].filter(v => v.startsWith(value ?? ''))),
                arg2: z.string()
            })
        },
        async ({ arg1, arg2 }) => ({
            messages: [{ role: 'user', content: text(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`) }]
        })
    );
    server.registerPrompt(
        'test_prompt_with_embedded_resource',
        {
            description: 'A prompt with an embedded resource.',
            argsSchema: fromJsonSchema({
                type: 'object',
                properties: { resourceUri: { type: 'string' } },
                required: ['resourceUri']
            })
        },
        async ({ resourceUri }) => ({
            messages: [
                {
                    role: 'user',
                    content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } }
                },
                { role: 'user', content: text('Please process the embedded resource above.') }
            ]
        })
    );
    server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image.' }, async () => ({
        messages: [
            { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
            { role: 'user', content: text('Please analyze the image above.') }
        ]
    }));

    // Conformance fixtures of the 2026-07-28 stateless and input_required
    // (multi-round-trip) scenarios.
    const clientCapabilities = ctx => ctx.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities'] ?? {};
    const tool = (name, handler) =>
        server.registerTool(name, { description: `Conformance fixture ${name}.`, inputSchema: fromJsonSchema(EMPTY) }, handler);
    const ask = {
        user_name: () => inputRequired.elicit({ message: 'What is your name?', requestedSchema: NAME_SCHEMA }),
        capital_question: () =>
            inputRequired.createMessage({
                messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
                maxTokens: 100
            }),
        client_roots: () => inputRequired.listRoots()
    };
    // Asking for sampling input from a client that did not declare it: the
    // SDK answers -32021 (HTTP 400) itself.
    tool('test_missing_capability', async (_args, ctx) => {
        if (clientCapabilities(ctx).sampling && ctx.mcpReq.inputResponses?.capital_question) {
            return { content: [text('sampling declared')] };
        }
        return inputRequired({ inputRequests: { capital_question: ask.capital_question() } });
    });
    tool('test_streaming_elicitation', async (_args, ctx) => {
        if (ctx.mcpReq.inputResponses?.confirm) return { content: [text('confirmed')] };
        return inputRequired({
            inputRequests: {
                confirm: inputRequired.elicit({
                    message: 'Continue?',
                    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] }
                })
            }
        });
    });
    tool('test_logging_tool', async (_args, ctx) => {
        await ctx.mcpReq.log('info', 'test_logging_tool ran');
        return { content: [text('logged')] };
    });
    tool('test_trigger_tool_change', async () => {
        mcp.notify.toolsChanged();
        return { content: [text('tools changed')] };
    });
    tool('test_trigger_prompt_change', async () => {
        mcp.notify.promptsChanged();
        return { content: [text('prompts changed')] };
    });
    tool('test_input_required_result_elicitation', async (_args, ctx) => {
        const answer = ctx.mcpReq.inputResponses?.user_name;
        if (!answer) return inputRequired({ inputRequests: { user_name: ask.user_name() } });
        return { content: [text(`Hello, ${answer.content?.name ?? 'stranger'}!`)] };
    });
    tool('test_input_required_result_sampling', async (_args, ctx) => {
        const answer = ctx.mcpReq.inputResponses?.capital_question;
        if (!answer) return inputRequired({ inputRequests: { capital_question: ask.capital_question() } });
        return { content: [text(`The model said: ${answer.content?.text ?? ''}`)] };
    });
    tool('test_input_required_result_list_roots', async (_args, ctx) => {
        const answer = ctx.mcpReq.inputResponses?.client_roots;
        if (!answer) return inputRequired({ inputRequests: { client_roots: ask.client_roots() } });
        const roots = (answer.roots ?? []).map(root => root.uri);
        return { content: [text(`Roots: ${roots.join(', ')}`)] };
    });
    tool('test_input_required_result_request_state', async (_args, ctx) => {
        const state = ctx.mcpReq.requestState();
        if (ctx.mcpReq.inputResponses?.confirm && state?.round === 1) return { content: [text('state-ok')] };
        return inputRequired({
            inputRequests: {
                confirm: inputRequired.elicit({
                    message: 'Please confirm',
                    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] }
                })
            },
            requestState: await stateCodec.mint({ round: 1 })
        });
    });
    tool('test_input_required_result_multiple_inputs', async (_args, ctx) => {
        const answers = ctx.mcpReq.inputResponses ?? {};
        const keys = ['user_name', 'greeting', 'client_roots'];
        if (ctx.mcpReq.requestState()?.round === 1 && keys.every(key => answers[key])) {
            return { content: [text('all inputs received')] };
        }
        return inputRequired({
            inputRequests: {
                user_name: ask.user_name(),
                greeting: inputRequired.createMessage({
                    messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
                    maxTokens: 50
                }),
                client_roots: ask.client_roots()
            },
            requestState: await stateCodec.mint({ round: 1 })
        });
    });
    tool('test_input_required_result_multi_round', async (_args, ctx) => {
        const answers = ctx.mcpReq.inputResponses ?? {};
        const round = ctx.mcpReq.requestState()?.round;
        if (round === 2 && answers.step2) return { content: [text(`Done: color ${answers.step2.content?.color ?? ''}`)] };
        if (round === 1 && answers.step1) {
            return inputRequired({
                inputRequests: {
                    step2: inputRequired.elicit({
                        message: 'Step 2: What is your favorite color?',
                        requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] }
                    })
                },
                requestState: await stateCodec.mint({ round: 2 })
            });
        }
        return inputRequired({
            inputRequests: { step1: inputRequired.elicit({ message: 'Step 1: What is your name?', requestedSchema: NAME_SCHEMA }) },
            requestState: await stateCodec.mint({ round: 1 })
        });
    });
    tool('test_input_required_result_capabilities', async (_args, ctx) => {
        const capabilities = clientCapabilities(ctx);
        const inputRequests = {};
        if (capabilities.elicitation) inputRequests.user_name = ask.user_name();
        if (capabilities.sampling) inputRequests.capital_question = ask.capital_question();
        if (capabilities.roots) inputRequests.client_roots = ask.client_roots();
        if (Object.keys(inputRequests).length === 0 || Object.keys(ctx.mcpReq.inputResponses ?? {}).length > 0) {
            return { content: [text('nothing to ask')] };
        }
        return inputRequired({ inputRequests });
    });
    tool('test_input_required_result_tampered_state', async (_args, ctx) => {
        if (ctx.mcpReq.requestState()?.round === 1) return { content: [text('state-ok')] };
        return inputRequired({
            inputRequests: { user_name: ask.user_name() },
            requestState: await stateCodec.mint({ round: 1 })
        });
    });
    server.registerPrompt('test_input_required_result_prompt', { description: 'Asks for context first.' }, async ctx => {
        const answer = ctx.mcpReq.inputResponses?.user_context;
        if (!answer) {
            return inputRequired({
                inputRequests: {
                    user_context: inputRequired.elicit({
                        message: 'What context should the prompt use?',
                        requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] }
                    })
                }
            });
        }
        return { messages: [{ role: 'user', content: text(`Context: ${answer.content?.context ?? ''}`) }] };
    });
    server.registerTool(
        'json_schema_2020_12_tool',
        {
            description: 'A raw JSON Schema 2020-12 input schema ($schema, $defs, $ref, additionalProperties).',
            inputSchema: fromJsonSchema({
                $schema: 'https://json-schema.org/draft/2020-12/schema',
                type: 'object',
                $defs: {
                    address: {
                        $anchor: 'address',
                        type: 'object',
                        properties: { street: { type: 'string' }, city: { type: 'string' } }
                    }
                },
                properties: {
                    name: { type: 'string' },
                    address: { $ref: '#/$defs/address' },
                    contact: { anyOf: [{ type: 'string', format: 'email' }, { type: 'string', pattern: '^\\+[0-9]+$' }] },
                    kind: { type: 'string', enum: ['person', 'company'] },
                    vat: { type: 'string' }
                },
                allOf: [{ required: ['name'] }, { anyOf: [{ required: ['address'] }, { required: ['contact'] }] }],
                if: { properties: { kind: { const: 'company' } }, required: ['kind'] },
                then: { required: ['vat'] },
                else: { not: { required: ['vat'] } },
                additionalProperties: false
            })
        },
        async args => ({ content: [text(JSON.stringify(args))] })
    );

    return server;
}

// ---- HTTP ------------------------------------------------------------------

const mcp = createMcpHandler(() => buildServer(), { responseMode: 'auto' });
const mcpNode = toNodeHandler(mcp, { maxRequestBodySize: MAX_BODY });
const validateHost = localhostHostValidation();
const validateOrigin = localhostOriginValidation();

function json(res, status, value) {
    const body = JSON.stringify(value);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
}

async function readBody(req) {
    const chunks = [];
    let size = 0;
    for await (const chunk of req) {
        size += chunk.length;
        if (size > MAX_BODY) return null;
        chunks.push(chunk);
    }
    return Buffer.concat(chunks);
}

const tls = tlsFromArgs();
const httpServer = (tls ? handler => createTlsServer(tls, handler) : createServer)(async (req, res) => {
    const url = new URL(req.url ?? '/', `http://${HOST}`);
    try {
        if (url.pathname === '/calls' && req.method === 'GET') return json(res, 200, counts);
        if (url.pathname === '/healthz') return json(res, 200, { ok: true });
        if (url.pathname === '/ack' && req.method === 'POST') {
            const gate = url.searchParams.get('gate');
            const step = Number(url.searchParams.get('step'));
            if (!gate || !Number.isInteger(step)) return json(res, 400, { error: 'gate and step required' });
            ack(gate, step);
            return json(res, 200, { gate, step });
        }
        if (url.pathname !== '/mcp') return json(res, 404, { error: 'not found' });
        if (!validateHost(req, res) || !validateOrigin(req, res)) return;
        if (req.method !== 'POST') return mcpNode(req, res);
        const raw = await readBody(req);
        if (raw === null) return json(res, 413, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'body too large' } });
        let parsed;
        try {
            parsed = JSON.parse(raw.toString('utf8'));
        } catch {
            parsed = undefined;
        }
        countPost(parsed);
        // The SDK reads the body again from this replay (exact bytes, so a
        // malformed body gets the SDK's own answer).
        const replay = {
            method: req.method,
            url: req.url,
            headers: req.headers,
            async *[Symbol.asyncIterator]() {
                yield raw;
            }
        };
        return mcpNode(replay, res);
    } catch (error) {
        console.error('upstream:', error);
        if (!res.headersSent) json(res, 500, { error: 'internal' });
        else res.end();
    }
});

httpServer.listen(portFromArgs(), HOST, () => {
    const { port } = httpServer.address();
    process.stdout.write(`listening on ${HOST}:${port}\n`);
});

const stop = () => {
    httpServer.close();
    mcp.close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
