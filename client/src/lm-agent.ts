/**
 * The VS Code language-model API as an agent. The CLI runs the episode as usual with `--agent endpoint`
 * against a small HTTP endpoint served here; for each request the extension runs a tool-calling loop with a
 * chat model from `vscode.lm`, calling the task's tools through the gateway URL in the request with the MCP
 * SDK client. The runner still owns the sandbox, the faults, the budget and the verdict.
 *
 * Tokens: the language-model API does not report what a request was billed, but each model counts tokens
 * with its own tokenizer (`LanguageModelChat.countTokens`); the prompt of every request and every response
 * are counted that way and reported to the runner with the answer (`usage`), with the latency of each turn.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as vscode from 'vscode';
import { resultText } from '../../server/src/engine/protocol.ts';
import { startEndpointServer, type AgentRequest, type EndpointServer, type ReportedUsage } from './endpoint-server.ts';

const SYSTEM_PROMPT =
  'You are an agent completing a task by calling tools. Call the tools you need, one step at a time, and check ' +
  'their results. Tool calls cost steps from a fixed budget, so do not call tools you do not need. Some calls may ' +
  'fail transiently; retry those when it makes sense. When the task is done, reply with a short final answer.';

/** What the model reads of a tool result: its text, marked as an error when it is one. */
function toolResultText(result: { content?: unknown; isError?: unknown; structuredContent?: unknown; toolResult?: unknown }): string {
  return result.isError ? `Error: ${resultText(result)}` : resultText(result);
}

export class LanguageModelAgent implements vscode.Disposable {
  private server: EndpointServer | undefined;

  constructor(private readonly output: vscode.OutputChannel) {}

  static async availableModels(): Promise<vscode.LanguageModelChat[]> {
    try {
      return await vscode.lm.selectChatModels();
    } catch {
      return [];
    }
  }

  /** The endpoint URL for `--endpoint`; fails with a notification when no chat model is available. */
  async endpointUrl(): Promise<string> {
    const models = await LanguageModelAgent.availableModels();
    if (!models.length) {
      const message = 'No VS Code language model is available, so the vscode-lm agent cannot run. Install or sign in to a model provider, or pick another mcpbench.defaultAgent.';
      void vscode.window.showWarningMessage(message);
      throw new Error(message);
    }
    this.server ??= await startEndpointServer((request, signal) => this.answer(request, signal));
    return this.server.url;
  }

  private async answer(request: AgentRequest, signal: AbortSignal): Promise<{ answer?: string; usage?: ReportedUsage }> {
    const [model] = await LanguageModelAgent.availableModels();
    if (!model) throw new Error('no language model is available');
    this.output.appendLine(`[vscode-lm] ${request.task_id}: ${model.vendor}/${model.family} (${model.id})`);
    const cancellation = new vscode.CancellationTokenSource();
    signal.addEventListener('abort', () => cancellation.cancel(), { once: true });
    const client = new Client({ name: 'mcpbench-vscode-lm', version: '0.1.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(request.gateway.url)));
    try {
      const tools: vscode.LanguageModelChatTool[] = request.available_tools.map((tool) => ({
        name: tool.name,
        description: tool.description ?? tool.name,
        inputSchema: tool.inputSchema,
      }));
      const messages: vscode.LanguageModelChatMessage[] = [vscode.LanguageModelChatMessage.User(`${SYSTEM_PROMPT}\n\nTask: ${request.goal}`)];
      let answer = '';
      const usage = { model: model.id, requests: 0, prompt_tokens: 0, completion_tokens: 0, turn_latency_ms: [] as number[] };
      const count = async (value: string | vscode.LanguageModelChatMessage) => {
        try {
          return await model.countTokens(value, cancellation.token);
        } catch {
          return 0;
        }
      };
      // The gateway enforces max_steps; this bound only stops a model that keeps talking without calling.
      for (let turn = 0; turn < request.max_steps + 4; turn++) {
        signal.throwIfAborted();
        const started = Date.now();
        const response = await model.sendRequest(messages, { tools, toolMode: vscode.LanguageModelChatToolMode.Auto }, cancellation.token);
        const calls: vscode.LanguageModelToolCallPart[] = [];
        let text = '';
        for await (const part of response.stream) {
          if (part instanceof vscode.LanguageModelTextPart) text += part.value;
          else if (part instanceof vscode.LanguageModelToolCallPart) calls.push(part);
        }
        usage.requests++;
        usage.turn_latency_ms.push(Date.now() - started);
        for (const message of messages) usage.prompt_tokens += await count(message);
        usage.completion_tokens += await count(text + calls.map((c) => `${c.name}${JSON.stringify(c.input)}`).join(''));
        answer = text.trim() || answer;
        if (!calls.length) break;
        messages.push(vscode.LanguageModelChatMessage.Assistant([...(text ? [new vscode.LanguageModelTextPart(text)] : []), ...calls]));
        const results: vscode.LanguageModelToolResultPart[] = [];
        for (const call of calls) {
          let content: string;
          try {
            const result = await client.callTool({ name: call.name, arguments: call.input as Record<string, unknown> }, undefined, { signal });
            content = toolResultText(result);
          } catch (error) {
            content = `Error: ${(error as Error).message}`;
          }
          results.push(new vscode.LanguageModelToolResultPart(call.callId, [new vscode.LanguageModelTextPart(content)]));
        }
        messages.push(vscode.LanguageModelChatMessage.User(results));
      }
      return { ...(answer ? { answer } : {}), usage };
    } finally {
      cancellation.dispose();
      await client.close().catch(() => undefined);
    }
  }

  dispose(): void {
    void this.server?.close();
    this.server = undefined;
  }
}
