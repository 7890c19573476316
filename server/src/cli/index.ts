#!/usr/bin/env node
import { runCli } from './main.ts';

runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
}).then((code) => {
  // exitCode, not exit(): let stdout drain when it is a pipe.
  process.exitCode = code;
});
