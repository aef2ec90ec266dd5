// Runs the official MCP conformance suite (server side, `--requirements
// 2026-07-28`) and reduces its per-check results to lines a test can read.
// Run it with Node 22 (e2e/conformance.sh does).
//
//   conformance.mjs run URL [--expected-failures FILE]
//       One suite run against URL. Prints
//         conformance-check SCENARIO:CHECK STATUS        (every non-success)
//         conformance-summary url=URL scenarios=N checks=N passed=N failed=N warnings=N other=N
//       Exit: with --expected-failures, the suite's own verdict (0 when the
//       failures are exactly the listed ones); without, 0 once the suite ran.
//
//   conformance.mjs compare UPSTREAM_URL GATEWAY_URL [--require-pass SCENARIO]...
//       Two runs; exit 1 when a check that passes against UPSTREAM_URL does
//       not pass against GATEWAY_URL, or when a --require-pass scenario has a
//       check that does not pass through the gateway. Prints both summaries,
//       then `conformance-lost SCENARIO:CHECK` per lost check and
//       `conformance-compare lost=N gained=N`.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const suite = join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const REQUIREMENTS = '2026-07-28';
const SUITE_TIMEOUT_MS = 10 * 60 * 1000;

function runSuite(url, expectedFailures) {
    const out = mkdtempSync(join(tmpdir(), 'mcpgate-conformance-'));
    try {
        const args = [suite, 'server', '--url', url, '--requirements', REQUIREMENTS, '-o', join(out, 'results')];
        if (expectedFailures) args.push('--expected-failures', expectedFailures);
        // The suite writes nothing outside -o when run from the temp folder.
        const run = spawnSync(process.execPath, args, {
            cwd: out,
            encoding: 'utf8',
            timeout: SUITE_TIMEOUT_MS,
            maxBuffer: 64 * 1024 * 1024
        });
        if (run.error) throw run.error;
        const checks = new Map();
        const scenarios = new Set();
        const results = join(out, 'results');
        for (const entry of existsSync(results) ? readdirSync(results) : []) {
            // server-SCENARIO-YYYY-MM-DDTHH-MM-SS-mmmZ
            const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
            scenarios.add(scenario);
            const file = join(results, entry, 'checks.json');
            if (!existsSync(file)) continue;
            for (const check of JSON.parse(readFileSync(file, 'utf8'))) {
                const key = `${scenario}:${check.id}`;
                // Repeated ids collapse to the most severe verdict, as the suite does.
                const prior = checks.get(key);
                if (!prior || severity(check.status) > severity(prior)) checks.set(key, check.status);
            }
        }
        return { status: run.status, stdout: run.stdout, stderr: run.stderr, checks, scenarios };
    } finally {
        rmSync(out, { recursive: true, force: true });
    }
}

function severity(status) {
    return { SUCCESS: 0, INFO: 0, SKIPPED: 1, WARNING: 2, FAILURE: 3 }[status] ?? 3;
}

function summarize(url, result) {
    const counts = { passed: 0, failed: 0, warnings: 0, other: 0 };
    for (const [key, status] of [...result.checks].sort()) {
        if (status === 'SUCCESS') counts.passed++;
        else if (status === 'FAILURE') counts.failed++;
        else if (status === 'WARNING') counts.warnings++;
        else counts.other++;
        if (status !== 'SUCCESS') console.log(`conformance-check ${key} ${status}`);
    }
    console.log(
        `conformance-summary url=${url} scenarios=${result.scenarios.size} checks=${result.checks.size} ` +
            `passed=${counts.passed} failed=${counts.failed} warnings=${counts.warnings} other=${counts.other}`
    );
    return counts;
}

function usage() {
    console.error('usage: conformance.mjs run URL [--expected-failures FILE]');
    console.error('       conformance.mjs compare UPSTREAM_URL GATEWAY_URL [--require-pass SCENARIO]...');
    process.exit(2);
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'run') {
    const [url, flag, file] = rest;
    if (!url || (flag && flag !== '--expected-failures') || (flag && !file)) usage();
    const result = runSuite(url, file);
    if (result.checks.size === 0) {
        process.stdout.write(result.stdout);
        process.stderr.write(result.stderr);
        console.error('conformance.mjs: the suite produced no checks');
        process.exit(1);
    }
    summarize(url, result);
    if (file) {
        if (result.status !== 0) process.stdout.write(result.stdout.split('=== SUMMARY ===').pop());
        process.exit(result.status ?? 1);
    }
} else if (command === 'compare') {
    const [upstream, gateway, ...flags] = rest;
    if (!upstream || !gateway) usage();
    const required = [];
    for (let i = 0; i < flags.length; i += 2) {
        if (flags[i] !== '--require-pass' || !flags[i + 1]) usage();
        required.push(flags[i + 1]);
    }
    const direct = runSuite(upstream);
    const through = runSuite(gateway);
    summarize(upstream, direct);
    summarize(gateway, through);
    let lost = 0;
    let gained = 0;
    for (const [key, status] of [...direct.checks].sort()) {
        const now = through.checks.get(key);
        if (status === 'SUCCESS' && now !== 'SUCCESS') {
            lost++;
            console.log(`conformance-lost ${key} ${now ?? 'ABSENT'}`);
        }
    }
    for (const [key, status] of through.checks) {
        if (status === 'SUCCESS' && direct.checks.get(key) !== 'SUCCESS') gained++;
    }
    let unmet = 0;
    for (const scenario of required) {
        const own = [...through.checks].filter(([key]) => key.startsWith(`${scenario}:`));
        if (own.length === 0 || own.some(([, status]) => status !== 'SUCCESS')) {
            unmet++;
            console.log(`conformance-required-failed ${scenario} (${own.length} checks)`);
        }
    }
    console.log(`conformance-compare lost=${lost} gained=${gained} required_failed=${unmet}`);
    process.exit(lost === 0 && unmet === 0 ? 0 : 1);
} else {
    usage();
}
