// The key `npm start` seals import credentials with (IMPORT_SECRET_KEY, docs/importing.md "Credentials"):
// generated on the first start and kept in the git-ignored data folder beside the data it protects, so an
// import queued before a restart can still read its credentials after it. A deployment sets its own.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DEV_STACK, STACK_DIR } from './stack.ts';
import { newSecretKey, parseSecretKey } from '../../../shared/importing/secrets.ts';

export const IMPORT_KEY_FILE = join(STACK_DIR, DEV_STACK.name, 'import-secret-key.txt');

/** The kept key, or a new one written with mode 600. */
export async function devImportKey(file = IMPORT_KEY_FILE): Promise<string> {
  const kept = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (parseSecretKey(kept)) return kept;
  const key = newSecretKey();
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, key + '\n', { mode: 0o600 });
  return key;
}
