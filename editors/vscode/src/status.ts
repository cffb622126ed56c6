// The status bar item: what lsp-coder is doing for the editor in front of the user.
//
// The server's state comes from its `lspCoder/status` notification (ready, error, engine
// unreachable) and, while a model loads, from its `$/progress` reports (the percentage).

import * as vscode from 'vscode';
import { Gate } from './gate';

/** The server's `lspCoder/status` notification (and `lspCoder.status` command result). */
export interface ServerStatus {
  /** "loading", "ready", "error", "unreachable" or "excluded" (the last file asked for is
   * kept from the model: `[context] exclude`, an ignore file, or a file holding secrets). */
  state: string;
  /** Why, for "error" and "unreachable" (names the model or the engine's URL and the fix). */
  message: string;
  /** The backend kind: "local", "llama-server", "openai" or "ollama". */
  backend: string;
  /** A serving engine's address ('' for the local model). */
  url: string;
  /** How many editors (this window included) complete with the same model. */
  editors?: number;
  /** Whether the server is the user's shared server (one model for every editor). */
  shared?: boolean;
}

/** How many editors share the model, for the tooltip ('' when this one is alone). */
export function sharing(server: ServerStatus): string {
  const others = (server.editors ?? 1) - 1;
  if (others <= 0) {
    return '';
  }
  return `, shared with ${others} other editor${others === 1 ? '' : 's'}`;
}

/** The command the item runs when clicked (the menu). */
export const MENU_COMMAND = 'lspCoder.menu';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  /** The server's last reported state; undefined until it reports or while it is stopped. */
  private server: ServerStatus | undefined;
  /** The load's percentage from `$/progress`; undefined when no load is reporting. */
  private percentage: number | undefined;
  /** Whether the server process runs (false after it failed to start or stopped). */
  private running = false;

  constructor(private readonly gate: Gate) {
    this.item = vscode.window.createStatusBarItem('lspCoder.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'lsp-coder';
    this.item.command = MENU_COMMAND;
    this.render();
    this.item.show();
  }

  /** The server process started (true) or stopped (false). */
  setRunning(running: boolean): void {
    this.running = running;
    if (!running) {
      this.server = undefined;
      this.percentage = undefined;
    }
    this.render();
  }

  setServerStatus(status: ServerStatus): void {
    this.server = status;
    if (status.state !== 'loading') {
      this.percentage = undefined;
    }
    this.render();
  }

  /** A `$/progress` value from the server (begin, report or end). */
  progress(value: { kind: string; percentage?: number }): void {
    if (value.kind === 'end') {
      this.percentage = undefined;
    } else if (typeof value.percentage === 'number') {
      this.percentage = value.percentage;
    }
    this.render();
  }

  /** The state the item shows now, as a word (for the menu's title and tests). */
  get state(): string {
    return this.describe().state;
  }

  render(): void {
    const shown = this.describe();
    this.item.text = shown.text;
    this.item.tooltip = shown.tooltip;
    this.item.backgroundColor = shown.warning
      ? new vscode.ThemeColor('statusBarItem.warningBackground')
      : undefined;
    this.item.accessibilityInformation = { label: shown.tooltip };
  }

  dispose(): void {
    this.item.dispose();
  }

  private describe(): { state: string; text: string; tooltip: string; warning: boolean } {
    const language = vscode.window.activeTextEditor?.document.languageId;
    const server = this.server;
    if (!this.running) {
      return { state: 'stopped', text: '$(debug-disconnect) lsp-coder stopped', warning: true,
               tooltip: 'lsp-coder: the server is not running (see the log)' };
    }
    if (!this.gate.enabled) {
      return { state: 'off', text: '$(circle-slash) lsp-coder off', warning: false,
               tooltip: 'lsp-coder: suggestions are off' };
    }
    if (server === undefined || server.state === 'loading') {
      const pct = this.percentage === undefined ? '' : ` ${Math.round(this.percentage)}%`;
      return { state: 'loading', text: `$(sync~spin) lsp-coder${pct || ' loading'}`,
               warning: false, tooltip: `lsp-coder: loading the model${pct}` };
    }
    if (server.state === 'error') {
      return { state: 'error', text: '$(error) lsp-coder', warning: true,
               tooltip: `lsp-coder: ${server.message.replace(/^lsp-coder: /, '')}` };
    }
    if (server.state === 'excluded') {
      return { state: 'excluded', text: '$(lock) lsp-coder', warning: false,
               tooltip: server.message || 'lsp-coder: this file is excluded from the model' };
    }
    if (server.state === 'unreachable') {
      return { state: 'unreachable', text: '$(warning) lsp-coder unreachable', warning: true,
               tooltip: server.message || `lsp-coder: ${server.url} does not answer` };
    }
    const end = this.gate.snoozeEnd;
    if (end !== undefined) {
      const until = end.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
      return { state: 'snoozed', text: `$(clock) lsp-coder snoozed`, warning: false,
               tooltip: `lsp-coder: snoozed until ${until}` };
    }
    if (language !== undefined && this.gate.disabledFor(language)) {
      return { state: 'off-language', text: `$(circle-slash) lsp-coder off (${language})`,
               warning: false, tooltip: `lsp-coder: suggestions are off for ${language}` };
    }
    const where = server.url ? `${server.backend} at ${server.url}` : 'the local model';
    return { state: 'ready', text: '$(sparkle) lsp-coder', warning: false,
             tooltip: `lsp-coder: ready (${where}${sharing(server)})` };
  }
}
