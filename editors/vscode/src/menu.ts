// The menu the status bar item opens: switch suggestions off and on, snooze, statistics, log.

import * as vscode from 'vscode';
import { Gate } from './gate';

/** What the menu's entries do; the extension supplies the two that need the server. */
export interface MenuActions {
  showStats(): Promise<void>;
  showLog(): void;
}

interface Entry extends vscode.QuickPickItem {
  run(): unknown;
}

/** The entries for the current state; `language` is the active editor's, if any. */
function entries(gate: Gate, actions: MenuActions, language: string | undefined): Entry[] {
  const list: Entry[] = [];
  if (gate.enabled) {
    list.push({ label: '$(circle-slash) Disable suggestions', run: () => gate.setEnabled(false) });
  } else {
    list.push({ label: '$(check) Enable suggestions', run: () => gate.setEnabled(true) });
  }
  if (language !== undefined) {
    if (gate.disabledFor(language)) {
      list.push({ label: `$(check) Enable for ${language}`, run: () => gate.setLanguage(language, true) });
    } else {
      list.push({ label: `$(circle-slash) Disable for ${language}`, run: () => gate.setLanguage(language, false) });
    }
  }
  if (gate.snoozeEnd !== undefined) {
    list.push({ label: '$(play) Resume now', description: 'end the snooze', run: () => gate.endSnooze() });
  } else {
    list.push({ label: '$(clock) Snooze for 5 minutes', run: () => gate.snooze(5) });
    list.push({ label: '$(clock) Snooze for 30 minutes', run: () => gate.snooze(30) });
  }
  list.push({ label: '$(graph) Show statistics', run: () => actions.showStats() });
  list.push({ label: '$(output) Open log', run: () => actions.showLog() });
  return list;
}

/** Shows the menu and runs the entry the user picks. */
export async function showMenu(gate: Gate, actions: MenuActions, state: string): Promise<void> {
  const language = vscode.window.activeTextEditor?.document.languageId;
  const picked = await vscode.window.showQuickPick(entries(gate, actions, language), {
    title: `lsp-coder (${state})`,
    placeHolder: 'What should lsp-coder do?',
  });
  await picked?.run();
}
