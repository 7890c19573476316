/**
 * The results database's schema, as numbered migration steps run by Kysely's Migrator (which records them in
 * `kysely_migration` and holds `kysely_migration_lock` while it migrates, so two importers never migrate at
 * once). A step is never edited once released: a schema change is a new step. Every table and column is
 * documented with COMMENT ON in the step that makes it; docs/results-database.md is generated from those
 * comments (`npm run results:docs`), and a test checks that nothing is undocumented.
 */
import { sql, type Kysely } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';
import { scoringConfiguration } from './configuration.ts';

type Docs = Record<string, { table: string; columns: Record<string, string> }>;

/** COMMENT ON every table and column of `docs`. */
async function comment(db: Kysely<any>, docs: Docs): Promise<void> {
  for (const [table, { table: text, columns }] of Object.entries(docs)) {
    await sql`comment on table ${sql.table(table)} is ${sql.lit(text)}`.execute(db);
    for (const [column, doc] of Object.entries(columns)) {
      await sql`comment on column ${sql.ref(`${table}.${column}`)} is ${sql.lit(doc)}`.execute(db);
    }
  }
}

const DOCS_0001: Docs = {
  runs: {
    table: 'One row per imported run folder (runs/<run-id>/). The run folder is the store of record: this row is derived from its run.json and episodes.jsonl and is replaced whole when the folder changed since the last import.',
    columns: {
      run_id: 'The run id (run.json run_id); primary key.',
      directory: 'Absolute path of the run folder when it was imported (the leaderboard links to its report.html).',
      record_version: 'The version of run.json, null for runs written before run records carried one.',
      agent: 'The agent plug-in that ran (reference, noop, command, endpoint, openai, check ...).',
      agent_label: 'The agent as compared and ranked: the import\'s --agent-label, else the plug-in with its model (openai:gpt-4o-mini), else the plug-in.',
      model: 'The model behind the agent when run.json records one (agent_options.model), else null.',
      fault_profile: 'The fault profile the run was started with (none, light, medium, heavy, <type>-only, a file, or check).',
      perturbation: 'The goal perturbation level(s), comma-separated as run.json records them.',
      trials: 'Trials per task (pass^k runs k).',
      seed: 'The run seed (fault decisions, perturbations and the report\'s bootstrap follow it).',
      set_name: 'The task set the run measured (run.json set, or the import\'s --set), null when unknown.',
      month: 'The set\'s month as YYYY-MM (run.json set month, or the import\'s --month), else the month the run was created.',
      month_source: 'Where month came from: set (recorded with the run or given at import) or created_at.',
      created_at: 'When the run was created (run.json created_at).',
      imported_at: 'When this version of the run was imported.',
      source_sha256: 'SHA-256 over run.json and episodes.jsonl as imported, the set, month and agent label, and the failure-mode rules version: an import of an unchanged folder changes nothing.',
      config: 'run.json as it was imported.',
      episode_records: 'Journal records read (retried infrastructure failures included).',
      warnings: 'What the reader warned about (a torn last journal line, damaged lines), as a JSON array of strings.',
    },
  },
  tasks: {
    table: 'One row per task version, keyed by its canonical hash (SHA-256 of RFC 8785 JSON): an edited task is a new row. Filled from the episodes, and from the task file when it was found at import (difficulty, body, required tools).',
    columns: {
      task_hash: 'Canonical SHA-256 of the task; primary key.',
      task_id: 'The task id.',
      namespaces: 'The namespaces the task runs against (its server field).',
      primary_namespace: 'The first namespace: the stratum anomaly detection compares a task with.',
      category: 'single-tool, composition or recovery.',
      difficulty: 'easy, medium or hard; null when the task file was not found at import.',
      max_steps: 'The step budget.',
      information: 'Whether the predicate checks the final answer (an answer.* leaf); null when the task file was not found.',
      required_tools: 'Tools every reference solution calls (what the wrong-tool-selection failure mode checks); null when the task file was not found.',
      task: 'The task file itself, when found at import; null otherwise (a sealed set\'s tasks are not read).',
    },
  },
  episodes: {
    table: 'One row per episode of a run: the scored record of its work unit (the last non-infra record, or the last record when every attempt was an infrastructure failure).',
    columns: {
      run_id: 'The run (runs.run_id).',
      work_unit: 'The work-unit key: a hash of task hash, variant, trial, fault profile, perturbation and seed. With run_id, the episode\'s identity.',
      task_id: 'The task id.',
      task_hash: 'The task version (tasks.task_hash).',
      variant: 'Which sequence the reference agent replayed (reference:0, counterexample:1, noop) or the agent name.',
      trial: '0-based trial number.',
      fault_profile: 'The fault profile of this episode.',
      perturbation: 'The perturbation level of this episode.',
      seed: 'The seed the episode ran with.',
      agent: 'The agent of this episode (a check run mixes noop and reference).',
      status: 'passed, failed (the agent\'s fault), agent_error (the agent process or its model endpoint broke) or infra_error (ours).',
      passed: 'Predicate true and budget not exceeded.',
      attempts: 'Journal records for this work unit (infrastructure failures are retried).',
      category: 'The task category at run time.',
      namespaces: 'The task namespaces at run time.',
      max_steps: 'The step budget.',
      tool_calls: 'Calls to listed tools that were forwarded or faulted (what counts against max_steps).',
      unlisted_calls: 'Calls to tools the task does not list (hallucinated tools).',
      errors_seen: 'Calls whose result the agent saw as an error (injected or not).',
      budget_exceeded: 'Whether the agent tried to go past max_steps.',
      calls: 'Calls the gateway recorded (unlisted and over-budget ones included).',
      invalid_argument_calls: 'Calls to listed tools whose arguments fail the tool\'s input schema or that the server refused as invalid parameters.',
      malformed_calls: 'Tool calls the model emitted that could not be parsed into a call at all (recorded by model agents), null when not recorded.',
      prompt_tokens: 'Prompt tokens the agent\'s model used, null when not recorded.',
      completion_tokens: 'Completion tokens the agent\'s model used, null when not recorded.',
      cached_tokens: 'Prompt tokens served from the provider\'s cache, null when not recorded.',
      cost_usd: 'Cost of the episode\'s model calls in US dollars, null when not recorded.',
      error_kind: 'agent or infra when the episode ended in an error, else null.',
      error_code: 'The error\'s code (a stable identifier), null when none.',
      error_message: 'The error\'s message (with the server\'s stderr tail for infrastructure errors), null when none.',
      answer: 'The agent\'s final text answer, null when it gave none.',
      goal: 'The goal shown when it differs from the task\'s (perturbed), else null.',
      perturbed: 'Whether the goal shown was perturbed.',
      verdict: 'The predicate\'s verdict tree (each node with value and evidence), null when not evaluated.',
      failure_mode: 'For failed episodes: the primary failure mode (results/failure-modes.ts), unknown when none applies; null otherwise.',
      failure_evidence: 'The failure mode\'s evidence: the call or predicate leaf that shows it, and a sentence.',
      failure_also: 'Other failure modes that also apply, in priority order; null for episodes that did not fail.',
      started_at: 'When the episode started.',
      duration_ms: 'Wall-clock duration of the episode in milliseconds.',
    },
  },
  calls: {
    table: 'One row per tool call an episode\'s agent made through the gateway (the trace), with the fault injected into it if any.',
    columns: {
      run_id: 'The run.',
      work_unit: 'The episode (with run_id).',
      call_index: '0-based position among the episode\'s calls.',
      tool: 'The name the agent called (<ns>_<tool>).',
      qualified: '<ns>.<tool> when the name is one of the task\'s available tools, else null.',
      status: 'ok, tool-error, fault, unlisted, over-budget or infra-error.',
      is_error: 'Whether the agent saw the result as an error.',
      invalid_arguments: 'Whether the call was rejected for invalid arguments (input schema or the server\'s invalid-params error).',
      fault_type: 'The injected fault (ReliabilityBench taxonomy), null when none.',
      fault_executed: 'Whether the faulted call reached the server, null when no fault.',
      fault_detail: 'What the fault did, null when no fault or no detail.',
      latency_ms: 'Milliseconds from the agent\'s request to the gateway\'s answer.',
      arguments: 'The call\'s arguments (JSON over 100,000 characters is stored as { truncated: true, chars, head }).',
      result: 'What the agent received: an MCP CallToolResult, or { error } for a protocol-level error (JSON over 100,000 characters is stored as { truncated: true, chars, head }).',
    },
  },
  verdict_nodes: {
    table: 'The verdict tree of each evaluated episode, one row per node, for per-leaf queries (which leaves fail most, which verdicts flip).',
    columns: {
      run_id: 'The run.',
      work_unit: 'The episode (with run_id).',
      path: 'The node\'s JSON path in the task, as a JSON array text (["success_predicate","all",0]).',
      kind: 'all, any, not, leaf or invalid.',
      name: 'For leaves: <ns>.<predicate>; null otherwise.',
      value: 'true, false, or null when undecided.',
      undecided: 'Why a leaf could not be decided, null when it was.',
      depth: '0 for the root.',
      under_not: 'Whether an odd number of not nodes lie above this node (its truth is a constraint).',
    },
  },
  run_scores: {
    table: 'The scores of each run as the report computes them (scoring/metrics.ts), with their 95% bootstrap intervals over tasks.',
    columns: {
      run_id: 'The run.',
      metric: 'success_rate, pass^k (one row per k), tool_call_efficiency, hallucinated_tool_rate or recovery_rate.',
      k: 'For pass^k: k; null otherwise.',
      value: 'The score, null when its denominator is 0.',
      ci_low: 'Lower end of the bootstrap interval, null when none.',
      ci_high: 'Upper end of the bootstrap interval, null when none.',
      numerator: 'Passed (or counted) items, null when the metric has none.',
      denominator: 'Attempted items (episodes, units or calls), null when the metric has none.',
    },
  },
  rotations: {
    table: 'One row per monthly rotation of a set (a Historical-YYYY-MM.json manifest written by mcpbench rotate).',
    columns: {
      set_name: 'The set that was rotated.',
      month: 'The rotation month, YYYY-MM: the retired tasks are public from then on.',
      tag: 'Historical-YYYY-MM.',
      seed: 'The rotation seed.',
      share: 'The share of the set retired.',
      source_file: 'The manifest file imported.',
      imported_at: 'When the manifest was first imported.',
    },
  },
  retired_tasks: {
    table: 'The tasks each rotation retired into its Historical-YYYY-MM tag (published with their attestations).',
    columns: {
      set_name: 'The set.',
      month: 'The rotation month that retired the task.',
      task_id: 'The task id.',
      task_hash: 'The attested canonical SHA-256 of the task.',
      namespace: 'The task\'s primary namespace.',
      category: 'The task\'s category.',
      added: 'The month the task had entered the set.',
    },
  },
};

const m0001: Migration = {
  async up(db) {
    await db.schema
      .createTable('runs')
      .addColumn('run_id', 'text', (c) => c.primaryKey())
      .addColumn('directory', 'text', (c) => c.notNull())
      .addColumn('record_version', 'integer')
      .addColumn('agent', 'text', (c) => c.notNull())
      .addColumn('agent_label', 'text', (c) => c.notNull())
      .addColumn('model', 'text')
      .addColumn('fault_profile', 'text', (c) => c.notNull())
      .addColumn('perturbation', 'text', (c) => c.notNull())
      .addColumn('trials', 'integer', (c) => c.notNull())
      .addColumn('seed', 'bigint', (c) => c.notNull())
      .addColumn('set_name', 'text')
      .addColumn('month', 'text', (c) => c.notNull().check(sql`month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'`))
      .addColumn('month_source', 'text', (c) => c.notNull().check(sql`month_source in ('set', 'created_at')`))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('imported_at', 'timestamptz', (c) => c.notNull())
      .addColumn('source_sha256', 'text', (c) => c.notNull())
      .addColumn('config', 'jsonb', (c) => c.notNull())
      .addColumn('episode_records', 'integer', (c) => c.notNull())
      .addColumn('warnings', 'jsonb', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('runs_agent_month').on('runs').columns(['agent_label', 'set_name', 'month']).execute();

    await db.schema
      .createTable('tasks')
      .addColumn('task_hash', 'text', (c) => c.primaryKey())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('namespaces', sql`text[]`, (c) => c.notNull())
      .addColumn('primary_namespace', 'text', (c) => c.notNull())
      .addColumn('category', 'text', (c) => c.notNull())
      .addColumn('difficulty', 'text')
      .addColumn('max_steps', 'integer', (c) => c.notNull())
      .addColumn('information', 'boolean')
      .addColumn('required_tools', sql`text[]`)
      .addColumn('task', 'jsonb')
      .execute();
    await db.schema.createIndex('tasks_task_id').on('tasks').column('task_id').execute();

    await db.schema
      .createTable('episodes')
      .addColumn('run_id', 'text', (c) => c.notNull().references('runs.run_id').onDelete('cascade'))
      .addColumn('work_unit', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('task_hash', 'text', (c) => c.notNull().references('tasks.task_hash'))
      .addColumn('variant', 'text', (c) => c.notNull())
      .addColumn('trial', 'integer', (c) => c.notNull())
      .addColumn('fault_profile', 'text', (c) => c.notNull())
      .addColumn('perturbation', 'text', (c) => c.notNull())
      .addColumn('seed', 'bigint', (c) => c.notNull())
      .addColumn('agent', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('passed', 'failed', 'agent_error', 'infra_error')`))
      .addColumn('passed', 'boolean', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('category', 'text', (c) => c.notNull())
      .addColumn('namespaces', sql`text[]`, (c) => c.notNull())
      .addColumn('max_steps', 'integer', (c) => c.notNull())
      .addColumn('tool_calls', 'integer', (c) => c.notNull())
      .addColumn('unlisted_calls', 'integer', (c) => c.notNull())
      .addColumn('errors_seen', 'integer', (c) => c.notNull())
      .addColumn('budget_exceeded', 'boolean', (c) => c.notNull())
      .addColumn('calls', 'integer', (c) => c.notNull())
      .addColumn('invalid_argument_calls', 'integer', (c) => c.notNull())
      .addColumn('malformed_calls', 'integer')
      .addColumn('prompt_tokens', 'bigint')
      .addColumn('completion_tokens', 'bigint')
      .addColumn('cached_tokens', 'bigint')
      .addColumn('cost_usd', 'double precision')
      .addColumn('error_kind', 'text', (c) => c.check(sql`error_kind in ('agent', 'infra')`))
      .addColumn('error_code', 'text')
      .addColumn('error_message', 'text')
      .addColumn('answer', 'text')
      .addColumn('goal', 'text')
      .addColumn('perturbed', 'boolean', (c) => c.notNull())
      .addColumn('verdict', 'jsonb')
      .addColumn('failure_mode', 'text')
      .addColumn('failure_evidence', 'jsonb')
      .addColumn('failure_also', sql`text[]`)
      .addColumn('started_at', 'timestamptz', (c) => c.notNull())
      .addColumn('duration_ms', 'double precision', (c) => c.notNull())
      .addPrimaryKeyConstraint('episodes_pk', ['run_id', 'work_unit'])
      .execute();
    await db.schema.createIndex('episodes_task').on('episodes').column('task_hash').execute();
    await db.schema.createIndex('episodes_failure').on('episodes').columns(['run_id', 'failure_mode']).execute();

    await db.schema
      .createTable('calls')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('work_unit', 'text', (c) => c.notNull())
      .addColumn('call_index', 'integer', (c) => c.notNull())
      .addColumn('tool', 'text', (c) => c.notNull())
      .addColumn('qualified', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('is_error', 'boolean', (c) => c.notNull())
      .addColumn('invalid_arguments', 'boolean', (c) => c.notNull())
      .addColumn('fault_type', 'text')
      .addColumn('fault_executed', 'boolean')
      .addColumn('fault_detail', 'text')
      .addColumn('latency_ms', 'double precision', (c) => c.notNull())
      .addColumn('arguments', 'jsonb', (c) => c.notNull())
      .addColumn('result', 'jsonb', (c) => c.notNull())
      .addPrimaryKeyConstraint('calls_pk', ['run_id', 'work_unit', 'call_index'])
      .addForeignKeyConstraint('calls_episode', ['run_id', 'work_unit'], 'episodes', ['run_id', 'work_unit'], (c) => c.onDelete('cascade'))
      .execute();

    await db.schema
      .createTable('verdict_nodes')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('work_unit', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('value', 'boolean')
      .addColumn('undecided', 'text')
      .addColumn('depth', 'integer', (c) => c.notNull())
      .addColumn('under_not', 'boolean', (c) => c.notNull())
      .addPrimaryKeyConstraint('verdict_nodes_pk', ['run_id', 'work_unit', 'path'])
      .addForeignKeyConstraint('verdict_nodes_episode', ['run_id', 'work_unit'], 'episodes', ['run_id', 'work_unit'], (c) => c.onDelete('cascade'))
      .execute();

    await db.schema
      .createTable('run_scores')
      .addColumn('run_id', 'text', (c) => c.notNull().references('runs.run_id').onDelete('cascade'))
      .addColumn('metric', 'text', (c) => c.notNull())
      .addColumn('k', 'integer')
      .addColumn('value', 'double precision')
      .addColumn('ci_low', 'double precision')
      .addColumn('ci_high', 'double precision')
      .addColumn('numerator', 'double precision')
      .addColumn('denominator', 'double precision')
      .addPrimaryKeyConstraint('run_scores_pk', ['run_id', 'metric'])
      .execute();

    await db.schema
      .createTable('rotations')
      .addColumn('set_name', 'text', (c) => c.notNull())
      .addColumn('month', 'text', (c) => c.notNull())
      .addColumn('tag', 'text', (c) => c.notNull())
      .addColumn('seed', 'bigint', (c) => c.notNull())
      .addColumn('share', 'double precision', (c) => c.notNull())
      .addColumn('source_file', 'text', (c) => c.notNull())
      .addColumn('imported_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addPrimaryKeyConstraint('rotations_pk', ['set_name', 'month'])
      .execute();

    await db.schema
      .createTable('retired_tasks')
      .addColumn('set_name', 'text', (c) => c.notNull())
      .addColumn('month', 'text', (c) => c.notNull())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('task_hash', 'text', (c) => c.notNull())
      .addColumn('namespace', 'text', (c) => c.notNull())
      .addColumn('category', 'text', (c) => c.notNull())
      .addColumn('added', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('retired_tasks_pk', ['set_name', 'month', 'task_id'])
      .addForeignKeyConstraint('retired_tasks_rotation', ['set_name', 'month'], 'rotations', ['set_name', 'month'], (c) => c.onDelete('cascade'))
      .execute();
    await db.schema.createIndex('retired_tasks_hash').on('retired_tasks').column('task_hash').execute();

    await comment(db, DOCS_0001);
  },
};

const DOCS_0002: Docs = {
  runs: {
    table: DOCS_0001.runs!.table,
    columns: {
      plan_fingerprint: 'SHA-256 of the run\'s planned work-unit keys (run.json plan): with run_id, the run\'s identity; a folder with another plan under the same run id is refused. Null for runs recorded before plans were.',
      planned_units: 'Work units the run planned (run.json plan, else tasks x trials x perturbation levels for a run); null when unknown.',
      units: 'Work units with a record (one episode row each).',
      unresolved_units: 'Work units whose every attempt was an infrastructure error (not scored, still to run).',
      completeness: 'complete (every planned unit scored), incomplete (planned units never recorded) or unresolved (infrastructure errors left): only complete runs are ranked unless asked.',
      configuration: 'What the run measured under, besides its agent, set and month, as canonical JSON: fault profile and rate, perturbation levels, trials, the reference agent\'s retry. Runs are compared and ranked only with runs of the same configuration.',
    },
  },
};

const m0002: Migration = {
  async up(db) {
    await db.schema
      .alterTable('runs')
      .addColumn('plan_fingerprint', 'text')
      .addColumn('planned_units', 'integer')
      .addColumn('units', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('unresolved_units', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('completeness', 'text', (c) => c.notNull().defaultTo('complete').check(sql`completeness in ('complete', 'incomplete', 'unresolved')`))
      .addColumn('configuration', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    // Runs imported before: their units from their episodes, their configuration from their run.json.
    await sql`update runs set units = (select count(*) from episodes e where e.run_id = runs.run_id),
      unresolved_units = (select count(*) from episodes e where e.run_id = runs.run_id and e.status = 'infra_error')`.execute(db);
    await sql`update runs set completeness = 'unresolved' where unresolved_units > 0`.execute(db);
    const rows = await db.selectFrom('runs').select(['run_id', 'config']).execute();
    for (const row of rows as { run_id: string; config: unknown }[]) {
      await db.updateTable('runs').set({ configuration: scoringConfiguration(row.config) }).where('run_id', '=', row.run_id).execute();
    }
    await comment(db, DOCS_0002);
  },
};

const DOCS_0003: Docs = {
  accounts: {
    table: 'The submission service (`mcpbench api`): one row per account that submits agents. Made by the operator (`mcpbench api token create --account NAME`).',
    columns: {
      account_id: 'The account id (acc_<random>); primary key.',
      name: 'The account name (unique): the default label of its submissions on the leaderboard.',
      max_in_flight: 'How many of its submissions may be queued or running at once (the quota; a further one is 429 quota-exceeded).',
      created_at: 'When the account was made.',
    },
  },
  api_tokens: {
    table: "An account's API tokens. Only a hash of each secret is kept: the secret (mcpb_<id>_<random>) is shown once when the token is made.",
    columns: {
      token_id: 'The token id (tok_<random>), the middle part of its secret; primary key.',
      account_id: 'The account it acts for (accounts.account_id).',
      name: 'What its owner calls it.',
      secret_sha256: 'SHA-256 of the whole secret, hex (the secret has 256 random bits, so a plain hash is enough; compared in constant time).',
      scopes: 'What it may do: submissions (submit and read its submissions and unpublished runs), tokens (manage the account\'s tokens).',
      created_at: 'When it was made.',
      last_used_at: 'When it last authenticated a request (updated at most once a minute), null if never.',
      expires_at: 'When it stops working, null for never.',
      revoked_at: 'When it was revoked, null while it works.',
    },
  },
  submissions: {
    table: 'One row per submission to the service: an agent (a hosted endpoint or a container image) run on a set; its status, progress and, once it succeeded, its scores. The run itself is in runs once imported.',
    columns: {
      submission_id: 'The submission id (sub_<random>); primary key.',
      account_id: 'The submitting account (accounts.account_id).',
      status: 'queued, running, succeeded, failed or cancelled.',
      set_name: 'The set it runs on (dev).',
      month: 'The month it counts for on the leaderboard (YYYY-MM).',
      agent: 'What was submitted: {kind: endpoint, url} or {kind: image, image, image_id}.',
      label: 'The name it is ranked under (runs.agent_label).',
      trials: 'Trials per task.',
      faults: 'The fault profile (none, light, medium, heavy).',
      publish: 'Whether its run is public (GET /runs/{id}) once finished.',
      endpoint_secret: 'For an endpoint: the HMAC-SHA256 key the service signs each task request with (MCPBench-Signature); null for an image. Never shown after the submission is made.',
      idempotency_key: 'The Idempotency-Key it was made with, if any (unique per account).',
      request_sha256: 'SHA-256 of the canonical request body: the same key with another body is a 409.',
      progress: 'Episodes planned, done, passed, failed, agent_errors and infra_errors, as the run goes.',
      result: 'Its scores once it succeeded (the four axes with intervals, pass^k, per namespace and category), else null.',
      error: 'Why it failed (a problem object), else null.',
      run_id: 'Its run (runs.run_id) once started, else null.',
      created_at: 'When it was submitted.',
      started_at: 'When its run started, null while queued.',
      finished_at: 'When it finished, null before.',
    },
  },
};

const m0003: Migration = {
  async up(db) {
    await db.schema
      .createTable('accounts')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('max_in_flight', 'integer', (c) => c.notNull().defaultTo(2))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createTable('api_tokens')
      .addColumn('token_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('secret_sha256', 'text', (c) => c.notNull())
      .addColumn('scopes', sql`text[]`, (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('last_used_at', 'timestamptz')
      .addColumn('expires_at', 'timestamptz')
      .addColumn('revoked_at', 'timestamptz')
      .execute();
    await db.schema.createIndex('api_tokens_account').on('api_tokens').column('account_id').execute();
    await db.schema
      .createTable('submissions')
      .addColumn('submission_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('set_name', 'text', (c) => c.notNull())
      .addColumn('month', 'text', (c) => c.notNull())
      .addColumn('agent', 'jsonb', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('trials', 'integer', (c) => c.notNull())
      .addColumn('faults', 'text', (c) => c.notNull())
      .addColumn('publish', 'boolean', (c) => c.notNull())
      .addColumn('endpoint_secret', 'text')
      .addColumn('idempotency_key', 'text')
      .addColumn('request_sha256', 'text', (c) => c.notNull())
      .addColumn('progress', 'jsonb', (c) => c.notNull())
      .addColumn('result', 'jsonb')
      .addColumn('error', 'jsonb')
      .addColumn('run_id', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('started_at', 'timestamptz')
      .addColumn('finished_at', 'timestamptz')
      .addUniqueConstraint('submissions_idempotency', ['account_id', 'idempotency_key'])
      .execute();
    await db.schema.createIndex('submissions_account_status').on('submissions').columns(['account_id', 'status']).execute();
    await db.schema.createIndex('submissions_run').on('submissions').column('run_id').execute();
    await comment(db, DOCS_0003);
  },
};

/** Every step, in order; the names sort in the order they run. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_run_identity': m0002,
  '0003_service': m0003,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
