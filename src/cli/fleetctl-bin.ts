#!/usr/bin/env node
import { fleetctl } from './fleetctl.js';

process.exitCode = await fleetctl(process.argv.slice(2), {
  stdout: (line) => console.log(line),
  stderr: (line) => console.error(line),
  // A progress line redrawn in place on a terminal; nothing when output is piped.
  progress: process.stderr.isTTY ? (line) => process.stderr.write(`\r${line}\x1b[K`) : null,
});
