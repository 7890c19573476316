/**
 * The baseline of bench/lsp: vscode-json-languageservice (the library behind VS Code's own JSON language server)
 * behind the same LSP stack as our server (vscode-languageserver over stdio), validating each change against
 * schemas/task.schema.json and publishing at once. Both sides of the ratio then pay the same protocol costs,
 * and the ratio compares what a user waits for: JSON-schema validation versus our full lint.
 *
 * With MCPBENCH_BASELINE_WORKSPACE=1 it also validates every task file of the workspace folders after
 * `initialized` and publishes each file's findings, as our server's workspace diagnostics do (the same files,
 * found the same way), so the two passes can be timed alike.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { collectLintableFiles } from '../../server/src/tasks/files.ts';
import { getLanguageService } from 'vscode-json-languageservice';
import { createConnection, ProposedFeatures, TextDocuments, TextDocumentSyncKind } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';

const schemaFile = process.env.MCPBENCH_TASK_SCHEMA;
if (!schemaFile) throw new Error('MCPBENCH_TASK_SCHEMA: the task schema to validate against');
const schema = JSON.parse(readFileSync(schemaFile, 'utf8'));
const service = getLanguageService({});
service.configure({ validate: true, allowComments: false, schemas: [{ uri: schema.$id, fileMatch: ['*.json'], schema }] });

const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
let folders: string[] = [];
connection.onInitialize((params) => {
  folders = (params.workspaceFolders ?? []).map((f) => fileURLToPath(f.uri));
  return { capabilities: { textDocumentSync: TextDocumentSyncKind.Incremental, documentSymbolProvider: true } };
});
connection.onInitialized(() => {
  if (process.env.MCPBENCH_BASELINE_WORKSPACE !== '1') return;
  setImmediate(async () => {
    for (const file of folders.flatMap((folder) => collectLintableFiles([folder]).tasks)) {
      const document = TextDocument.create(pathToFileURL(file).href, 'json', 0, readFileSync(file, 'utf8'));
      const json = service.parseJSONDocument(document);
      const diagnostics = await service.doValidation(document, json, { schemaValidation: 'error' }, schema);
      if (diagnostics.length) await connection.sendDiagnostics({ uri: document.uri, diagnostics });
    }
  });
});
connection.onDocumentSymbol(() => []);
documents.onDidChangeContent(async ({ document }) => {
  const json = service.parseJSONDocument(document);
  const diagnostics = await service.doValidation(document, json, { schemaValidation: 'error' }, schema);
  await connection.sendDiagnostics({ uri: document.uri, version: document.version, diagnostics });
});
documents.listen(connection);
connection.listen();
