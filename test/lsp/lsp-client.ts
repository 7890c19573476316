/**
 * A language client for the tests: the bundled language server (dist/server.js) started over stdio in a workspace
 * folder, with what it publishes collected and the usual requests one call away.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  RegistrationRequest,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type ClientCapabilities,
  type Diagnostic,
  type PublishDiagnosticsParams,
  type Registration,
} from 'vscode-languageserver-protocol/node';

const serverModule = join(__dirname, '..', '..', 'dist', 'server.js');

export const DEFAULT_CAPABILITIES: ClientCapabilities = {
  workspace: { workspaceFolders: true, didChangeWatchedFiles: { dynamicRegistration: true } },
  textDocument: { completion: { completionItem: { snippetSupport: true } } },
};

export function startServer(workspace: string) {
  const child = spawn(process.execPath, [serverModule, '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const published: PublishDiagnosticsParams[] = [];
  const registrations: Registration[] = [];
  const waiters: (() => void)[] = [];
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
    published.push(params);
    waiters.splice(0).forEach((wake) => wake());
  });
  connection.onRequest(RegistrationRequest.type, (params) => {
    registrations.push(...params.registrations);
  });
  connection.listen();

  /** The first diagnostics published for `uri` after mark `since` that `accept` takes. */
  const diagnostics = async (uri: string, accept: (d: Diagnostic[]) => boolean = () => true, since = 0, timeoutMs = 15_000): Promise<Diagnostic[]> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = published.slice(since).find((p) => p.uri === uri && accept(p.diagnostics));
      if (hit) return hit.diagnostics;
      if (Date.now() > deadline) {
        const last = published.filter((p) => p.uri === uri).at(-1);
        throw new Error(`no accepted diagnostics for ${uri}; last: ${JSON.stringify(last?.diagnostics.map((d) => [d.code, d.message]))}`);
      }
      await new Promise<void>((wake) => { waiters.push(wake); setTimeout(wake, 200); });
    }
  };
  const versions = new Map<string, number>();
  const open = async (uri: string, text: string) => {
    versions.set(uri, 1);
    await connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'json', version: 1, text } });
  };
  const change = async (uri: string, text: string) => {
    const version = (versions.get(uri) ?? 1) + 1;
    versions.set(uri, version);
    await connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version }, contentChanges: [{ text }] });
  };
  const close = async (uri: string) => {
    versions.delete(uri);
    await connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
  };
  const initialize = async (capabilities: ClientCapabilities = DEFAULT_CAPABILITIES) => {
    const workspaceUri = pathToFileURL(workspace).href;
    const result = await connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: workspaceUri,
      workspaceFolders: [{ uri: workspaceUri, name: 'ws' }],
      capabilities,
      initializationOptions: { debounceMs: 20 },
    });
    await connection.sendNotification(InitializedNotification.type, {});
    return result;
  };
  const stop = async () => {
    await connection.sendRequest(ShutdownRequest.type);
    await connection.sendNotification(ExitNotification.type);
    connection.dispose();
    child.kill();
  };
  return { connection, published, registrations, diagnostics, open, change, close, initialize, stop, mark: () => published.length, version: (uri: string) => versions.get(uri) ?? null };
}

export type Server = ReturnType<typeof startServer>;

/** Protocol 3.18 allows markup in diagnostic messages; the server sends plain strings. */
export const messageOf = (d: Diagnostic): string => (typeof d.message === 'string' ? d.message : d.message.value);
