// npm run check:deploy: validates deploy/ offline (no container engine or cluster is needed): the
// Kubernetes manifests against the API schemas kubernetes-validate ships, compose.yaml against the
// compose-spec schema check-jsonschema ships, both from PyPI into a venv under .stack/.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cli } from './lib/cli.ts';

cli(
  `Usage: npm run check:deploy

Validates deploy/k8s/*.yaml (kubernetes-validate --strict, Kubernetes 1.37 schemas) and deploy/compose.yaml
(check-jsonschema, compose-spec schema). The first run creates .stack/deploy-venv with python3 -m venv and
installs the two pinned tools from PyPI.`,
  {},
);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const VENV = join(ROOT, '.stack', 'deploy-venv');
const TOOLS = ['kubernetes-validate==1.37.0', 'check-jsonschema==0.39.0'];
const bin = (name: string) => join(VENV, 'bin', name);

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    process.stderr.write(`check:deploy: ${cmd} ${args.join(' ')} failed\n`);
    process.exit(1);
  }
}

if (!existsSync(bin('kubernetes-validate')) || !existsSync(bin('check-jsonschema'))) {
  process.stdout.write(
    'check:deploy: installing kubernetes-validate and check-jsonschema into .stack/deploy-venv\n',
  );
  run('python3', ['-m', 'venv', VENV]);
  run(bin('pip'), ['install', '--quiet', '--disable-pip-version-check', ...TOOLS]);
}
const manifests = readdirSync(join(ROOT, 'deploy', 'k8s'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => join('deploy', 'k8s', f));
run(bin('kubernetes-validate'), ['--strict', '--quiet', ...manifests]);
process.stdout.write(`check:deploy: ${manifests.length} Kubernetes manifests valid\n`);
run(bin('check-jsonschema'), ['--builtin-schema', 'vendor.compose-spec', 'deploy/compose.yaml']);
