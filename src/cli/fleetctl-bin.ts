#!/usr/bin/env node
import { fleetctl } from './fleetctl.js';

process.exitCode = await fleetctl(process.argv.slice(2), {
  stdout: (line) => console.log(line),
  stderr: (line) => console.error(line),
});
