import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { startServer } from './server.ts';

// Transport (--stdio, --node-ipc, --socket=N) comes from the command line, as vscode-languageclient passes it.
startServer(createConnection(ProposedFeatures.all));
