// Drive lsp-coder over stdio with vscode-languageserver-protocol, the library VS Code's client
// is built on, and print one JSON summary line on stdout.
//
//   node inline.mjs <python> <model.gguf>
//
// 1. initialize (inline completion capability), open `def fibonacci(n):\n    `,
// 2. poll `lspCoder.stats` until the model is loaded,
// 3. one textDocument/inlineCompletion at the end of line 2,
// 4. type TYPED one character at a time: a didChange per key, each followed by an inline
//    completion request that is not awaited (as an editor does), then await all of them.
//
// Exit status: 0 when the summary was printed, 1 on a protocol error, 2 on the overall timeout.

import { spawn } from 'node:child_process';
import {
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  InlineCompletionRequest,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';

const [python, model] = process.argv.slice(2);
if (!python || !model) {
  console.error('usage: node inline.mjs <python> <model.gguf>');
  process.exit(64);
}

const URI = 'file:///tmp/lsp-coder-node-client/fib.py';
const TEXT = 'def fibonacci(n):\n    ';
const TYPED = 'return fibonacci(n -'; // 20 keys
const KEY_INTERVAL_MS = 15;
const LOAD_TIMEOUT_MS = 90_000;
const OVERALL_TIMEOUT_MS = 150_000;

const server = spawn(python, ['-m', 'lsp_coder', '--stdio'], {
  stdio: ['pipe', 'pipe', 'inherit'],
  env: process.env,
});
let serverExit = null;
server.on('exit', (code, signal) => {
  serverExit = { code, signal };
});
server.on('error', (err) => fail(`could not start the server: ${err.message}`, 1));

const guard = setTimeout(() => fail(`timed out after ${OVERALL_TIMEOUT_MS} ms`, 2),
  OVERALL_TIMEOUT_MS);

const connection = createProtocolConnection(
  new StreamMessageReader(server.stdout),
  new StreamMessageWriter(server.stdin),
);
const messages = [];
connection.onNotification('window/logMessage', (p) => messages.push(p.message));
connection.onNotification('window/showMessage', (p) => messages.push(p.message));
connection.onNotification('$/progress', () => {});
connection.onRequest('window/workDoneProgress/create', () => null);
connection.onRequest('client/registerCapability', () => null);
connection.onRequest('workspace/configuration', (p) => p.items.map(() => null));
connection.onClose(() => {
  if (!finished) fail(`the server closed the connection (exit: ${JSON.stringify(serverExit)})`, 1);
});
connection.listen();

let finished = false;

function fail(reason, status) {
  if (finished) return;
  finished = true;
  console.log(JSON.stringify({ error: reason, messages }));
  server.kill('SIGKILL');
  process.exit(status);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function items(result) {
  if (result == null) return [];
  return Array.isArray(result) ? result : result.items;
}

async function waitForModel() {
  const deadline = Date.now() + LOAD_TIMEOUT_MS;
  let stats;
  while (Date.now() < deadline) {
    stats = await connection.sendRequest(ExecuteCommandRequest.type,
      { command: 'lspCoder.stats', arguments: [] });
    if (stats?.totals?.model_loaded) return stats;
    if (stats?.totals?.error) throw new Error(`the model failed to load: ${stats.totals.error}`);
    await sleep(200);
  }
  throw new Error(`the model did not load in ${LOAD_TIMEOUT_MS} ms: ${JSON.stringify(stats)}`);
}

async function main() {
  const init = await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    clientInfo: { name: 'lsp-coder-node-test', version: '0' },
    rootUri: null,
    workspaceFolders: null,
    capabilities: {
      window: { workDoneProgress: true },
      workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: false } },
      textDocument: {
        synchronization: { dynamicRegistration: false, didSave: true },
        completion: { completionItem: { snippetSupport: false } },
        inlineCompletion: { dynamicRegistration: false },
      },
    },
    initializationOptions: {
      model: { path: model, draft_path: 'none' },
      // Generous budgets: a shared 2-core CI runner can be slow, and the test checks the
      // protocol, not the latency.
      completion: { debounce_ms: 0, inline_budget_ms: 8000, max_tokens: 32 },
    },
  });
  connection.sendNotification(InitializedNotification.type, {});

  let version = 1;
  connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: URI, languageId: 'python', version, text: TEXT },
  });
  const loadStarted = Date.now();
  await waitForModel();
  const loadMs = Date.now() - loadStarted;

  const inline = (line, character, triggerKind) =>
    connection.sendRequest(InlineCompletionRequest.type, {
      textDocument: { uri: URI },
      position: { line, character },
      context: { triggerKind },
    });

  let started = Date.now();
  const first = await inline(1, 4, 1 /* Invoked */);
  const firstMs = Date.now() - started;

  // Typing: every key is a didChange and a fresh request, none awaited before the next key.
  started = Date.now();
  const pending = [];
  for (let i = 0; i < TYPED.length; i++) {
    const character = 4 + i;
    version += 1;
    connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri: URI, version },
      contentChanges: [{
        range: { start: { line: 1, character }, end: { line: 1, character } },
        text: TYPED[i],
      }],
    });
    pending.push(inline(1, character + 1, 2 /* Automatic */).then(
      (result) => ({ ok: true, result }),
      (err) => ({ ok: false, error: String(err?.message ?? err) }),
    ));
    await sleep(KEY_INTERVAL_MS);
  }
  const typed = await Promise.all(pending);
  const typingMs = Date.now() - started;
  const last = typed[typed.length - 1];
  const stats = await connection.sendRequest(ExecuteCommandRequest.type,
    { command: 'lspCoder.stats', arguments: [] });

  const summary = {
    server_inline_provider: init.capabilities.inlineCompletionProvider ?? null,
    load_ms: loadMs,
    first,
    first_ms: firstMs,
    first_nonempty: items(first).some((item) => item.insertText),
    typed_requests: typed.length,
    typed_answered: typed.filter((r) => r.ok).length,
    typed_errors: typed.filter((r) => !r.ok).map((r) => r.error),
    typed_nonempty: typed.filter((r) => r.ok && items(r.result).length > 0).length,
    typing_ms: typingMs,
    last: last.ok ? last.result : null,
    last_nonempty: last.ok && items(last.result).some((item) => item.insertText),
    stats_totals: stats?.totals ?? null,
    messages,
  };

  await connection.sendRequest(ShutdownRequest.type);
  connection.sendNotification(ExitNotification.type);
  finished = true;
  console.log(JSON.stringify(summary));
  const serverGone = serverExit
    ? Promise.resolve(true)
    : new Promise((resolve) => server.once('exit', () => resolve(true)));
  const exited = await Promise.race([serverGone, sleep(5000).then(() => false)]);
  if (!exited) server.kill('SIGKILL');
  clearTimeout(guard);
  connection.dispose();
}

main().catch((err) => fail(String(err?.stack ?? err), 1));
