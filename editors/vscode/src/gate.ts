// Whether suggestions come as you type: on or off, off for some languages, or snoozed.
//
// On/off and the languages are settings (`lspCoder.enable`, `lspCoder.disabledLanguages`), so
// they last and can be set per workspace; a snooze lasts until its time or until VS Code
// restarts. A suggestion you ask for (the trigger key, "next suggestion") always comes.

import * as vscode from 'vscode';
import { SECTION } from './settings';

export class Gate implements vscode.Disposable {
  /** When the snooze ends (ms since the epoch); undefined when not snoozed. */
  private snoozedUntil: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when anything here changes (settings, a snooze starting or ending). */
  readonly onDidChange = this.changed.event;

  get enabled(): boolean {
    return vscode.workspace.getConfiguration(SECTION).get<boolean>('enable', true);
  }

  disabledFor(language: string): boolean {
    const config = vscode.workspace.getConfiguration(SECTION);
    return config.get<string[]>('disabledLanguages', []).includes(language);
  }

  /** The end of the snooze, if one is running. */
  get snoozeEnd(): Date | undefined {
    return this.snoozedUntil === undefined ? undefined : new Date(this.snoozedUntil);
  }

  /** Whether a suggestion may be asked for as the user types in `language`. */
  allows(language: string): boolean {
    return this.enabled && this.snoozedUntil === undefined && !this.disabledFor(language);
  }

  async setEnabled(enabled: boolean): Promise<void> {
    await vscode.workspace
      .getConfiguration(SECTION)
      .update('enable', enabled, vscode.ConfigurationTarget.Global);
    if (enabled) {
      this.endSnooze();
    }
  }

  async setLanguage(language: string, enabled: boolean): Promise<void> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const others = config.get<string[]>('disabledLanguages', []).filter((l) => l !== language);
    await config.update(
      'disabledLanguages',
      enabled ? others : [...others, language],
      vscode.ConfigurationTarget.Global,
    );
  }

  snooze(minutes: number): void {
    this.clearTimer();
    this.snoozedUntil = Date.now() + minutes * 60_000;
    this.timer = setTimeout(() => this.endSnooze(), minutes * 60_000);
    this.changed.fire();
  }

  endSnooze(): void {
    if (this.snoozedUntil === undefined) {
      return;
    }
    this.clearTimer();
    this.snoozedUntil = undefined;
    this.changed.fire();
  }

  /** Call when the configuration changed (the settings above may have). */
  configurationChanged(event: vscode.ConfigurationChangeEvent): void {
    if (
      event.affectsConfiguration(`${SECTION}.enable`) ||
      event.affectsConfiguration(`${SECTION}.disabledLanguages`)
    ) {
      this.changed.fire();
    }
  }

  dispose(): void {
    this.clearTimer();
    this.changed.dispose();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
