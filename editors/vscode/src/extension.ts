// lsp-coder for VS Code: starts the lsp-coder language server and shows its suggestions inline.
//
// The settings under `lspCoder.*` are mapped to the server's snake_case config tree (the same
// tree as its TOML file) and sent as `initializationOptions`, then again as
// `workspace/didChangeConfiguration` whenever they change.

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';

const SECTION = 'lspCoder';
const STATS_COMMAND = 'lspCoder.stats';

/** The VS Code setting (below `lspCoder.`) for each server key path. */
const SETTINGS: ReadonlyArray<[setting: string, serverPath: readonly [string, string]]> = [
  ['model.path', ['model', 'path']],
  ['model.draftPath', ['model', 'draft_path']],
  ['completion.debounceMs', ['completion', 'debounce_ms']],
  ['completion.maxLines', ['completion', 'max_lines']],
  ['speculative.enabled', ['speculative', 'enabled']],
];

/** Settings that only take effect when the server process is started again. */
const RESTART_SETTINGS = ['serverPath', 'serverArgs', 'languages'];

type ServerSettings = Record<string, Record<string, unknown>>;

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;
/** Setting names sent last time, so that a setting the user removes is reset to its default. */
let sentSettings = new Set<string>();
/**
 * The server's working directory: the extension's own folder. Never the workspace, where a file
 * named like a standard module (`numbers.py`) would shadow it for `python -m lsp_coder`.
 */
let serverCwd: string | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('lsp-coder');
  serverCwd = context.extensionPath;
  context.subscriptions.push(output);
  context.subscriptions.push(
    vscode.commands.registerCommand('lspCoder.showStats', showStats),
    vscode.commands.registerCommand('lspCoder.restartServer', restart),
    vscode.workspace.onDidChangeConfiguration(onConfigurationChanged),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}

async function start(): Promise<void> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const serverOptions: ServerOptions = {
    command: config.get<string>('serverPath', 'lsp-coder'),
    args: config.get<string[]>('serverArgs', []),
    transport: TransportKind.stdio,
    options: { cwd: serverCwd },
  };
  const languages = config.get<string[]>('languages', []);
  const clientOptions: LanguageClientOptions = {
    documentSelector: languages.flatMap((language) => [
      { scheme: 'file', language },
      { scheme: 'untitled', language },
    ]),
    initializationOptions: () => serverSettings(true),
    outputChannel: output,
    middleware: {
      // VS Code asks for highlights wherever the cursor comes to rest: the request tells the
      // server where the next completion will probably be (its idle work prepares that
      // prompt). Its answer (the word's occurrences, found by text) is not shown, so the
      // language's own server keeps the highlights.
      provideDocumentHighlights: (document, position, token, next) => {
        void Promise.resolve(next(document, position, token)).catch(() => undefined);
        return undefined;
      },
    },
  };
  client = new LanguageClient('lspCoder', 'lsp-coder', serverOptions, clientOptions);
  // NOTE: vscode-languageclient 9.x ships textDocument/inlineCompletion as a *proposed*
  // feature (InlineCompletionItemFeature in ProposedFeatures); without this call VS Code
  // would only get the completion-list items. In 10.x it is a standard feature.
  client.registerProposedFeatures();
  try {
    await client.start();
  } catch (err) {
    void vscode.window.showErrorMessage(
      `lsp-coder: could not start "${serverOptions.command}": ${String(err)}.` +
        ' Install it (pip install lsp-coder) or set lspCoder.serverPath.',
    );
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running !== undefined) {
    await running.stop();
  }
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

async function onConfigurationChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
  if (!event.affectsConfiguration(SECTION)) {
    return;
  }
  if (RESTART_SETTINGS.some((name) => event.affectsConfiguration(`${SECTION}.${name}`))) {
    await restart();
    return;
  }
  if (client?.isRunning()) {
    await client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: serverSettings(false),
    });
  }
}

/**
 * The server's config tree built from the settings the user has set.
 *
 * Settings left at their default are not sent, so the server's own config file still applies.
 * A setting sent before and since removed is sent once more with its default, because the
 * server merges each layer over its current config.
 */
function serverSettings(initial: boolean): ServerSettings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const tree: ServerSettings = {};
  const sent = new Set<string>();
  for (const [setting, [table, key]] of SETTINGS) {
    const inspected = config.inspect(setting);
    const explicit =
      inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
    let value: unknown;
    if (explicit !== undefined) {
      value = explicit;
      sent.add(setting);
    } else if (!initial && sentSettings.has(setting)) {
      value = inspected?.defaultValue;
    }
    if (value !== undefined) {
      (tree[table] ??= {})[key] = value;
    }
  }
  sentSettings = sent;
  return tree;
}

async function showStats(): Promise<void> {
  if (!client?.isRunning()) {
    void vscode.window.showWarningMessage('lsp-coder: the server is not running.');
    return;
  }
  const stats = await client.sendRequest(ExecuteCommandRequest.type, {
    command: STATS_COMMAND,
    arguments: [],
  });
  output?.appendLine(JSON.stringify(stats, null, 2));
  output?.show(true);
}
