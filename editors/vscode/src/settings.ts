// The extension's settings that configure the server, as the server's snake_case config tree.

import * as vscode from 'vscode';

export const SECTION = 'lspCoder';

/** The VS Code setting (below `lspCoder.`) for each server key path. */
const SETTINGS: ReadonlyArray<[setting: string, serverPath: readonly [string, string]]> = [
  ['model.path', ['model', 'path']],
  ['model.draftPath', ['model', 'draft_path']],
  ['completion.debounceMs', ['completion', 'debounce_ms']],
  ['completion.maxLines', ['completion', 'max_lines']],
  ['completion.alternatives', ['completion', 'alternatives']],
  ['completion.minConfidence', ['completion', 'min_confidence']],
  ['speculative.enabled', ['speculative', 'enabled']],
  ['backend.kind', ['backend', 'kind']],
  ['backend.url', ['backend', 'url']],
  ['backend.model', ['backend', 'model']],
  ['backend.fimTemplate', ['backend', 'fim_template']],
  ['backend.apiKeyEnv', ['backend', 'api_key_env']],
];

/** Settings that only take effect when the server process is started again. */
export const RESTART_SETTINGS = ['serverPath', 'serverArgs', 'languages'];

export type ServerSettings = Record<string, Record<string, unknown>>;

/** Whether a configuration change touches a setting the server reads. */
export function affectsServer(event: vscode.ConfigurationChangeEvent): boolean {
  return SETTINGS.some(([setting]) => event.affectsConfiguration(`${SECTION}.${setting}`));
}

/**
 * Builds the server's config tree from the settings the user has set.
 *
 * Settings left at their default are not sent, so the server's own config file still applies.
 * A setting sent before and since removed is sent once more with its default, because the
 * server merges each layer over its current config.
 */
export class SettingsSender {
  /** Setting names sent last time. */
  private sent = new Set<string>();

  tree(initial: boolean): ServerSettings {
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
      } else if (!initial && this.sent.has(setting)) {
        value = inspected?.defaultValue;
      }
      if (value !== undefined) {
        (tree[table] ??= {})[key] = value;
      }
    }
    this.sent = sent;
    return tree;
  }
}
