// lsp-coder for VS Code: starts the lsp-coder language server and shows its suggestions inline,
// with a status bar item and its menu (on/off, per language, snooze, statistics, log).
//
// The settings under `lspCoder.*` that configure the server are sent as its snake_case config
// tree (settings.ts): as `initializationOptions`, then as `workspace/didChangeConfiguration`.

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  InlineCompletionParams,
  InlineCompletionRequest,
  LanguageClient,
  LanguageClientOptions,
  Middleware,
  ServerOptions,
  State,
  StaticFeature,
  TransportKind,
} from 'vscode-languageclient/node';
import { Gate } from './gate';
import { showMenu } from './menu';
import {
  RESTART_SETTINGS,
  SECTION,
  SettingsSender,
  affectsServer,
} from './settings';
import { Stats, formatStats } from './statsReport';
import { MENU_COMMAND, ServerStatus, StatusBar } from './status';

const STATS_COMMAND = 'lspCoder.stats';
const STATUS_COMMAND = 'lspCoder.status';
const STATUS_NOTIFICATION = 'lspCoder/status';
/** LSP 3.18's `InlineCompletionTriggerKind` values (see the note in `middleware`). */
const LSP_INVOKED = 1;
const LSP_AUTOMATIC = 2;

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;
let gate: Gate | undefined;
let statusBar: StatusBar | undefined;
const settings = new SettingsSender();
/**
 * The server's working directory: the extension's own folder. Never the workspace, where a file
 * named like a standard module (`numbers.py`) would shadow it for `python -m lsp_coder`.
 */
let serverCwd: string | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('lsp-coder');
  serverCwd = context.extensionPath;
  gate = new Gate();
  statusBar = new StatusBar(gate);
  const bar = statusBar;
  context.subscriptions.push(
    output,
    gate,
    statusBar,
    gate.onDidChange(() => bar.render()),
    vscode.window.onDidChangeActiveTextEditor(() => bar.render()),
    vscode.commands.registerCommand('lspCoder.showStats', showStats),
    vscode.commands.registerCommand('lspCoder.showLog', showLog),
    vscode.commands.registerCommand('lspCoder.restartServer', restart),
    vscode.commands.registerCommand('lspCoder.suggest', suggest),
    vscode.commands.registerCommand(MENU_COMMAND, () =>
      showMenu(gate!, { showStats, showLog }, bar.state),
    ),
    vscode.workspace.onDidChangeConfiguration(onConfigurationChanged),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}

/**
 * The experimental client capabilities: `lspCoderStatus` asks for `lspCoder/status`
 * notifications; `lspCoderGhostText` says VS Code shows the suggestions inline, so the server
 * leaves them out of the IntelliSense list (the same text twice, and Tab would take the
 * list's). Without inline suggestions (`editor.inlineSuggest.enabled` off) the list keeps it.
 */
const experimentalCapabilities: StaticFeature = {
  fillClientCapabilities(capabilities) {
    const inline = vscode.workspace.getConfiguration('editor').get('inlineSuggest.enabled', true);
    capabilities.experimental = {
      ...(capabilities.experimental ?? {}),
      lspCoderStatus: true,
      lspCoderGhostText: inline,
    };
  },
  initialize() {},
  getState: () => ({ kind: 'static' }),
  clear() {},
};

function middleware(): Middleware {
  return {
    provideInlineCompletionItems: async (document, position, context, token) => {
      const invoked = context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke;
      const running = client;
      if (running === undefined || (!invoked && !gate!.allows(document.languageId))) {
        return undefined;
      }
      // NOTE: vscode-languageclient 9.0.1 sends VS Code's trigger kind as is (Invoke = 0,
      // Automatic = 1), the numbering of the protocol proposal it ships; LSP 3.18, which the
      // server speaks, numbers them Invoked = 1, Automatic = 2. Every request typed would
      // arrive as invoked, and one asked for with an invalid 0, so the request is built here.
      const code2p = running.code2ProtocolConverter;
      const selected = context.selectedCompletionInfo;
      const params = {
        textDocument: code2p.asTextDocumentIdentifier(document),
        position: code2p.asPosition(position),
        context: {
          triggerKind: invoked ? LSP_INVOKED : LSP_AUTOMATIC,
          selectedCompletionInfo: selected && {
            range: code2p.asRange(selected.range),
            text: selected.text,
          },
        },
      } as unknown as InlineCompletionParams;
      try {
        const result = await running.sendRequest(InlineCompletionRequest.type, params, token);
        return await running.protocol2CodeConverter.asInlineCompletionResult(result, token);
      } catch (error) {
        return running.handleFailedRequest(InlineCompletionRequest.type, token, error, null);
      }
    },
    provideCompletionItem: (document, position, context, token, next) => {
      const invoked = context.triggerKind === vscode.CompletionTriggerKind.Invoke;
      if (!invoked && !gate!.allows(document.languageId)) {
        return undefined;
      }
      return next(document, position, context, token);
    },
    // VS Code asks for highlights wherever the cursor comes to rest: the request tells the
    // server where the next completion will probably be (its idle work prepares that
    // prompt). Its answer (the word's occurrences, found by text) is not shown, so the
    // language's own server keeps the highlights.
    provideDocumentHighlights: (document, position, token, next) => {
      void Promise.resolve(next(document, position, token)).catch(() => undefined);
      return undefined;
    },
    handleWorkDoneProgress: (token, params, next) => {
      statusBar?.progress(params);
      next(token, params);
    },
  };
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
    initializationOptions: () => settings.tree(true),
    outputChannel: output,
    middleware: middleware(),
  };
  const started = new LanguageClient('lspCoder', 'lsp-coder', serverOptions, clientOptions);
  client = started;
  // NOTE: vscode-languageclient 9.x ships textDocument/inlineCompletion as a *proposed*
  // feature (InlineCompletionItemFeature in ProposedFeatures); without this call VS Code
  // would only get the completion-list items. In 10.x it is a standard feature.
  started.registerProposedFeatures();
  started.registerFeature(experimentalCapabilities);
  started.onNotification(STATUS_NOTIFICATION, (status: ServerStatus) => {
    statusBar?.setServerStatus(status);
  });
  started.onDidChangeState((event) => statusBar?.setRunning(event.newState !== State.Stopped));
  try {
    await started.start();
  } catch (err) {
    statusBar?.setRunning(false);
    void vscode.window.showErrorMessage(
      `lsp-coder: could not start "${serverOptions.command}": ${String(err)}.` +
        ' Install it (see the extension README) or set lspCoder.serverPath.',
    );
    return;
  }
  try {
    // The state now, in case a notification came before the handler was in place.
    const status = await started.sendRequest(ExecuteCommandRequest.type, {
      command: STATUS_COMMAND,
      arguments: [],
    });
    statusBar?.setServerStatus(status as ServerStatus);
  } catch {
    // An older server without the command: its notifications (if any) still come.
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

/** The manual trigger: asks every inline completion provider, lsp-coder's as "invoked". */
async function suggest(): Promise<void> {
  await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
}

async function onConfigurationChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
  if (event.affectsConfiguration('editor.inlineSuggest.enabled')) {
    await restart(); // the server learns it at initialize (lspCoderGhostText)
    return;
  }
  if (!event.affectsConfiguration(SECTION)) {
    return;
  }
  gate?.configurationChanged(event);
  if (RESTART_SETTINGS.some((name) => event.affectsConfiguration(`${SECTION}.${name}`))) {
    await restart();
    return;
  }
  if (client?.isRunning() && affectsServer(event)) {
    await client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: settings.tree(false),
    });
  }
}

async function showStats(): Promise<void> {
  if (!client?.isRunning()) {
    void vscode.window.showWarningMessage('lsp-coder: the server is not running.');
    return;
  }
  const stats = (await client.sendRequest(ExecuteCommandRequest.type, {
    command: STATS_COMMAND,
    arguments: [],
  })) as Stats;
  output?.appendLine(formatStats(stats));
  output?.show(true);
}

function showLog(): void {
  output?.show(true);
}
