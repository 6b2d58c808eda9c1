#!/usr/bin/env node
// Runs before `npm start` (plain CommonJS, so it works on any Node): an older Node would fail later with an
// obscure syntax or module error, so stop here and say what to install.
'use strict';

const REQUIRED_MAJOR = 24;

/** Why this Node cannot run Linepack, or null when it can. */
function nodeVersionProblem(version, execPath) {
  const major = Number(String(version).split('.')[0]);
  if (major >= REQUIRED_MAJOR) return null;
  return [
    `linepack: Node.js ${REQUIRED_MAJOR} LTS or newer is required; this is Node.js v${version} (${execPath}).`,
    `  Install it with \`npm install -g node@${REQUIRED_MAJOR}\` (or run \`bash scripts/setup.sh\`), make sure it comes first on PATH, then run npm start again.`,
  ].join('\n');
}

if (require.main === module) {
  const problem = nodeVersionProblem(process.versions.node, process.execPath);
  if (problem) {
    console.error(problem);
    process.exit(1);
  }
}

module.exports = { nodeVersionProblem, REQUIRED_MAJOR };
