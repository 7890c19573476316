/**
 * The episode viewer: one episode as a page people read top to bottom. The goal the agent was shown, then
 * a timeline of its model turns (an agent without a model: its calls), each tool call with its arguments,
 * its result, its status and latency and the fault decided and delivered; the final answer; the verdict
 * tree with every leaf's value and evidence; the error or failure that ended it; tokens and cost.
 *
 * Static HTML: every value is escaped on the server, and the Content-Security-Policy allows no script and
 * no fetch, so agent output can neither run nor load anything. `writeReport` writes one page per episode
 * under `views/` of the run folder, and report.html links each episode to its page.
 */
import type { EpisodeRecord, NodeVerdict, RunRecord } from '../record/schema.ts';
import { turnsOf } from '../record/trace.ts';
import { outcomeReason } from '../record/work-units.ts';
import { cut, html } from './report-html.ts';

export interface EpisodePageOptions {
  /** The task's goal, when the record does not hold the goal shown (it does only when it differs). */
  goal?: string;
  /** Longest arguments / result / evidence text kept (default 20,000 characters). */
  maxValueChars?: number;
  /** The run's report, relative to the page (default `../report.html`); null for none. */
  reportHref?: string | null;
}

const text = (value: unknown, max: number) => cut(value, max, 2);

const truth = (v: boolean | undefined) => (v === true ? 'true' : v === false ? 'false' : 'unknown');

function verdictItem(node: NodeVerdict, max: number): string {
  const label = node.kind === 'leaf' ? (node.name ?? 'leaf') : node.kind;
  const parts = [`<span class="v v-${truth(node.value)}">${truth(node.value)}</span> <code>${html(label)}</code>`];
  if (node.undecided) parts.push(` <span class="muted">(undecided: ${html(node.undecided)})</span>`);
  if (node.evidence !== undefined) parts.push(`<pre class="evidence">evidence: ${html(text(node.evidence, max))}</pre>`);
  if (node.children?.length) parts.push(`<ul>${node.children.map((c) => verdictItem(c, max)).join('')}</ul>`);
  return `<li class="node" data-kind="${node.kind}" data-value="${truth(node.value)}">${parts.join('')}</li>`;
}

function fact(label: string, value: string | number | undefined | null): string {
  return value === undefined || value === null || value === '' ? '' : `<dt>${html(label)}</dt><dd>${html(String(value))}</dd>`;
}

function callBlock(call: EpisodeRecord['calls'][number], max: number): string {
  const fault = call.fault
    ? `<p class="fault-mark">⚡ fault delivered: <strong>${html(call.fault.type)}</strong> (${call.fault.executed ? 'the call reached the server' : 'the call did not reach the server'})${call.fault.detail ? `: ${html(call.fault.detail)}` : ''}</p>`
    : call.decided
      ? `<p class="fault-mark muted">fault decided but not deliverable: ${html(call.decided)}</p>`
      : '';
  return `<div class="call${call.fault ? ' faulted' : ''}" data-call-index="${call.index}" data-status="${html(call.status)}"${call.fault ? ` data-fault="${html(call.fault.type)}"` : ''}>
<h4>#${call.index} <code>${html(call.tool)}</code> <span class="status st-${html(call.status)}">${html(call.status)}</span> <span class="muted">${call.latency_ms.toFixed(0)} ms</span></h4>
${fault}<div class="io"><div><h5>arguments</h5><pre class="arguments">${html(text(call.arguments, max))}</pre></div><div><h5>result</h5><pre class="result">${html(text(call.result, max))}</pre></div></div>
</div>`;
}

/** The page of one episode. */
export function renderEpisodeHtml(record: EpisodeRecord, run: Pick<RunRecord, 'run_id' | 'agent'>, options: EpisodePageOptions = {}): string {
  const max = options.maxValueChars ?? 20_000;
  const model = record.model;
  const reason = outcomeReason(record);
  const goal = record.goal ?? options.goal;
  const reportHref = options.reportHref === undefined ? '../report.html' : options.reportHref;

  const facts = [
    fact('run', run.run_id),
    fact('agent', run.agent),
    fact('model', model?.model),
    fact('trial', record.trial),
    fact('variant', record.variant),
    fact('faults', record.fault_profile),
    fact('perturbation', record.perturbation),
    fact('steps', `${record.tool_calls} of ${record.max_steps}${record.budget_exceeded ? ' (budget exceeded)' : ''}`),
    fact('unlisted calls', record.unlisted_calls),
    fact('errors seen', record.errors_seen),
    fact('started', record.started_at),
    fact('duration', `${(record.duration_ms / 1000).toFixed(2)} s`),
    fact('attempt', record.attempt),
    model ? fact('tokens', `${model.prompt_tokens + model.completion_tokens} (prompt ${model.prompt_tokens}, completion ${model.completion_tokens}, cached ${model.cached_tokens})`) : '',
    model ? fact('cost', model.cost === null ? 'no price for the model' : `${model.currency ?? 'USD'} ${model.cost.toFixed(4)}`) : '',
    model ? fact('model requests', `${model.requests} (${model.retries} retried), ended: ${model.end ?? 'unknown'}`) : '',
    fact('work unit', record.work_unit),
    fact('task hash', record.task_hash),
    fact('end state', record.end_state),
  ].join('');

  const applied = (record.perturbed?.applied ?? []).map((a) => `${a.kind}: ${a.detail}`);
  const goalSection = `<section id="goal"><h2>Goal${record.goal !== undefined ? ' shown' : ''}</h2>${
    goal !== undefined ? `<pre class="goal">${html(goal)}</pre>` : '<p class="muted">Not recorded (the task file was not found, and the goal was not perturbed).</p>'
  }${applied.length ? `<p class="muted">Perturbation ${html(record.perturbation)}: ${html(applied.join(' · '))}</p>` : ''}</section>`;

  const turns = turnsOf(record);
  const timeline = turns.length
    ? `<ol class="timeline">${turns
        .map((turn) => {
          const head = model
            ? `<h3>Turn ${turn.index + 1}${turn.latency_ms !== undefined ? ` <span class="muted">model ${turn.latency_ms.toFixed(0)} ms</span>` : ''}</h3>`
            : `<h3>Step ${turn.index + 1}</h3>`;
          const malformed = turn.malformed.map((m) => `<p class="malformed">malformed call${m.name ? ` <code>${html(m.name)}</code>` : ''} (${html(m.format)}): ${html(m.problem ?? 'refused')}; answered by the agent, never sent</p>`).join('');
          const calls = turn.calls.map((c) => callBlock(c, max)).join('');
          const last = turn.index === turns.length - 1;
          const empty = !calls && !malformed ? `<p class="muted">${last && record.answer !== undefined ? 'The final answer (below), no tool call.' : 'No tool call in this turn.'}</p>` : '';
          return `<li class="turn" data-turn="${turn.index}">${head}${malformed}${calls}${empty}</li>`;
        })
        .join('')}</ol>${model ? '<p class="muted">The model\'s text between calls is not recorded.</p>' : ''}`
    : '<p class="muted">No calls.</p>';

  const ending = [
    record.error
      ? `<section id="error"><h2>${record.error.kind === 'agent' ? 'Agent error' : 'Infrastructure error'} (${html(record.error.code)})</h2><pre class="error">${html(record.error.message)}${record.error.stderr_tail ? `\n--- last lines of its stderr ---\n${html(record.error.stderr_tail)}` : ''}</pre></section>`
      : '',
    record.failure ? `<section id="failure"><h2>Failed (${html(record.failure.code)})</h2><pre class="error">${html(record.failure.message)}</pre></section>` : '',
    `<section id="answer"><h2>Final answer</h2>${record.answer !== undefined ? `<pre class="answer">${html(text(record.answer, max))}</pre>` : '<p class="muted">No final answer.</p>'}</section>`,
    `<section id="verdict"><h2>Verdict</h2>${record.verdict ? `<ul class="verdict">${verdictItem(record.verdict, max)}</ul>` : '<p class="muted">No verdict: the predicate was not evaluated.</p>'}</section>`,
  ].join('\n');

  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="color-scheme" content="light dark">
<title>${html(`${record.task_id} · ${record.status} · ${run.run_id}`)}</title>
<style>${STYLE}</style>
</head>
<body data-status="${record.status}">
<header>${reportHref !== null ? `<a class="back" href="${html(reportHref)}">← run report</a>` : ''}
<h1><code>${html(record.task_id)}</code> <span class="badge s-${record.status}">${record.status.replace('_', ' ')}</span></h1>
${reason ? `<p class="reason">${html(reason)}</p>` : ''}
<dl class="facts">${facts}</dl></header>
<main>
${goalSection}
<section id="timeline"><h2>Timeline</h2>${timeline}</section>
${ending}
</main>
</body>
</html>
`;
}

const STYLE = `
:root { --fg: #1d1d1f; --muted: #6e6e73; --bg: #fff; --card: #f5f5f7; --border: #d2d2d7; --pass: #1a7f37; --fail: #cf222e; --err: #9a6700; --fault: #fff4e5; }
@media (prefers-color-scheme: dark) { :root { --fg: #f5f5f7; --muted: #a1a1a6; --bg: #1d1d1f; --card: #2c2c2e; --border: #48484a; --fault: #3a2a10; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0 auto; max-width: 1100px; padding: 16px 24px; }
h1 { font-size: 20px; margin: 8px 0; } h2 { font-size: 16px; border-bottom: 1px solid var(--border); padding-bottom: 4px; margin-top: 24px; }
h3 { font-size: 14px; margin: 8px 0; } h4 { font-size: 13px; margin: 0 0 6px; } h5 { font-size: 12px; margin: 0; color: var(--muted); font-weight: 600; }
.muted { color: var(--muted); } .back { font-size: 13px; }
.badge { font-size: 12px; padding: 2px 8px; border-radius: 10px; color: #fff; vertical-align: middle; }
.s-passed { background: var(--pass); } .s-failed { background: var(--fail); } .s-agent_error, .s-infra_error { background: var(--err); }
.reason { margin: 4px 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr max-content 1fr; gap: 2px 12px; font-size: 12px; margin: 8px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--card); border: 1px solid var(--border); border-radius: 4px; padding: 6px 8px; margin: 4px 0; max-height: 400px; overflow: auto; font-size: 12px; }
ol.timeline { list-style: none; padding: 0; } li.turn { border-left: 3px solid var(--border); padding: 0 0 4px 12px; margin-bottom: 12px; }
.call { border: 1px solid var(--border); border-radius: 6px; padding: 8px; margin: 6px 0; background: var(--bg); }
.call.faulted { background: var(--fault); } .fault-mark { margin: 0 0 6px; }
.io { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; } @media (max-width: 700px) { .io { grid-template-columns: 1fr; } }
.status { font-size: 11px; border: 1px solid var(--border); border-radius: 8px; padding: 0 6px; } .st-ok { color: var(--pass); } .st-fault, .st-tool-error, .st-unlisted, .st-over-budget, .st-infra-error { color: var(--fail); }
.malformed { color: var(--err); }
ul.verdict, ul.verdict ul { list-style: none; padding-left: 18px; } ul.verdict { padding-left: 0; }
.v { font-family: ui-monospace, monospace; font-size: 12px; padding: 0 4px; border-radius: 3px; } .v-true { color: var(--pass); } .v-false { color: var(--fail); } .v-unknown { color: var(--err); }
`;
