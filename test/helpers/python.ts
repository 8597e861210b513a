// Running the Python SDK's tests from tap: python3 (or a venv's python) as a child process, its output kept.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

export const PY_DIR = resolve(import.meta.dirname, '../../sdk/python');

export function runPython(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? PY_DIR,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', rej);
    child.once('exit', (code) => res({ code, out }));
  });
}
