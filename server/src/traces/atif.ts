/**
 * An episode as an ATIF trajectory (Agent Trajectory Interchange Format, v1.7: Harbor's RFC 0001 and its
 * pydantic models, which forbid unknown fields at every level). One trajectory per episode:
 *
 *   step 1        user    the goal the agent was shown
 *   step 2..n     agent   one per model turn (an agent without a model: one per tool call), its tool calls
 *                         and their results as the observation (source_call_id = tool_call_id)
 *   last          agent   the final answer, when there is one and the last turn made calls
 *
 * Tokens and cost are recorded per episode, not per turn, so they are in `final_metrics` (cost only when the
 * price file's currency is USD). Everything of mcpbench's own (status, verdict tree, faults, the work unit)
 * is under `extra`, where the format keeps custom data. The zod schema below is the format's, strict like
 * the pydantic models; `toAtif` output is checked against it before anything is written.
 */
import { z } from 'zod';
import type { EpisodeRecord, RunRecord } from '../record/schema.ts';
import { resultText, turnsOf } from '../record/trace.ts';

export const ATIF_VERSION = 'ATIF-v1.7';

const Extra = z.record(z.string(), z.unknown()).optional();

const IsoTimestamp = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'not an ISO 8601 timestamp');

export const AtifToolCallSchema = z.strictObject({ tool_call_id: z.string(), function_name: z.string(), arguments: z.record(z.string(), z.unknown()), extra: Extra });

export const AtifMetricsSchema = z.strictObject({
  prompt_tokens: z.number().int().optional(),
  completion_tokens: z.number().int().optional(),
  cached_tokens: z.number().int().optional(),
  cost_usd: z.number().optional(),
  prompt_token_ids: z.array(z.number().int()).optional(),
  completion_token_ids: z.array(z.number().int()).optional(),
  logprobs: z.array(z.number()).optional(),
  extra: Extra,
});

export const AtifObservationSchema = z.strictObject({
  results: z.array(z.strictObject({ source_call_id: z.string().nullable().optional(), content: z.string().nullable().optional(), extra: Extra })),
});

export const AtifStepSchema = z
  .strictObject({
    step_id: z.number().int().min(1),
    timestamp: IsoTimestamp.optional(),
    source: z.enum(['system', 'user', 'agent']),
    model_name: z.string().optional(),
    reasoning_effort: z.union([z.string(), z.number()]).optional(),
    message: z.string(),
    reasoning_content: z.string().optional(),
    tool_calls: z.array(AtifToolCallSchema).optional(),
    observation: AtifObservationSchema.optional(),
    metrics: AtifMetricsSchema.optional(),
    is_copied_context: z.boolean().optional(),
    llm_call_count: z.number().int().min(0).optional(),
    extra: Extra,
  })
  .superRefine((step, ctx) => {
    if (step.source !== 'agent') {
      for (const field of ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'] as const) {
        if (step[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: `only an agent step has ${field}` });
      }
    }
    const ids = new Set<string>();
    for (const call of step.tool_calls ?? []) {
      if (ids.has(call.tool_call_id)) ctx.addIssue({ code: 'custom', path: ['tool_calls'], message: `duplicate tool_call_id ${call.tool_call_id}` });
      ids.add(call.tool_call_id);
    }
    for (const result of step.observation?.results ?? []) {
      if (result.source_call_id != null && !ids.has(result.source_call_id)) ctx.addIssue({ code: 'custom', path: ['observation'], message: `source_call_id ${result.source_call_id} is not a tool call of step ${step.step_id}` });
    }
  });

export const AtifTrajectorySchema = z
  .strictObject({
    schema_version: z.enum(['ATIF-v1.0', 'ATIF-v1.1', 'ATIF-v1.2', 'ATIF-v1.3', 'ATIF-v1.4', 'ATIF-v1.5', 'ATIF-v1.6', 'ATIF-v1.7']),
    session_id: z.string().optional(),
    trajectory_id: z.string().optional(),
    agent: z.strictObject({ name: z.string(), version: z.string(), model_name: z.string().optional(), extra: Extra }),
    steps: z.array(AtifStepSchema).min(1),
    notes: z.string().optional(),
    final_metrics: z
      .strictObject({
        total_prompt_tokens: z.number().int().optional(),
        total_completion_tokens: z.number().int().optional(),
        total_cached_tokens: z.number().int().optional(),
        total_cost_usd: z.number().optional(),
        total_steps: z.number().int().min(0).optional(),
        extra: Extra,
      })
      .optional(),
    continued_trajectory_ref: z.string().optional(),
    extra: Extra,
  })
  .superRefine((trajectory, ctx) => {
    trajectory.steps.forEach((step, i) => {
      if (step.step_id !== i + 1) ctx.addIssue({ code: 'custom', path: ['steps', i, 'step_id'], message: `expected ${i + 1} (sequential from 1), got ${step.step_id}` });
    });
  });

export type AtifTrajectory = z.infer<typeof AtifTrajectorySchema>;
type AtifStep = z.infer<typeof AtifStepSchema>;

/** A call's arguments as ATIF takes them (an object): a non-object is kept under `value`. */
function argumentsObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value } : { value };
}

/**
 * One episode as a trajectory. `goal` is the goal the agent was shown when the record does not hold it (the
 * task's own); `version` the mcpbench that ran it.
 */
export function toAtif(record: EpisodeRecord, run: Pick<RunRecord, 'run_id' | 'mcpbench_version'>, goal: string | undefined): AtifTrajectory {
  const model = record.model;
  const steps: AtifStep[] = [];
  const shown = record.goal ?? goal;
  steps.push({ step_id: 1, timestamp: record.started_at, source: 'user', message: shown ?? '', ...(shown === undefined ? { extra: { goal_missing: 'the task file was not found and the record holds no goal' } } : {}) });
  for (const turn of turnsOf(record)) {
    const tool_calls = turn.calls.map((call) => ({
      tool_call_id: `call-${call.index}`,
      function_name: call.tool,
      arguments: argumentsObject(call.arguments),
      extra: {
        status: call.status,
        latency_ms: call.latency_ms,
        ...(call.qualified ? { qualified: call.qualified } : {}),
        ...(call.fault ? { fault: call.fault } : {}),
        ...(call.decided ? { decided_fault: call.decided } : {}),
      },
    }));
    const extra = {
      ...(turn.latency_ms !== undefined ? { latency_ms: turn.latency_ms } : {}),
      ...(turn.malformed.length ? { malformed_calls: turn.malformed } : {}),
    };
    steps.push({
      step_id: steps.length + 1,
      source: 'agent',
      ...(model ? { model_name: model.model, llm_call_count: 1 } : { llm_call_count: 0 }),
      message: '',
      ...(tool_calls.length ? { tool_calls, observation: { results: turn.calls.map((call) => ({ source_call_id: `call-${call.index}`, content: resultText(call.result) })) } } : {}),
      ...(Object.keys(extra).length ? { extra } : {}),
    });
  }
  if (record.answer !== undefined) {
    const last = steps[steps.length - 1]!;
    if (last.source === 'agent' && !last.tool_calls) last.message = record.answer;
    else steps.push({ step_id: steps.length + 1, source: 'agent', ...(model ? { model_name: model.model } : { llm_call_count: 0 }), message: record.answer });
  }
  const usd = model && model.cost !== null && (model.currency ?? 'USD') === 'USD' ? model.cost : undefined;
  const trajectory: AtifTrajectory = {
    schema_version: ATIF_VERSION,
    session_id: record.run_id,
    trajectory_id: record.work_unit,
    agent: { name: record.agent, version: run.mcpbench_version ?? 'unknown', ...(model ? { model_name: model.model } : {}) },
    steps,
    final_metrics: {
      ...(model
        ? {
            total_prompt_tokens: Math.round(model.prompt_tokens),
            total_completion_tokens: Math.round(model.completion_tokens),
            total_cached_tokens: Math.round(model.cached_tokens),
            ...(usd !== undefined ? { total_cost_usd: usd } : {}),
          }
        : {}),
      total_steps: steps.length,
      ...(model && model.cost !== null && usd === undefined ? { extra: { cost: model.cost, currency: model.currency } } : {}),
    },
    extra: {
      mcpbench: {
        work_unit: record.work_unit,
        task_id: record.task_id,
        task_hash: record.task_hash,
        trial: record.trial,
        variant: record.variant,
        fault_profile: record.fault_profile,
        perturbation: record.perturbation,
        status: record.status,
        passed: record.passed,
        duration_ms: record.duration_ms,
        tool_calls: record.tool_calls,
        max_steps: record.max_steps,
        unlisted_calls: record.unlisted_calls,
        budget_exceeded: record.budget_exceeded,
        ...(record.verdict ? { verdict: record.verdict } : {}),
        ...(record.error ? { error: record.error } : {}),
        ...(record.failure ? { failure: record.failure } : {}),
        ...(record.end_state ? { end_state: record.end_state } : {}),
      },
    },
  };
  return AtifTrajectorySchema.parse(trajectory);
}
