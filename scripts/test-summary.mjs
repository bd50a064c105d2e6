// Adds up the vitest JSON reports of every package and prints the closing line CI reads: "N passed, N failed".
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Every workspace package with a test script must leave a report: one that silently ran nothing counts as missing.
const packages = ['packages', 'apps', 'examples']
  .flatMap((root) => (root === 'examples' ? ['examples'] : readdirSync(root).map((name) => join(root, name))))
  .filter((pkg) => existsSync(join(pkg, 'package.json')) && JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).scripts?.test !== undefined);
let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
for (const pkg of packages) {
  const file = join(pkg, '.reports', 'vitest.json');
  if (!existsSync(file)) {
    missing.push(pkg);
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
}
if (missing.length > 0) console.log(`no test report from: ${missing.join(', ')}`);
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || missing.length > 0 ? 1 : 0);
