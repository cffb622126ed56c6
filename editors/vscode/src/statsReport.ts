// The server's `lspCoder.stats` as text a person reads: totals, then the latest requests.

/** What `lspCoder.stats` answers (only the fields shown here). */
export interface Stats {
  totals: Record<string, unknown>;
  recent: Array<Record<string, unknown>>;
}

/** How many of the latest requests the report lists. */
const RECENT_SHOWN = 10;

function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

function seconds(ms: unknown): string {
  return `${(num(ms) / 1000).toFixed(1)} s`;
}

function percent(part: number, whole: number): string {
  return whole > 0 ? ` (${Math.round((part * 100) / whole)}% of shown)` : '';
}

function backendLine(totals: Record<string, unknown>): string {
  const backend = (totals.backend ?? {}) as Record<string, unknown>;
  const kind = String(backend.kind ?? 'local');
  if (kind === 'local') {
    return totals.model_loaded ? 'the local model' : `no model loaded (${String(totals.error ?? '')})`;
  }
  const health = (backend.health ?? {}) as Record<string, unknown>;
  const state = health.up === false ? 'not answering' : 'answering';
  return `${kind} at ${String(backend.url ?? '')} (${state})`;
}

function recentLine(entry: Record<string, unknown>): string {
  const time = new Date(num(entry.time) * 1000).toLocaleTimeString();
  const how = [
    entry.cached ? 'from cache' : '',
    entry.invoked ? 'asked for' : '',
    num(entry.alternatives) > 0 ? `+${num(entry.alternatives)} alternatives` : '',
  ].filter(Boolean).join(', ');
  return (
    `  ${time}  ${String(entry.kind).padEnd(10)} ${String(entry.outcome).padEnd(10)}` +
    ` ${String(num(entry.chars)).padStart(5)} chars ${String(Math.round(num(entry.latency_ms))).padStart(6)} ms` +
    (how ? `  ${how}` : '')
  );
}

/** The report, one line per figure. */
export function formatStats(stats: Stats, now: Date = new Date()): string {
  const t = stats.totals;
  const shown = num(t.shown);
  const lines = [
    `lsp-coder statistics at ${now.toLocaleTimeString()}`,
    `  Completing with:     ${backendLine(t)}`,
    `  Requests:            ${num(t.requests)} (${num(t.cache_hits)} from the suggestion cache,` +
      ` ${num(t.superseded)} superseded, ${num(t.cancelled)} cancelled, ${num(t.empty)} empty)`,
    `  Suggestions shown:   ${shown}`,
    `  Accepted:            ${num(t.accepted)}${percent(num(t.accepted), shown)}`,
    `  Prompt tokens:       ${num(t.prompt_tokens)} (${num(t.reused_tokens)} reused from the` +
      ` cache, ${num(t.evaluated_tokens)} evaluated)`,
    `  Generated tokens:    ${num(t.generated_tokens)}`,
    `  Engine time:         prefill ${seconds(t.prefill_ms)}, decode ${seconds(t.decode_ms)}`,
  ];
  const recent = stats.recent.slice(-RECENT_SHOWN);
  if (recent.length > 0) {
    lines.push(`  Latest requests (newest last):`);
    lines.push(...recent.map(recentLine));
  }
  return lines.join('\n');
}
